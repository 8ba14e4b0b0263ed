/**
 * Choosing the Python interpreter and the luaguard copy that runs the server.
 *
 * Pure logic: every contact with the machine (running a Python, checking a file)
 * goes through {@link Machine}, so the rules below are unit-tested without VS Code.
 *
 * Candidates, in order (the first one that works wins):
 *   1. `luaguard.interpreter` when set: the only candidate (an explicit choice is never
 *      silently replaced by another Python);
 *   2. the interpreter the Python extension selected for the workspace;
 *   3. a `.venv` or `venv` directory in a workspace folder;
 *   4. `python3` then `python` on PATH (`py -3` then `python` on Windows).
 *
 * Import strategies (the names of the Python-tools extension template):
 *   - `fromEnvironment`: luaguard installed in the candidate's environment; when no
 *     candidate has it, the copy bundled with the extension (if this build has one);
 *   - `useBundled`: the bundled copy (`bundled/libs` on PYTHONPATH) with the first
 *     candidate running Python >= 3.11.
 */

import * as path from "path";

export const MIN_PYTHON: [number, number] = [3, 11];

/** What {@link PROBE_SCRIPT} reports about one interpreter (`null`: it did not run). */
export interface ProbeResult {
  /** The interpreter's `sys.executable`. */
  executable: string;
  /** `major.minor.micro`. */
  version: string;
  /** luaguard's `__version__`, or null when it cannot be imported. */
  luaguard: string | null;
  /** Why `luaguard.lsp.server` could not be imported (missing module, syntax error...). */
  importError: string | null;
}

/** The outcome of trying to run a candidate (spawn errors, bad output). */
export type ProbeOutcome = { ok: true; result: ProbeResult } | { ok: false; error: string };

/** Side effects the resolver needs. */
export interface Machine {
  platform: NodeJS.Platform;
  /** Run `command` (interpreter + its arguments) with `-c PROBE_SCRIPT`; `extraPythonPath`
   *  is prepended to PYTHONPATH. */
  probe(command: string[], extraPythonPath?: string): Promise<ProbeOutcome>;
  isFile(p: string): boolean;
  isDirectory(p: string): boolean;
}

export type ImportStrategy = "fromEnvironment" | "useBundled";

export interface ResolveInput {
  /** `luaguard.interpreter` (empty: not set). */
  interpreterSetting: string[];
  importStrategy: ImportStrategy;
  /** The Python extension's interpreter for the workspace, if it is installed and has one. */
  pythonExtension?: string[];
  /** Workspace folder paths (for `.venv` discovery). */
  workspaceFolders: string[];
  /** The extension's `bundled/libs` directory (it may not exist in this build). */
  bundledLibs: string;
}

export interface Candidate {
  command: string[];
  /** Where it came from, for messages: "luaguard.interpreter", "Python extension", ... */
  source: string;
}

export interface ServerCommand {
  kind: "ok";
  command: string;
  args: string[];
  /** Extra environment variables (PYTHONPATH for the bundled copy). */
  env: Record<string, string>;
  strategy: "environment" | "bundled";
  candidate: Candidate;
  probe: ProbeResult;
  /** Notes for the output channel (e.g. "luaguard not found in X, using the bundled copy"). */
  notes: string[];
}

export type ProblemCode =
  | "no-python" // no candidate could be run at all
  | "bad-interpreter" // luaguard.interpreter is set but cannot be run
  | "python-too-old" // interpreters run, none is >= 3.11
  | "not-installed" // fromEnvironment: no interpreter has luaguard, no bundle
  | "broken-install" // luaguard is there but its server cannot be imported
  | "no-bundle" // useBundled in a build without bundled/libs
  | "invalid-setting"; // luaguard.interpreter is not a list of strings

export interface Problem {
  kind: "problem";
  code: ProblemCode;
  /** One message for the user: what is wrong and what to do. */
  message: string;
  /** Every candidate tried and what happened (for the output channel). */
  tried: string[];
}

export type Resolution = ServerCommand | Problem;

/** Printed by the interpreter on stdout as one JSON line.  Imports the server module so a
 *  broken install (a missing dependency) is found before the client starts. */
export const PROBE_SCRIPT = [
  "import json, sys",
  "out = {'executable': sys.executable, 'version': '%d.%d.%d' % sys.version_info[:3], 'luaguard': None, 'importError': None}",
  "if sys.version_info >= (3, 11):",
  "    try:",
  "        import luaguard",
  "        out['luaguard'] = getattr(luaguard, '__version__', '?')",
  "        import luaguard.lsp.server",
  "    except ModuleNotFoundError as e:",
  "        if e.name == 'luaguard':",
  "            out['luaguard'] = None",
  "        else:",
  "            out['importError'] = '%s: %s' % (type(e).__name__, e)",
  "    except Exception as e:",
  "        out['importError'] = '%s: %s' % (type(e).__name__, e)",
  "print(json.dumps(out))",
].join("\n");

