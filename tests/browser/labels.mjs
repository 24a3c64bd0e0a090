// Labels a judged HTML report in headless Chromium (Debian's, via playwright-core) the way a
// person would, and prints what happened as JSON for tests/it/labels.rs to assert on:
//   node tests/browser/labels.mjs REPORT.html DOWNLOAD_DIR LARGE_REPORT.html
// The report has two judged answers. The first is labelled `pass` by keyboard alone (arrow
// key in its radio group, Tab to its note, typing), the second `fail` with the mouse; the
// rater's name is typed; the download button is pressed with Enter and the file saved in
// DOWNLOAD_DIR. Then: the page reloaded (labels kept in localStorage when the browser
// allows it), axe-core (npm, pinned) on the page with the controls shown, and the page
// with JavaScript off (no control that would do nothing). LARGE_REPORT has more tests than
// are inline, so a test's controls come with its details, unpacked when it is opened: test
// t4 (not open at first) is labelled `fail`, the page reloaded, and t4 opened again; then
// run 2 of the repeated test t5, whose view and controls are unpacked when it is opened.
import { openPage } from "./chromium.mjs";
import { pathToFileURL } from "node:url";
import { createRequire } from "node:module";
import path from "node:path";

const require = createRequire(import.meta.url);
const [report, downloads, large] = process.argv.slice(2);
const url = pathToFileURL(report).href;
const { browser, page, errors } = await openPage();
await page.goto(url);
// Every test open: the details of a passing test are folded at first.
await page.evaluate(() => document.querySelectorAll("details.test").forEach((d) => { d.open = true; }));

const barVisible = await page.locator("#labelbar").isVisible();
const fieldsets = page.locator("fieldset.verdict");
const controls = await fieldsets.count();
const controlsVisible = controls > 0 && await fieldsets.first().isVisible();
const legends = await page.locator("fieldset.verdict legend").allTextContents();

// A download without a rater's name is refused with a message, and the name field focused.
await page.locator("#labels-download").click();
const noRaterMessage = (await page.locator("#labels-message").textContent()) || "";
const raterFocused = await page.evaluate(() => document.activeElement?.id === "rater");
await page.keyboard.type("ana");

// The first answer by keyboard: the group's checked radio ("not labelled") takes the focus
// as Tab would give it, an arrow key moves to "pass" and checks it, Tab goes to the note.
const first = fieldsets.nth(0);
await first.locator('input[value="none"]').focus();
await page.keyboard.press("ArrowRight");
const focusedAfterArrow = await page.evaluate(() => {
  const el = document.activeElement;
  return { value: el.value, checked: el.checked, focusVisible: el.matches(":focus-visible"),
           outline: getComputedStyle(el).outlineStyle };
});
await page.keyboard.press("Tab");
const noteFocused = await page.evaluate(() => document.activeElement?.classList.contains("note"));
await page.keyboard.type("states 42 plainly");

// The second answer with the mouse, on the label's text.
await fieldsets.nth(1).locator("label", { hasText: /^\s*fail\s*$/ }).click();
const count = (await page.locator("#labels-count").textContent()) || "";

// Download, by keyboard.
await page.locator("#labels-download").focus();
const [download] = await Promise.all([page.waitForEvent("download"), page.keyboard.press("Enter")]);
const file = path.join(downloads, download.suggestedFilename());
await download.saveAs(file);
const downloadedMessage = (await page.locator("#labels-message").textContent()) || "";
const pwned = await page.evaluate(() => window.__pwned === undefined ? null : window.__pwned);
const answers = await page.locator("pre.answer").allTextContents();

// Reloaded: the labels and the rater come back where the browser keeps localStorage.
await page.reload();
await page.evaluate(() => document.querySelectorAll("details.test").forEach((d) => { d.open = true; }));
const afterReload = {
  rater: await page.locator("#rater").inputValue(),
  verdicts: await page.evaluate(() => [...document.querySelectorAll("fieldset.verdict")].map((fs) =>
    fs.querySelector("input[type=radio]:checked")?.value ?? null)),
  count: (await page.locator("#labels-count").textContent()) || "",
};

