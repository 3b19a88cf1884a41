// promptfoo's viewer at 1920×1080 as a reviewer opens it: every result cell's text, and whether "Show more"
// (chips hidden behind it) appears anywhere, and where the first output column is before any scrolling. Usage: node reviewer_cells.mjs URL SCREENSHOT.png WAIT_FOR
import { launchChromium } from "./chromium.mjs";

const [url, screenshot, waitFor] = process.argv.slice(2);
const browser = await launchChromium();
try {
  const page = await browser.newPage({ viewport: { width: 1920, height: 1080 } });
  await page.goto(url, { waitUntil: "networkidle", timeout: 60000 });
  await page.getByText(waitFor).first().waitFor({ timeout: 60000 });
  const cells = (await page.locator("td").allInnerTexts()).filter((t) => /\b\d+ (PASS|FAIL)\b/.test(t));
  const showMore = await page.getByText("Show more", { exact: false }).count();
  // The first output column's header (it holds the "N% passing" line), where it sits on first load.
  const firstOutput = await page.locator("thead th").evaluateAll((ths) => {
    const th = ths.find((e) => /passing \(/.test(e.innerText));
    if (!th) return null;
    const box = th.getBoundingClientRect();
    return { x: box.x, width: box.width, viewport: window.innerWidth };
  });
  // The first failing cell, scrolled into view, for the picture.
  const failing = page.getByText(/^\d+ FAIL/).first();
  if (await failing.count()) await failing.scrollIntoViewIfNeeded();
  await page.screenshot({ path: screenshot, fullPage: false });
  console.log(JSON.stringify({ cells, showMore, firstOutput }));
} finally {
  await browser.close();
}
