// Opens an aptitude HTML report in headless Chromium (Debian's, via playwright-core) and
// prints what a reader sees, as JSON, for tests/it/reports.rs to assert on:
//   node tests/browser/check-report.mjs REPORT.html SCREENSHOT.png
// Then runs axe-core (npm, pinned) on the page with every test and detail expanded, and
// looks at the page with JavaScript off.
import { openPage } from "./chromium.mjs";
import { pathToFileURL } from "node:url";
import { createRequire } from "node:module";

const require = createRequire(import.meta.url);

const [report, screenshot] = process.argv.slice(2);
const { browser, page, errors } = await openPage();
await page.goto(pathToFileURL(report).href);

const text = async (sel) => (await page.locator(sel).first().textContent())?.trim();
const counts = {
  total: await text("#count-total"), passed: await text("#count-passed"),
  failed: await text("#count-failed"), error: await text("#count-error"),
};
// A failing test is open, and so is why its assertion failed: no click to read it.
const reasoning = page.locator("details.test.failed [data-failure] pre.reasoning").first();
const reasonVisible = await reasoning.isVisible();
const reasoningText = (await reasoning.textContent()) || "";
// A passing assertion's evidence is folded until expanded.
const evidence = page.locator("details.test.failed details.detail > summary").first();
const evidenceText = page.locator("details.test.failed details.detail pre.reasoning").first();
const evidenceHiddenBefore = !(await evidenceText.isVisible());
await evidence.click();
const evidenceVisibleAfter = await evidenceText.isVisible();
// The failures-only filter hides passing tests.
const passedVisibleBefore = await page.locator("details.test.passed").first().isVisible();
await page.locator("#failures-only").check();
const passedVisibleAfter = await page.locator("details.test.passed").first().isVisible();
await page.locator("#failures-only").uncheck();
const pwned = await page.evaluate(() => window.__pwned === undefined ? null : window.__pwned);
const answerText = await page.locator("pre.answer").allTextContents();
await page.screenshot({ path: screenshot, fullPage: false });
const filterShown = await page.locator("#failures-only").isVisible();

// axe-core: the page's CSP allows only its own script, so this context bypasses it to
// inject axe; every <details> is opened first so that every region is checked.
const axeContext = await browser.newContext({ bypassCSP: true, viewport: { width: 1200, height: 900 } });
const axePage = await axeContext.newPage();
await axePage.goto(pathToFileURL(report).href);
await axePage.evaluate(() => document.querySelectorAll("details").forEach((d) => { d.open = true; }));
await axePage.addScriptTag({ path: require.resolve("axe-core/axe.min.js") });
const axe = await axePage.evaluate(async () => {
  const r = await window.axe.run(document, { resultTypes: ["violations"] });
  return { version: window.axe.version, violations: r.violations.map((v) => ({
    id: v.id, impact: v.impact, nodes: v.nodes.length, first: v.nodes[0]?.html.slice(0, 200) })) };
});

// Without JavaScript the filter, which would do nothing, is not shown.
const noJs = await browser.newContext({ javaScriptEnabled: false });
const noJsPage = await noJs.newPage();
await noJsPage.goto(pathToFileURL(report).href);
const filterShownWithoutJs = await noJsPage.locator("#failures-only").isVisible();
await browser.close();
console.log(JSON.stringify({ counts, reasonVisible, evidenceHiddenBefore, evidenceVisibleAfter, reasoningText, passedVisibleBefore,
  passedVisibleAfter, pwned, answerText, errors, filterShown, filterShownWithoutJs, axe }));
