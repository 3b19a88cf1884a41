// Open promptfoo's viewer in headless Debian Chromium, as a person would, and report what the result
// table shows and what the first cell's details dialog lists (one row per assertion component).
// Usage: node viewer_factuality.mjs URL SCREENSHOT.png  → prints JSON on stdout.
import { launchChromium } from "../browser/chromium.mjs";

const [url, screenshot] = process.argv.slice(2);
const browser = await launchChromium();
try {
  const page = await browser.newPage({ viewport: { width: 1700, height: 1200 } });
  await page.goto(url, { waitUntil: "networkidle", timeout: 60000 });
  await page.getByText("factual_accuracy").first().waitFor({ timeout: 60000 });
  const cells = await page.locator("td").allInnerTexts();
  const body = (await page.locator("body").innerText()).slice(0, 3000);
  const details = [];
  const count = await page.getByLabel("View output and test details").count();
  for (let i = 0; i < count; i++) {
    if (i > 0) {
      // A fresh page per cell: after a details sheet closes, the next one does not always open.
      await page.goto(url, { waitUntil: "domcontentloaded", timeout: 60000 });
      await page.getByText("factual_accuracy").first().waitFor({ timeout: 60000 });
    }
    const button = page.getByLabel("View output and test details").nth(i);
    await button.scrollIntoViewIfNeeded();
    await button.dispatchEvent("click"); // the hover-only action button may sit under the sticky header
    console.error(`details ${i + 1} of ${count}`);
    const dialog = page.locator('[role="dialog"]:visible').filter({ hasText: "Details:" }).last();
    await dialog.getByRole("tab", { name: "Evaluation" }).click({ timeout: 20000 });
    await dialog.getByText("claim c1:").first().waitFor({ timeout: 20000 });
    if (i === 0) await page.screenshot({ path: screenshot, fullPage: false });
    details.push(await dialog.innerText());
  }
  console.log(JSON.stringify({ cells, body, details }));
} finally {
  await browser.close();
}
