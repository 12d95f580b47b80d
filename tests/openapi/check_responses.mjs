// Keeps services/edge/openapi.json honest (docs/api.md, "How the description is kept honest").
//
//   node check_responses.mjs --spec openapi.json --records DIR
//   node check_responses.mjs --spec openapi.json --document-only     (step 1 alone)
//
// 1. The document is a valid OpenAPI 3.1 description (@seriousme/openapi-schema-validator, the
//    official schema), every schema in it compiles (Ajv, JSON Schema 2020-12, strict), and its
//    shape holds: no operation answers with only `default`, every one declares a success, every
//    4xx/5xx is application/problem+json.
// 2. Every exchange the integration suites recorded in DIR/*.jsonl (tests/integration/
//    response_recorder.h) with the edge's public port is described: its path and method match an
//    operation, its status is declared there (`default` does not count), its content type is one
//    the status declares, and its body validates against that schema. A request the edge
//    accepted (2xx) must also match the operation's request body (or the operation declares
//    none and the request had no body). Paths outside the API (the web app's pages) are not
//    described and only counted; a path the API does not have must be answered 404 or 405 with a
//    Problem.
// Fails when DIR holds no exchange with an edge: a check that saw nothing proves nothing.
import { readFileSync, readdirSync, existsSync } from "node:fs";
import { join } from "node:path";
import { Validator } from "@seriousme/openapi-schema-validator";
import Ajv2020 from "ajv/dist/2020.js";
import addFormats from "ajv-formats";

const METHODS = ["get", "put", "post", "delete", "patch", "head", "options", "trace"];

function arg(name) {
  const i = process.argv.indexOf(name);
  if (i < 0 || i + 1 >= process.argv.length) {
    console.error(`usage: node check_responses.mjs --spec FILE --records DIR (missing ${name})`);
    process.exit(2);
  }
  return process.argv[i + 1];
}

const specPath = arg("--spec");
const documentOnly = process.argv.includes("--document-only");
const recordsDir = documentOnly ? null : arg("--records");
const failures = [];
const fail = (what) => failures.push(what);

// --- 1. The document itself -------------------------------------------------------------------
const validator = new Validator();
const verdict = await validator.validate(specPath);
if (!verdict.valid) {
  console.error(`${specPath} is not a valid OpenAPI document:`);
  console.error(JSON.stringify(verdict.errors, null, 2));
  process.exit(1);
}
if (!String(validator.version).startsWith("3.")) fail(`OpenAPI version ${validator.version}, not 3.x`);
const spec = validator.resolveRefs(); // every $ref replaced by what it names

const ajv = new Ajv2020({ allErrors: true, strict: true, allowUnionTypes: true, validateFormats: true });
addFormats(ajv);
// OpenAPI's own keywords and formats inside Schema Objects.
for (const keyword of ["example", "discriminator", "xml", "externalDocs"]) ajv.addKeyword(keyword);
for (const format of ["int32", "int64", "float", "double", "password", "binary"]) {
  ajv.addFormat(format, true);
}
const compiled = new Map();
function compile(schema, where) {
  if (compiled.has(schema)) return compiled.get(schema);
  let check = null;
  try {
    check = ajv.compile(schema);
  } catch (e) {
    fail(`${where}: schema does not compile: ${e.message}`);
  }
  compiled.set(schema, check);
  return check;
}

// Compiles a media type's schema, and checks that its examples (the media's and the schema's
// own) are what the schema describes: an example a client copies must be a valid one.
function checkExample(media, where) {
  const check = compile(media.schema, where);
  if (!check) return;
  for (const example of [media.example, media.schema.example]) {
    if (example !== undefined && !check(example)) {
      fail(`${where}: the example does not match the schema: ${ajv.errorsText(check.errors)}`);
    }
  }
}

const mediaType = (contentType) => (contentType || "").split(";")[0].trim().toLowerCase();
const isJson = (type) => type === "application/json" || type.endsWith("+json");

