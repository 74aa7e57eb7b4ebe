// The DAG explorer on the static page (notebook 4's dag_explorer, widgets/dag.py): the example,
// the worker count, the options and one duration slider per task, over the critical path with
// slack and the list schedule's Gantt chart.
//
// The numbers come from plans.js (criticalPath, listSchedule: the package's own rules). The
// picture is assembled from pieces the kit recorded from the notebook explorer (page/dag.py):
// the frame of each plan structure and of the Gantt chart, each task's box and each arrow in
// both looks, a bar, a tick and a label of every task name, and the pieces of the changing
// texts. Here a box widens about its centre with its second line, an arrow ends where the line
// between two box centres crosses their outlines (plots/dag.py's _Arrow), and bars, ticks and
// labels go where the schedule puts them (plots/dag.py's place_task).

import { snap, whole } from "./moving.js";
import { criticalPath, listSchedule } from "./plans.js";

const COORDINATE = "coordinate";

// -- the numbers ------------------------------------------------------------------------------

/** The plan of a setting: graph (pairs), durations (pairs), resources, labels, unit. */
function plan(spec, v) {
  const ex = spec.examples[v.example];
  const structure = v.spurious_edge ? "spurious_edge" : v.coordination ? "coordination" : "plain";
  const graph = ex.graphs[structure];
  let durations = ex.durations.map(([node]) => [node, v[`duration-${v.example}-${node}`]]);
  if (structure === "coordination") durations = [[COORDINATE, ex.coordination], ...durations];
  const resources = v.resources ? ex.resources : null;
  return { ex, graph, durations, resources, key: `${v.example} ${structure}` };
}

/** The explorer's numbers, readout and table (DagExplorer._refresh); `f` holds the page's
 * number formats (fixed, g, rowsHtml). */
export function compute(spec, v, f) {
  const { ex, graph, durations, resources, key } = plan(spec, v);
  const cp = criticalPath(graph, durations);
  const workers = v.workers;
  const schedule = listSchedule(graph, durations, workers, "critical", resources);
  const duration = Object.fromEntries(durations);
  const s = workers > 1 ? "s" : "";
  const busy = schedule.makespan ? schedule.work / (workers * schedule.makespan) : 0;
  const speedup = schedule.makespan ? cp.serialTime / schedule.makespan : 1;
  const readout =
    `<p>Critical path (highlighted): ${f.g(cp.makespan)} ${ex.unit}; serial ` +
    `${f.g(cp.serialTime)}; on ${workers} worker${s}: makespan ${f.g(schedule.makespan)} ` +
    `${ex.unit} (${f.fixed(100 * busy, 0)} % busy), speed-up ${f.fixed(speedup, 2)}x.</p>`;
  const rows = cp.nodes.map((node) => [
    ex.labels[node] ?? node,
    String(node),
    f.g(duration[node]),
    f.g(cp.earliestStart[node]),
    f.g(cp.slack[node]),
    f.g(schedule.start[node]),
    `worker ${schedule.worker[node] + 1}`,
  ]);
  const header = ["task", "", "duration", "earliest start", "slack", "starts", "worker"];
  const drawn = { key, ex, cp, schedule, duration, workers };
  return {
    parts: [{ kind: "scene", paint: (baked) => scene(baked, drawn) }],
    readout,
    table: f.rowsHtml(rows, header),
    values: {
      critical_path: {
        makespan: cp.makespan,
        path: cp.path,
        slack: cp.slack,
        earliest_start: cp.earliestStart,
        serial_time: cp.serialTime,
      },
      schedule: {
        start: schedule.start,
        finish: schedule.finish,
        worker: schedule.worker,
        makespan: schedule.makespan,
      },
      graph,
    },
  };
}

// -- the picture ------------------------------------------------------------------------------


function floats(text) {
  const raw = atob(text);
  const bytes = new Uint8Array(raw.length);
  for (let i = 0; i < raw.length; i++) bytes[i] = raw.charCodeAt(i);
  return new Float32Array(bytes.buffer);
}

/** A path item: a look, vertices (numbers) and the recorded codes (base64) if any. */
function path(look, xy, codes) {
  const item = { ...look, t: "p", xy: new Float32Array(xy), _ready: true };
  if (codes) {
    const raw = atob(codes);
    item.c = Uint8Array.from(raw, (ch) => ch.charCodeAt(0));
  }
  return item;
}