/**
 * Arguments after the interpreter that start the server (stdio).  `-P` (Python 3.11+)
 * keeps the working directory — the user's workspace — off `sys.path`, so a module in
 * the workspace that shadows one luaguard imports is never executed.
 */
export const SERVER_ARGS = ["-P", "-m", "luaguard", "serve"];

/** Parse the probe's stdout; throws with a readable reason on anything unexpected. */
export function parseProbeOutput(stdout: string): ProbeResult {
  const line = stdout.trim().split(/\r?\n/).filter((l) => l.trim().startsWith("{")).pop();
  if (!line) {
    throw new Error(`unexpected output: ${JSON.stringify(stdout.slice(0, 200))}`);
  }
  const data = JSON.parse(line);
  if (typeof data !== "object" || data === null || typeof data.version !== "string" || typeof data.executable !== "string") {
    throw new Error(`unexpected output: ${line.slice(0, 200)}`);
  }
  return {
    executable: data.executable,
    version: data.version,
    luaguard: typeof data.luaguard === "string" ? data.luaguard : null,
    importError: typeof data.importError === "string" ? data.importError : null,
  };
}

/** Whether `version` ("3.11.4") is at least {@link MIN_PYTHON}. */
export function isSupportedPython(version: string): boolean {
  const [major, minor] = version.split(".").map((n) => parseInt(n, 10));
  if (Number.isNaN(major) || Number.isNaN(minor)) {
    return false;
  }
  return major > MIN_PYTHON[0] || (major === MIN_PYTHON[0] && minor >= MIN_PYTHON[1]);
}

/** `luaguard.interpreter` as a command list; a plain string is accepted too (one path).
 *  Returns null for anything else (numbers, objects, lists with non-strings). */
export function normaliseInterpreterSetting(value: unknown): string[] | null {
  if (value === undefined || value === null || value === "") {
    return [];
  }
  if (typeof value === "string") {
    return [value];
  }
  if (Array.isArray(value) && value.every((v) => typeof v === "string")) {
    return value.filter((v) => v.trim() !== "");
  }
  return null;
}

/** The python executable of a virtual environment directory. */
export function venvPython(dir: string, platform: NodeJS.Platform): string {
  return platform === "win32" ? path.win32.join(dir, "Scripts", "python.exe") : path.posix.join(dir, "bin", "python");
}

/** The candidate interpreters, in the order they are tried (see the module comment). */
export function candidates(input: ResolveInput, machine: Pick<Machine, "platform" | "isFile">): Candidate[] {
  if (input.interpreterSetting.length > 0) {
    return [{ command: input.interpreterSetting, source: "luaguard.interpreter" }];
  }
  const out: Candidate[] = [];
  if (input.pythonExtension && input.pythonExtension.length > 0) {
    out.push({ command: input.pythonExtension, source: "the Python extension's interpreter" });
  }
  for (const folder of input.workspaceFolders) {
    for (const name of [".venv", "venv"]) {
      const exe = venvPython(machine.platform === "win32" ? path.win32.join(folder, name) : path.posix.join(folder, name), machine.platform);
      if (machine.isFile(exe)) {
        out.push({ command: [exe], source: `the workspace's ${name}` });
      }
    }
  }
  if (machine.platform === "win32") {
    out.push({ command: ["py", "-3"], source: "the py launcher" }, { command: ["python"], source: "PATH" });
  } else {
    out.push({ command: ["python3"], source: "PATH" }, { command: ["python"], source: "PATH" });
  }
  // The same interpreter may come from two sources: try it once.
  const seen = new Set<string>();
  return out.filter((c) => {
    const key = JSON.stringify(c.command);
    if (seen.has(key)) {
      return false;
    }
    seen.add(key);
    return true;
  });
}

function describe(c: Candidate): string {
  return `${c.command.join(" ")} (${c.source})`;
}

const INSTALL_HINT =
  "Install it there from a clone of luaguard's repository (it is not on PyPI yet): `python -m pip install /path/to/luaguard` (or `pip install -e .` in the clone), or choose another interpreter with the luaguard.interpreter setting.";

/**
 * Decide how to start the server.  Never throws: every failure is a {@link Problem}
 * whose message says what to do.
 */