// axe-core with the controls shown (this context bypasses the CSP to inject axe; the
// page's own script runs and shows them), every <details> open.
const axeContext = await browser.newContext({ bypassCSP: true, viewport: { width: 1200, height: 900 } });
const axePage = await axeContext.newPage();
await axePage.goto(url);
await axePage.evaluate(() => document.querySelectorAll("details").forEach((d) => { d.open = true; }));
const axeControlsVisible = await axePage.locator("fieldset.verdict").first().isVisible();
await axePage.addScriptTag({ path: require.resolve("axe-core/axe.min.js") });
const axe = await axePage.evaluate(async () => {
  const r = await window.axe.run(document, { resultTypes: ["violations"] });
  return { version: window.axe.version, violations: r.violations.map((v) => ({
    id: v.id, impact: v.impact, nodes: v.nodes.length, first: v.nodes[0]?.html.slice(0, 200) })) };
});

// Without JavaScript neither the rater bar nor the controls show.
const noJs = await browser.newContext({ javaScriptEnabled: false });
const noJsPage = await noJs.newPage();
await noJsPage.goto(url);
// A judged test opened by its summary (no script needed): its controls are in the page
// but not shown.
await noJsPage.locator("details.test:has(fieldset.verdict) > summary").first().click();
const noJsShown = {
  bar: await noJsPage.locator("#labelbar").isVisible(),
  controlsInOpenTest: await noJsPage.locator("details.test[open] fieldset.verdict").count(),
  controlsVisible: await noJsPage.locator("details.test[open] fieldset.verdict").first().isVisible(),
};
const big = await browser.newPage();
await big.goto(pathToFileURL(large).href);
const packedAtFirst = await big.locator("#t4 > .body[data-lazy]").count();
const opened = async () => {
  await big.locator("#t4 > summary").click();
  await big.locator("#t4 fieldset.verdict").first().waitFor();
};
await opened();
await big.locator("#t4 fieldset.verdict label", { hasText: /^\s*fail\s*$/ }).first().click();
await big.reload();
await opened();
const largeAfterReload = {
  packedAtFirst,
  verdict: await big.locator("#t4 fieldset.verdict input[type=radio]:checked").first().getAttribute("value"),
  count: (await big.locator("#labels-count").textContent()) || "",
};
// t5 is repeated: its run 2's view, with its controls, is unpacked when the run is opened
// (by keyboard: its summary focused, Enter); labelled `pass`, the page reloaded, opened again.
const run = big.locator('[id="t5-r2"]');
const openRun = async () => {
  // Opened by its summary, unless the page opened it (its first failure).
  await big.waitForLoadState("load");
  if (!(await big.locator("#t5").evaluate((d) => d.open))) await big.locator("#t5 > summary").click();
  await run.locator(":scope > summary").focus();
  const packed = await run.locator(":scope > .run-body[data-lazy]").count();
  await big.keyboard.press("Enter");
  await run.locator("fieldset.verdict").first().waitFor();
  return packed;
};
const runPackedAtFirst = await openRun();
await run.locator("fieldset.verdict label", { hasText: /^\s*pass\s*$/ }).first().click();
await big.reload();
await openRun();
const largeRun = {
  packedAtFirst: runPackedAtFirst,
  controls: await run.locator("fieldset.verdict").count(),
  verdict: await run.locator("fieldset.verdict input[type=radio]:checked").first().getAttribute("value"),
  count: (await big.locator("#labels-count").textContent()) || "",
};
await browser.close();
console.log(JSON.stringify({ largeAfterReload, largeRun, barVisible, controls, controlsVisible, legends, noRaterMessage, raterFocused,
  focusedAfterArrow, noteFocused, count, file, suggested: download.suggestedFilename(), downloadedMessage,
  pwned, answers, afterReload, axeControlsVisible, axe, noJsShown, errors }));
