// Copies the pinned builds and their licenses from node_modules to service/static/vendor.
import { copyFileSync, mkdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";

const here = dirname(fileURLToPath(import.meta.url));
const out = join(here, "..", "service", "static", "vendor");
const files = {
  three: ["build/three.module.js", "build/three.core.js", "examples/jsm/controls/OrbitControls.js", "LICENSE"],
  uplot: ["dist/uPlot.iife.min.js", "dist/uPlot.min.css", "LICENSE"],
  "swagger-ui-dist": ["swagger-ui-bundle.js", "swagger-ui-bundle.js.LICENSE.txt", "swagger-ui.css", "favicon-32x32.png", "LICENSE"],
};
rmSync(out, { recursive: true, force: true });
const versions = {};
for (const [pkg, list] of Object.entries(files)) {
  const src = join(here, "node_modules", pkg);
  versions[pkg] = JSON.parse(readFileSync(join(src, "package.json"), "utf8")).version;
  mkdirSync(join(out, pkg), { recursive: true });
  for (const f of list) copyFileSync(join(src, f), join(out, pkg, f.split("/").pop()));
}
writeFileSync(join(out, "VERSIONS.json"), JSON.stringify(versions, null, 1) + "\n");
console.log("vendored", versions);
