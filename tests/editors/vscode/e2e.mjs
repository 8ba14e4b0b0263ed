#!/usr/bin/env node
// End-to-end test of the luaguard VS Code extension in a real VS Code (code-server from
// npm, Code 1.100.3) driven by Debian's Chromium through playwright-core.
//
//   node e2e.mjs --vsix ../../../editors/vscode/luaguard.vsix --python /tmp/venv/bin/python \
//       [--screenshots ../../../docs/screenshots] [--keep]
//
// Scenarios, each in its own temporary workspace (a copy of samples/place or a bare folder):
//   quickfix    a bad instance path under a closed $path folder -> the diagnostic in the
//               Problems view -> apply the quick fix -> save -> the file on disk is fixed and
//               the diagnostic is gone; the stats command shows the finding; screenshot.
//   noproject   a folder without a Rojo project file -> exactly one information message,
//               placeholder diagnostics still published, no instance-path diagnostics.
//   missing     luaguard.interpreter = a Python without luaguard -> a clear error message.
//   crash       the server dies after start -> an error offering "Restart Server"; clicking
//               it brings the diagnostics back.
// Exit status 0 when every scenario passed; failure screenshots go to the temp dir.

import { spawn, spawnSync } from "node:child_process";
import { cpSync, existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync, chmodSync } from "node:fs";
import { createServer } from "node:net";
import { tmpdir } from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { parseArgs } from "node:util";

import { chromium } from "playwright-core";

const here = path.dirname(fileURLToPath(import.meta.url));
const repo = path.resolve(here, "../../..");
const { values: opts } = parseArgs({
  options: {
    vsix: { type: "string", default: path.join(repo, "editors/vscode/luaguard.vsix") },
    python: { type: "string", default: process.env.LUAGUARD_PYTHON || "/tmp/venv/bin/python" },
    "bare-python": { type: "string", default: "/usr/bin/python3" },
    screenshots: { type: "string", default: path.join(repo, "docs/screenshots") },
    chromium: { type: "string", default: process.env.CHROMIUM || "/usr/bin/chromium" },
    only: { type: "string" },
    keep: { type: "boolean", default: false },
  },
});

const codeServer = path.join(here, "../node_modules/.bin/code-server");
const work = mkdtempSync(path.join(tmpdir(), "luaguard-vscode-e2e-"));
const started = Date.now();
const log = (...a) => console.log(`[${((Date.now() - started) / 1000).toFixed(1)}s]`, ...a);

function fail(message) {
  throw new Error(message);
}

// -- set-up ---------------------------------------------------------------------------------

function freePort() {
  return new Promise((resolve, reject) => {
    const srv = createServer();
    srv.unref();
    srv.on("error", reject);
    srv.listen(0, "127.0.0.1", () => {
      const { port } = srv.address();
      srv.close(() => resolve(port));
    });
  });
}

const userData = path.join(work, "user-data");
const extensions = path.join(work, "extensions");
const env = {
  ...process.env,
  XDG_CONFIG_HOME: path.join(work, "xdg-config"),
  XDG_DATA_HOME: path.join(work, "xdg-data"),
  XDG_CACHE_HOME: path.join(work, "xdg-cache"),
  HOME: path.join(work, "home"),
};
mkdirSync(env.HOME, { recursive: true });

function installExtension() {
  if (!existsSync(opts.vsix)) fail(`no .vsix at ${opts.vsix}: build it with \`npm run package\` in editors/vscode`);
  const r = spawnSync("timeout", ["180", codeServer, "--user-data-dir", userData, "--extensions-dir", extensions, "--install-extension", opts.vsix], {
    env,
    encoding: "utf8",
  });
  if (r.status !== 0) fail(`installing the .vsix failed (${r.status}):\n${r.stdout}\n${r.stderr}`);
  log("installed", path.basename(opts.vsix), r.stdout.trim().split("\n").pop());
  mkdirSync(path.join(userData, "User"), { recursive: true });
  writeFileSync(
    path.join(userData, "User/settings.json"),
    JSON.stringify(
      {
        "security.workspace.trust.enabled": false,
        "workbench.startupEditor": "none",
        "workbench.tips.enabled": false,
        "workbench.enableExperiments": false,
        "telemetry.telemetryLevel": "off",
        "update.mode": "none",
        "extensions.autoUpdate": false,
        "extensions.autoCheckUpdates": false,
        "extensions.ignoreRecommendations": true,
        "window.restoreWindows": "none",
        "files.hotExit": "off",
        "editor.minimap.enabled": false,
        "workbench.colorTheme": "Default Dark Modern",
        "chat.commandCenter.enabled": false,
        "workbench.secondarySideBar.defaultVisibility": "hidden",
      },
      null,
      2,
    ),
  );
}

