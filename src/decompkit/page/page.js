// The static lecture page: the explorers without a kernel.
//
// Each explorer's figure comes baked from the kit (build.py): a background per width and pixel
// ratio, each axes' transform, and the look of every artist the controls move (a template:
// colour, width, dashes, clip, marker shape). Here the controls' numbers go through the
// lecture's formulas (lecture.js), the results are mapped to device pixels and painted over
// the background with the notebook explorers' own painting code (explorer.js), and the
// readouts are written as HTML text, as the notebook explorers write them.
//
// For tests and for the curious, window.lecturePage.explorers[name] holds the setting the
// canvas shows (.setting) and the numbers drawn for it (.values), the setting the controls
// ask for (.wanted) and how many pictures it painted (.painted).

import { paint } from "./explorer.js";
import * as D from "./dag.js";
import * as L from "./lecture.js";
import { horizonParts, reliabilityParts, sceneOf } from "./moving.js";

const DATA = JSON.parse(document.getElementById("page-data").textContent);

// -- numbers as the package prints them -------------------------------------------------------

/** Python's f"{x:.{digits}f}": the nearest decimal, an exact tie to the even last digit. */
export function fixed(x, digits) {
  if (!Number.isFinite(x)) return Number.isNaN(x) ? "nan" : x > 0 ? "inf" : "-inf";
  const text = x.toFixed(digits); // the nearest, a tie away from zero
  const exact = Math.abs(x).toFixed(Math.min(100, digits + 30)); // a double's own digits
  const dot = exact.indexOf(".");
  if (!/^50*$/.test(exact.slice(dot + 1 + digits))) return text;
  const cut = exact.slice(0, digits ? dot + 1 + digits : dot); // the tie rounded down
  return Number(cut[cut.length - 1]) % 2 === 0 ? (x < 0 ? "-" : "") + cut : text;
}

