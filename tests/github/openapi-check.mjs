// Validates requests aptitude sent to a mock GitHub API against GitHub's own OpenAPI
// description (npm @octokit/openapi, pinned in package-lock.json), operation by operation,
// with ajv. Usage: node tests/github/openapi-check.mjs REQUESTS.json
// REQUESTS.json: [{"method": "POST", "path": "/repos/o/r/check-runs", "body": {...}|null}, ...]
// Prints [{method, path, operation, errors: [...]}] — an unknown route is an error too.
import { readFileSync } from "node:fs";
import { createRequire } from "node:module";
import Ajv from "ajv";

const require = createRequire(import.meta.url);
const description = JSON.parse(
  readFileSync(require.resolve("@octokit/openapi/generated/api.github.com.json"), "utf8"),
);
// OpenAPI 3.0 schemas: `nullable`, `example`, vendor keys; formats are not checked. The
// components are one schema that operations' `$ref`s point into.
const ajv = new Ajv({ strict: false, allErrors: true, validateFormats: false });
ajv.addSchema({ $id: "github", components: description.components });
const inComponents = (schema) =>
  JSON.parse(JSON.stringify(schema).replaceAll('"#/components/', '"github#/components/'));
const deref = (node) => {
  const ref = node?.$ref;
  if (!ref) return node;
  return ref.slice(2).split("/").reduce((n, key) => n[key.replaceAll("~1", "/").replaceAll("~0", "~")], description);
};

const routes = Object.entries(description.paths).map(([template, ops]) => ({
  template,
  pattern: new RegExp("^" + template.replace(/\{[^}]+\}/g, "[^/]+") + "$"),
  ops,
}));
const compiled = new Map();

const requests = JSON.parse(readFileSync(process.argv[2], "utf8"));
const out = requests.map(({ method, path, body }) => {
  const m = method.toLowerCase();
  const route = routes.find((r) => r.pattern.test(path) && r.ops[m]);
  if (!route) return { method, path, operation: null, errors: ["no such operation in GitHub's API"] };
  const op = route.ops[m];
  const requestBody = deref(op.requestBody);
  const schema = requestBody?.content?.["application/json"]?.schema;
  if (!schema) {
    const errors = body === null || body === undefined ? [] : ["a body where the operation takes none"];
    return { method, path, operation: op.operationId, errors };
  }
  if (requestBody.required && (body === null || body === undefined)) {
    return { method, path, operation: op.operationId, errors: ["the required body is missing"] };
  }
  if (!compiled.has(op.operationId)) compiled.set(op.operationId, ajv.compile(inComponents(schema)));
  const validate = compiled.get(op.operationId);
  const errors = validate(body)
    ? []
    : validate.errors.map((e) => `${e.instancePath || "/"} ${e.message} ${JSON.stringify(e.params)}`);
  return { method, path, operation: op.operationId, errors };
});
console.log(JSON.stringify(out));
