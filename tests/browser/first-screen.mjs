// Opens a large aptitude HTML report (details compressed, loaded on demand) in headless
// Chromium (Debian's, via playwright-core) and prints, as JSON, how long its first screen
// took and what a reader sees when opening a test:
//   node tests/browser/first-screen.mjs REPORT.html
// The times are figures to read (tests/it/reports.rs prints them; `bash
// benches/report_first_screen.sh` gives them for 5,000 tests × 3 runs), never asserted:
//   firstTestPaintMs  when the browser painted the first test's name (Element Timing API:
//               the report marks it `elementtiming="first-test"`), from navigation start
//   fcpMs       the browser's first-contentful-paint entry
//   firstRowMs  navigation start → playwright sees the first summary line (wall clock; it
//               waits for the page's main thread, so it is later than the paint)
//   domContentLoadedMs, loadMs  the navigation timing entry
//   detailsMs   click on a failing test → its unpacked details in the page
//   runView     its first run opened by keyboard: whether its view was packed until then,
//               and what it shows once unpacked
// What the first screen shows, at 1280×800 before any scroll or click (asserted):
//   firstScreen  the first failing test's name and its first failed assertion's reason
//               (`[data-failure]`): their text and where their tops are (px from the
//               page's top), with the viewport's height; a report whose tables come
//               before its tests, or whose reason is folded, puts them out of it
// axe-core (npm, pinned) then checks the header and the opened test with its runs' views
// unpacked and every detail open, and the page is looked
// at with JavaScript off.
import { openPage } from "./chromium.mjs";
import { pathToFileURL } from "node:url";
import { createRequire } from "node:module";

const require = createRequire(import.meta.url);

const [report] = process.argv.slice(2);
const url = pathToFileURL(report).href;
const { browser, page, errors } = await openPage({ width: 1280, height: 800 });

const start = Date.now();
await page.goto(url, { waitUntil: "commit" });
await page.locator("#t0 > summary").waitFor({ state: "visible" });
const firstRowMs = Date.now() - start;
await page.waitForLoadState("load");
const timing = await page.evaluate(async () => {
  const nav = performance.getEntriesByType("navigation")[0];
  const fcp = performance.getEntriesByName("first-contentful-paint")[0];
  return { fcpMs: fcp ? Math.round(fcp.startTime) : null,
           firstTestPaintMs: await new Promise((resolve) => {
             new PerformanceObserver((list) => {
               const e = list.getEntries().find((e) => e.identifier === "first-test");
               if (e) resolve(Math.round(e.renderTime || e.loadTime));
             }).observe({ type: "element", buffered: true });
             setTimeout(() => resolve(null), 5000);
           }),
           domContentLoadedMs: Math.round(nav.domContentLoadedEventEnd),
           loadMs: Math.round(nav.loadEventEnd) };
});
// The first screen: the first failure is open (its details unpacked) and says why.
const firstFailed = page.locator("details.test.failed, details.test.error").first();
const reason = firstFailed.locator("[data-failure] pre.reasoning").first();
await reason.waitFor({ state: "visible", timeout: 10000 }).catch(() => {});
const top = async (l) => (await l.count()) ? (await l.boundingBox())?.y ?? null : null;
const firstScreen = {
  viewportHeight: page.viewportSize().height,
  name: (await firstFailed.locator(":scope > summary .name").textContent()) || "",
  nameTop: await top(firstFailed.locator(":scope > summary .name")),
  reason: (await reason.count()) ? ((await reason.textContent()) || "") : "",
  reasonTop: await top(reason),
  reasonVisible: (await reason.count()) ? await reason.isVisible() : false,
};
const rows = await page.locator("details.test").count();
const placeholders = await page.locator("details.test > .body[data-lazy]").count();
const openAtStart = await page.locator("details.test[open]").count();

// Open a failing test not open yet (the first one is): its details are unpacked into the page.
const failed = page.locator("details.test.failed:not([open])").first();
const id = await failed.getAttribute("id");
const clicked = Date.now();
await failed.locator(":scope > summary").click();
await page.locator(`#${id} > .body:not([data-lazy]) h2.section`).first().waitFor();
const detailsMs = Date.now() - clicked;
const body = page.locator(`#${id} > .body`);
const sections = await body.locator("h2.section").allTextContents();
const runs = await body.locator("details.run > summary").allTextContents();
const reasoning = (await body.locator("[data-failure] pre.reasoning").first().textContent()) || "";
// Its first run by keyboard (Tab to its summary, Enter): the run's view is unpacked then.
// (A report from before run views were packed apart has no `.run-body`: null.)
const run = body.locator("details.run").first();
let runView = null;
if (await run.locator(":scope > .run-body").count()) {
  const packedAtFirst = await run.locator(":scope > .run-body[data-lazy]").count();
  await run.locator(":scope > summary").focus();
  await page.keyboard.press("Enter");
  await run.locator(":scope > .run-body:not([data-lazy]):not([aria-busy]) ul.assertions").waitFor();
  runView = { packedAtFirst, open: await run.evaluate((d) => d.open),
    sections: await run.locator("h3.section").allTextContents(),
    assertions: await run.locator(".run-body ul.assertions > li").count() };
}
const pwned = await page.evaluate(() => window.__pwned === undefined ? null : window.__pwned);
const answers = await body.locator("pre.answer").allTextContents();
// The filter still hides passing tests.
await page.locator("#failures-only").check();
const passedHidden = !(await page.locator("details.test.passed").first().isVisible());

// axe-core: this context bypasses the CSP to inject axe; the page's own script still runs,
// so the opened test's details are the unpacked ones. axe walks the whole document, which
// takes minutes for thousands of tests: it is left out above 1,000 (the test's suite is
// smaller; its markup is the same).
let axe = null;
if (rows <= 1000) {
  const axeContext = await browser.newContext({ bypassCSP: true, viewport: { width: 1200, height: 900 } });
  const axePage = await axeContext.newPage();
  await axePage.goto(url);
  await axePage.locator(`#${id} > summary`).click();
  await axePage.locator(`#${id} > .body:not([data-lazy]) h2.section`).first().waitFor();
  // Every detail open: the runs' views are unpacked, then what they hold opened too.
  const openAll = (id) => document.querySelectorAll(`#${id} details`).forEach((d) => { d.open = true; });
  await axePage.evaluate(openAll, id);
  await axePage.waitForFunction((id) => !document.querySelector(`#${id} [data-lazy], #${id} [aria-busy]`), id);
  await axePage.evaluate(openAll, id);
  await axePage.addScriptTag({ path: require.resolve("axe-core/axe.min.js") });
  axe = await axePage.evaluate(async (id) => {
    const r = await window.axe.run({ include: [["header"], [`#${id}`]] }, { resultTypes: ["violations"] });
    return { version: window.axe.version, violations: r.violations.map((v) => ({
      id: v.id, impact: v.impact, nodes: v.nodes.length, first: v.nodes[0]?.html.slice(0, 200) })) };
  }, id);
}

// Without JavaScript the summary lines are there and a notice says why details are not.
const noJs = await browser.newContext({ javaScriptEnabled: false });
const noJsPage = await noJs.newPage();
await noJsPage.goto(url);
const noJsNotice = (await noJsPage.locator("noscript, .notice").first().textContent())?.trim() || "";
const noJsRows = await noJsPage.locator("details.test").count();
await browser.close();
console.log(JSON.stringify({ firstRowMs, ...timing, firstScreen, detailsMs, runView, rows, placeholders, openAtStart, id,
  sections, runs, reasoning, pwned, answers, passedHidden, errors, axe, noJsNotice, noJsRows }));
