// The scenes page/moving.js computes, for tests/test_widgets_moving.py.
//
// Usage: node tests/moving_scene.mjs MODULE.js ... CASES_JSON
// The modules (checks.js, lecture.js, moving.js) come in import order, imported from their
// texts (tests/load_modules.mjs). CASES_JSON holds [{"kind", "spec",
// "values", "layout"}, ...], the layout's bytes in base64; stdout gets one JSON list with,
// per case, the scene (null where the formulas decline), its bytes as lists of numbers
// (xy and at as float32, c as bytes).
import { readFileSync } from "node:fs";
import { load } from "./load_modules.mjs";

const args = process.argv.slice(2);
const casesPath = args.pop();
const loaded = await load(args);
const bytes = (text) => new Uint8Array(Buffer.from(text, "base64"));
const ready = (item) => {
  const out = { ...item };
  for (const key of ["xy", "c", "at"]) if (typeof out[key] === "string") out[key] = bytes(out[key]);
  return out;
};
const plain = (item) => {
  const out = {};
  for (const [key, value] of Object.entries(item)) {
    if (value instanceof Float32Array) out[key] = Array.from(value);
    else if (value instanceof Uint8Array) {
      const floats = key !== "c" && value.byteLength % 4 === 0;
      out[key] = Array.from(floats ? new Float32Array(value.slice().buffer) : value);
    } else out[key] = value;
  }
  return out;
};
const cases = JSON.parse(readFileSync(casesPath, "utf8"));
const scenes = cases.map(({ kind, spec, values, layout }) => {
  const parts = loaded.MOVING[kind](spec, values);
  return parts && loaded.sceneOf(layout, parts, ready).map(plain);
});
process.stdout.write(JSON.stringify(scenes));
