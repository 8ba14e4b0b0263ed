import { strict as assert } from "node:assert";
import { execFileSync } from "node:child_process";
import { test } from "node:test";

import {
  Machine,
  PROBE_SCRIPT,
  ProbeOutcome,
  ResolveInput,
  SERVER_ARGS,
  candidates,
  isSupportedPython,
  normaliseInterpreterSetting,
  parseProbeOutput,
  resolveServer,
} from "../src/interpreter";

type Fake = { version?: string; luaguard?: string | null; importError?: string | null; error?: string; bundledOk?: boolean; bundledError?: string };

/** A machine whose interpreters are described by `pythons` (keyed by the command
 *  joined with spaces); unknown commands are "not found". */
function fakeMachine(pythons: Record<string, Fake>, opts: { files?: string[]; dirs?: string[]; platform?: NodeJS.Platform } = {}) {
  const calls: { command: string[]; extra?: string }[] = [];
  const machine: Machine = {
    platform: opts.platform ?? "linux",
    isFile: (p) => (opts.files ?? []).includes(p),
    isDirectory: (p) => (opts.dirs ?? []).includes(p),
    probe: async (command, extra): Promise<ProbeOutcome> => {
      calls.push({ command, extra });
      const key = command.join(" ");
      const fake = pythons[key];
      if (!fake) {
        return { ok: false, error: "not found" };
      }
      if (fake.error) {
        return { ok: false, error: fake.error };
      }
      const bundled = extra !== undefined;
      return {
        ok: true,
        result: {
          executable: `/abs/${command[0]}`,
          version: fake.version ?? "3.11.4",
          luaguard: bundled ? (fake.bundledOk === false ? null : "0.1.0-bundled") : fake.luaguard ?? null,
          importError: bundled ? fake.bundledError ?? null : fake.importError ?? null,
        },
      };
    },
  };
  return { machine, calls };
}

const BUNDLE = "/ext/bundled/libs";

function input(over: Partial<ResolveInput> = {}): ResolveInput {
  return { interpreterSetting: [], importStrategy: "fromEnvironment", workspaceFolders: [], bundledLibs: BUNDLE, ...over };
}

test("isSupportedPython compares major and minor numerically", () => {
  assert.equal(isSupportedPython("3.11.0"), true);
  assert.equal(isSupportedPython("3.12.1"), true);
  assert.equal(isSupportedPython("4.0.0"), true);
  assert.equal(isSupportedPython("3.10.14"), false);
  assert.equal(isSupportedPython("3.9.2"), false);
  assert.equal(isSupportedPython("2.7.18"), false);
  assert.equal(isSupportedPython("garbage"), false);
});

test("normaliseInterpreterSetting accepts a string or a list of strings only", () => {
  assert.deepEqual(normaliseInterpreterSetting(undefined), []);
  assert.deepEqual(normaliseInterpreterSetting(""), []);
  assert.deepEqual(normaliseInterpreterSetting("/usr/bin/python3"), ["/usr/bin/python3"]);
  assert.deepEqual(normaliseInterpreterSetting(["py", "-3.12", " "]), ["py", "-3.12"]);
  assert.equal(normaliseInterpreterSetting([1, 2]), null);
  assert.equal(normaliseInterpreterSetting({ path: "x" }), null);
});

test("candidates: the setting alone when set; otherwise extension, .venv, PATH without duplicates", () => {
  const { machine } = fakeMachine({}, { files: ["/ws/.venv/bin/python"] });
  assert.deepEqual(
    candidates(input({ interpreterSetting: ["/opt/py/bin/python"] }), machine).map((c) => c.command),
    [["/opt/py/bin/python"]],
  );
  const list = candidates(input({ pythonExtension: ["/ws/.venv/bin/python"], workspaceFolders: ["/ws"] }), machine);
  assert.deepEqual(
    list.map((c) => c.command),
    [["/ws/.venv/bin/python"], ["python3"], ["python"]],
  );
  assert.equal(list[0].source, "the Python extension's interpreter");
});

