// prefilter.mjs -- evaluates the webhooks' generated matchConditions with @bufbuild/cel on every
// object the judge (tests/cel/judge.c) printed, and checks them against trainguard's verdict:
//
//   - no condition may error on any object (an error falls under the failurePolicy: with Ignore
//     the API server skips the webhook, with Fail the request fails);
//   - an object on which /validate reports a finding passes the validating webhook's conditions,
//     and one that /mutate patches passes the mutating webhook's;
//   - a case's `prefilter: {validate: pass|filtered, mutate: ...}` holds (plain Pods, a CPU batch
//     Job, one object per trigger: tests/cel/prefilter-cases.yaml). "pass": the webhook is
//     called; "filtered": it is not (a condition is false, or the webhook does not register the
//     kind or operation at all);
//   - the API server's limits: at most 64 conditions, each name a qualified name.
//
// usage: node prefilter.mjs VALIDATE.json MUTATE.json JUDGED.jsonl
// Prints one line per failure and "N passed, M failed" last; exits 1 on any failure.
import { readFileSync } from "node:fs";
import { run } from "@bufbuild/cel";

const [validatePath, mutatePath, judgedPath] = process.argv.slice(2);
const hooks = {
  validate: JSON.parse(readFileSync(validatePath, "utf8")),
  mutate: JSON.parse(readFileSync(mutatePath, "utf8")),
};
const judged = readFileSync(judgedPath, "utf8")
  .split("\n")
  .filter((l) => l.trim())
  .map((l) => JSON.parse(l));

let passed = 0;
let failed = 0;
function check(ok, what) {
  if (ok) passed++;
  else {
    failed++;
    console.log("FAIL " + what);
  }
}

// JSON as the API server hands it to CEL: objects are maps, integers int, other numbers double.
function toCel(v) {
  if (Array.isArray(v)) return v.map(toCel);
  if (v !== null && typeof v === "object")
    return new Map(Object.entries(v).map(([k, x]) => [k, toCel(x)]));
  if (typeof v === "number" && Number.isInteger(v)) return BigInt(v);
  return v;
}

// The API server's limits (kubernetes/kubernetes: pkg/apis/admissionregistration/validation/
// validation.go validateMatchConditions; apimachinery IsQualifiedName for the names).
const qualifiedName = /^([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]$/;
for (const [name, hook] of Object.entries(hooks)) {
  check(hook.conditions.length <= 64, `${name}: at most 64 matchConditions`);
  for (const c of hook.conditions) {
    check(qualifiedName.test(c.name) && c.name.length <= 63, `${name}: ${c.name} is a qualified name`);
    check(c.expression.trim().length > 0, `${name}: ${c.name} has an expression`);
  }
}

// The group/resource key the generator uses, and whether the webhook takes this operation.
function resourceKey(o) {
  return o.resource + (o.group ? "." + o.group : "");
}

// Evaluates every condition of hook on o: "pass", "filtered" or "unregistered"; errors counted.
function evaluate(name, hook, o) {
  const ops = hook.resources[resourceKey(o)];
  if (o.resource === null || !ops) return "unregistered";
  const request = {
    uid: "prefilter-test",
    kind: { group: o.group, version: o.version, kind: o.kind },
    resource: { group: o.group, version: o.version, resource: o.resource },
    requestKind: { group: o.group, version: o.version, kind: o.kind },
    requestResource: { group: o.group, version: o.version, resource: o.resource },
    name: (o.object.metadata && o.object.metadata.name) || "",
    namespace: o.namespace,
    operation: o.operation,
    userInfo: { username: "prefilter-test" },
    dryRun: false,
  };
  const vars = { object: toCel(o.object), oldObject: toCel(o.oldObject), request: toCel(request) };
  let all = true;
  for (const c of hook.conditions) {
    const r = run(c.expression, vars);
    if (typeof r !== "boolean") {
      check(false, `${name}: condition ${c.name} errored on ${o.source}: ${r && r.message}`);
      return "error";
    }
    all = all && r;
  }
  return ops.includes(o.operation) ? (all ? "pass" : "filtered") : "unregistered";
}

const counts = {};
for (const o of judged) {
  for (const [name, hook] of Object.entries(hooks)) {
    const verdict = evaluate(name, hook, o);
    counts[`${name} ${verdict}`] = (counts[`${name} ${verdict}`] || 0) + 1;
    if (verdict === "error") continue;
    if (name === "validate" && o.findings.length > 0 && verdict !== "unregistered")
      check(verdict === "pass", `validate filters out ${o.source}, which has findings ${o.findings.join(", ")}`);
    if (name === "mutate" && o.patches > 0 && verdict !== "unregistered")
      check(verdict === "pass", `mutate filters out ${o.source}, which /mutate patches (${o.patches} ops)`);
    const want = o.expect && o.expect[name];
    const called = verdict === "pass" ? "pass" : "filtered";
    if (want) check(called === want, `${name}: ${o.source}: expected ${want}, got ${verdict}`);
  }
}
check(judged.length > 0, "the judge printed objects");
const summary = Object.entries(counts)
  .sort()
  .map(([k, n]) => `${k}: ${n}`)
  .join(", ");
console.log(`prefilter: ${judged.length} objects (${summary})`);
console.log(`${passed} passed, ${failed} failed`);
process.exit(failed ? 1 : 0);
