// The moving artists of the reliability and horizon explorers, computed in the browser.
//
// The lecture page (page.js) draws them on every control change, with no kernel; a notebook's
// explorer (explorer.js) draws them the moment a control moves, before the kernel's own
// picture of the setting arrives (which then replaces it). Both get, per layout, each axes'
// transform and the look of every artist the controls move (a template: colour, width,
// dashes, clip, marker shape), recorded by the kit (decompkit.widgets.moving); here the
// controls' numbers go through the lecture's formulas (lecture.js), and the results become
// drawing commands in device pixels, the scene that explorer.js paints.
//
// Modules are named by file name alone: the page and the notebook's view load them from one
// flat set (page/build.py's MODULES, widgets/view.py's bundle).

import {
  chainSuccess, checkedStepFallible, checkedStepLimit, groundedHalfLife, groundedSurvival,
  perfectCheckAttempts, roundedBudget, successExact,
} from "./lecture.js";

const range = (from, to) => Array.from({ length: to - from + 1 }, (_, i) => from + i);

/** The reliability explorer's curves, n marker and (d, phi) point (widgets/reliability.py).
 * `spec`: {n_max}; `v`: {p, n, d, phi, kappa}. Where p(1 - p) = 0 the kit veils the plane
 * with a text: `noGain` is true, and the page's parts lack the veil. */
export function reliabilityParts(spec, v) {
  const { p, n, d, phi, kappa } = v;
  const steps = range(0, spec.n_max);
  const rates = {
    bare: p,
    one_retry: checkedStepFallible(p, d, phi),
    until_pass: checkedStepLimit(p, d),
    kappa: perfectCheckAttempts(p, kappa),
  };
  const curves = {};
  for (const [key, rate] of Object.entries(rates)) curves[key] = steps.map((k) => chainSuccess(rate, k));
  const parts = Object.keys(rates).map((key) => ({
    key, axes: "left", kind: "line", x: steps, y: curves[key],
  }));
  parts.push({ key: "marker", axes: "left", kind: "vline", x: n });
  parts.push({ key: "point", axes: "plane", kind: "points", x: [d], y: [phi] });
  return { parts, rates, curves, noGain: p * (1 - p) === 0 };
}

/** The horizon explorer's curves, markers and half-life points (widgets/horizon.py).
 * `spec`: {n_max, t_max, reference_qs, sweep_qs}; `v`: {p, q, n, budget_factor}. A
 * `spec.monte_carlo` of {n, p, budget, key}, where the kit has simulated, puts the part
 * `key` (its recorded items, which depend on none of the sliders) after the sweep when n, p
 * and the budget are the simulation's. */
export function horizonParts(spec, v) {
  const { p, q, n, budget_factor: gamma } = v;
  const budget = roundedBudget(gamma, n);
  const ns = range(1, spec.n_max);
  const rounds = range(0, spec.t_max);
  const budgets = ns.map((k) => roundedBudget(gamma, k));
  const successOf = (level) => ns.map((k, i) => successExact(k, p, level, budgets[i]));
  const parts = [];
  const levels = [...spec.reference_qs, q];
  const survival = levels.map((level) => rounds.map((t) => groundedSurvival(t, p, level)));
  const halves = levels.map((level) => groundedHalfLife(p, level));
  spec.reference_qs.forEach((level, i) => {
    parts.push({ key: `ref${i}`, axes: "by_n", kind: "line", x: ns, y: successOf(level) });
  });
  spec.reference_qs.forEach((_, i) => {
    parts.push({ key: `g${i}`, axes: "grounded", kind: "line", x: rounds, y: survival[i] });
  });
  spec.reference_qs.forEach((_, i) => {
    const shown = halves[i] <= spec.t_max;
    parts.push({ key: `half${i}`, axes: "grounded", kind: "points", x: shown ? [halves[i]] : [], y: [0.5] });
  });
  const curve = successOf(q);
  const sweep = spec.sweep_qs.map((level) => successExact(n, p, level, budget));
  const k = spec.reference_qs.length;
  const current = halves[k] <= spec.t_max;
  parts.push(
    { key: "success", axes: "by_n", kind: "line", x: ns, y: curve },
    { key: "n_marker", axes: "by_n", kind: "vline", x: n },
    { key: "sweep", axes: "by_q", kind: "line", x: spec.sweep_qs, y: sweep }
  );
  const mc = spec.monte_carlo;
  if (mc && mc.n === n && Math.abs(mc.p - p) < 1e-9 && mc.budget === budget) parts.push({ key: mc.key, kind: "items" });
  parts.push(
    { key: "q_marker", axes: "by_q", kind: "vline", x: q },
    { key: "grounded", axes: "grounded", kind: "line", x: rounds, y: survival[k] },
    { key: "half", axes: "grounded", kind: "points", x: current ? [halves[k]] : [], y: [0.5] },
    { key: "budget_marker", axes: "grounded", kind: "vline", x: budget }
  );
  return { parts, curve, sweep, survival, halves, budget };
}

