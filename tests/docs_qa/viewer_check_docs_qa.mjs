// Open promptfoo's viewer on the docs-QA eval in headless Debian Chromium, as a person would, and report
// what the result cells show. Usage: node viewer_check_docs_qa.mjs URL SCREENSHOT.png  → JSON on stdout.
// (tests/browser/viewer_check.mjs waits for the verifier's chip; this one waits for docs-QA's.)
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
  await page.getByText("docs_qa.correct").first().waitFor({ timeout: 60000 });
  const cells = await page.locator("td").allInnerTexts();
  await page.screenshot({ path: screenshot, fullPage: false });
  const body = await page.locator("body").innerText();
  console.log(JSON.stringify({ cells, body: body.slice(0, 3000) }));
} finally {
  await browser.close();
}