export async function resolveServer(input: ResolveInput, machine: Machine): Promise<Resolution> {
  const tried: string[] = [];
  const hasBundle = machine.isDirectory(path.join(input.bundledLibs, "luaguard"));
  const list = candidates(input, machine);
  const explicit = input.interpreterSetting.length > 0;

  const working: { c: Candidate; result: ProbeResult }[] = [];
  for (const c of list) {
    const outcome = await machine.probe(c.command, input.importStrategy === "useBundled" && hasBundle ? input.bundledLibs : undefined);
    if (!outcome.ok) {
      tried.push(`${describe(c)}: cannot run: ${outcome.error}`);
      continue;
    }
    const r = outcome.result;
    if (!isSupportedPython(r.version)) {
      tried.push(`${describe(c)}: Python ${r.version} at ${r.executable} is older than ${MIN_PYTHON.join(".")}`);
      continue;
    }
    working.push({ c, result: r });
    if (input.importStrategy === "useBundled") {
      break; // any supported interpreter will do
    }
    if (r.luaguard !== null && r.importError === null) {
      break;
    }
    tried.push(
      r.luaguard === null
        ? `${describe(c)}: Python ${r.version} at ${r.executable} has no luaguard`
        : `${describe(c)}: luaguard ${r.luaguard} at ${r.executable} is broken: ${r.importError}`,
    );
  }

  if (working.length === 0) {
    if (explicit) {
      const why = tried[0] ?? "";
      const tooOld = /older than/.test(why);
      return {
        kind: "problem",
        code: tooOld ? "python-too-old" : "bad-interpreter",
        message: tooOld
          ? `luaguard needs Python ${MIN_PYTHON.join(".")} or newer, but luaguard.interpreter is ${why}.`
          : `luaguard.interpreter is set to \`${input.interpreterSetting.join(" ")}\`, which cannot be run: ${why.replace(/^.*cannot run: /, "")}. Fix the setting or clear it to let luaguard look for Python.`,
        tried,
      };
    }
    if (tried.some((t) => /older than/.test(t))) {
      return {
        kind: "problem",
        code: "python-too-old",
        message: `luaguard needs Python ${MIN_PYTHON.join(".")} or newer; the interpreters found are older. Install a newer Python or set luaguard.interpreter.`,
        tried,
      };
    }
    return {
      kind: "problem",
      code: "no-python",
      message: `luaguard could not find Python ${MIN_PYTHON.join(".")}+ (tried ${list.map((c) => c.command.join(" ")).join(", ")}). Install Python, select an interpreter with the Python extension, or set luaguard.interpreter.`,
      tried,
    };
  }

  if (input.importStrategy === "useBundled") {
    const { c, result } = working[0];
    if (!hasBundle) {
      return {
        kind: "problem",
        code: "no-bundle",
        message: `luaguard.importStrategy is "useBundled", but this build of the extension has no bundled luaguard. Set luaguard.importStrategy to "fromEnvironment" and install luaguard in ${result.executable}.`,
        tried,
      };
    }
    if (result.luaguard === null || result.importError !== null) {
      return {
        kind: "problem",
        code: "broken-install",
        message: `The luaguard bundled with the extension does not run on Python ${result.version} (${result.executable}): ${result.importError ?? "luaguard not importable"}. Set luaguard.importStrategy to "fromEnvironment" and install luaguard in that interpreter.`,
        tried,
      };
    }
    return bundled(input, c, result, tried, []);
  }

  const good = working.find((w) => w.result.luaguard !== null && w.result.importError === null);
  if (good) {
    return {
      kind: "ok",
      command: good.c.command[0],
      args: [...good.c.command.slice(1), ...SERVER_ARGS],
      env: {},
      strategy: "environment",
      candidate: good.c,
      probe: good.result,
      notes: tried,
    };
  }
  // fromEnvironment, interpreters work but none has a usable luaguard.
  const first = working[0];
  if (hasBundle) {
    const outcome = await machine.probe(first.c.command, input.bundledLibs);
    if (outcome.ok && outcome.result.luaguard !== null && outcome.result.importError === null) {
      return bundled(input, first.c, outcome.result, tried, [
        `luaguard is not installed in ${first.result.executable}; using the copy bundled with the extension.`,
      ]);
    }
    tried.push(`bundled luaguard with ${first.result.executable}: ${outcome.ok ? outcome.result.importError ?? "not importable" : outcome.error}`);
  }
  const broken = working.find((w) => w.result.luaguard !== null);
  if (broken) {
    return {
      kind: "problem",
      code: "broken-install",
      message: `luaguard ${broken.result.luaguard} is installed in ${broken.result.executable} but cannot start: ${broken.result.importError}. Reinstall it there from your luaguard clone (\`python -m pip install --force-reinstall /path/to/luaguard\`) or choose another interpreter with luaguard.interpreter.`,
      tried,
    };
  }
  return {
    kind: "problem",
    code: "not-installed",
    message: `luaguard is not installed in ${first.result.executable} (Python ${first.result.version}, from ${first.c.source}). ${INSTALL_HINT}`,
    tried,
  };
}

function bundled(input: ResolveInput, c: Candidate, result: ProbeResult, tried: string[], notes: string[]): ServerCommand {
  return {
    kind: "ok",
    command: c.command[0],
    args: [...c.command.slice(1), ...SERVER_ARGS],
    env: { PYTHONPATH: input.bundledLibs },
    strategy: "bundled",
    candidate: c,
    probe: result,
    notes: [...tried, ...notes],
  };
}

/** PYTHONPATH with `first` in front of an existing value. */
export function prependPythonPath(first: string, existing: string | undefined, platform: NodeJS.Platform): string {
  const sep = platform === "win32" ? ";" : ":";
  return existing ? `${first}${sep}${existing}` : first;
}