/** A text set from pieces (strings of `font`, digits one by one) from a line's start. */
function run(font, words, x, y) {
  const items = [];
  let at = 0;
  for (const word of words) {
    for (const piece of /^\d+$/.test(word) ? word.split("") : [word]) {
      const [id, dx, dy, advance] = font[piece];
      items.push({ t: "i", id, x: x + at + dx, y: y + dy, _ready: true });
      at += advance;
    }
  }
  return items;
}

function width(font, words) {
  let w = 0;
  for (const word of words) {
    for (const piece of /^\d+$/.test(word) ? word.split("") : [word]) w += font[piece][3];
  }
  return w;
}

/** A centred line of pieces: [items], starting at the anchor less half its width. */
function centred(font, words, line) {
  return run(font, words, whole(line.ax - width(font, words) / 2), whole(line.ly));
}

/** Where the line p + s (q - p) crosses a closed outline (straight pieces and quadratic
 * curves), as values of s [plots.dag._crossings]. */
function crossings(xy, codes, p, q) {
  const d = [q[0] - p[0], q[1] - p[1]];
  const normal = [-d[1], d[0]];
  const norm2 = d[0] * d[0] + d[1] * d[1] || 1;
  const dot = (a, b) => a[0] * b[0] + a[1] * b[1];
  const along = (point) => dot([point[0] - p[0], point[1] - p[1]], d) / norm2;
  const side = (point) => dot(normal, [point[0] - p[0], point[1] - p[1]]);
  const found = [];
  let start = null;
  let pen = null;
  const at = (k) => [xy[2 * k], xy[2 * k + 1]];
  for (let k = 0; k < codes.length; ) {
    const code = codes[k];
    if (code === 1) {
      start = pen = at(k);
      k += 1;
    } else if (code === 2 || code === 79) {
      const end = code === 79 ? start : at(k);
      const [a, b] = [side(pen), side(end)];
      if (a !== b && Math.min(a, b) <= 0 && 0 <= Math.max(a, b)) {
        const r = a / (a - b);
        found.push(along([pen[0] + (end[0] - pen[0]) * r, pen[1] + (end[1] - pen[1]) * r]));
      }
      pen = end;
      k += 1;
    } else if (code === 3) {
      const [p0, p1, p2] = [pen, at(k), at(k + 1)];
      const a = side(p0) - 2 * side(p1) + side(p2);
      const b = 2 * (side(p1) - side(p0));
      const c = side(p0);
      let roots = [];
      if (Math.abs(a) > 1e-12) {
        const disc = b * b - 4 * a * c;
        if (disc >= 0) roots = [1, -1].map((sign) => (-b + sign * Math.sqrt(disc)) / (2 * a));
      } else if (b) {
        roots = [-c / b];
      }
      for (const t of roots) {
        if (t >= -1e-9 && t <= 1 + 1e-9) {
          const u = 1 - t;
          const point = [0, 1].map((i) => u * u * p0[i] + 2 * u * t * p1[i] + t * t * p2[i]);
          found.push(along(point));
        }
      }
      pen = p2;
      k += 2;
    } else {
      throw new Error(`unexpected path code ${code} in a task's box`);
    }
  }
  return found;
}

/** An arrow's recorded vertices moved to new ends: the head with the end, the tail with the
 * start, what lies between in proportion. */
function moved(xy, [s0, e0], [s1, e1], headroom) {
  const out = new Array(xy.length);
  const d = [e0[0] - s0[0], e0[1] - s0[1]];
  const len2 = d[0] * d[0] + d[1] * d[1] || 1;
  for (let k = 0; k < xy.length; k += 2) {
    const v = [xy[k], xy[k + 1]];
    const toEnd = Math.hypot(v[0] - e0[0], v[1] - e0[1]);
    const toStart = Math.hypot(v[0] - s0[0], v[1] - s0[1]);
    let t = ((v[0] - s0[0]) * d[0] + (v[1] - s0[1]) * d[1]) / len2;
    if (toEnd <= headroom) t = 1;
    else if (toStart <= 1e-3) t = 0;
    for (const i of [0, 1]) out[k + i] = v[i] + (1 - t) * (s1[i] - s0[i]) + t * (e1[i] - e0[i]);
  }
  return out;
}

