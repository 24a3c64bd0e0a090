// Opens an aptitude HTML report at a run view's anchor in headless Chromium (Debian's,
// via playwright-core), as the PR comment links it, and prints as JSON what a reader sees
// for tests/it/reports.rs to assert on:
//   node tests/browser/check-run-view.mjs REPORT.html ANCHOR TRAJECTORY_TEST
// ANCHOR is `tN-rM` (run M of test N) or `tN`; the page must open that test and run — its
// details, then the run's view, unpacked first when they are stored compressed — and
// scroll to it.
// TRAJECTORY_TEST (`tK`) is a test run once whose run view is read: its trajectory (turns,
// calls, nesting), its files as diffs, its model requests. Then axe-core (npm, pinned)
// checks the page with both tests' details expanded.
import { openPage } from "./chromium.mjs";
import { pathToFileURL } from "node:url";
import { createRequire } from "node:module";

const require = createRequire(import.meta.url);

const [report, anchor, trajectoryTest] = process.argv.slice(2);
const url = pathToFileURL(report).href;
const { browser, page, errors } = await openPage();

// The anchor opens its test and run, and scrolls to it.
await page.goto(`${url}#${anchor}`);
const target = page.locator(`[id="${anchor}"]`);
await target.waitFor({ state: "visible", timeout: 10000 });
await page.waitForFunction((id) => document.getElementById(id).open === true, anchor);
const anchorOpen = await target.evaluate((el) => el.open === true);
const testOpen = await page.locator(`[id="${anchor.split("-")[0]}"]`).evaluate((el) => el.open === true);
const inView = await target.evaluate((el) => {
  const r = el.getBoundingClientRect();
  return r.top < window.innerHeight && r.bottom > 0;
});
// Its run view is unpacked on its own, when the run is opened (a large suite's).
await target.locator(":scope > .run-body:not([data-lazy]):not([aria-busy])").waitFor({ timeout: 10000 });
const runSections = await target.locator("h3.section").allTextContents();
const side = page.locator(`[id="${anchor.split("-")[0]}"] table.side`);
const sideCaption = (await side.count()) ? (await side.locator("caption").textContent()).trim() : null;
const sideParts = (await side.count()) ? await side.locator("tr.parts td.differs").count() : 0;

// A test run once: open it and read its run view.
const t = page.locator(`[id="${trajectoryTest}"]`);
await t.locator(":scope > summary").click();
await t.locator(":scope > .body:not([data-lazy]) ol.trajectory").waitFor();
const steps = await t.locator("ol.trajectory > li").evaluateAll((lis) => lis.map((li) => ({
  kind: li.classList.contains("turn") ? "turn" : li.classList.contains("group") ? "group" : "call",
  depth: Number((li.className.match(/depth(\d+)/) || [0, 0])[1]),
  text: li.querySelector(":scope > .turnlabel, :scope > details > summary")?.textContent.trim() || li.textContent.trim(),
  said: li.querySelector(".said")?.textContent || null,
})));
const diff = t.locator("details.diff").first();
await diff.locator(":scope > summary").click();
const diffLines = await diff.locator("pre.diff span").evaluateAll((spans) => spans.map((s) => [s.className, s.textContent]));
const diffText = await diff.locator("pre.diff").evaluate((pre) => pre.innerText);
const omitted = await t.locator("ul.files > li").allTextContents();
const requests = await t.locator("table.requests tbody tr").evaluateAll((trs) => trs.map((tr) => [tr.className, ...Array.from(tr.cells).map((c) => c.textContent)]));
const pwned = await page.evaluate(() => window.__pwned === undefined ? null : window.__pwned);

// axe-core on both tests, every detail open (this context bypasses the CSP to inject axe).
const axeContext = await browser.newContext({ bypassCSP: true, viewport: { width: 1200, height: 900 } });
const axePage = await axeContext.newPage();
await axePage.goto(`${url}#${anchor}`);
await axePage.locator(`[id="${anchor}"]`).waitFor({ state: "visible", timeout: 10000 });
await axePage.locator(`[id="${trajectoryTest}"] > summary`).click();
await axePage.locator(`[id="${trajectoryTest}"] > .body:not([data-lazy]) ol.trajectory`).waitFor();
const ids = [anchor.split("-")[0], trajectoryTest];
// Every detail open, the run views unpacked by opening their runs, then what they hold open.
const openAll = (ids) => ids.forEach((id) => document.querySelectorAll(`[id="${id}"] details`).forEach((d) => { d.open = true; }));
await axePage.evaluate(openAll, ids);
await axePage.waitForFunction((ids) => ids.every((id) => !document.querySelector(`[id="${id}"] [data-lazy], [id="${id}"] [aria-busy]`)), ids);
await axePage.evaluate(openAll, ids);
await axePage.addScriptTag({ path: require.resolve("axe-core/axe.min.js") });
const axe = await axePage.evaluate(async (ids) => {
  const r = await window.axe.run({ include: [["header"], ...ids.map((id) => [`[id="${id}"]`])] }, { resultTypes: ["violations"] });
  return { version: window.axe.version, violations: r.violations.map((v) => ({
    id: v.id, impact: v.impact, nodes: v.nodes.length, first: v.nodes[0]?.html.slice(0, 200) })) };
}, ids);
await browser.close();
console.log(JSON.stringify({ anchorOpen, testOpen, inView, runSections, sideCaption, sideParts,
  steps, diffLines, diffText, omitted, requests, pwned, errors, axe }));
