// Bundles the extension into dist/extension.js (CommonJS, `vscode` external).
// `--production`: minified, no source map.  `--tests`: builds test/*.test.ts into out/test/.
import * as esbuild from "esbuild";
import { readdirSync } from "node:fs";

const production = process.argv.includes("--production");
const tests = process.argv.includes("--tests");

if (tests) {
  await esbuild.build({
    entryPoints: readdirSync("test").filter((f) => f.endsWith(".test.ts")).map((f) => `test/${f}`),
    bundle: true,
    platform: "node",
    format: "cjs",
    target: "node18",
    outdir: "out/test",
    external: ["vscode"],
    sourcemap: "inline",
    logLevel: "warning",
  });
} else {
  await esbuild.build({
    entryPoints: ["src/extension.ts"],
    bundle: true,
    platform: "node",
    format: "cjs",
    target: "node18",
    outfile: "dist/extension.js",
    external: ["vscode"],
    minify: production,
    sourcemap: !production,
    logLevel: "warning",
  });
}
