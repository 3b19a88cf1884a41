// Where promptfoo's viewer puts what a reviewer reads first, at 1920×1080 on first load (issue 42): each
// output (condition) column's x range, read from its header and from the first row's cell, and the first
// row's first verdict reason (a failing cell's `.fail-reason`): its top y and whether it is the element
// actually drawn there (not under the sticky pager bar). Then the table's picture, and the picture of
// that cell's details dialog. SETTINGS (optional JSON) are promptfoo's table settings as its viewer keeps them
// in the browser (localStorage "eval-settings": Columns and Table Settings choices), set before the page loads.
// Usage: node reviewer_layout.mjs URL TABLE.png DETAILS.png WAIT_FOR [SETTINGS] → JSON.
import { launchChromium } from "./chromium.mjs";

const [url, tableShot, detailsShot, waitFor, settings] = process.argv.slice(2);
const browser = await launchChromium();
try {
  const page = await browser.newPage({ viewport: { width: 1920, height: 1080 } });
  if (settings) {
    await page.addInitScript((state) => {
      localStorage.setItem("eval-settings", JSON.stringify({ state: JSON.parse(state), version: 2 }));
    }, settings);
  }
  await page.goto(url, { waitUntil: "networkidle", timeout: 60000 });
  await page.getByText(waitFor).first().waitFor({ timeout: 60000 });
  const seen = await page.evaluate(() => {
    const range = (e) => { const b = e.getBoundingClientRect(); return [Math.round(b.left), Math.round(b.right)]; };
    const headers = [...document.querySelectorAll("thead th")].filter((th) => /passing \(/.test(th.innerText));
    const row = document.querySelector("tbody tr");
    const outputs = row ? [...row.children].filter((td) => td.querySelector(".status")) : [];
    const reason = row && row.querySelector(".fail-reason");
    let first = null;
    if (reason) {
      const b = reason.getBoundingClientRect();
      const drawn = document.elementFromPoint(b.left + 4, b.top + 4);
      first = { y: Math.round(b.top), x: Math.round(b.left), text: reason.innerText.slice(0, 200),
                drawn: !!drawn && reason.contains(drawn) };
    }
    return {
      viewport: [window.innerWidth, window.innerHeight],
      headers: headers.map((th) => ({ label: th.innerText.split("\n")[0], x: range(th),
                                      prompt: (th.querySelector(".prompt-container") || {}).innerText || null })),
      cells: outputs.map(range),
      varColumns: [...document.querySelectorAll("thead th")].filter((th) => th.closest("tr") && !/passing \(|^(Variables|Outputs)?$/.test(th.innerText.trim())).map((th) => ({ name: th.innerText.trim(), x: range(th) })),
      firstReason: first,
      // Markdown rendered: the first answer's bold is an element, not literal asterisks.
      answerBold: !!(row && row.querySelector("td .cell strong")),
      answerAsterisks: outputs.some((td) => /\*\*\w/.test(td.innerText)),
    };
  });
  await page.screenshot({ path: tableShot, fullPage: false });
  const details = page.locator("tbody tr").first().locator('[aria-label="View output and test details"]');
  if (await details.count()) {
    await details.first().click({ force: true });
    await page.getByRole("dialog").first().waitFor({ timeout: 30000 });
    await page.waitForTimeout(500);
    seen.details = (await page.getByRole("dialog").first().innerText()).slice(0, 3000);
  }
  await page.screenshot({ path: detailsShot, fullPage: false });
  console.log(JSON.stringify(seen));
} finally {
  await browser.close();
}