async function startCodeServer() {
  const port = await freePort();
  const child = spawn(
    "timeout",
    [
      "900",
      codeServer,
      "--auth",
      "none",
      "--bind-addr",
      `127.0.0.1:${port}`,
      "--disable-telemetry",
      "--disable-update-check",
      "--disable-workspace-trust",
      "--disable-getting-started-override",
      "--user-data-dir",
      userData,
      "--extensions-dir",
      extensions,
    ],
    { env, stdio: ["ignore", "pipe", "pipe"], detached: true },
  );
  const lines = [];
  const remember = (d) => lines.push(...d.toString().split("\n"));
  child.stdout.on("data", remember);
  child.stderr.on("data", remember);
  const deadline = Date.now() + 60000;
  while (Date.now() < deadline) {
    try {
      const res = await fetch(`http://127.0.0.1:${port}/healthz`);
      if (res.ok) {
        log(`code-server listening on ${port}`);
        return { child, port, lines };
      }
    } catch {
      // not yet
    }
    if (child.exitCode !== null) break;
    await new Promise((r) => setTimeout(r, 300));
  }
  fail(`code-server did not start:\n${lines.join("\n")}`);
}

/** A copy of samples/place with Combat.luau requiring ReplicatedStorage.Shared.Modulez.Hitbox. */
function placeWorkspace(name, settings) {
  const dir = path.join(work, name);
  cpSync(path.join(repo, "samples/place"), dir, { recursive: true });
  const combat = path.join(dir, "src/shared/Modules/Combat.luau");
  const text = readFileSync(combat, "utf8");
  const bad = text.replace("require(script.Parent.Hitbox)", "require(ReplicatedStorage.Shared.Modulez.Hitbox)");
  if (bad === text) fail("samples/place/src/shared/Modules/Combat.luau no longer requires script.Parent.Hitbox: update the e2e test");
  writeFileSync(combat, bad);
  writeSettings(dir, settings);
  return { dir, combat };
}

/** A unified diff for `rel` (a file of `dir`) inserting `line` after the line equal to `after`. */
export function insertionDiff(dir, rel, after, line) {
  const lines = readFileSync(path.join(dir, rel), "utf8").split("\n");
  const at = lines.indexOf(after);
  if (at < 0) fail(`${rel} has no line ${JSON.stringify(after)}: update the e2e test`);
  const from = Math.max(0, at - 2);
  const to = Math.min(lines.length, at + 4);
  const before = lines.slice(from, at + 1).map((l) => ` ${l}`);
  const rest = lines.slice(at + 1, to).map((l) => ` ${l}`);
  const n = to - from;
  return [`--- a/${rel}`, `+++ b/${rel}`, `@@ -${from + 1},${n} +${from + 1},${n + 1} @@`, ...before, `+${line}`, ...rest, ""].join("\n");
}

function writeSettings(dir, settings) {
  mkdirSync(path.join(dir, ".vscode"), { recursive: true });
  writeFileSync(path.join(dir, ".vscode/settings.json"), JSON.stringify(settings, null, 2));
}

// -- UI helpers -----------------------------------------------------------------------------

async function openFolder(page, port, dir) {
  await page.goto(`http://127.0.0.1:${port}/?folder=${encodeURIComponent(dir)}`);
  await page.locator(".monaco-workbench").waitFor({ timeout: 60000 });
  await page.locator(".statusbar").waitFor({ timeout: 60000 });
  // Let the workbench settle (restored views, extension host start).
  await page.waitForTimeout(1500);
}

async function quickOpen(page, fileName) {
  await page.locator(".monaco-workbench").click({ position: { x: 5, y: 300 } }).catch(() => undefined);
  await page.keyboard.press("Control+P");
  const input = page.locator(".quick-input-widget input");
  await input.waitFor({ timeout: 15000 });
  await input.fill(fileName);
  await page.locator(".quick-input-list .monaco-list-row", { hasText: fileName }).first().waitFor({ timeout: 15000 });
  await page.keyboard.press("Enter");
  await page.locator(`.tab.active[aria-label*="${fileName}"], .tab.active:has-text("${fileName}")`).first().waitFor({ timeout: 15000 });
}

