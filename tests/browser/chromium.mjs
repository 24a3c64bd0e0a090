// How every browser check opens its page: Chromium from $CHROMIUM or Debian's
// /usr/bin/chromium, headless, without its background network features, and every page
// error and console error collected in `errors` for the check to fail on.
import { chromium } from "playwright-core";

export async function openPage(viewport = { width: 1200, height: 900 }) {
  const browser = await chromium.launch({
    executablePath: process.env.CHROMIUM || "/usr/bin/chromium",
    args: ["--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
           "--disable-background-networking", "--disable-component-update", "--disable-sync"],
  });
  const page = await browser.newPage({ viewport });
  const errors = [];
  page.on("pageerror", (e) => errors.push(String(e)));
  page.on("console", (m) => { if (m.type() === "error") errors.push(m.text()); });
  return { browser, page, errors };
}
