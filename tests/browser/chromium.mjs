// Headless Debian Chromium as every browser test opens it: no sandbox (CI runs as root) and nothing
// fetched in the background, so a page can only reach what the test serves.
import { chromium } from "playwright-core";

export function launchChromium() {
  return chromium.launch({
    executablePath: process.env.CHROMIUM || "/usr/bin/chromium",
    args: ["--no-sandbox", "--disable-gpu", "--disable-background-networking", "--disable-component-update",
           "--disable-sync", "--no-first-run", "--disable-quic"],
  });
}