/** The nearest whole pixel, a half up (where Agg puts a marker or a text). */
export const whole = (v) => Math.floor(v + 0.5);
/** Agg's snapping of an axis-parallel path: pixel centres for odd widths, corners for even. */
export const snap = (v, lw) => Math.floor(v + 0.5) + (whole(lw || 0) % 2 ? 0.5 : 0);

/** Whether Agg snaps a polyline of device pixels `xy` ([x0, y0, x1, ...]) to the pixel grid:
 * one of horizontal and vertical segments only, or any when its artist's snap `mode` is true
 * (matplotlib's PathSnapper; decompkit.widgets.recorder's _snaps). */
function snaps(xy, mode) {
  if (mode === false || xy.length < 4) return false;
  if (mode === true) return true;
  if (xy.length > 2048 || !xy.every(Number.isFinite)) return false;
  for (let i = 2; i < xy.length; i += 2) {
    if (Math.abs(xy[i] - xy[i - 2]) >= 1e-4 && Math.abs(xy[i + 1] - xy[i - 1]) >= 1e-4) return false;
  }
  return true;
}

/** Device pixels (y down) of data (x, y) in an axes laid out at canvas height `height`. */
function mapper(ax, height) {
  const [a, b, c, d] = ax.m;
  const sx = ax.xscale === "log" ? Math.log10 : (v) => v;
  const sy = ax.yscale === "log" ? Math.log10 : (v) => v;
  return (x, y) => [a * sx(x) + b, height - (c * sy(y) + d)];
}

/** The scene of `parts` in a layout: {size: [w, h] device pixels, axes: {name: {m, box,
 * xscale, yscale, ylim}}, templates: {key: [item, ...]}, overlay: [item, ...]}. A part is
 * {key, axes, kind: "line" | "vline" | "points", x, y}: the key's templates with its data
 * mapped to device pixels; or {key, kind: "items"}: the key's templates as they are. Items
 * are explorer.js' drawing commands (`ready(item)` makes a template's bytes usable once). */
export function sceneOf(layout, parts, ready = (item) => item) {
  const height = layout.size[1];
  const scene = [];
  for (const part of parts) {
    const templates = layout.templates[part.key].map(ready);
    if (part.kind === "items") {
      scene.push(...templates);
      continue;
    }
    const ax = layout.axes[part.axes];
    const at = mapper(ax, height);
    for (const template of templates) {
      const { snap: _, ...item } = template; // a drawing command, as the kit records it
      if (part.kind === "vline") {
        const [x] = at(part.x, ax.ylim[0]);
        const [top, bottom] = [ax.box[1], ax.box[3]].map((v) => snap(v, item.lw));
        const px = snap(x, item.lw);
        item.xy = new Float32Array([px, bottom, px, top]);
      } else if (item.t === "m") {
        const points = [];
        part.x.forEach((x, i) => {
          if (!Number.isFinite(part.y[i])) return;
          points.push(...at(x, part.y[i]).map(whole));
        });
        if (!points.length) continue; // no marker to draw
        item.at = new Float32Array(points);
      } else {
        const xy = part.x.flatMap((x, i) => at(x, part.y[i]));
        if (snaps(xy, template.snap)) xy.forEach((v, i) => (xy[i] = snap(v, item.lw)));
        item.xy = new Float32Array(xy);
      }
      scene.push(item);
    }
  }
  for (const item of layout.overlay || []) scene.push(ready(item));
  return scene;
}

/** The parts of each explorer the browser computes, by the name the kit gives it. */
export const MOVING = {
  reliability: (spec, v) => {
    const r = reliabilityParts(spec, v);
    return r.noGain ? null : r.parts; // the veil and its text are the kit's to draw
  },
  horizon: (spec, v) => horizonParts(spec, v).parts,
};
