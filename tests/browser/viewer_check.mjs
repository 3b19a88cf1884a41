// Open promptfoo's viewer in headless Debian Chromium, as a person would, and report what the result
// cells show once WAIT_FOR (default: the verifier's chip) is on the page.
// Usage: node viewer_check.mjs URL SCREENSHOT.png [WAIT_FOR]  → prints JSON on stdout.
import { launchChromium } from "./chromium.mjs";

const [url, screenshot, waitFor = "deterministic_verifier_score"] = process.argv.slice(2);
const browser = await launchChromium();
try {
  const page = await browser.newPage({ viewport: { width: 1700, height: 1200 } });
  await page.goto(url, { waitUntil: "networkidle", timeout: 60000 });
  await page.getByText(waitFor).first().waitFor({ timeout: 60000 });
  const cells = await page.locator("td").allInnerTexts();
  await page.screenshot({ path: screenshot, fullPage: false });
  const body = await page.locator("body").innerText();
  console.log(JSON.stringify({ cells, body: body.slice(0, 3000) }));
} finally {
  await browser.close();
}
