// Labels the judged answers of a real run's HTML report in headless Chromium, one verdict
// per test, and downloads them, for tests/it/certify.rs to hand to `aptitude judge certify`:
//   node tests/browser/labels-certify.mjs REPORT.html DOWNLOAD_DIR '{"alpha":"pass",…}'
// Each test's details are opened, its "Your verdict" group clicked with the mouse on the
// verdict's label, the rater's name typed, and the download button pressed. Prints
// {file, count, errors} as JSON.
import { openPage } from "./chromium.mjs";
import { pathToFileURL } from "node:url";
import path from "node:path";

const [report, downloads, verdictsJson] = process.argv.slice(2);
const verdicts = JSON.parse(verdictsJson);
const { browser, page, errors } = await openPage();
await page.goto(pathToFileURL(report).href);
await page.locator("#rater").fill("ana");
for (const [test, verdict] of Object.entries(verdicts)) {
  const details = page.locator("details.test", {
    has: page.locator(":scope > summary", { hasText: test }),
  });
  await details.evaluate((d) => { d.open = true; });
  await details.locator("fieldset.verdict label", { hasText: new RegExp(`^\\s*${verdict}\\s*$`) }).click();
}
const count = (await page.locator("#labels-count").textContent()) || "";
const [download] = await Promise.all([page.waitForEvent("download"), page.locator("#labels-download").click()]);
const file = path.join(downloads, download.suggestedFilename());
await download.saveAs(file);
await browser.close();
console.log(JSON.stringify({ file, count, errors }));