const operations = []; // {template, method, op, regex, literals}
for (const [template, item] of Object.entries(spec.paths || {})) {
  const segments = template.split("/").filter((s) => s !== "");
  const regex = new RegExp(
    "^" +
      segments.map((s) => "/" + (/^\{.+\}$/.test(s) ? "[^/]+" : s.replace(/[.*+?^$()|[\]\\]/g, "\\$&"))).join("") +
      "/?$",
  );
  const literals = segments.filter((s) => !/^\{.+\}$/.test(s)).length;
  for (const method of METHODS) {
    const op = item[method];
    if (!op) continue;
    const where = `${method.toUpperCase()} ${template}`;
    operations.push({ template, method, op, regex, literals, where });
    const statuses = Object.keys(op.responses || {});
    const explicit = statuses.filter((s) => /^[1-5][0-9][0-9]$/.test(s));
    if (explicit.length === 0) fail(`${where}: declares no explicit status (only ${statuses.join(", ") || "nothing"})`);
    if (!explicit.some((s) => s.startsWith("2") || s.startsWith("3") || s === "101")) {
      fail(`${where}: declares no success status`);
    }
    for (const status of explicit) {
      const response = op.responses[status];
      for (const [type, media] of Object.entries(response.content || {})) {
        if (media.schema) checkExample(media, `${where} ${status} ${type}`);
      }
      if (Number(status) >= 400 && !(response.content || {})["application/problem+json"]) {
        fail(`${where}: ${status} is not application/problem+json`);
      }
    }
    for (const [type, media] of Object.entries(op.requestBody?.content || {})) {
      if (media.schema) checkExample(media, `${where} request ${type}`);
    }
  }
}
const problemSchema = spec.components?.schemas?.Problem;
if (!problemSchema) fail("components.schemas.Problem is missing");
const checkProblem = problemSchema ? compile(problemSchema, "components.schemas.Problem") : null;

if (documentOnly) {
  for (const f of [...new Set(failures)]) console.error("  " + f);
  if (failures.length > 0) process.exit(1);
  console.log(`${specPath}: valid OpenAPI ${validator.version}, ${operations.length} operations, every schema compiles`);
  process.exit(0);
}

// --- 2. What the suites received --------------------------------------------------------------
function describe(record) {
  return `${record.binary}: ${record.method} ${record.path} -> ${record.status}`;
}

function errorsOf(check) {
  return ajv.errorsText(check.errors, { dataVar: "body" });
}

function parseBody(record, text) {
  try {
    return { ok: true, value: JSON.parse(text) };
  } catch (e) {
    fail(`${describe(record)}: body is not JSON (${e.message}): ${text.slice(0, 200)}`);
    return { ok: false };
  }
}

// The body of a request the edge accepted, against the operation's requestBody.
function checkRequest(record, found) {
  const body = record.request_body || "";
  const declared = found.op.requestBody?.content;
  if (!declared) {
    if (body !== "" && body !== "{}") fail(`${describe(record)}: the request had a body; ${found.where} declares none`);
    return;
  }
  if (body === "") {
    if (found.op.requestBody.required) fail(`${describe(record)}: accepted without the required body`);
    return;
  }
  const type = mediaType(record.request_content_type);
  const media = declared[type];
  if (!media) {
    fail(`${describe(record)}: request content type ${type} is not one of ${Object.keys(declared).join(", ")}`);
    return;
  }
  if (!isJson(type) || !media.schema) return; // multipart parts are checked by the registry's own tests
  const parsed = parseBody(record, body);
  if (!parsed.ok) return;
  const check = compile(media.schema, `${found.where} request ${type}`);
  if (check && !check(parsed.value)) {
    fail(`${describe(record)}: the accepted request body does not match ${found.where}: ${errorsOf(check)}`);
  }
}

