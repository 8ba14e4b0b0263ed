#!/usr/bin/env node
// Neovim terminal screenshot with a luaguard diagnostic and its quick-fix menu, taken from a
// real interactive Neovim running in tmux, then the fix is applied through that menu and the
// file is saved and checked on disk.
//
//   node neovim/screenshot.mjs --nvim /path/to/nvim --python /tmp/venv/bin/python \
//       [--out ../../docs/screenshots/neovim-quickfix.png]
//
// The screen is read with `tmux capture-pane -e` (text + SGR colours), turned into HTML and
// rendered to PNG by Debian's Chromium through playwright-core.  Exit 0 on success.

import { spawnSync } from "node:child_process";
import { cpSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { parseArgs } from "node:util";

import { chromium } from "playwright-core";

const here = path.dirname(fileURLToPath(import.meta.url));
const repo = path.resolve(here, "../../..");
const { values: opts } = parseArgs({
  options: {
    nvim: { type: "string", default: process.env.LUAGUARD_NVIM || "nvim" },
    python: { type: "string", default: process.env.LUAGUARD_PYTHON || "/tmp/venv/bin/python" },
    out: { type: "string", default: path.join(repo, "docs/screenshots/neovim-quickfix.png") },
    chromium: { type: "string", default: process.env.CHROMIUM || "/usr/bin/chromium" },
    keep: { type: "boolean", default: false },
  },
});

const COLS = 176;
const ROWS = 28;
const work = mkdtempSync(path.join(tmpdir(), "luaguard-nvim-shot-"));
const socket = `luaguard-e2e-${process.pid}`;
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

function tmux(...args) {
  const r = spawnSync("tmux", ["-L", socket, ...args], { encoding: "utf8" });
  if (r.status !== 0) throw new Error(`tmux ${args.join(" ")}: ${r.stderr}`);
  return r.stdout;
}

// -- ANSI (SGR) -> HTML -------------------------------------------------------------------

const BASE16 = [
  "#07080d", "#ffc0b9", "#b3f6c0", "#fce094", "#a6dbff", "#ffcaff", "#8cf8f7", "#eef1f8",
  "#4f5258", "#ffc0b9", "#b3f6c0", "#fce094", "#a6dbff", "#ffcaff", "#8cf8f7", "#ffffff",
];

function xterm256(n) {
  if (n < 16) return BASE16[n];
  if (n >= 232) {
    const v = 8 + (n - 232) * 10;
    return `rgb(${v},${v},${v})`;
  }
  const i = n - 16;
  const c = (x) => (x === 0 ? 0 : 55 + x * 40);
  return `rgb(${c(Math.floor(i / 36))},${c(Math.floor(i / 6) % 6)},${c(i % 6)})`;
}

const escapeHtml = (s) => s.replace(/&/g, "&amp;").replace(/</g, "&lt;").replace(/>/g, "&gt;");

/** HTML lines for `capture-pane -e -p` output (only SGR sequences are expected). */
export function ansiToHtml(text) {
  let style = {};
  const out = [];
  for (const line of text.replace(/\n$/, "").split("\n")) {
    let html = "";
    let last = 0;
    const re = /\x1b\[([0-9;:]*)m/g;
    let m;
    const flush = (chunk) => {
      if (!chunk) return;
      let fg = style.fg;
      let bg = style.bg;
      if (style.reverse) [fg, bg] = [bg || "var(--bg)", fg || "var(--fg)"];
      const css = [
        fg && `color:${fg}`,
        bg && `background:${bg}`,
        style.bold && "font-weight:bold",
        style.italic && "font-style:italic",
        style.underline && `text-decoration:underline${style.undercurl ? " wavy" : ""}`,
      ].filter(Boolean);
      html += css.length ? `<span style="${css.join(";")}">${escapeHtml(chunk)}</span>` : escapeHtml(chunk);
    };
    while ((m = re.exec(line))) {
      flush(line.slice(last, m.index));
      last = re.lastIndex;
      const codes = m[1] === "" ? [0] : m[1].split(";").map((c) => c);
      for (let i = 0; i < codes.length; i++) {
        const [head, sub] = codes[i].split(":");
        const c = parseInt(head, 10);
        if (c === 0) style = {};
        else if (c === 1) style.bold = true;
        else if (c === 3) style.italic = true;
        else if (c === 4) {
          style.underline = sub !== "0";
          style.undercurl = sub === "3";
        } else if (c === 7) style.reverse = true;
        else if (c === 22) style.bold = false;
        else if (c === 23) style.italic = false;
        else if (c === 24) style.underline = false;
        else if (c === 27) style.reverse = false;
        else if (c >= 30 && c <= 37) style.fg = BASE16[c - 30];
        else if (c >= 90 && c <= 97) style.fg = BASE16[c - 90 + 8];
        else if (c === 39) delete style.fg;
        else if (c >= 40 && c <= 47) style.bg = BASE16[c - 40];
        else if (c >= 100 && c <= 107) style.bg = BASE16[c - 100 + 8];
        else if (c === 49) delete style.bg;
        else if (c === 38 || c === 48) {
          const key = c === 38 ? "fg" : "bg";
          if (codes[i + 1] === "5") {
            style[key] = xterm256(parseInt(codes[i + 2], 10));
            i += 2;
          } else if (codes[i + 1] === "2") {
            style[key] = `rgb(${codes[i + 2]},${codes[i + 3]},${codes[i + 4]})`;
            i += 4;
          }
        } else if (c === 58 && codes[i + 1] === "2") i += 4; // underline colour
        else if (c === 58 && codes[i + 1] === "5") i += 2;
      }
    }
    flush(line.slice(last));
    out.push(html);
  }
  return out;
}

async function render(capture, file) {
  const lines = ansiToHtml(capture);
  const page = `<!doctype html><html><head><meta charset="utf-8"><style>
    :root { --bg: #14161b; --fg: #e0e2ea; }
    body { margin: 0; background: var(--bg); }
    pre { margin: 0; padding: 10px 12px; color: var(--fg); background: var(--bg);
          font: 14px/1.3 "DejaVu Sans Mono", "Liberation Mono", monospace; white-space: pre; }
  </style></head><body><pre>${lines.join("\n")}</pre></body></html>`;
  const browser = await chromium.launch({
    executablePath: opts.chromium,
    args: ["--no-sandbox", "--disable-gpu", "--no-first-run", "--disable-background-networking", "--disable-component-update", "--disable-sync"],
  });
  try {
    const p = await browser.newPage({ viewport: { width: 1700, height: 700 } });
    await p.setContent(page);
    mkdirSync(path.dirname(file), { recursive: true });
    await p.locator("pre").screenshot({ path: file });
  } finally {
    await browser.close();
  }
}

// -- main -----------------------------------------------------------------------------------

let ok = false;
try {
  const ws = path.join(work, "place");
  cpSync(path.join(repo, "samples/place"), ws, { recursive: true });
  const combat = path.join(ws, "src/shared/Modules/Combat.luau");
  const text = readFileSync(combat, "utf8");
  const bad = text.replace("require(script.Parent.Hitbox)", "require(ReplicatedStorage.Shared.Modulez.Hitbox)");
  if (bad === text) throw new Error("Combat.luau no longer requires script.Parent.Hitbox: update the test");
  writeFileSync(combat, bad);

  const env = [
    `LUAGUARD_PLUGIN=${path.join(repo, "editors/neovim")}`,
    `LUAGUARD_PYTHON=${opts.python}`,
    "COLORTERM=truecolor",
    `XDG_STATE_HOME=${path.join(work, "state")}`,
    `XDG_DATA_HOME=${path.join(work, "data")}`,
  ];
  const command = `cd ${ws} && env ${env.join(" ")} timeout 90 ${opts.nvim} --clean -u ${path.join(here, "screenshot_init.lua")} src/shared/Modules/Combat.luau`;
  tmux("-f", "/dev/null", "new-session", "-d", "-s", "nv", "-x", String(COLS), "-y", String(ROWS), command);
  tmux("set-option", "-t", "nv", "remain-on-exit", "on");

  let screen = "";
  const deadline = Date.now() + 45000;
  while (Date.now() < deadline) {
    screen = tmux("capture-pane", "-p", "-t", "nv");
    if (/Replace 'Modulez' with 'Modules'/.test(screen)) break;
    await sleep(200);
  }
  if (!/Replace 'Modulez' with 'Modules'/.test(screen)) throw new Error(`the code-action menu did not appear:\n${screen}`);
  if (!/is not a child of game\.ReplicatedStorage\.Shared/.test(screen)) throw new Error(`the diagnostic is not on screen:\n${screen}`);
  await sleep(300);
  const capture = tmux("capture-pane", "-e", "-p", "-t", "nv");
  await render(capture, opts.out);
  console.log(`screenshot ${path.relative(repo, opts.out)}`);

  // Pick the fix from the menu, save, quit; check the file.
  const menu = screen.split("\n").find((l) => /Replace 'Modulez' with 'Modules'/.test(l));
  const number = /(\d+)\s*:/.exec(menu)?.[1];
  if (!number) throw new Error(`no menu number in: ${menu}`);
  tmux("send-keys", "-t", "nv", number, "Enter");
  await sleep(800);
  tmux("send-keys", "-t", "nv", "Escape", ":wq", "Enter");
  const end = Date.now() + 15000;
  let disk = "";
  while (Date.now() < end) {
    disk = readFileSync(combat, "utf8");
    if (disk.includes("Shared.Modules.Hitbox")) break;
    await sleep(200);
  }
  if (!disk.includes("require(ReplicatedStorage.Shared.Modules.Hitbox)") || disk.includes("Modulez")) {
    throw new Error(`the fix was not saved:\n${tmux("capture-pane", "-p", "-t", "nv")}`);
  }
  console.log("quick fix applied from the menu and saved");
  ok = true;
} catch (e) {
  console.error(`FAIL: ${e.stack || e}`);
} finally {
  spawnSync("tmux", ["-L", socket, "kill-server"]);
  if (!opts.keep && ok) rmSync(work, { recursive: true, force: true });
  else console.log(`kept ${work}`);
}
process.exit(ok ? 0 : 1);
