// Evaluate the page's formulas on a list of cases, for tests/test_page_parity.py.
//
// Usage: node tests/page_parity.mjs LECTURE_JS CASES_JSON
// CASES_JSON holds [{"fn": name, "args": [...]}, ...]; stdout gets one JSON list with, per case,
// {"value": result} or {"error": name, "message": text, "cycle": [...] (CycleError only)}.
// Non-finite numbers, which JSON lacks, travel as {"$float": "inf" | "-inf" | "nan"}.
//
// lecture.js is an ES module in a folder without a package.json, which Node would read as
// CommonJS; importing its text as a data: URL loads it as a module on every Node version.
import { readFileSync } from "node:fs";

const [lecturePath, casesPath] = process.argv.slice(2);
const source = readFileSync(lecturePath, "utf8");
const lecture = await import(
  `data:text/javascript;base64,${Buffer.from(source).toString("base64")}`
);
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