test("candidates on Windows use Scripts\\python.exe and the py launcher", () => {
  const { machine } = fakeMachine({}, { platform: "win32", files: ["C:\\ws\\venv\\Scripts\\python.exe"] });
  assert.deepEqual(
    candidates(input({ workspaceFolders: ["C:\\ws"] }), machine).map((c) => c.command),
    [["C:\\ws\\venv\\Scripts\\python.exe"], ["py", "-3"], ["python"]],
  );
});

test("fromEnvironment: the first interpreter with luaguard wins", async () => {
  const { machine } = fakeMachine({ python3: { luaguard: null }, python: { luaguard: "0.1.0" } });
  const r = await resolveServer(input(), machine);
  assert.equal(r.kind, "ok");
  if (r.kind !== "ok") return;
  assert.equal(r.command, "python");
  assert.deepEqual(r.args, SERVER_ARGS);
  assert.equal(r.strategy, "environment");
  assert.deepEqual(r.env, {});
  assert.match(r.notes.join("\n"), /python3 \(PATH\): Python 3\.11\.4 at \/abs\/python3 has no luaguard/);
});

test("interpreter arguments come before the server arguments", async () => {
  const { machine } = fakeMachine({ "py -3.12": { luaguard: "0.1.0", version: "3.12.0" } });
  const r = await resolveServer(input({ interpreterSetting: ["py", "-3.12"] }), machine);
  assert.equal(r.kind, "ok");
  if (r.kind !== "ok") return;
  assert.equal(r.command, "py");
  assert.deepEqual(r.args, ["-3.12", ...SERVER_ARGS]);
});

test("no Python at all: no-python naming what was tried", async () => {
  const { machine } = fakeMachine({});
  const r = await resolveServer(input(), machine);
  assert.equal(r.kind, "problem");
  if (r.kind !== "problem") return;
  assert.equal(r.code, "no-python");
  assert.match(r.message, /could not find Python 3\.11\+ \(tried python3, python\)/);
  assert.equal(r.tried.length, 2);
});

test("only old Pythons: python-too-old", async () => {
  const { machine } = fakeMachine({ python3: { version: "3.9.2", luaguard: "0.1.0" } });
  const r = await resolveServer(input(), machine);
  assert.equal(r.kind, "problem");
  if (r.kind !== "problem") return;
  assert.equal(r.code, "python-too-old");
  assert.match(r.tried.join("\n"), /Python 3\.9\.2 at \/abs\/python3 is older than 3\.11/);
});

test("luaguard missing everywhere and no bundle: not-installed names the interpreter and the fix", async () => {
  const { machine } = fakeMachine({ python3: { luaguard: null } });
  const r = await resolveServer(input(), machine);
  assert.equal(r.kind, "problem");
  if (r.kind !== "problem") return;
  assert.equal(r.code, "not-installed");
  assert.match(r.message, /luaguard is not installed in \/abs\/python3 \(Python 3\.11\.4, from PATH\)/);
  assert.match(r.message, /pip install \/path\/to\/luaguard/);
  assert.match(r.message, /not on PyPI yet/);
});

test("luaguard missing but the extension has a bundle: falls back to it with PYTHONPATH", async () => {
  const { machine, calls } = fakeMachine({ python3: { luaguard: null } }, { dirs: [`${BUNDLE}/luaguard`] });
  const r = await resolveServer(input(), machine);
  assert.equal(r.kind, "ok");
  if (r.kind !== "ok") return;
  assert.equal(r.strategy, "bundled");
  assert.deepEqual(r.env, { PYTHONPATH: BUNDLE });
  assert.equal(r.probe.luaguard, "0.1.0-bundled");
  assert.match(r.notes.join("\n"), /not installed in \/abs\/python3; using the copy bundled/);
  assert.deepEqual(calls.map((c) => c.extra), [undefined, undefined, BUNDLE]);
});

