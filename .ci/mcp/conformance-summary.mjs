// Reads what the conformance suite saved (one checks.json per scenario)
// and says what each scenario showed. The suite counts a scenario that
// ran no check as passed ("0 passed, 0 failed"); here it is not
// applicable, and must be listed under not_applicable in the baseline
// with its reason, as an expected failure must be under server. A
// scenario that ran no check and is not listed, or a listed one that ran
// checks, fails the run, so the list cannot go stale.
//
// Writes SUMMARY-FILE (JSON: passed, expected_failures, not_applicable,
// each a list of scenario names) and prints the verdict on stderr.
//
// Usage: node conformance-summary.mjs RESULTS-DIR BASELINE-FILE SUMMARY-FILE
import fs from "node:fs";
import path from "node:path";
import { parse } from "yaml";

const [dir, baselineFile, summaryFile] = process.argv.slice(2);
const baseline = parse(fs.readFileSync(baselineFile, "utf8")) ?? {};
const expected = new Set(baseline.server ?? []);
const listedNA = new Set(baseline.not_applicable ?? []);

// The suite names each scenario's directory server-<scenario>-<timestamp>.
const scenarioOf = (name) => name.replace(/^server-/, "").replace(/-\d{4}-\d{2}-\d{2}T[\d-]+Z$/, "");
const counted = new Set(["SUCCESS", "FAILURE", "WARNING"]);

const summary = { passed: [], expected_failures: [], not_applicable: [] };
const problems = [];
const lines = [];
const seen = new Set();
for (const entry of fs.readdirSync(dir, { withFileTypes: true }).filter((e) => e.isDirectory()).sort((a, b) => a.name.localeCompare(b.name))) {
  const scenario = scenarioOf(entry.name);
  seen.add(scenario);
  const checks = JSON.parse(fs.readFileSync(path.join(dir, entry.name, "checks.json"), "utf8"));
  const n = (status) => checks.filter((c) => c.status === status).length;
  const ran = checks.filter((c) => counted.has(c.status)).length;
  if (ran === 0) {
    summary.not_applicable.push(scenario);
    const why = checks.map((c) => c.details?.message).filter(Boolean).join("; ");
    lines.push(`  - ${scenario}: not applicable, ran no check${why ? ` (${why})` : ""}`);
    if (!listedNA.has(scenario)) {
      problems.push(`${scenario} ran no check and is not listed under not_applicable in the baseline`);
    }
    continue;
  }
  if (listedNA.has(scenario)) {
    problems.push(`${scenario} is listed under not_applicable but ran ${ran} checks: take it off the list`);
  }
  if (n("FAILURE") > 0 || n("WARNING") > 0) {
    if (expected.has(scenario)) {
      summary.expected_failures.push(scenario);
      lines.push(`  ~ ${scenario}: expected failure (baseline)`);
    } else {
      lines.push(`  ✗ ${scenario}: ${n("FAILURE")} failed, ${n("WARNING")} warnings of ${ran} checks`);
    }
    continue;
  }
  summary.passed.push(scenario);
  lines.push(`  ✓ ${scenario}: ${n("SUCCESS")} checks passed`);
}
for (const scenario of listedNA) {
  if (!seen.has(scenario)) {
    problems.push(`${scenario} is listed under not_applicable but did not run`);
  }
}

fs.writeFileSync(summaryFile, JSON.stringify(summary, null, 2) + "\n");
console.error(lines.join("\n"));
console.error(
  `conformance: ${summary.passed.length} passed, ${summary.expected_failures.length} expected failures, ` +
    `${summary.not_applicable.length} not applicable (${summary.not_applicable.join(", ") || "none"})`,
);
for (const p of problems) {
  console.error("conformance: " + p);
}
process.exit(problems.length > 0 ? 1 : 0);
