"""The browser side of :class:`decompkit.widgets._render.FigureView`: one ES module (anywidget).

It draws the key frame and the changed rectangles on a canvas at their CSS size, keeps the
pictures the kernel sends ahead and draws one as soon as the explorer's controls reach its
setting, steps a stepper's slider on a button click and the sliders on arrow keys in the page,
reports the screen's pixel ratio, and says when a saved picture has no kernel behind it.
"""

__all__: list[str] = []

ESM = r"""
const NOTE = "Saved picture: run this cell to use the controls.";

// The key of a setting, as setting_key() writes it in the kernel.
function keyOf(controls) {
  return controls
    .map((c) => {
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

export default {
  async render({ model, el }) {
    el.classList.add("decompkit-figure");
    const note = document.createElement("div");
    note.className = "decompkit-figure-note";
    note.textContent = NOTE;
    note.style.cssText = "display:none;font-style:italic;margin:2px 0 4px 0;";
    const canvas = document.createElement("canvas");
    canvas.style.display = "block";
    canvas.setAttribute("role", "img");
    el.append(note, canvas);
    const ctx = canvas.getContext("2d");
    const decode = (bytes) => createImageBitmap(new Blob([bytes], { type: "image/png" }));

    // Pictures by setting key, sent ahead by the kernel or shown before: {keyframe, tiles}.
    const cache = new Map();
    const remember = (key, entry) => {
      cache.delete(key);
      cache.set(key, entry);
      if (cache.size > %(cache_size)d) cache.delete(cache.keys().next().value);
    };
    let key = { number: -1, bitmap: null };
    let token = 0;
    let shown = null;

    async function draw(tiles, seq) {
      const mine = ++token;
      const received = performance.now();
      const number = model.get("keyframe");
      let keyBitmap = key.number === number ? key.bitmap : decode(model.get("frame"));
      const bitmaps = Promise.all(tiles.map((t) => decode(t.png)));
      keyBitmap = await keyBitmap;
      key = { number, bitmap: keyBitmap };
      const decoded = await bitmaps;
      if (mine !== token) return; // a newer picture was asked for meanwhile
      if (canvas.width !== keyBitmap.width || canvas.height !== keyBitmap.height) {
        canvas.width = keyBitmap.width;
        canvas.height = keyBitmap.height;
      }
      canvas.style.width = model.get("css_width") + "px";
      canvas.style.height = model.get("css_height") + "px";
      canvas.setAttribute("aria-label", model.get("alt"));
      ctx.drawImage(keyBitmap, 0, 0);
      tiles.forEach((t, i) => ctx.drawImage(decoded[i], t.x, t.y));
      el.dataset.seq = String(seq);
      el.dispatchEvent(
        new CustomEvent("decompkit-frame", {
          bubbles: true,
          detail: { seq, received, time: performance.now() },
        })
      );
    }

    let controls = [];
    const current = () => keyOf(controls);
    const fresh = (entry) => entry && entry.keyframe === model.get("keyframe");

    // A picture from the kernel: draw it, unless the controls have moved on to a setting
    // whose picture is here already (a late answer must not step the figure back).
    function fromKernel() {
      const frame = model.get("frame");
      if (!frame || !frame.byteLength) return;
      const setting = model.get("setting");
      const tiles = model.get("tiles") || [];
      const keyframe = model.get("keyframe");
      remember(setting, { keyframe, tiles });
      const now = current();
      if (setting !== now && fresh(cache.get(now))) return fromControls();
      const id = `${keyframe}:${setting}`;
      if (id === shown) return;
      shown = id;
      draw(tiles, model.get("seq"));
    }

    // A control moved in this page: draw its picture at once if the kernel sent it ahead.
    function fromControls() {
      const now = current();
      const entry = cache.get(now);
      const id = `${model.get("keyframe")}:${now}`;
      if (fresh(entry) && id !== shown) {
        shown = id;
        draw(entry.tiles, -1);
      }
    }

    const onMessage = (msg, buffers) => {
      if (!msg) return;
      if (msg.type === "pong") {
        clearTimeout(timer);
        note.style.display = "none";
      } else if (msg.type === "ahead") {
        let b = 0;
        for (const entry of msg.entries) {
          const tiles = entry.tiles.map(([x, y]) => ({ x, y, png: buffers[b++] }));
          remember(entry.key, { keyframe: msg.keyframe, tiles });
        }
        // The kernel sends the next pictures only when these arrived: no backlog in the
        // pipe can hold up the answer to a real change.
        try {
          model.send({ type: "ack" });
        } catch (err) {}
      }
    };

    const ratio = () => Math.min(window.devicePixelRatio || 1, %(max_ratio)s);
    const report = () => {
      if (model.get("ratio") !== ratio()) {
        model.set("ratio", ratio());
        model.save_changes();
      }
    };
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
    model.on("change:seq", fromKernel);

    const manager = model.widget_manager;
    const resolve = (ref) =>
      typeof ref === "string" && ref.startsWith("IPY_MODEL_")
        ? manager.get_model(ref.slice(10))
        : Promise.resolve(ref);
    try {
      controls = await Promise.all((model.get("controls") || []).map(resolve));
    } catch (err) {
      controls = []; // a saved view without its controls: pictures from the state only
    }
    controls.forEach((c) => c.on("change:value", fromControls));

    // The stepper's buttons move its slider here, in the page: no round trip for one step.
    let stepper = [];
    try {
      stepper = await Promise.all((model.get("stepper") || []).map(resolve));
    } catch (err) {
      stepper = [];
    }
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
    let explorer = null;
    const attach = () => {
      explorer = el.closest(".decompkit-explorer");
      if (!explorer) return el.isConnected || setTimeout(attach, 50);
      // Arrow keys on a slider must reach the slider, not the notebook's shortcuts
      // (Notebook 7 binds them to cell navigation): Lumino skips shortcuts under this.
      explorer.setAttribute("data-lm-suppress-shortcuts", "true");
      explorer.addEventListener("click", onClick, true);
    };
    attach();
    fromKernel();
    report();
    return () => {
      clearTimeout(timer);
      media.removeEventListener("change", report);
      model.off("change:seq", fromKernel);
      model.off("msg:custom", onMessage);
      controls.forEach((c) => c.off("change:value", fromControls));
      if (explorer) explorer.removeEventListener("click", onClick, true);
      window.removeEventListener("keydown", onKey, true);
    };
  },
};
"""