/** Python's f"{x:g}" for the page's slider values (plain decimals of a few digits). */
const g = (x) => String(Number(x.toPrecision(6)));
/** The explorers' _fmt: "inf", else fixed digits. */
const fmt = (x, digits = 4) => (x === Infinity ? "inf" : fixed(x, digits));
const escape = (s) =>
  String(s).replace(/[&<>"']/g, (c) => `&${{ "&": "amp", "<": "lt", ">": "gt", '"': "quot", "'": "#x27" }[c]};`);

/** A readout table, as controls.rows_html writes it. */
function rowsHtml(rows, header) {
  const cells = (row, tag) => row.map((c) => `<${tag}>${escape(c)}</${tag}>`).join("");
  const head = header ? `<tr>${cells(header, "th")}</tr>` : "";
  const body = rows.map((row) => `<tr>${cells(row, "td")}</tr>`).join("");
  return `<table class="decompkit-table">${head}${body}</table>`;
}

// -- a baked figure ---------------------------------------------------------------------------

function bytes(text) {
  const raw = atob(text);
  const out = new Uint8Array(raw.length);
  for (let i = 0; i < raw.length; i++) out[i] = raw.charCodeAt(i);
  return out;
}

/** A recorded item with its base64 fields as bytes (done once per item). */
function decoded(item) {
  if (!item._ready) {
    for (const key of ["xy", "c", "at"]) {
      if (typeof item[key] === "string") item[key] = bytes(item[key]);
    }
    item._ready = true;
  }
  return item;
}

/** The pixel ratio of the baked pictures this screen takes: 2 from a ratio of 1.5 up. */
const bakedRatio = () => ((window.devicePixelRatio || 1) >= 1.5 ? "2" : "1");

class Picture {
  constructor(spec, holder) {
    this.spec = spec;
    this.holder = holder;
    this.canvas = document.createElement("canvas");
    this.canvas.setAttribute("role", "img");
    this.canvas.setAttribute("aria-label", spec.alt);
    holder.append(this.canvas);
    this.ctx = this.canvas.getContext("2d");
    this.images = new Map(); // background path -> Promise of a decoded image
    this.parts = null;
    this.token = 0;
    // Where a layout shows one panel at a time (the trace stepper's plan or Gantt chart): the
    // panel chosen, the first one until a button chooses another.
    this.panel = (spec.panels || [[null, null]])[0][1];
  }

  /** The widest baked layout that fits the holder (the narrowest if none does), at the
   * screen's pixel ratio; of a width baked per panel, the chosen panel's. */
  layout() {
    const room = this.holder.clientWidth || window.innerWidth;
    const layouts = this.spec.layouts
      .filter((l) => !l.panel || l.panel === this.panel)
      .sort((x, y) => y.css[0] - x.css[0]);
    const fits = layouts.find((l) => l.css[0] <= room) || layouts[layouts.length - 1];
    return { css: fits.css, panel: fits.panel || null, ...fits.ratios[bakedRatio()] };
  }

  image(path) {
    if (!this.images.has(path)) {
      const img = new Image();
      img.src = path;
      this.images.set(path, img.decode().then(() => img));
    }
    return this.images.get(path);
  }

  /** Paint `parts`: [{key, axes, kind: "line" | "vline" | "points", x, y}] in drawing order,
   * or {kind: "scene", paint(baked)}: the items of a picture assembled for the layout. */
  async draw(parts) {
    this.parts = parts;
    const mine = ++this.token;
    const baked = this.layout();
    // The DAG's parts are pictures assembled for the layout; the curves' are computed over
    // the layout's templates (moving.js, which puts the overlay on top).
    const scene = parts.some((part) => part.kind === "scene")
      ? [...parts.flatMap((part) => part.paint(baked)), ...(baked.overlay || [])].map(decoded)
      : sceneOf(baked, parts, decoded);
    if (!(await this.paintOver(baked, scene, mine))) return false;
    if (this.showPanel) this.showPanel(baked.panel);
    this.painted(parts, baked.panel);
    return true;
  }

  /** Paint step `k` of a stepper: the scene the kit recorded for it, bitmaps and all. */
  async drawStep(k) {
    this.parts = k;
    const mine = ++this.token;
    const baked = this.layout();
    const scene = baked.scenes[k].map((i) => decoded(baked.items[i]));
    if (!(await this.paintOver(baked, scene, mine))) return false;
    if (this.showPanel) this.showPanel(baked.panel);
    this.painted(k, baked.panel);
    this.warm(bakedRatio());
    return true;
  }

  /** Paint `scene` over the layout's background once both and the scene's bitmaps are
   * decoded; false, painting nothing, when a newer picture was asked for meanwhile. */
  async paintOver(baked, scene, mine) {
    const ratio = bakedRatio();
    const ids = [...new Set(scene.flatMap((item) => [item.id, item.hatch].filter(Boolean)))];
    const [back, ...done] = await Promise.all([
      this.image(baked.background),
      ...ids.map((id) => this.bitmap(ratio, id)),
    ]);
    if (mine !== this.token) return false; // a newer picture is on its way
    this.fit(baked);
    this.ctx.setTransform(1, 0, 0, 1, 0, 0);
    this.ctx.drawImage(back, 0, 0);
    paint(this.ctx, scene, new Map(ids.map((id, i) => [id, done[i]])));
    return true;
  }

  /** Decode every bitmap of the stepper's steps at `ratio` once the first step is shown, in
   * idle time, so that a step forward shows bitmaps decoded before it was asked for. */
  warm(ratio) {
    if (this.warmed === ratio) return;
    this.warmed = ratio;
    const idle = window.requestIdleCallback || ((f) => setTimeout(f, 50));
    idle(() => Object.keys(this.spec.sprites[ratio]).forEach((id) => this.bitmap(ratio, id)));
  }

  bitmap(ratio, id) {
    const key = `${ratio}:${id}`;
    if (!this.images.has(key)) {
      const png = new Blob([bytes(this.spec.sprites[ratio][id])], { type: "image/png" });
      this.images.set(key, createImageBitmap(png));
    }
    return this.images.get(key);
  }

  /** The canvas at the baked layout's pixel size, shown at its CSS size. */
  fit(baked) {
    const [width, height] = baked.size;
    const canvas = this.canvas;
    if (canvas.width !== width || canvas.height !== height) {
      canvas.width = width;
      canvas.height = height;
    }
    canvas.style.width = `${baked.css[0]}px`;
    canvas.style.aspectRatio = `${baked.css[0]} / ${baked.css[1]}`;
  }

  redraw() {
    if (typeof this.parts === "number") this.drawStep(this.parts);
    else if (this.parts) this.draw(this.parts);
  }
}

// -- the explorers' numbers -------------------------------------------------------------------

// The reliability readout's verdict where p(1 - p) = 0 (the kit's explorer writes the same).
const NO_GAIN = "changes nothing (p = 0 or 1)";

/** The reliability explorer (widgets/reliability.py): its curves, marks and readout. */
function reliability(spec, v) {
  const { p, n, d, phi, kappa } = v;
  const { parts, rates, curves, noGain } = reliabilityParts(spec, v);
  const helps = L.checkHelps(d, phi);
  // noGain: p(1 - p) = 0, every attempt succeeds or every one fails; a check changes nothing.
  const verdict = noGain ? NO_GAIN : helps ? "helps (d > φ)" : "does not help (d ≤ φ)";
  const readout =
    rowsHtml(
      [
        ["no check", fmt(p), fmt(curves.bare[n])],
        ["one retry, fallible check", fmt(rates.one_retry), fmt(curves.one_retry[n])],
        ["retry until pass", fmt(rates.until_pass), fmt(curves.until_pass[n])],
        [`perfect check, κ = ${kappa}`, fmt(rates.kappa), fmt(curves.kappa[n])],
      ],
      ["", "per step", `chain of n = ${n}`]
    ) +
    `<p class="decompkit-note">The check ${escape(verdict)}. ` +
    `Retry until pass: E[attempts] = ${fmt(L.expectedAttempts(p, d))}; ` +
    `undetected floor (1-p)(1-d) = ${fmt(L.undetectedFloor(p, d))}; ` +
    `half-life of the bare chain = ${fmt(L.halfLife(p))} steps.</p>`;
  return { parts, readout, values: { rates, curves, helps } };
}

/** The reference table's text for one row, as markov.ReferenceTable.to_text writes it. */
function tableText(row, gridMax) {
  const ns = Object.keys(row.success).map(Number);
  const header = ["q", ...ns.map((n) => `n=${n}`), "collapse n", "half-life"];
  const cells = [
    fixed(row.q, 2),
    ...ns.map((n) => fixed(row.success[n], 3)),
    row.collapseN === null ? `>${gridMax}` : String(row.collapseN),
    row.halfLife === Infinity ? "inf" : fixed(row.halfLife, 1),
  ];
  const widths = header.map((h, i) => Math.max(h.length, cells[i].length));
  const line = (cs) => "| " + cs.map((c, i) => c.padEnd(widths[i])).join(" | ") + " |";
  const rule = "|" + widths.map((w) => "-".repeat(w + 2)).join("|") + "|";
  return [line(header), rule, line(cells)].join("\n");
}

/** The horizon explorer (widgets/horizon.py), without its Monte Carlo button. */
function horizon(spec, v) {
  const { p, q, n, budget_factor: gamma } = v;
  const { parts, curve, sweep, survival, halves, budget } = horizonParts(spec, v);
  const k = spec.reference_qs.length;
  const row = L.referenceRow(p, gamma, q);
  const readout =
    `<b>Reference-table row</b> for q = ${g(q)} (p = ${g(p)}, B = round(${g(gamma)} n)):` +
    `<pre>${escape(tableText(row, 200))}</pre>` +
    `<p>At n = ${n} with B = ${budget} rounds: P(success) = ${fmt(curve[n - 1], 3)}; ` +
    `still grounded after B rounds: g_B = ${fmt(L.groundedSurvival(budget, p, q), 3)}; grounded ` +
    `half-life ${fmt(halves[k], 1)} rounds; full verification ` +
    `needs γ > 1/p = ${fmt(L.minBudgetFactor(p), 3)}.</p>`;
  return { parts, readout, values: { success_by_n: curve, sweep, grounded: survival[k], budget, row } };
}

/** The trace stepper (widgets/trace.py): its pictures and texts were recorded by the kit. */
function trace(spec, v) {
  const k = v.event - spec.controls[0].min;
  return { step: k, readout: spec.steps[k].readout, table: spec.steps[k].table, values: { step: k } };
}

/** The DAG explorer (widgets/dag.py): its numbers and picture are in dag.js. */
const dag = (spec, v) => D.compute(spec, v, { fixed, g, rowsHtml });

const COMPUTE = { reliability, horizon, trace, dag };

// -- the page ---------------------------------------------------------------------------------

/** A slider's value at step `index`, as explorer.js steps the notebook's sliders. */
const valueAt = (c, index) => Number((c.min + index * c.step).toFixed(10));

function slider(spec, c, onInput) {
  const id = `${spec.name}-${c.name}`;
  const box = document.createElement("div");
  box.className = "control";
  box.title = c.tooltip;
  const steps = Math.round((c.max - c.min) / c.step);
  box.innerHTML =
    `<label for="${id}">${escape(c.label)}</label>` +
    `<input type="range" id="${id}" name="${c.name}" min="0" max="${steps}" step="1">` +
    `<output for="${id}"></output>`;
  const input = box.querySelector("input");
  const output = box.querySelector("output");
  input.value = String(Math.round((c.value - c.min) / c.step));
  const show = () => {
    const text = fixed(valueAt(c, Number(input.value)), c.digits);
    output.textContent = text;
    input.setAttribute("aria-valuetext", `${c.label} ${text}`);
  };
  input.addEventListener("input", () => (show(), onInput()));
  show();
  return { box, input, value: () => valueAt(c, Number(input.value)) };
}

/** Back and forward buttons before a stepper's slider: one step each. */
function stepper(columns, slider) {
  const row = document.createElement("div");
  row.className = "stepper";
  const make = (text, label, delta) => {
    const button = document.createElement("button");
    button.type = "button";
    button.textContent = text;
    button.setAttribute("aria-label", label);
    button.addEventListener("click", () => {
      const input = slider.input;
      const value = Number(input.value) + delta;
      if (value < Number(input.min) || value > Number(input.max)) return;
      input.value = String(value);
      input.dispatchEvent(new Event("input"));
    });
    row.append(button);
    return button;
  };
  const buttons = [make("◀ back", "one event back", -1), make("forward ▶", "one event forward", 1)];
  columns.prepend(row);
  return buttons;
}

/** Buttons that choose the panel a layout of one panel at a time shows (the plan or the Gantt
 * chart of the trace stepper and the DAG explorer where the page is narrow), after the slider
 * (the DAG's: after the example's buttons), as in the notebook; hidden where the figure shows
 * every panel. */
function panelButtons(spec, columns, picture, update) {
  const row = document.createElement("div");
  row.className = "stepper panels";
  row.setAttribute("role", "group");
  row.setAttribute("aria-label", "panel shown");
  const buttons = spec.panels.map(([label, panel]) => {
    const button = document.createElement("button");
    button.type = "button";
    button.textContent = label;
    button.addEventListener("click", () => {
      if (picture.panel === panel) return;
      picture.panel = panel;
      update();
    });
    row.append(button);
    return [button, panel];
  });
  const example = columns.querySelector(".dag-top .choice");
  if (example) example.after(row);
  else columns.append(row);
  picture.showPanel = (shown) => {
    row.style.display = shown ? "" : "none";
    for (const [button, panel] of buttons) {
      button.setAttribute("aria-pressed", String(panel === shown));
    }
  };
}

/** Disable a stepper's buttons at the ends of its slider. */
function stepped([back, forward], slider) {
  back.disabled = slider.input.value === slider.input.min;
  forward.disabled = slider.input.value === slider.input.max;
}

function explorer(spec, main) {
  const section = document.createElement("section");
  section.className = `explorer ${spec.readout}`;
  section.id = spec.name;
  section.setAttribute("aria-labelledby", `${spec.name}-title`);
  section.innerHTML =
    `<h2 id="${spec.name}-title">${escape(spec.title)}</h2>` +
    `<div class="top"><div class="controls"></div>` +
    `<div class="readout" aria-live="polite"></div></div>` +
    `<div class="figure"></div><div class="table"></div><div class="status" role="status"></div>`;
  main.append(section);
  const state = { setting: {}, wanted: {}, values: null, painted: 0 };
  let pending = false;
  let latest = null; // the parts (or step) of the newest setting
  const update = () => {
    if (pending) return;
    pending = true;
    requestAnimationFrame(() => {
      pending = false;
      const setting = Object.fromEntries(Object.entries(sliders).map(([k, s]) => [k, s.value()]));
      let result;
      try {
        result = COMPUTE[spec.name](spec, setting);
      } catch (error) {
        section.querySelector(".status").textContent = `Not computed: ${error.message}`;
        return;
      }
      section.querySelector(".status").textContent = "";
      section.querySelector(".readout").innerHTML = result.readout;
      (section.querySelector(".table-body") || section.querySelector(".table")).innerHTML =
        result.table || "";
      state.wanted = setting;
      if (buttons) stepped(buttons, sliders.event);
      // .setting and .values say what the canvas shows, and .painted counts new pictures:
      // they change once this picture is first painted, by this draw or by a newer one of
      // the same picture (a redraw for a new width), never by a late redraw of the one before.
      latest = { parts: result.parts || result.step, setting, values: result.values };
      if (result.parts) picture.draw(result.parts);
      else picture.drawStep(result.step);
    });
  };
  if (spec.table_title) {
    section.querySelector(".table").innerHTML =
      `<details><summary>${escape(spec.table_title)}</summary><div class="table-body"></div></details>`;
  }
  const sliders = {};
  const columns = section.querySelector(".controls");
  if (spec.name === "dag") Object.assign(sliders, D.controls(spec, columns, slider, update));
  for (const names of spec.columns) {
    const column = document.createElement("div");
    column.className = "column";
    for (const name of names) {
      const c = spec.controls.find((x) => x.name === name);
      sliders[name] = slider(spec, c, update);
      column.append(sliders[name].box);
    }
    columns.append(column);
  }
  const buttons = spec.readout === "stepper" ? stepper(columns, sliders.event) : null;
  const picture = new Picture(spec, section.querySelector(".figure"));
  if (spec.panels) panelButtons(spec, columns, picture, update);
  picture.painted = (parts, panel = null) => {
    if (!latest || parts !== latest.parts || latest.shown) return;
    latest.shown = true; // a redraw of the same picture (a new width) is not a new one
    Object.assign(state, { setting: latest.setting, values: latest.values, panel });
    state.painted += 1;
    section.dataset.painted = String(state.painted);
  };
  update();
  return { state, picture };
}

const main = document.querySelector("main");
const explorers = {};
for (const spec of DATA.explorers) explorers[spec.name] = explorer(spec, main);
// A new width or pixel ratio (a zoom, another screen) may call for another baked layout.
let resizing = null;
const redraw = () => {
  clearTimeout(resizing);
  resizing = setTimeout(() => Object.values(explorers).forEach((e) => e.picture.redraw()), 100);
};
window.addEventListener("resize", redraw);
const watchRatio = () => {
  const media = window.matchMedia(`(resolution: ${window.devicePixelRatio}dppx)`);
  media.addEventListener("change", () => (redraw(), watchRatio()), { once: true });
};
watchRatio();
window.lecturePage = {
  whose: DATA.whose,
  explorers: Object.fromEntries(Object.entries(explorers).map(([k, e]) => [k, e.state])),
};
document.body.dataset.ready = "1";