async function runCommand(page, title) {
  await page.keyboard.press("F1");
  const input = page.locator(".quick-input-widget input");
  await input.waitFor({ timeout: 15000 });
  await input.fill(`>${title}`);
  await page.locator(".quick-input-list .monaco-list-row", { hasText: title }).first().waitFor({ timeout: 15000 });
  await page.keyboard.press("Enter");
}

function toast(page, text) {
  return page.locator(".notifications-toasts .notification-list-item", { hasText: text });
}

async function problemsPanel(page) {
  await page.keyboard.press("Control+Shift+M");
  const panel = page.locator(".markers-panel");
  await panel.waitFor({ timeout: 15000 });
  return panel;
}

// -- scenarios ------------------------------------------------------------------------------

async function scenarioQuickfix(page, port) {
  const { dir, combat } = placeWorkspace("quickfix-place", { "luaguard.interpreter": [opts.python] });
  writeFileSync(
    path.join(dir, "toolcall.json"),
    JSON.stringify({ name: "read_script", arguments: { path: "ServerScriptService.Server.Services.CombatServise" } }) + "\n",
  );
  writeFileSync(path.join(dir, "change.diff"), insertionDiff(dir, "src/shared/Modules/Hitbox.luau", "local Hitbox = {}", "\t-- rest of code here"));
  await openFolder(page, port, dir);
  log("workbench loaded");
  await quickOpen(page, "Combat.luau");
  log("file opened");
  const panel = await problemsPanel(page);
  const row = panel.locator(".monaco-list-row", { hasText: "Modulez" });
  await row.first().waitFor({ timeout: 60000 });
  const rowText = await row.first().innerText();
  if (!/not a child of game\.ReplicatedStorage\.Shared/.test(rowText)) fail(`unexpected Problems row: ${rowText}`);
  if (!/unknown_instance/.test(await panel.innerText())) fail("the Problems row does not name the rule unknown_instance");
  log("Problems view:", rowText.replace(/\s+/g, " "));

  // The status bar shows the index state and the counts.
  const status = page.locator(".statusbar-item", { hasText: "luaguard" }).first();
  await page.waitForFunction(() => [...document.querySelectorAll(".statusbar-item")].some((e) => /luaguard: \d+ scripts/.test(e.textContent || "")), null, {
    timeout: 30000,
  });
  log("status bar:", (await status.innerText()).replace(/\s+/g, " "));

  await runCommand(page, "View: Show Explorer");
  // Open the row (moves the cursor to the diagnostic), then the quick-fix menu.
  await row.first().dblclick();
  await page.waitForTimeout(500);
  await page.keyboard.press("Control+.");
  const fix = page.locator(".action-widget .monaco-list-row", { hasText: "Replace 'Modulez' with 'Modules'" });
  await fix.first().waitFor({ timeout: 15000 });
  await page.waitForTimeout(300);
  mkdirSync(opts.screenshots, { recursive: true });
  const shot = path.join(opts.screenshots, "vscode-quickfix.png");
  await page.screenshot({ path: shot });
  log("screenshot", path.relative(repo, shot));
  // The widget's pointer block swallows mouse clicks in automation: choose with the keyboard.
  for (let i = 0; i < 5; i++) {
    const focused = await page.locator(".action-widget .monaco-list-row.focused").first().getAttribute("aria-label");
    if (focused === "Replace 'Modulez' with 'Modules'") break;
    await page.keyboard.press("ArrowDown");
  }
  await page.keyboard.press("Enter");

  // Save and check the file on disk.
  await page.locator(".monaco-editor textarea").first().focus();
  await page.keyboard.press("Control+S");
  const deadline = Date.now() + 15000;
  let disk = "";
  while (Date.now() < deadline) {
    disk = readFileSync(combat, "utf8");
    if (disk.includes("require(ReplicatedStorage.Shared.Modules.Hitbox)")) break;
    await page.waitForTimeout(200);
  }
  if (!disk.includes("require(ReplicatedStorage.Shared.Modules.Hitbox)")) fail("the saved file does not contain the fixed path");
  if (disk.includes("Modulez")) fail("the saved file still contains Modulez");
  log("file on disk fixed");
  await panel.locator(".monaco-list-row", { hasText: "Modulez" }).first().waitFor({ state: "detached", timeout: 30000 });
  log("diagnostic cleared");

  // Stats: the session saw one unknown_instance finding.
  await runCommand(page, "luaguard: Show Hallucination Stats");
  const stats = page.locator(".monaco-editor .view-lines", { hasText: "hallucination stats" });
  await stats.first().waitFor({ timeout: 15000 });
  const statsText = await stats.first().innerText();
  if (!/unknown_instance/.test(statsText)) fail(`the stats panel does not list unknown_instance:\n${statsText}`);
  log("stats panel:", statsText.replace(/\s+/g, " ").slice(0, 160));

  // Validate a tool call and a patch from the selection (the results open beside).
  await validateSelection(page, "toolcall.json", "Tool Call", "tool call validation", [/Invalid\./, /unknown_path/, /ServerScriptService\.Server\.Services\.CombatService/]);
  await validateSelection(page, "change.diff", "Patch", "patch validation", [/Invalid\./, /placeholder/, /Hitbox\.luau/]);
}

