// Open a grounding-eval HTML report in headless Debian Chromium and report what a reader sees.
// Usage: node report_check.mjs FILE.html SCREENSHOT.png [SECTION_ID]  → prints JSON on stdout.
// With SECTION_ID the screenshot is that section (e.g. safety) instead of the top of the page.
import { launchChromium } from "../browser/chromium.mjs";
import { pathToFileURL } from "node:url";

const [file, screenshot, sectionId] = process.argv.slice(2);
const browser = await launchChromium();
try {
  const page = await browser.newPage({ viewport: { width: 1300, height: 1000 } });
  const requests = [];
  page.on("request", (r) => { if (!r.url().startsWith("file:")) requests.push(r.url()); });
  const started = Date.now();
  await page.goto(pathToFileURL(file).href, { waitUntil: "load", timeout: 30000 });
  const loadMs = Date.now() - started;
  const seen = await page.evaluate(() => ({
    sections: [...document.querySelectorAll("section")].map((s) => ({
      id: s.id,
      heading: s.querySelector("h2")?.innerText ?? "",
      charts: s.querySelectorAll("svg.chart").length,
      tables: s.querySelectorAll("table").length,
      rows: s.querySelectorAll("tbody tr").length,
      marks: s.querySelectorAll('svg [id*="mark-"]').length,  // a figure's bars and points (their gid)
      // Each figure as drawn: its size on the page, and the texts that reach past its edges (a cut label).
      figures: [...s.querySelectorAll("svg.chart")].map((svg) => {
        const box = svg.getBoundingClientRect();
        const cut = [...svg.querySelectorAll("text")].filter((t) => {
          const r = t.getBoundingClientRect();
          return r.width > 0 && (r.left < box.left - 1 || r.right > box.right + 1 || r.top < box.top - 1 ||
                                 r.bottom > box.bottom + 1);
        }).map((t) => t.textContent);
        return { width: Math.round(box.width), height: Math.round(box.height), cut };
      }),
    })),
    text: document.body.innerText.slice(0, 200000),  // past the unsafe answers listed first (hundreds of rows)
    domNodes: document.getElementsByTagName("*").length,
  }));
  if (sectionId) await page.locator(`section#${sectionId}`).screenshot({ path: screenshot });
  else await page.screenshot({ path: screenshot, fullPage: false });
  console.log(JSON.stringify({ loadMs, requests, ...seen }));
} finally {
  await browser.close();
}
