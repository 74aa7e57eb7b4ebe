// The plan as a DAG for the static page, in plain JavaScript (no dependencies, no build):
// Kahn's order, its layers, the ready set, the critical path and the list schedule, each
// mirroring one function of decompkit.dag (named in its JSDoc) with the same tie-breaking;
// tests/test_page_parity.py checks every one against the package. The page's reliability and
// audited-chain formulas are in lecture.js.
//
// Exported API (camelCase; the Python name in brackets):
//   topologicalOrder(graph) -> [node]  [dag.topological_order, FIFO Kahn]
//   generations(graph) -> [[node]]     [dag.generations]
//   readySet(graph, done = [], running = [], blocked = []) -> [node]
//                                      [dag.ready_set]
//   criticalPath(graph, durations) -> {nodes, makespan, path, earliestStart,
//     earliestFinish, latestStart, latestFinish, slack, serialTime}
//                                      [dag.critical_path]
//   listSchedule(graph, durations, workers, priority = "critical",
//     resources = null) -> {nodes, start, finish, worker, makespan, workers,
//     work}                            [dag.list_schedule]
//     priority: "critical" (bottom level), "input" or node => number, higher
//     first; resources: {node: [keys]}, nodes sharing a key never overlap
//   CycleError (an Error with .cycle, first node repeated at the end)
//
//
// Graphs are {node: [predecessors]} as the package takes them (graphlib style): a plain object,
// a Map, or an array of [node, predecessors] pairs. Nodes are numbered by first appearance (the
// keys in order, then nodes met only as predecessors) and every tie goes to that number. A plain
// object lists integer-like keys ("2", "10") first whatever the JSON said, so give a Map or
// pairs when such names must keep their order. Per-node results are plain objects keyed by node,
// with `nodes` (first-appearance order) to iterate them in the package's order.
//

import { count, shown } from "./checks.js";

// -- the plan as a DAG --------------------------------------------------------------------------

/** The graph has a directed cycle; .cycle repeats its first node at the end [dag.CycleError]. */
export class CycleError extends Error {
  constructor(cycle, detail = "") {
    super(`graph has a cycle: ${cycle.map(shown).join(" -> ")}${detail}`);
    this.name = "CycleError";
    this.cycle = cycle;
  }
}

function selfLoopError(node) {
  return new CycleError([node, node], ` (node ${shown(node)} lists itself as a predecessor)`);
}

function entriesOf(name, mapping, what) {
  if (mapping instanceof Map) return [...mapping.entries()];
  if (Array.isArray(mapping) && mapping.every((e) => Array.isArray(e) && e.length === 2)) {
    return mapping;
  }
  if (mapping !== null && typeof mapping === "object" && !Array.isArray(mapping)) {
    return Object.entries(mapping);
  }
  throw new TypeError(`${name} must be a mapping {node: ${what}}, got ${shown(mapping)}`);
}

/** Validate the graph once and number its nodes by first appearance: the keys in order, then
 * nodes met only as predecessors [dag.indexed.index_graph]. */
function indexGraph(graph, selfLoops) {
  const entries = entriesOf("graph", graph, "iterable of predecessors");
  const index = new Map();
  const nodes = [];
  for (const [node, preds] of entries) {
    if (index.has(node)) throw new RangeError(`graph lists node ${shown(node)} twice`);
    if (!Array.isArray(preds)) {
      throw new TypeError(
        `predecessors of node ${shown(node)} must be an iterable of nodes, got ${shown(preds)}`,
      );
    }
    index.set(node, nodes.length);
    nodes.push(node);
  }
  for (const [, preds] of entries) {
    for (const u of preds) {
      if (!index.has(u)) {
        index.set(u, nodes.length);
        nodes.push(u);
      }
    }
  }
  const preds = nodes.map(() => []);
  entries.forEach(([, ps], v) => {
    preds[v] = ps.map((u) => index.get(u)); // duplicates kept, as the package keeps them
  });
  if (selfLoops) preds.forEach((ps, v) => ps.includes(v) && throwError(selfLoopError(nodes[v])));
  const succ = nodes.map(() => []);
  preds.forEach((ps, v) => ps.forEach((u) => succ[u].push(v))); // ascending, duplicates kept
  return { nodes, index, preds, succ };
}

