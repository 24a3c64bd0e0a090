// Reads a JUnit XML file with test-results-parser (npm, pinned in package-lock.json), the
// parser of the TestBeats reporters, and prints what it understood as JSON:
//   node tests/consumers/junit-read.mjs FILE.xml
import { createRequire } from "node:module";

const require = createRequire(import.meta.url);
const { parse } = require("test-results-parser");

const result = parse({ type: "junit", files: [process.argv[2]] });
const cases = result.suites.flatMap((s) => s.cases.map((c) => ({
  suite: s.name, name: c.name, status: c.status, failure: c.failure, stack_trace: c.stack_trace,
})));
console.log(JSON.stringify({ total: result.total, passed: result.passed, failed: result.failed,
  errors: result.errors, skipped: result.skipped, cases }));
