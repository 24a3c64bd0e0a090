// Opens an aptitude HTML report holding variants in headless Chromium (Debian's, via
// playwright-core) and prints the variants tables as a reader sees them, as JSON, for
// tests/it/variants.rs to assert on:
//   node tests/browser/check-variants.mjs REPORT.html SCREENSHOT.png
// Then runs axe-core (npm, pinned) on the page with every test and detail expanded.
import { openPage } from "./chromium.mjs";
import { pathToFileURL } from "node:url";
import { createRequire } from "node:module";

const require = createRequire(import.meta.url);

const [report, screenshot] = process.argv.slice(2);
const { browser, page, errors } = await openPage({ width: 1100, height: 620 });
await page.goto(pathToFileURL(report).href);

// Each table: its caption, column headers, and rows as [row header, ...cells], with
// whether each is visible on screen.
const tables = await page.locator("table.variants").evaluateAll((ts) => ts.map((t) => ({
  caption: t.caption?.textContent.trim().replace(/\s+/g, " "),
  columns: [...t.querySelectorAll("thead th")].map((th) => th.textContent.trim()),
  rows: [...t.querySelectorAll("tbody tr")].map((tr) =>
    [...tr.querySelectorAll("th, td")].map((c) => c.textContent.trim())),
})));
const visible = await page.locator("table.variants").first().isVisible();
await page.screenshot({ path: screenshot, fullPage: false });

const axeContext = await browser.newContext({ bypassCSP: true, viewport: { width: 1100, height: 620 } });
const axePage = await axeContext.newPage();
await axePage.goto(pathToFileURL(report).href);
await axePage.evaluate(() => document.querySelectorAll("details").forEach((d) => { d.open = true; }));
await axePage.addScriptTag({ path: require.resolve("axe-core/axe.min.js") });
const axe = await axePage.evaluate(async () => {
  const r = await window.axe.run(document, { resultTypes: ["violations"] });
  return { version: window.axe.version, violations: r.violations.map((v) => ({
    id: v.id, impact: v.impact, nodes: v.nodes.length, first: v.nodes[0]?.html.slice(0, 200) })) };
});
await browser.close();
console.log(JSON.stringify({ tables, visible, errors, axe }));