function throwError(error) {
  throw error;
}

/** Kahn's pass on the reversed graph, sinks first: {queue, height, outdeg}; a CycleError
 * naming one cycle otherwise [dag.kahn.reverse_kahn]. */
function reverseKahn(g) {
  const n = g.nodes.length;
  const outdeg = g.succ.map((s) => s.length);
  const waiting = outdeg.slice();
  const height = new Array(n).fill(0);
  const queue = [];
  for (let i = 0; i < n; i++) if (!waiting[i]) queue.push(i);
  for (let j = 0; j < queue.length; j++) {
    const v = queue[j];
    for (const u of g.preds[v]) {
      if (!--waiting[u]) {
        height[u] = height[v] + 1;
        queue.push(u);
      }
    }
  }
  if (queue.length < n) throw cycleError(g, waiting);
  return { queue, height, outdeg };
}

/** [dag.kahn._cycle_error] Walk the left-over nodes along left-over successors until one
 * repeats; the cycle starts at its node of first appearance. */
function cycleError(g, waiting) {
  const left = [];
  waiting.forEach((k, i) => k && left.push(i));
  for (const v of left) if (g.preds[v].includes(v)) return selfLoopError(g.nodes[v]);
  const leftSet = new Set(left);
  const succ = new Map(left.map((v) => [v, []]));
  for (const v of left) for (const u of g.preds[v]) if (leftSet.has(u)) succ.get(u).push(v);
  const seen = new Map();
  const walk = [];
  let v = left[0];
  while (!seen.has(v)) {
    seen.set(v, walk.length);
    walk.push(v);
    v = succ.get(v)[0];
  }
  let cycle = walk.slice(seen.get(v));
  const first = cycle.indexOf(Math.min(...cycle));
  cycle = [...cycle.slice(first), ...cycle.slice(0, first)];
  return new CycleError([...cycle, cycle[0]].map((i) => g.nodes[i]));
}

/** Kahn's order with a first-in first-out queue: sources in first-appearance order, each
 * popped node's successors visited in that order [dag.topological_order]. */
export function topologicalOrder(graph) {
  const g = indexGraph(graph, false);
  const indegree = g.preds.map((ps) => ps.length);
  const queue = [];
  indegree.forEach((k, v) => k || queue.push(v));
  for (let j = 0; j < queue.length; j++) {
    for (const v of g.succ[queue[j]]) if (!--indegree[v]) queue.push(v);
  }
  if (queue.length < g.nodes.length) reverseKahn(g); // throws the CycleError naming a cycle
  return queue.map((v) => g.nodes[v]);
}

/** The Kahn layers, each in first-appearance order [dag.generations]. */
export function generations(graph) {
  const g = indexGraph(graph, false);
  const depth = new Array(g.nodes.length).fill(0);
  const { queue } = reverseKahn(g);
  for (let j = queue.length - 1; j >= 0; j--) {
    const v = queue[j];
    for (const u of g.preds[v]) depth[v] = Math.max(depth[v], depth[u] + 1);
  }
  const layers = Array.from({ length: Math.max(-1, ...depth) + 1 }, () => []);
  depth.forEach((k, v) => layers[k].push(g.nodes[v]));
  return layers;
}

function lookup(g, name, items) {
  if (typeof items === "string") {
    throw new TypeError(`${name} must be an iterable of nodes, not the str ${shown(items)}`);
  }
  if (!Array.isArray(items)) {
    throw new TypeError(`${name} must be an iterable of nodes, got ${shown(items)}`);
  }
  return items.map((item) => {
    if (!g.index.has(item)) throw new RangeError(`unknown node ${shown(item)} in ${name}`);
    return g.index.get(item);
  });
}

/** Nodes not done, running or blocked whose predecessors are all done, in first-appearance
 * order [dag.ready_set]. */
export function readySet(graph, done = [], running = [], blocked = []) {
  const g = indexGraph(graph, true);
  const finished = new Set(lookup(g, "done", done));
  const busy = new Set([...finished, ...lookup(g, "running", running)]);
  for (const v of lookup(g, "blocked", blocked)) busy.add(v);
  return g.nodes.filter((_, v) => !busy.has(v) && g.preds[v].every((u) => finished.has(u)));
}