function dagPanel(baked, drawn) {
  const st = baked.structures[drawn.key];
  const { cp, duration, ex } = drawn;
  const looks = baked.looks;
  const font = baked.pieces.box;
  const onPath = new Set(cp.path);
  const pathEdges = new Set(cp.path.slice(1).map((v, i) => `${cp.path[i]}\u0000${v}`));
  const boxes = {};
  const texts = [];
  for (const [node, b] of Object.entries(st.boxes)) {
    const words = ["d = ", String(duration[node]), ", slack ", String(cp.slack[node])];
    const w2 = width(font, words);
    const grow = (Math.max(b.wl, w2) - b.w) / 2;
    const xy = Array.from(floats(b.xy), (x, k) => (k % 2 ? x : x + (x > b.x ? grow : -grow)));
    boxes[node] = { xy, c: Uint8Array.from(atob(b.c), (ch) => ch.charCodeAt(0)) };
    const look = looks.box[onPath.has(node) ? "critical" : "normal"];
    texts.push(path(look, xy, b.c), { ...b.label }, ...run(font, words, whole(b.x - w2 / 2), whole(b.y)));
  }
  const items = [...st.frame];
  for (const a of st.arrows) {
    const [tail, head] = [st.boxes[a.u], st.boxes[a.v]];
    const p = [tail.x, tail.cy];
    const q = [head.x, head.cy];
    const leaving = crossings(boxes[a.u].xy, boxes[a.u].c, p, q).filter((s) => s >= 0);
    const entering = crossings(boxes[a.v].xy, boxes[a.v].c, p, q).filter((s) => s <= 1);
    const s0 = leaving.length ? Math.max(...leaving) : 0;
    const s1 = entering.length ? Math.min(...entering) : 1;
    let start = [0, 1].map((i) => p[i] + (q[i] - p[i]) * s0);
    let end = [0, 1].map((i) => p[i] + (q[i] - p[i]) * s1);
    const length = Math.hypot(end[0] - start[0], end[1] - start[1]);
    const gap = Math.min(baked.pt, length / 3);
    if (length > 0) {
      const unit = [(end[0] - start[0]) / length, (end[1] - start[1]) / length];
      start = [start[0] + gap * unit[0], start[1] + gap * unit[1]];
      end = [end[0] - gap * unit[0], end[1] - gap * unit[1]];
    }
    const look = pathEdges.has(`${a.u}\u0000${a.v}`) ? "critical" : "normal";
    a[look].forEach((shape, i) => {
      const xy = moved(floats(shape.xy), a.ends, [start, end], 12 * baked.pt);
      items.push(path(looks.arrow[look][i], xy, shape.c));
    });
  }
  items.push(...texts);
  const title = ["Critical path (highlighted): ", String(cp.makespan), ` ${ex.unit}`];
  items.push(...centred(baked.pieces.title, title, st.title));
  return items;
}

/** The end of the Gantt chart's time axis [widgets.dag.time_axis_end]. */
function axisEnd(makespan, ends) {
  const need = 1.1 * makespan;
  const end = ends.find((e) => e >= need);
  if (end === undefined) throw new Error(`no time axis baked for a makespan of ${makespan}`);
  return end;
}

function ganttPanel(baked, drawn) {
  const { cp, schedule, ex, workers } = drawn;
  const g = baked.gantt;
  const looks = baked.looks;
  const [left, top, right, bottom] = baked.axes.gantt.box;
  const ends = Object.keys(g.xticks).map(Number).sort((a, b) => a - b);
  const end = axisEnd(schedule.makespan, ends);
  const X = (t) => left + (t / end) * (right - left);
  const Y = (row) => top + ((row + 0.5) / workers) * (bottom - top);
  const items = [...g.base, ...g.y[String(workers)], ...g.xlabel[ex.unit]];
  const mark = looks.xtick;
  for (const t of g.xticks[String(end)]) {
    const x = X(t);
    items.push({ ...mark, t: "m", xy: floats(g.xtick.xy), at: new Float32Array([whole(x), whole(bottom)]), _ready: true });
    items.push(...centred(baked.pieces.tick, [String(t)], { ax: x, ly: g.xtick.y }));
  }
  const onPath = new Set(cp.path);
  const bars = [];
  const ticks = [];
  const labels = [];
  for (const node of schedule.nodes) {
    const start = schedule.start[node];
    const span = schedule.finish[node] - start;
    const row = schedule.worker[node];
    const look = onPath.has(node) ? "critical" : "normal";
    if (span > 0) {
      const lw = looks.bar[look].lw;
      const [x0, x1] = [X(start), X(start + span)].map((v) => snap(v, lw));
      const [y0, y1] = [Y(row - 0.3), Y(row + 0.3)].map((v) => snap(v, lw));
      bars.push(path(looks.bar[look], [x0, y0, x1, y0, x1, y1, x0, y1, x0, y0], "AQICAk8="));
      const room = (g.points * span) / end - g.margin; // points a bar keeps free (plots.dag)
      const names = [String(ex.labels[node] ?? node), String(node)];
      const name = names.find((n) => g.labels[n].points <= room);
      if (name !== undefined) {
        const l = g.labels[name];
        const [ax, ay] = [X(start + span / 2), Y(row)];
        const [bx0, by0, bx1, by1] = l.box.map((v, i) => whole((i % 2 ? ay : ax) + v));
        labels.push(path(looks.label[look], [bx0, by0, bx1, by0, bx1, by1, bx0, by1, bx0, by0], "AQICAk8="));
        labels.push({ t: "i", id: l.id, x: whole(ax + l.off[0]) + l.d[0], y: whole(ay + l.off[1]) + l.d[1], _ready: true });
      }
    } else {
      const lw = looks.tick[look].lw;
      const x = snap(X(start), lw);
      ticks.push(path(looks.tick[look], [x, snap(Y(row - 0.3), lw), x, snap(Y(row + 0.3), lw)]));
    }
  }
  const lw = g.makespan.lw;
  const x = snap(X(schedule.makespan), lw);
  const makespan = path(g.makespan, [x, snap(bottom, lw), x, snap(top, lw)]);
  const s = workers > 1 ? "s" : "";
  const title = ["List schedule on ", String(workers), ` worker${s}: makespan `, String(schedule.makespan), ` ${ex.unit}`];
  return [...items, ...bars, ...ticks, makespan, ...g.spines, ...labels, ...centred(baked.pieces.title, title, g.title)];
}

