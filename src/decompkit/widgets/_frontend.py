"""The browser side of :class:`decompkit.widgets._render.FigureView`: one ES module (anywidget).

It paints the background and then the scene (paths, markers, bitmaps) on a canvas at the
figure's CSS size, decoding each bitmap once; reports the width the notebook gives the
figure and the screen's pixel ratio; steps a stepper's slider on a button click and the
sliders on arrow keys in the page; and says when a saved picture has no kernel behind it.
"""

__all__: list[str] = []

ESM = r"""
const NOTE = "Saved picture: run this cell to use the controls.";

// Buffers arrive as DataView (live kernel), ArrayBuffer or typed arrays (saved state).
function bytesOf(b) {
  if (b instanceof ArrayBuffer) return new Uint8Array(b);
  return new Uint8Array(b.buffer, b.byteOffset, b.byteLength);
}
const floatsOf = (b) => new Float32Array(bytesOf(b).slice().buffer);
const decode = (b) => createImageBitmap(new Blob([bytesOf(b)], { type: "image/png" }));

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

function paint(ctx, scene, bitmaps) {
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
    canvas.style.maxWidth = "100%%"; // a saved picture wider than the page shrinks to fit
    canvas.setAttribute("role", "img");
    el.append(note, canvas);
    const ctx = canvas.getContext("2d");

    // Decoded bitmaps by id (each sent and decoded once), and the background by layout.
    const bitmaps = new Map();
    let background = { layout: -1, bitmap: null };
    let token = 0;
    let changed = null; // when a control's value last changed in this page

    async function draw() {
      const frame = model.get("frame");
      if (!frame || !frame.byteLength) return;
      const mine = ++token;
      const received = performance.now();
      const layout = model.get("layout");
      if (background.layout !== layout) background = { layout, bitmap: decode(frame) };
      const scene = model.get("scene") || [];
      const sprites = model.get("sprites") || {};
      const ids = new Set();
      for (const item of scene) {
        if (item.id) ids.add(item.id);
        if (item.hatch) ids.add(item.hatch);
      }
      for (const id of ids) {
        if (!bitmaps.has(id) && sprites[id]) bitmaps.set(id, decode(sprites[id]));
      }
      const ready = new Map();
      const pending = [...ids].filter((id) => bitmaps.has(id));
      const [back, ...done] = await Promise.all([
        background.bitmap,
        ...pending.map((id) => bitmaps.get(id)),
      ]);
      pending.forEach((id, i) => ready.set(id, done[i]));
      if (mine !== token) return; // a newer picture came meanwhile
      if (canvas.width !== back.width || canvas.height !== back.height) {
        canvas.width = back.width;
        canvas.height = back.height;
      }
      canvas.style.width = model.get("css_width") + "px";
      canvas.style.height = "auto";
      canvas.style.aspectRatio = `${back.width} / ${back.height}`;
      canvas.setAttribute("aria-label", model.get("alt"));
      ctx.setTransform(1, 0, 0, 1, 0, 0);
      ctx.drawImage(back, 0, 0);
      paint(ctx, scene, ready);
      if (bitmaps.size > %(bitmaps)d) {
        for (const id of bitmaps.keys()) {
          if (bitmaps.size <= %(bitmaps)d / 2) break;
          if (!ids.has(id)) bitmaps.delete(id);
        }
      }
      const seq = model.get("seq");
      el.dataset.seq = String(seq);
      el.dispatchEvent(
        new CustomEvent("decompkit-frame", {
          bubbles: true,
          detail: {
            seq, received, changed, time: performance.now(), kernel: model.get("kernel_ms"),
          },
        })
      );
    }

    const onMessage = (msg) => {
      if (msg && msg.type === "pong") {
        clearTimeout(timer);
        note.style.display = "none";
      }
    };

    // The width the notebook gives the figure and the pixel ratio, as one change.
    const ratio = () => Math.min(window.devicePixelRatio || 1, %(max_ratio)s);
    let reported = model.get("screen") || [0, 1];
    const report = () => {
      const width = Math.floor(el.getBoundingClientRect().width);
      if (!width || !el.isConnected) return;
      const screen = [width, ratio()];
      if (Math.abs(screen[0] - reported[0]) < 4 && screen[1] === reported[1]) return;
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
    const media = window.matchMedia(`(resolution: ${window.devicePixelRatio}dppx)`);
    media.addEventListener("change", report);

    // A live kernel answers at once; a view restored from a saved notebook gets no answer.
    const timer = setTimeout(() => (note.style.display = "block"), %(timeout_ms)d);
    model.on("msg:custom", onMessage);
    try {
      model.send({ type: "ping" });
    } catch (err) {
      note.style.display = "block";
    }
    model.on("change:seq", draw);

    const manager = model.widget_manager;
    const resolve = (ref) =>
      typeof ref === "string" && ref.startsWith("IPY_MODEL_")
        ? manager.get_model(ref.slice(10))
        : Promise.resolve(ref);
    const models = async (name) => {
      try {
        return await Promise.all((model.get(name) || []).map(resolve));
      } catch (err) {
        return []; // a saved view without its controls: the picture only
      }
    };
    const stamp = () => (changed = performance.now());
    let controls = [];
    const watch = async () => {
      controls.forEach((c) => c.off("change:value", stamp));
      controls = await models("controls");
      controls.forEach((c) => c.on("change:value", stamp));
    };
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
      explorer.addEventListener("click", onClick, true);
    };
    attach();
    draw();
    report();
    return () => {
      clearTimeout(timer);
      clearTimeout(resizeTimer);
      observer.disconnect();
      media.removeEventListener("change", report);
      model.off("change:seq", draw);
      model.off("change:controls", watch);
      controls.forEach((c) => c.off("change:value", stamp));
      model.off("msg:custom", onMessage);
      if (explorer) explorer.removeEventListener("click", onClick, true);
      window.removeEventListener("keydown", onKey, true);
    };
  },
};
"""