/** Durations by node index, each a finite number >= 0, every node given, no stranger
 * [dag.inputs.durations]. */
function durationList(g, durations) {
  const d = new Array(g.nodes.length).fill(undefined);
  for (const [node, x] of entriesOf("durations", durations, "duration")) {
    if (!g.index.has(node)) {
      throw new RangeError(`durations names node ${shown(node)}, which is not in the graph`);
    }
    if (!(typeof x === "number" && Number.isFinite(x) && x >= 0)) {
      throw new RangeError(
        `duration of node ${shown(node)} must be a finite number >= 0, got ${shown(x)}`,
      );
    }
    d[g.index.get(node)] = x;
  }
  const missing = d.indexOf(undefined);
  if (missing >= 0) {
    throw new RangeError(`durations has no entry for node ${shown(g.nodes[missing])}`);
  }
  if (!Number.isFinite(sum(d))) {
    throw new RangeError("durations add up to more than the largest float; use a larger time unit");
  }
  return d;
}

function sum(values) {
  let total = 0;
  for (const x of values) total += x;
  return total;
}

/** The first largest value, as Python's max keeps it; `empty` when there is none. */
function largest(values, empty = 0) {
  let best = empty;
  values.forEach((x, i) => {
    if (i === 0 || x > best) best = x;
  });
  return best;
}

/** Earliest starts, earliest finishes and tails (longest duration after each node), both passes
 * along the reversed Kahn order [dag.cpm.cpm_passes]. */
function cpmPasses(g, d) {
  const { queue, outdeg } = reverseKahn(g);
  const n = d.length;
  const tail = new Array(n).fill(0);
  for (const v of queue) {
    const b = tail[v] + d[v];
    for (const u of g.preds[v]) if (b > tail[u]) tail[u] = b;
  }
  const es = new Array(n).fill(0);
  const ef = d.slice();
  for (let j = queue.length - 1; j >= 0; j--) {
    const v = queue[j];
    if (g.preds[v].length) {
      es[v] = largest(g.preds[v].map((u) => ef[u]));
      ef[v] = es[v] + d[v];
    }
  }
  return { es, ef, tail, outdeg };
}

function byNode(nodes, values) {
  const out = {};
  nodes.forEach((node, i) => {
    out[node] = values[i];
  });
  return out;
}

/** Critical path, makespan, earliest and latest times and slack (Kelley & Walker 1959); the
 * path runs source to sink, ties to first appearance [dag.critical_path]. */
export function criticalPath(graph, durations) {
  const g = indexGraph(graph, false);
  const d = durationList(g, durations);
  const { es, ef, tail, outdeg } = cpmPasses(g, d);
  const makespan = largest(ef);
  const lf = tail.map((t) => makespan - t);
  const ls = lf.map((f, i) => f - d[i]);
  const slack = ls.map((s, i) => s - es[i]);
  const path = [];
  if (ef.length) {
    // The first node to finish last if it is a sink, else the first such sink.
    let v = ef.indexOf(makespan);
    if (outdeg[v]) v = ef.findIndex((f, u) => f === makespan && !outdeg[u]);
    path.push(v);
    while (g.preds[v].length) {
      const start = es[v];
      v = Math.min(...g.preds[v].filter((u) => ef[u] === start));
      path.push(v);
    }
    path.reverse();
  }
  const nodes = g.nodes;
  return {
    nodes,
    makespan,
    path: path.map((v) => nodes[v]),
    earliestStart: byNode(nodes, es),
    earliestFinish: byNode(nodes, ef),
    latestStart: byNode(nodes, ls),
    latestFinish: byNode(nodes, lf),
    slack: byNode(nodes, slack),
    serialTime: sum(d),
  };
}

// A binary heap of arrays compared element by element, as Python's heapq compares tuples.
function before(a, b) {
  for (let i = 0; i < a.length; i++) if (a[i] !== b[i]) return a[i] < b[i];
  return false;
}

function heapPush(heap, item) {
  heap.push(item);
  let i = heap.length - 1;
  while (i > 0) {
    const parent = (i - 1) >> 1;
    if (!before(heap[i], heap[parent])) break;
    [heap[i], heap[parent]] = [heap[parent], heap[i]];
    i = parent;
  }
}

