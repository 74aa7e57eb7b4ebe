// The browser side of decompkit.widgets' FigureView (view.py): one ES module that anywidget
// loads.
//
// It paints the background and then the scene (paths, markers, bitmaps) on a canvas at the
// figure's CSS size, decoding each bitmap once; keeps the pictures the kernel sends ahead (and
// its answers) by setting and draws one as soon as the controls reach it, never letting a late
// answer step the figure back; reports the width the notebook gives the figure and the
// screen's pixel ratio; steps a stepper's slider on a button click and the sliders on arrow
// keys in the page; and says when a saved picture has no kernel behind it. Where the kernel
// says how (its `moving` trait: the reliability and horizon explorers), it computes a
// setting's moving artists itself (moving.js) and draws them the moment a control moves; the
// kernel's picture of that setting replaces them when it comes.
//
// The kit loads this module with those it imports before it, as one (widgets/view.py).

import { MOVING, sceneOf } from "./moving.js";

// Highest device pixel ratio drawn for: the kernel's MAX_RATIO (a test keeps them equal).
const MAX_RATIO = 2;
// How long the view waits for the kernel's answer before it says the picture is saved.
const PING_TIMEOUT_MS = 4000;
// Decoded bitmaps kept, most recent last.
const BITMAPS = 3000;
// Pictures by setting (sent ahead, or answers) kept, most recent last.
const PICTURES = 400;
// How long the view waits for the models of the controls before it goes on without them.
const CONTROLS_TIMEOUT_MS = 10000;

// CSS pixels kept free below the figure when it is sized to the notebook's visible height.
const ROOM_MARGIN = 8;
// The `seq` a picture's decompkit-frame event carries when it was not the kernel's answer:
// sent ahead, or computed here.
const AHEAD = -1;
const COMPUTED = -2;

const NOTE = "Saved picture: run this cell to use the controls.";

