// The page's modules loaded in Node, for tests/page_parity.mjs and tests/moving_scene.mjs.
//
// The modules live in a folder without a package.json, which Node would read as CommonJS; each is
// imported from its text as a data: URL, its imports of the modules before it pointed there (as
// the page does with blob: URLs). `paths` come in import order; the result holds every export.
import { readFileSync } from "node:fs";
import { basename } from "node:path";

export async function load(paths) {
  const urls = {};
  const loaded = {};
  for (const path of paths) {
    const source = readFileSync(path, "utf8").replace(/from\s+"\.\/([\w.-]+)"/g, (_, name) => {
      if (!urls[name]) throw new Error(`module ${name} is not given before ${path}`);
      return `from "${urls[name]}"`;
    });
    urls[basename(path)] = `data:text/javascript;base64,${Buffer.from(source).toString("base64")}`;
    Object.assign(loaded, await import(urls[basename(path)]));
  }
  return loaded;
}