function heapPop(heap) {
  const top = heap[0];
  const last = heap.pop();
  if (heap.length) {
    heap[0] = last;
    let i = 0;
    for (;;) {
      const [l, r] = [2 * i + 1, 2 * i + 2];
      let m = i;
      if (l < heap.length && before(heap[l], heap[m])) m = l;
      if (r < heap.length && before(heap[r], heap[m])) m = r;
      if (m === i) break;
      [heap[i], heap[m]] = [heap[m], heap[i]];
      i = m;
    }
  }
  return top;
}

/** Heap keys per node, smaller first, ties to the node's number
 * [dag.list_scheduling.dispatch_ranks]. */
function dispatchRanks(g, d, priority) {
  if (priority === "critical") {
    const { tail } = cpmPasses(g, d);
    return tail.map((t, i) => -(t + d[i]));
  }
  if (priority !== "input" && typeof priority !== "function") {
    throw new RangeError(
      `priority must be 'critical', 'input' or a callable, got ${shown(priority)}`,
    );
  }
  reverseKahn(g);
  if (priority === "input") return d.map(() => 0);
  return g.nodes.map((node) => {
    const p = priority(node);
    if (typeof p !== "number" || Number.isNaN(p)) {
      throw new TypeError(`priority(${shown(node)}) must return a number, got ${shown(p)}`);
    }
    return -p;
  });
}

function resourceSets(g, resources) {
  const sets = g.nodes.map(() => new Set());
  if (resources == null) return sets;
  for (const [node, keys] of entriesOf("resources", resources, "iterable of keys")) {
    if (!g.index.has(node)) {
      throw new RangeError(`resources names node ${shown(node)}, which is not in the graph`);
    }
    if (!Array.isArray(keys)) {
      throw new TypeError(
        `resources of node ${shown(node)} must be an iterable of keys, got ${shown(keys)}`,
      );
    }
    sets[g.index.get(node)] = new Set(keys);
  }
  return sets;
}

/** Greedy list schedule on `workers` identical workers (Graham 1969): at each event time every
 * free worker, lowest number first, takes the highest-priority ready task whose resource keys
 * are free; then time jumps to the next finish [dag.list_schedule]. */
export function listSchedule(graph, durations, workers, priority = "critical", resources = null) {
  const m = count("workers", workers, 1);
  const g = indexGraph(graph, false);
  const d = durationList(g, durations);
  const rank = dispatchRanks(g, d, priority);
  const heldBy = resourceSets(g, resources);
  const n = d.length;
  const indegree = g.preds.map((ps) => ps.length);
  const ready = [];
  indegree.forEach((k, v) => k || heapPush(ready, [rank[v], v]));
  // Workers beyond one per node would never be used; a sorted list is a valid heap.
  const free = Array.from({ length: Math.min(m, Math.max(n, 1)) }, (_, w) => [w]);
  const running = []; // [finish, node, worker]
  const held = new Set();
  const start = new Array(n).fill(0);
  const finish = new Array(n).fill(0);
  const worker = new Array(n).fill(0);
  let now = 0;
  while (ready.length || running.length) {
    const deferred = [];
    while (ready.length && free.length) {
      const item = heapPop(ready);
      const v = item[1];
      const keys = heldBy[v];
      if ([...keys].some((key) => held.has(key))) {
        deferred.push(item); // its lock is taken; others may still start
        continue;
      }
      const [w] = heapPop(free);
      start[v] = now;
      finish[v] = now + d[v];
      worker[v] = w;
      heapPush(running, [finish[v], v, w]);
      for (const key of keys) held.add(key);
    }
    for (const item of deferred) heapPush(ready, item);
    now = running[0][0];
    while (running.length && running[0][0] === now) {
      const [, v, w] = heapPop(running);
      heapPush(free, [w]);
      for (const key of heldBy[v]) held.delete(key);
      for (const s of g.succ[v]) if (!--indegree[s]) heapPush(ready, [rank[s], s]);
    }
  }
  const nodes = g.nodes;
  return {
    nodes,
    start: byNode(nodes, start),
    finish: byNode(nodes, finish),
    worker: byNode(nodes, worker),
    makespan: largest(finish),
    workers: m,
    work: sum(d),
  };
}