/** Both panels, or the one a layout of one panel at a time shows (baked.panel). */
function scene(baked, drawn) {
  const plan = baked.panel !== "gantt" ? dagPanel(baked, drawn) : [];
  const gantt = baked.panel !== "plan" ? ganttPanel(baked, drawn) : [];
  return [...plan, ...gantt];
}

// -- the controls -----------------------------------------------------------------------------

/** The example buttons, workers, options and duration sliders (one set per example, kept when
 * the example changes, as in the notebook): {name: {value()}} for the page's update. */
export function controls(spec, holder, slider, onInput) {
  const out = {};
  const top = document.createElement("div");
  top.className = "column dag-top";
  const choice = document.createElement("fieldset");
  choice.className = "choice";
  choice.innerHTML = `<legend>example</legend>`;
  for (const [key, ex] of Object.entries(spec.examples)) {
    const id = `${spec.name}-example-${key}`;
    const label = document.createElement("label");
    label.htmlFor = id;
    label.title = `worked example ${key} of the lecture`;
    label.innerHTML = `<input type="radio" id="${id}" name="${spec.name}-example" value="${key}"> `;
    label.append(`${key}: ${ex.name}`);
    choice.append(label);
  }
  choice.querySelector(`input[value="${spec.start}"]`).checked = true;
  const shown = () => choice.querySelector("input:checked").value;
  out.example = { value: shown };
  top.append(choice);
  const workers = slider(spec, spec.controls.find((c) => c.name === "workers"), onInput);
  out.workers = workers;
  top.append(workers.box);
  const options = document.createElement("div");
  options.className = "options";
  for (const option of spec.options) {
    const id = `${spec.name}-${option.name}`;
    const label = document.createElement("label");
    label.className = "option";
    label.title = option.tooltip;
    label.dataset.example = option.example;
    label.innerHTML = `<input type="checkbox" id="${id}" name="${option.name}"> `;
    label.append(option.label);
    const input = label.querySelector("input");
    input.addEventListener("change", onInput);
    out[option.name] = { value: () => input.checked, input };
    options.append(label);
  }
  top.append(options);
  holder.append(top);
  const grids = {};
  for (const [key, sliders] of Object.entries(spec.durations)) {
    const grid = document.createElement("div");
    grid.className = "durations";
    grid.dataset.example = key;
    for (const c of sliders) {
      out[c.name] = slider(spec, c, onInput);
      grid.append(out[c.name].box);
    }
    grids[key] = grid;
    holder.append(grid);
  }
  const show = () => {
    const key = shown();
    for (const [k, grid] of Object.entries(grids)) grid.hidden = k !== key;
    for (const label of options.children) label.hidden = label.dataset.example !== key;
  };
  choice.addEventListener("change", () => {
    for (const option of spec.options) out[option.name].input.checked = false; // as the notebook
    show();
    onInput();
  });
  show();
  return out;
}
