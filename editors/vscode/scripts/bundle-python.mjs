// Fills bundled/libs with luaguard (copied from ../../server/luaguard) and its dependencies
// (pip, exact versions from bundled/requirements.txt, binary wheels only), so the .vsix runs
// with any Python of the same version and platform (luaguard.importStrategy "useBundled", and
// the fallback of "fromEnvironment").  The result is platform-specific: package it with
// `vsce package --target <platform>` when publishing.
//
//   node scripts/bundle-python.mjs [--python python3.11]
import { spawnSync } from "node:child_process";
import { cpSync, rmSync } from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { parseArgs } from "node:util";

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "..");
const { values } = parseArgs({ options: { python: { type: "string", default: process.platform === "win32" ? "python" : "python3" } } });
const libs = path.join(root, "bundled", "libs");

rmSync(libs, { recursive: true, force: true });
const pip = spawnSync(
  values.python,
  ["-m", "pip", "install", "--disable-pip-version-check", "--no-compile", "--only-binary=:all:", "--target", libs, "-r", path.join(root, "bundled", "requirements.txt")],
  { stdio: "inherit" },
);
if (pip.status !== 0) {
  console.error(`pip failed (${pip.status ?? pip.error})`);
  process.exit(1);
}
cpSync(path.resolve(root, "../../server/luaguard"), path.join(libs, "luaguard"), {
  recursive: true,
  filter: (src) => !src.includes("__pycache__") && !src.endsWith(".pyc"),
});
console.log(`bundled luaguard and its dependencies into ${path.relative(process.cwd(), libs)}`);
