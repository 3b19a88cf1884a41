// Open promptfoo's viewer in headless Debian Chromium, as a person would, and report what the first
// result cell shows. Usage: node viewer_check.mjs URL SCREENSHOT.png  → prints JSON on stdout.
import { chromium } from "playwright-core";

const [url, screenshot] = process.argv.slice(2);
const browser = await chromium.launch({
  executablePath: process.env.CHROMIUM || "/usr/bin/chromium",
  args: ["--no-sandbox", "--disable-gpu", "--disable-background-networking", "--disable-component-update",
         "--disable-sync", "--no-first-run", "--disable-quic"],
});
try {
  const page = await browser.newPage({ viewport: { width: 1700, height: 1200 } });
  await page.goto(url, { waitUntil: "networkidle", timeout: 60000 });
  await page.getByText("deterministic_verifier_score").first().waitFor({ timeout: 60000 });
  const cells = await page.locator("td").allInnerTexts();
  await page.screenshot({ path: screenshot, fullPage: false });
  const title = await page.locator("body").innerText();
  console.log(JSON.stringify({ cells, body: title.slice(0, 2000) }));
} finally {
  await browser.close();
}
