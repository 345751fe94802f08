// The page's one script: src/main.ts and the project's TypeScript client (clients/typescript/src,
// its openapi-fetch from this package's node_modules) bundled by esbuild into
// play/static/play/play.js, committed. `node build.mjs OUT` writes it elsewhere (the test that
// fails while the committed bundle is stale builds into a temporary file and compares).
import { dirname, resolve } from "node:path";
import { fileURLToPath } from "node:url";

import { build } from "esbuild";

const here = dirname(fileURLToPath(import.meta.url));
const outfile = resolve(process.argv[2] ?? resolve(here, "../../play/static/play/play.js"));

await build({
  absWorkingDir: here,
  entryPoints: ["src/main.ts"],
  bundle: true,
  format: "iife",
  target: "es2020",
  platform: "browser",
  charset: "utf8",
  legalComments: "none",
  nodePaths: [resolve(here, "node_modules")],
  outfile,
  logLevel: "warning",
});