async function validateSelection(page, file, what, heading, expected) {
  await quickOpen(page, file);
  // Click into the text (the Extensions view may hold the focus), then select everything.
  await page.locator(".editor-group-container.active .monaco-editor .view-lines").first().click();
  await page.keyboard.press("Control+A");
  await runCommand(page, `luaguard: Validate Selection or Clipboard as ${what}`);
  const panel = page.locator(".monaco-editor .view-lines", { hasText: heading });
  await panel.first().waitFor({ timeout: 30000 });
  await page.waitForTimeout(300);
  const text = await panel.first().innerText();
  for (const re of expected) {
    if (!re.test(text)) fail(`the ${what} result does not match ${re}:\n${text}`);
  }
  log(`${what} result:`, text.replace(/\s+/g, " ").slice(0, 200));
  await page.keyboard.press("Escape");
}

async function scenarioNoProject(page, port) {
  const dir = path.join(work, "no-project");
  mkdirSync(dir, { recursive: true });
  writeFileSync(
    path.join(dir, "Main.luau"),
    'local Players = game:GetService("Players")\nlocal thing = game.ReplicatedStorage.Nope.Thing\n-- rest of code here\nreturn thing\n',
  );
  writeFileSync(path.join(dir, "Other.luau"), "local x = game.Workspace.Missing\nreturn x\n");
  writeSettings(dir, { "luaguard.interpreter": [opts.python] });
  await openFolder(page, port, dir);
  await quickOpen(page, "Main.luau");
  const panel = await problemsPanel(page);
  await panel.locator(".monaco-list-row", { hasText: "placeholder" }).first().waitFor({ timeout: 60000 });
  const message = toast(page, "no Rojo project file");
  await message.first().waitFor({ timeout: 30000 });
  await quickOpen(page, "Other.luau");
  await page.waitForTimeout(2000);
  const count = await message.count();
  const centre = await page.locator(".notifications-center .notification-list-item", { hasText: "no Rojo project file" }).count();
  if (count + centre !== 1) fail(`expected one "no project file" message, found ${count} toasts and ${centre} in the centre`);
  const text = await panel.innerText();
  if (/unknown_instance|unknown_service/.test(text)) fail(`instance paths were checked without a project:\n${text}`);
  log("no-project: one information message, placeholder reported, no path diagnostics");
}

async function scenarioMissing(page, port) {
  const check = spawnSync(opts["bare-python"], ["-c", "import luaguard"], { encoding: "utf8" });
  if (check.status === 0) fail(`${opts["bare-python"]} has luaguard installed; pass --bare-python with one that has not`);
  const { dir } = placeWorkspace("missing-place", { "luaguard.interpreter": [opts["bare-python"]] });
  await openFolder(page, port, dir);
  await quickOpen(page, "Combat.luau");
  const message = toast(page, "luaguard is not installed in");
  await message.first().waitFor({ timeout: 30000 });
  const text = (await message.first().innerText()).replace(/\s+/g, " ");
  if (!text.includes("pip install /path/to/luaguard")) fail(`the message does not say how to install: ${text}`);
  if (!(await message.first().locator(".monaco-button", { hasText: "Open Settings" }).count())) fail("no Open Settings button");
  await page.locator(".statusbar-item", { hasText: "luaguard: not running" }).first().waitFor({ timeout: 10000 });
  log("missing:", text.slice(0, 200));
}