// Buffers arrive as DataView (live kernel), ArrayBuffer or typed arrays (saved state).
function bytesOf(b) {
  if (b instanceof ArrayBuffer) return new Uint8Array(b);
  return new Uint8Array(b.buffer, b.byteOffset, b.byteLength);
}
const floatsOf = (b) => new Float32Array(bytesOf(b).slice().buffer);
const decode = (b) => createImageBitmap(new Blob([bytesOf(b)], { type: "image/png" }));
// A bitmap from its RGBA pixels, ready at once (a canvas: drawImage and createPattern take it).
function fromPixels(width, height, b) {
  const bytes = bytesOf(b);
  const rgba = new Uint8ClampedArray(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  const canvas =
    typeof OffscreenCanvas === "function"
      ? new OffscreenCanvas(width, height)
      : Object.assign(document.createElement("canvas"), { width, height });
  canvas.getContext("2d").putImageData(new ImageData(rgba, width, height), 0, 0);
  return canvas;
}

// The key of a setting, as setting_key() writes it in the kernel.
function keyOf(controls) {
  return controls
    .map((c) => {
      if (c.get("index") !== undefined) return String(c.get("index")); // a choice
      const v = c.get("value");
      if (typeof v === "boolean") return v ? "1" : "0";
      const step = c.get("step");
      if (typeof v === "number" && typeof step === "number" && step > 0) {
        return String(Math.round((v - c.get("min")) / step));
      }
      return String(v);
    })
    .join("|");
}

// A Path2D from float32 vertices and matplotlib's path codes (1 move, 2 line, 3 quadratic,
// 4 cubic, 79 close); without codes, a polyline. A NaN vertex lifts the pen.
function pathOf(item) {
  const xy = floatsOf(item.xy);
  const codes = item.c ? bytesOf(item.c) : null;
  const path = new Path2D();
  const n = xy.length / 2;
  let pen = false;
  for (let k = 0; k < n; ) {
    const code = codes ? codes[k] : k === 0 ? 1 : 2;
    const x = xy[2 * k], y = xy[2 * k + 1];
    if (code === 79) {
      path.closePath();
      k += 1;
    } else if (code === 3) {
      path.quadraticCurveTo(x, y, xy[2 * k + 2], xy[2 * k + 3]);
      k += 2;
    } else if (code === 4) {
      path.bezierCurveTo(x, y, xy[2 * k + 2], xy[2 * k + 3], xy[2 * k + 4], xy[2 * k + 5]);
      k += 3;
    } else if (code === 0) {
      break;
    } else {
      if (Number.isNaN(x) || Number.isNaN(y)) pen = false;
      else if (code === 1 || !pen) (path.moveTo(x, y), (pen = true));
      else path.lineTo(x, y);
      k += 1;
    }
  }
  return path;
}

function paintPath(ctx, item, path, bitmaps) {
  if (item.fill) {
    ctx.fillStyle = item.fill;
    ctx.fill(path);
  }
  if (item.hatch && bitmaps.get(item.hatch)) {
    ctx.fillStyle = ctx.createPattern(bitmaps.get(item.hatch), "repeat");
    ctx.fill(path);
  }
  if (item.stroke) {
    ctx.strokeStyle = item.stroke;
    ctx.lineWidth = item.lw;
    ctx.lineCap = item.cap;
    ctx.lineJoin = item.join;
    ctx.miterLimit = 4;
    ctx.setLineDash(item.dash || []);
    ctx.lineDashOffset = item.off || 0;
    ctx.stroke(path);
  }
}

export function paint(ctx, scene, bitmaps) {
  for (const item of scene) {
    ctx.save();
    if (item.clip) {
      const [x0, y0, x1, y1] = item.clip;
      ctx.beginPath();
      ctx.rect(x0, y0, x1 - x0, y1 - y0);
      ctx.clip();
    }
    if (item.t === "p") {
      paintPath(ctx, item, pathOf(item), bitmaps);
    } else if (item.t === "m") {
      const shape = pathOf(item);
      const at = floatsOf(item.at);
      for (let k = 0; k < at.length; k += 2) {
        ctx.setTransform(1, 0, 0, 1, at[k], at[k + 1]);
        paintPath(ctx, item, shape, bitmaps);
      }
    } else if (item.t === "i" && bitmaps.get(item.id)) {
      const bitmap = bitmaps.get(item.id);
      if (item.cells) {
        ctx.imageSmoothingEnabled = false; // one flat cell per pixel of the bitmap
        ctx.drawImage(bitmap, item.x, item.y, item.w, item.h);
      } else {
        ctx.drawImage(bitmap, item.x, item.y);
      }
    }
    ctx.restore();
  }
}

export default {
  async render({ model, el }) {
    el.classList.add("decompkit-figure");
    el.style.minWidth = "0";
    const note = document.createElement("div");
    note.className = "decompkit-figure-note";
    note.textContent = NOTE;
    note.style.cssText = "display:none;font-style:italic;margin:2px 0 4px 0;";
    const canvas = document.createElement("canvas");
    canvas.style.display = "block";
    canvas.style.maxWidth = "100%"; // a saved picture wider than the page shrinks to fit
    canvas.setAttribute("role", "img");
    el.append(note, canvas);
    const ctx = canvas.getContext("2d");

    // Decoded bitmaps by id (each sent and decoded once), and the background by layout.
    const bitmaps = new Map();
    let background = { layout: -1, bitmap: null };
    let token = 0;
    let changed = null; // when a control's value last changed in this page
    let shown = null; // the setting on the canvas
    let estimated = false; // whether its picture was computed here, not the kernel's
    let live = false; // whether a kernel answered: a saved view's controls draw nothing new
    // Pictures by setting: sent ahead by the kernel, or its answers, most recent last.
    const pictures = new Map();
    const remember = (key, scene) => {
      pictures.delete(key);
      pictures.set(key, { layout: model.get("backdrop"), epoch: model.get("epoch"), scene });
      if (pictures.size > PICTURES) pictures.delete(pictures.keys().next().value);
    };
    // A setting's picture on the current background and epoch.
    const which = (key) => `${model.get("backdrop")}:${model.get("epoch")}:${key}`;
    const picture = (key) => {
      const entry = pictures.get(key);
      const fresh = entry && entry.layout === model.get("backdrop");
      return fresh && entry.epoch === model.get("epoch") ? entry.scene : null;
    };

    // Paint a scene over the background; false when a bitmap it needs is not here.
    async function draw(scene, key, seq) {
      const frame = model.get("frame");
      if (!frame || !frame.byteLength) return false;
      const ids = new Set();
      for (const item of scene) {
        if (item.id) ids.add(item.id);
        if (item.hatch) ids.add(item.hatch);
      }
      if ([...ids].some((id) => !bitmaps.has(id))) return false;
      const mine = ++token;
      shown = which(key);
      estimated = seq === COMPUTED;
      const received = performance.now();
      const layout = model.get("backdrop");
      if (background.layout !== layout) background = { layout, bitmap: decode(frame) };
      const order = [...ids];
      const [back, ...done] = await Promise.all([
        background.bitmap,
        ...order.map((id) => bitmaps.get(id)),
      ]);
      if (mine !== token) return true; // a newer picture came meanwhile
      const ready = new Map(order.map((id, i) => [id, done[i]]));
      if (canvas.width !== back.width || canvas.height !== back.height) {
        canvas.width = back.width;
        canvas.height = back.height;
        canvas.style.aspectRatio = `${back.width} / ${back.height}`;
      }
      const width = model.get("css_width") + "px";
      if (canvas.style.width !== width) canvas.style.width = width;
      if (canvas.getAttribute("aria-label") !== model.get("alt")) {
        canvas.setAttribute("aria-label", model.get("alt"));
      }
      ctx.setTransform(1, 0, 0, 1, 0, 0);
      ctx.drawImage(back, 0, 0);
      paint(ctx, scene, ready);
      if (bitmaps.size > BITMAPS) {
        for (const id of bitmaps.keys()) {
          if (bitmaps.size <= BITMAPS / 2) break;
          if (!ids.has(id)) bitmaps.delete(id);
        }
      }
      if (!el.dataset.seq) el.dataset.seq = String(seq);
      el.dispatchEvent(
        new CustomEvent("decompkit-frame", {
          bubbles: true,
          detail: {
            seq, received, changed, time: performance.now(), kernel: model.get("kernel_ms"),
            setting: shown, // the same setting drawn again (the kernel's after ours) is no news
          },
        })
      );
      return true;
    }

    const adopt = (sprites) => {
      for (const [id, bytes] of Object.entries(sprites || {})) {
        if (!bitmaps.has(id)) bitmaps.set(id, decode(bytes));
      }
    };
    let controls = [];
    const current = () => keyOf(controls);

    // A picture from the kernel: draw it, unless the controls have moved on to a setting
    // whose picture is here already (a late answer must not step the figure back).
    function fromKernel() {
      adopt(model.get("sprites"));
      const setting = model.get("setting");
      const scene = model.get("scene") || [];
      remember(setting, scene);
      el.dataset.answered = String(model.get("seq")); // the kernel's latest answer is here
      // Judge lateness only against an up-to-date list of controls (an explorer may swap
      // its sliders, say for another example).
      const settled = watched === model.get("controls");
      const now = current();
      if (settled && setting !== now && (picture(now) || computed())) return fromControls();
      if (which(setting) !== shown || estimated) draw(scene, setting, model.get("seq"));
    }

    // The scene of the controls' current setting computed here, or null where the kernel did
    // not say how (or its formulas decline: the kit draws something they do not).
    function computed() {
      const moving = model.get("moving");
      if (!live || !moving || !MOVING[moving.kind] || watched !== model.get("controls")) {
        return null; // a saved picture (no kernel: its readouts would not follow) or no way
      }
      if (moving.backdrop !== model.get("backdrop") || moving.epoch !== model.get("epoch")) {
        return null; // drawn for another layout, or before a simulation
      }
      if (moving.names.length !== controls.length) return null;
      const values = Object.fromEntries(moving.names.map((name, i) => [name, controls[i].get("value")]));
      try {
        const parts = MOVING[moving.kind](moving.spec, values);
        return parts && sceneOf(moving.layout, parts);
      } catch {
        return null; // a value the formulas refuse: the kernel's picture says why
      }
    }

    // A control moved in this page: draw its picture at once if the kernel sent it ahead,
    // else if it can be computed here.
    function fromControls() {
      changed = performance.now();
      const now = current();
      if (which(now) === shown) return;
      const ahead = picture(now);
      if (ahead) return draw(ahead, now, AHEAD);
      const scene = computed();
      if (scene) draw(scene, now, COMPUTED);
    }

    const onMessage = (msg, buffers) => {
      if (!msg) return;
      if (msg.type === "pong") {
        live = true;
        clearTimeout(timer);
        note.style.display = "none";
      } else if (msg.type === "pixels") {
        // The pixels of the bitmaps the next picture brings new: no PNG to decode for them.
        for (const [id, [width, height, b]] of Object.entries(msg.sprites)) {
          if (!bitmaps.has(id)) bitmaps.set(id, fromPixels(width, height, buffers[b]));
        }
      } else if (msg.type === "ahead" && msg.backdrop === model.get("backdrop")) {
        const unpack = (v) => (v && typeof v === "object" && "b" in v ? buffers[v.b] : v);
        const scene = msg.scene.map((item) =>
          Object.fromEntries(Object.entries(item).map(([k, v]) => [k, unpack(v)]))
        );
        adopt(Object.fromEntries(Object.entries(msg.sprites).map(([k, v]) => [k, unpack(v)])));
        if (msg.epoch === model.get("epoch")) remember(msg.key, scene);
        if (msg.key === current()) fromControls();
      }
    };

    // The width the notebook gives the figure, the pixel ratio and the height the figure may
    // take so that it is on screen with the controls above it, as one change. That height is
    // the notebook's visible height (its scrolling panel's) less what the explorer shows
    // above the figure, which does not depend on the figure's own height.
    const ratio = () => Math.min(window.devicePixelRatio || 1, MAX_RATIO);
    const visibleHeight = () => {
      // The first panel outside the explorer that scrolls (widget boxes may say overflow
      // auto without scrolling); the window's height if none does.
      const box = el.closest(".decompkit-explorer") || el;
      for (let a = box.parentElement; a; a = a.parentElement) {
        const scrolls = /(auto|scroll)/.test(getComputedStyle(a).overflowY);
        if (scrolls && a.scrollHeight > a.clientHeight + 1) return a.clientHeight;
      }
      return window.innerHeight;
    };
    const room = () => {
      const box = el.closest(".decompkit-explorer");
      const above = box ? el.getBoundingClientRect().top - box.getBoundingClientRect().top : 0;
      return Math.floor(visibleHeight() - above - ROOM_MARGIN);
    };
    let reported = model.get("screen") || [0, 1, 0];
    const report = () => {
      const width = Math.floor(el.getBoundingClientRect().width);
      if (!width || !el.isConnected) return;
      const screen = [width, ratio(), room()];
      const same = (k) => Math.abs(screen[k] - (reported[k] || 0)) < 4;
      if (same(0) && same(2) && screen[1] === reported[1]) return;
      reported = screen;
      model.set("screen", screen);
      model.save_changes();
    };
    let resizeTimer = null;
    const resized = () => {
      clearTimeout(resizeTimer);
      resizeTimer = setTimeout(report, 120);
    };
    const observer = new ResizeObserver(resized);
    observer.observe(el);
    window.addEventListener("resize", resized); // a zoom or a taller window: a new height
    // A new pixel ratio alone (a zoom that keeps the width, another screen) fires no resize.
    // A media query matches one ratio: after each change the view watches the new ratio's,
    // or a second change (1.5 -> 1 -> 2) would go unseen and the canvas stay blurred.
    let media = null;
    const onRatio = () => {
      watchRatio();
      report();
    };
    const watchRatio = () => {
      if (media) media.removeEventListener("change", onRatio);
      media = window.matchMedia(`(resolution: ${window.devicePixelRatio}dppx)`);
      media.addEventListener("change", onRatio);
    };
    watchRatio();

    // A live kernel answers at once; a view restored from a saved notebook gets no answer.
    const timer = setTimeout(() => (note.style.display = "block"), PING_TIMEOUT_MS);
    model.on("msg:custom", onMessage);
    try {
      model.send({ type: "ping" });
    } catch {
      note.style.display = "block";
    }
    model.on("change:seq", fromKernel);

    const manager = model.widget_manager;
    const resolve = (ref) =>
      typeof ref === "string" && ref.startsWith("IPY_MODEL_")
        ? manager.get_model(ref.slice(10))
        : Promise.resolve(ref);
    // A saved notebook may name controls whose models come late or never: after a while
    // the view goes on without them (the picture only).
    const models = async (name) => {
      let timeout = null;
      const late = new Promise(
        (done) => (timeout = setTimeout(() => done([]), CONTROLS_TIMEOUT_MS))
      );
      try {
        return await Promise.race([Promise.all((model.get(name) || []).map(resolve)), late]);
      } catch {
        return []; // a saved view without its controls: the picture only
      } finally {
        clearTimeout(timeout);
      }
    };
    let watched = null; // the list of controls that `controls` was resolved from
    const watch = async () => {
      const refs = model.get("controls");
      const resolved = await models("controls");
      if (refs !== model.get("controls")) return; // a newer list came meanwhile
      controls.forEach((c) => c.off("change:value change:index", fromControls));
      controls = resolved;
      watched = refs;
      controls.forEach((c) => c.on("change:value change:index", fromControls));
    };
    fromKernel(); // the picture first: it needs none of the controls
    await watch();
    model.on("change:controls", watch);
    const stepper = await models("stepper");

    // The stepper's buttons move its slider here, in the page: one message, not two.
    const onClick = (event) => {
      const button = event.target.closest(".decompkit-back, .decompkit-forward");
      if (!button || !stepper.length || button.disabled) return;
      event.stopPropagation();
      event.preventDefault();
      const slider = stepper[0];
      const delta = button.classList.contains("decompkit-back") ? -1 : 1;
      const value = slider.get("value") + delta;
      if (value < slider.get("min") || value > slider.get("max")) return;
      slider.set("value", value);
      slider.save_changes();
    };
    // Notebook 7 takes arrow keys for itself before a focused slider sees them (a keydown
    // listener of its own, which data-lm-suppress-shortcuts does not reach). So the view
    // steps its explorer's sliders itself, from the window's capture phase, first in line.
    const KEYS = {
      ArrowRight: 1, ArrowUp: 1, ArrowLeft: -1, ArrowDown: -1, PageUp: 10, PageDown: -10,
    };
    let explorer = null;
    const onKey = (event) => {
      const target = event.target;
      const handle = target && target.closest && target.closest(".noUi-handle");
      if (!handle || !explorer || !explorer.contains(handle)) return;
      const delta = KEYS[event.key];
      const end = { Home: "min", End: "max" }[event.key];
      if (delta === undefined && !end) return;
      const label = handle.closest(".widget-slider")?.querySelector(".widget-label");
      const text = label ? label.textContent.trim() : null;
      const slider = controls.find(
        (c) => typeof c.get("step") === "number" && c.get("description") === text
      );
      if (!slider) return;
      event.stopImmediatePropagation();
      event.preventDefault();
      const [low, high, step] = ["min", "max", "step"].map((k) => slider.get(k));
      let value = end ? slider.get(end) : slider.get("value") + delta * step;
      value = Math.min(Math.max(value, low), high);
      value = Number((low + Math.round((value - low) / step) * step).toFixed(10));
      if (value !== slider.get("value")) {
        slider.set("value", value);
        slider.save_changes();
      }
    };
    window.addEventListener("keydown", onKey, true);
    const attach = () => {
      explorer = el.closest(".decompkit-explorer");
      if (!explorer) return el.isConnected || setTimeout(attach, 50);
      // Arrow keys on a slider must reach the slider, not the notebook's shortcuts
      // (Notebook 7 binds them to cell navigation): Lumino skips shortcuts under this.
      explorer.setAttribute("data-lm-suppress-shortcuts", "true");
      observer.observe(explorer); // controls drawn or wrapped anew move the figure down
      explorer.addEventListener("click", onClick, true);
    };
    attach();
    fromKernel();
    report();
    return () => {
      clearTimeout(timer);
      clearTimeout(resizeTimer);
      observer.disconnect();
      window.removeEventListener("resize", resized);
      media.removeEventListener("change", onRatio);
      model.off("change:seq", fromKernel);
      model.off("change:controls", watch);
      controls.forEach((c) => c.off("change:value change:index", fromControls));
      model.off("msg:custom", onMessage);
      if (explorer) explorer.removeEventListener("click", onClick, true);
      window.removeEventListener("keydown", onKey, true);
    };
  },
};
