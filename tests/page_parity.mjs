// Evaluate the page's formulas on a list of cases, for tests/test_page_parity.py.
//
// Usage: node tests/page_parity.mjs MODULE.js ... CASES_JSON
// The modules (checks.js, lecture.js, plans.js) come in import order; their exports together are
// the functions the cases name. CASES_JSON holds [{"fn": name, "args": [...]}, ...]; stdout gets
// one JSON list with, per case, {"value": result} or {"error": name, "message": text, "cycle":
// [...] (CycleError only)}. Non-finite numbers, which JSON lacks, travel as
// {"$float": "inf" | "-inf" | "nan"}.
import { readFileSync } from "node:fs";
import { load } from "./load_modules.mjs";

const args = process.argv.slice(2);
const casesPath = args.pop();
const lecture = await load(args);
const cases = JSON.parse(readFileSync(casesPath, "utf8"));

const results = cases.map(({ fn, args }) => {
  if (typeof lecture[fn] !== "function") return { error: "MissingFunction", message: fn };
  try {
    return { value: lecture[fn](...args) };
  } catch (error) {
    const out = { error: error.name, message: error.message };
    if (error instanceof lecture.CycleError) out.cycle = error.cycle;
    return out;
  }
});

function encode(key, value) {
  if (typeof value === "number" && !Number.isFinite(value)) {
    return { $float: Number.isNaN(value) ? "nan" : value > 0 ? "inf" : "-inf" };
  }
  return value;
}

process.stdout.write(JSON.stringify(results, encode));