test("a broken install (missing dependency) is reported, not started", async () => {
  const { machine } = fakeMachine({ python3: { luaguard: "0.1.0", importError: "ModuleNotFoundError: No module named 'pygls'" } });
  const r = await resolveServer(input(), machine);
  assert.equal(r.kind, "problem");
  if (r.kind !== "problem") return;
  assert.equal(r.code, "broken-install");
  assert.match(r.message, /No module named 'pygls'/);
});

test("an explicit interpreter that cannot run is reported as such, no fallback to PATH", async () => {
  const { machine, calls } = fakeMachine({ python3: { luaguard: "0.1.0" } });
  const r = await resolveServer(input({ interpreterSetting: ["/nope/python"] }), machine);
  assert.equal(r.kind, "problem");
  if (r.kind !== "problem") return;
  assert.equal(r.code, "bad-interpreter");
  assert.match(r.message, /luaguard\.interpreter is set to `\/nope\/python`, which cannot be run: not found/);
  assert.equal(calls.length, 1);
});

test("an explicit interpreter without luaguard is not replaced by one that has it", async () => {
  const { machine } = fakeMachine({ "/usr/bin/python3": { luaguard: null }, python3: { luaguard: "0.1.0" } });
  const r = await resolveServer(input({ interpreterSetting: ["/usr/bin/python3"] }), machine);
  assert.equal(r.kind, "problem");
  if (r.kind !== "problem") return;
  assert.equal(r.code, "not-installed");
  assert.match(r.message, /from luaguard\.interpreter/);
});

test("useBundled without a bundle: no-bundle, suggesting fromEnvironment", async () => {
  const { machine } = fakeMachine({ python3: { luaguard: "0.1.0" } });
  const r = await resolveServer(input({ importStrategy: "useBundled" }), machine);
  assert.equal(r.kind, "problem");
  if (r.kind !== "problem") return;
  assert.equal(r.code, "no-bundle");
  assert.match(r.message, /"fromEnvironment"/);
});

test("useBundled with a bundle uses it even when the environment has luaguard", async () => {
  const { machine, calls } = fakeMachine({ python3: { luaguard: "0.0.9" } }, { dirs: [`${BUNDLE}/luaguard`] });
  const r = await resolveServer(input({ importStrategy: "useBundled" }), machine);
  assert.equal(r.kind, "ok");
  if (r.kind !== "ok") return;
  assert.equal(r.strategy, "bundled");
  assert.equal(r.probe.luaguard, "0.1.0-bundled");
  assert.deepEqual(calls, [{ command: ["python3"], extra: BUNDLE }]);
});

test("useBundled with a bundle that does not import on this Python: broken-install", async () => {
  const { machine } = fakeMachine({ python3: { bundledError: "ImportError: rapidfuzz built for another Python" } }, { dirs: [`${BUNDLE}/luaguard`] });
  const r = await resolveServer(input({ importStrategy: "useBundled" }), machine);
  assert.equal(r.kind, "problem");
  if (r.kind !== "problem") return;
  assert.equal(r.code, "broken-install");
  assert.match(r.message, /rapidfuzz built for another Python/);
});

test("parseProbeOutput reads the JSON line and rejects anything else", () => {
  const r = parseProbeOutput('warning: noise\n{"executable": "/x/python", "version": "3.11.2", "luaguard": null, "importError": null}\n');
  assert.deepEqual(r, { executable: "/x/python", version: "3.11.2", luaguard: null, importError: null });
  assert.throws(() => parseProbeOutput("Python 2.7"), /unexpected output/);
  assert.throws(() => parseProbeOutput('{"foo": 1}'), /unexpected output/);
});

test("the probe script runs on a real Python and reports its version", () => {
  let out: string;
  try {
    out = execFileSync("python3", ["-c", PROBE_SCRIPT], { encoding: "utf8", env: { ...process.env, PYTHONPATH: "" } });
  } catch {
    return; // no python3 on this machine: nothing to check
  }
  const r = parseProbeOutput(out);
  const real = execFileSync("python3", ["-c", "import sys; print('%d.%d.%d' % sys.version_info[:3])"], { encoding: "utf8" }).trim();
  assert.equal(r.version, real);
  assert.ok(r.executable.length > 0);
});