async function scenarioCrash(page, port) {
  // An interpreter wrapper: the probe runs normally; the first server is killed 6 s after
  // it starts (once the diagnostics are shown); the next one runs normally.
  const marker = path.join(work, "crashed-once");
  const wrapper = path.join(work, "crashing-python.sh");
  writeFileSync(
    wrapper,
    `#!/bin/sh
if [ "$1" = "-c" ] || [ -e "${marker}" ]; then exec "${opts.python}" "$@"; fi
touch "${marker}"
# A background job's stdin is /dev/null in sh unless it is redirected from a saved copy.
exec 3<&0
"${opts.python}" "$@" <&3 &
child=$!
sleep 6
echo "simulated crash: killing the server" >&2
kill -9 $child
exit 3
`,
  );
  chmodSync(wrapper, 0o755);
  const { dir } = placeWorkspace("crash-place", { "luaguard.interpreter": [wrapper] });
  await openFolder(page, port, dir);
  await quickOpen(page, "Combat.luau");
  const panel = await problemsPanel(page);
  await panel.locator(".monaco-list-row", { hasText: "Modulez" }).first().waitFor({ timeout: 60000 });
  const message = toast(page, "stopped unexpectedly");
  await message.first().waitFor({ timeout: 30000 });
  const text = (await message.first().innerText()).replace(/\s+/g, " ");
  if (!/exit code 3/.test(text) || !/simulated crash/.test(text)) fail(`the crash message lacks the exit code or stderr: ${text}`);
  log("crash:", text.slice(0, 200));
  await page.locator(".statusbar-item", { hasText: "luaguard: crashed" }).first().waitFor({ timeout: 10000 });
  await message.first().locator(".monaco-button", { hasText: "Restart Server" }).click();
  await page.waitForFunction(() => [...document.querySelectorAll(".statusbar-item")].some((e) => /luaguard: \d+ scripts/.test(e.textContent || "")), null, {
    timeout: 60000,
  });
  await panel.locator(".monaco-list-row", { hasText: "Modulez" }).first().waitFor({ timeout: 60000 });
  log("crash: restarted, diagnostics back");
}

const SCENARIOS = { quickfix: scenarioQuickfix, noproject: scenarioNoProject, missing: scenarioMissing, crash: scenarioCrash };

// -- main -----------------------------------------------------------------------------------

let server;
let browser;
let failed = 0;
try {
  installExtension();
  server = await startCodeServer();
  browser = await chromium.launch({
    executablePath: opts.chromium,
    args: ["--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run", "--disable-background-networking", "--disable-component-update", "--disable-sync"],
  });
  const names = opts.only ? opts.only.split(",") : Object.keys(SCENARIOS);
  for (const name of names) {
    const context = await browser.newContext({ viewport: { width: 1400, height: 860 } });
    const page = await context.newPage();
    const t0 = Date.now();
    try {
      await SCENARIOS[name](page, server.port);
      log(`PASS ${name} (${((Date.now() - t0) / 1000).toFixed(1)} s)`);
    } catch (e) {
      failed += 1;
      const shot = path.join(work, `failure-${name}.png`);
      await page.screenshot({ path: shot }).catch(() => undefined);
      log(`FAIL ${name}: ${e.stack || e}\n  screenshot: ${shot}`);
      opts.keep = true;
    } finally {
      await context.close();
    }
  }
} catch (e) {
  failed += 1;
  log(`FAIL set-up: ${e.stack || e}`);
  if (server) log(server.lines.slice(-40).join("\n"));
  opts.keep = true;
} finally {
  if (browser) await browser.close();
  if (server) {
    try {
      process.kill(-server.child.pid, "SIGTERM");
    } catch {
      // already gone
    }
  }
  if (!opts.keep) rmSync(work, { recursive: true, force: true });
  else log("kept", work);
}
log(failed ? `${failed} scenario(s) failed` : "all scenarios passed");
process.exit(failed ? 1 : 0);