function checkResponse(record, found) {
  const status = String(record.status);
  // An explicit status first, then its range ("4XX"), as OpenAPI resolves them; never default.
  const response = found.op.responses?.[status] ?? found.op.responses?.[status[0] + "XX"];
  if (!response) {
    fail(`${describe(record)}: ${found.where} does not declare ${status} (declares ${Object.keys(found.op.responses || {}).join(", ")})`);
    return;
  }
  const content = response.content || {};
  const type = mediaType(record.content_type);
  if (Object.keys(content).length === 0) {
    if (record.body !== "") fail(`${describe(record)}: ${status} declares no body but one came (${type})`);
    return;
  }
  const media = content[type];
  if (!media) {
    fail(`${describe(record)}: content type "${type}" is not one of ${Object.keys(content).join(", ")}`);
    return;
  }
  if (!media.schema || !isJson(type)) return; // e.g. text/event-stream: the type is what is described
  const parsed = parseBody(record, record.body);
  if (!parsed.ok) return;
  const check = compile(media.schema, `${found.where} ${status} ${type}`);
  if (check && !check(parsed.value)) {
    fail(`${describe(record)}: body does not match the schema: ${errorsOf(check)}; body: ${record.body.slice(0, 300)}`);
  }
}

// The operations whose template matches path most closely (most literal segments: a path
// like /api/v1/marketplace/facets is not /api/v1/marketplace/{id}).
function candidatesFor(path) {
  const matches = operations.filter((o) => o.regex.test(path));
  const best = Math.max(...matches.map((o) => o.literals));
  return matches.filter((o) => o.literals === best);
}

// Only the API is described: the rest of the edge's port is the web app's files.
const isApi = (path) => path.startsWith("/api/") || path === "/mcp" || path.startsWith("/mcp/") || path === "/healthz";

const files = existsSync(recordsDir) ? readdirSync(recordsDir).filter((f) => f.endsWith(".jsonl")) : [];
let checked = 0;
let pages = 0;
let otherPorts = 0;
let unknownRoutes = 0;
const seen = new Set();
for (const file of files.sort()) {
  const binary = file.replace(/\.jsonl$/, "");
  const lines = readFileSync(join(recordsDir, file), "utf8").split("\n").filter((l) => l !== "");
  for (const line of lines) {
    const record = { ...JSON.parse(line), binary };
    if (!record.edge) {
      otherPorts++;
      continue;
    }
    if (!isApi(record.path)) {
      pages++;
      continue;
    }
    const found = candidatesFor(record.path).find((o) => o.method === record.method.toLowerCase());
    if (!found) {
      // A route or method the API does not have: the edge must say so with a Problem.
      unknownRoutes++;
      if (![404, 405].includes(record.status) || mediaType(record.content_type) !== "application/problem+json") {
        fail(`${describe(record)}: no operation describes this request`);
      } else if (checkProblem) {
        const parsed = parseBody(record, record.body);
        if (parsed.ok && !checkProblem(parsed.value)) fail(`${describe(record)}: not a Problem: ${errorsOf(checkProblem)}`);
      }
      continue;
    }
    checked++;
    seen.add(found.where);
    checkResponse(record, found);
    if (record.status >= 200 && record.status < 300) checkRequest(record, found);
  }
}

if (checked === 0) {
  fail(`no exchange with an edge's API was recorded in ${recordsDir}: run integration suites first (ctest -R it_)`);
}
const unique = [...new Set(failures)];
console.log(
  `${files.length} record files: ${checked} API exchanges checked against ${operations.length} operations ` +
    `(${seen.size} exercised), ${unknownRoutes} to routes the API does not have, ${pages} web app ` +
    `pages and ${otherPorts} exchanges with other ports not described`,
);
if (unique.length > 0) {
  console.error(`${unique.length} problems:`);
  for (const f of unique.slice(0, 200)) console.error("  " + f);
  if (unique.length > 200) console.error(`  ... and ${unique.length - 200} more`);
  process.exit(1);
}
console.log("every recorded answer is described by the OpenAPI document");
