/**
 * luaguard for VS Code: starts `luaguard serve` (stdio) with vscode-languageclient for
 * `luau` and `lua` documents (and any `*.luau` file, so it works without luau-lsp),
 * without contributing a language or grammar of its own (luau-lsp keeps those).
 *
 * Modules: interpreter.ts (which Python, which luaguard), settings.ts (settings sent to
 * the server), status.ts (status bar), results.ts (results panel).
 */

import * as cp from "child_process";
import * as fs from "fs";
import * as path from "path";
import * as vscode from "vscode";
import {
  CloseAction,
  CloseHandlerResult,
  ErrorAction,
  ErrorHandlerResult,
  ExecuteCommandRequest,
  LanguageClient,
  LanguageClientOptions,
  RevealOutputChannelOn,
  ServerOptions,
  State,
  WorkDoneProgressBegin,
  WorkDoneProgressEnd,
  WorkDoneProgressReport,
} from "vscode-languageclient/node";

import {
  ImportStrategy,
  Machine,
  PROBE_SCRIPT,
  ProbeOutcome,
  Resolution,
  normaliseInterpreterSetting,
  parseProbeOutput,
  prependPythonPath,
  resolveServer,
} from "./interpreter";
import { looksLikeDiff, renderStats, renderValidation } from "./results";
import { Counts, ServerState, statusView } from "./status";
import { RESTART_SETTINGS, SettingLookup, toServerSettings } from "./settings";

const SECTION = "luaguard";
const RESULT_SCHEME = "luaguard-result";
const SERVER_COMMANDS = { toolCall: "luaguard.validateToolCall", patch: "luaguard.validatePatch", stats: "luaguard.stats" };

let client: LanguageClient | undefined;
let output: vscode.OutputChannel;
let statusItem: vscode.StatusBarItem;
let state: ServerState = { kind: "starting" };
let serverVersion: string | undefined;
let stopping = false;
let starting: Promise<void> | undefined;
/** The last server process: exit status (null while it runs), stderr tail, and a promise
 *  settled when it exits. */
interface ServerProcess {
  code: number | null;
  signal: string | null;
  stderr: string[];
  exited: Promise<void>;
}
let lastExit: ServerProcess | undefined;
const results = new Map<string, string>();
const resultsChanged = new vscode.EventEmitter<vscode.Uri>();
let resultCounter = 0;

// -- machine access for interpreter.ts --------------------------------------------------

function probe(command: string[], extraPythonPath?: string): Promise<ProbeOutcome> {
  return new Promise((resolve) => {
    const env = { ...process.env };
    if (extraPythonPath) {
      env.PYTHONPATH = prependPythonPath(extraPythonPath, env.PYTHONPATH, process.platform);
    }
    cp.execFile(
      command[0],
      [...command.slice(1), "-c", PROBE_SCRIPT],
      { env, timeout: 20000, windowsHide: true, cwd: workspaceFolders()[0] },
      (error, stdout, stderr) => {
        if (error && !stdout) {
          const why = (error as NodeJS.ErrnoException).code === "ENOENT" ? "not found" : `${error.message}${stderr ? `: ${stderr.trim().split(/\r?\n/).pop()}` : ""}`;
          resolve({ ok: false, error: why });
          return;
        }
        try {
          resolve({ ok: true, result: parseProbeOutput(stdout) });
        } catch (e) {
          resolve({ ok: false, error: `${(e as Error).message}${stderr ? ` (stderr: ${stderr.trim().slice(-300)})` : ""}` });
        }
      },
    );
  });
}

const machine: Machine = {
  platform: process.platform,
  probe,
  isFile: (p) => {
    try {
      return fs.statSync(p).isFile();
    } catch {
      return false;
    }
  },
  isDirectory: (p) => {
    try {
      return fs.statSync(p).isDirectory();
    } catch {
      return false;
    }
  },
};

function workspaceFolders(): string[] {
  return (vscode.workspace.workspaceFolders ?? []).filter((f) => f.uri.scheme === "file").map((f) => f.uri.fsPath);
}

/** The Python extension's interpreter for the first workspace folder, if any. */
async function pythonExtensionInterpreter(): Promise<string[] | undefined> {
  const ext = vscode.extensions.getExtension("ms-python.python");
  if (!ext) {
    return undefined;
  }
  try {
    const api = ext.isActive ? ext.exports : await ext.activate();
    const environments = api?.environments;
    if (!environments?.getActiveEnvironmentPath) {
      return undefined;
    }
    const resource = vscode.workspace.workspaceFolders?.[0]?.uri;
    const active = environments.getActiveEnvironmentPath(resource);
    const resolved = environments.resolveEnvironment ? await environments.resolveEnvironment(active) : undefined;
    const exe: string | undefined = resolved?.executable?.uri?.fsPath ?? active?.path;
    return exe ? [exe] : undefined;
  } catch (e) {
    output.appendLine(`Could not ask the Python extension for its interpreter: ${(e as Error).message}`);
    return undefined;
  }
}

// -- settings ---------------------------------------------------------------------------

function lookupFor(scope?: vscode.Uri): SettingLookup {
  const config = vscode.workspace.getConfiguration(SECTION, scope);
  return (key: string) => {
    const info = config.inspect(key);
    const isSet =
      info !== undefined &&
      [info.globalValue, info.workspaceValue, info.workspaceFolderValue, (info as { globalLanguageValue?: unknown }).globalLanguageValue].some(
        (v) => v !== undefined,
      );
    return { value: config.get(key), isSet };
  };
}

// -- status bar -------------------------------------------------------------------------

function diagnosticCounts(): Counts {
  const counts: Counts = { errors: 0, warnings: 0, files: 0 };
  for (const [, diagnostics] of vscode.languages.getDiagnostics()) {
    const ours = diagnostics.filter((d) => d.source === "luaguard");
    if (ours.length === 0) {
      continue;
    }
    counts.files += 1;
    for (const d of ours) {
      if (d.severity === vscode.DiagnosticSeverity.Error) {
        counts.errors += 1;
      } else if (d.severity === vscode.DiagnosticSeverity.Warning) {
        counts.warnings += 1;
      }
    }
  }
  return counts;
}

function setState(next: ServerState): void {
  state = next;
  renderStatus();
}

function renderStatus(): void {
  const view = statusView(state, diagnosticCounts(), serverVersion);
  statusItem.text = view.text;
  statusItem.tooltip = view.tooltip;
  statusItem.command = view.command;
  statusItem.backgroundColor = view.background ? new vscode.ThemeColor(`statusBarItem.${view.background}Background`) : undefined;
  statusItem.show();
}

// -- the client -------------------------------------------------------------------------

/** Log a set-up problem, show it in the status bar and as an error message with the
 *  ways out.  Does not wait for the user (activation must not hang on a message). */
function showProblem(resolution: Extract<Resolution, { kind: "problem" }>): void {
  output.appendLine(`luaguard cannot start: ${resolution.message}`);
  for (const t of resolution.tried) {
    output.appendLine(`  tried ${t}`);
  }
  setState({ kind: "problem", message: resolution.message });
  const actions = ["Open Settings", "Show Output"];
  if (vscode.extensions.getExtension("ms-python.python")) {
    actions.unshift("Select Interpreter");
  }
  void vscode.window.showErrorMessage(resolution.message, ...actions).then((choice) => {
    if (choice === "Open Settings") {
      void vscode.commands.executeCommand("workbench.action.openSettings", "luaguard.interpreter");
    } else if (choice === "Show Output") {
      output.show(true);
    } else if (choice === "Select Interpreter") {
      void vscode.commands.executeCommand("python.setInterpreter");
    }
  });
}

/** Offer a restart after the server died or could not start. */
function offerRestart(message: string): void {
  output.appendLine(message);
  void vscode.window.showErrorMessage(message, "Restart Server", "Show Output").then((choice) => {
    if (choice === "Restart Server") {
      void restart();
    } else if (choice === "Show Output") {
      output.show(true);
    }
  });
}

async function onServerClosed(): Promise<void> {
  setState({ kind: "crashed", detail: "stopped" });
  const exit = lastExit;
  if (exit) {
    // The stream closes before the process reports its exit status: wait for it briefly.
    await Promise.race([exit.exited, new Promise((r) => setTimeout(r, 2000))]);
  }
  const code = exit ? (exit.signal ? `signal ${exit.signal}` : exit.code === null ? "connection closed" : `exit code ${exit.code}`) : "connection closed";
  const last = exit?.stderr.filter((l) => l.trim()).slice(-1)[0];
  setState({ kind: "crashed", detail: code });
  offerRestart(`The luaguard server stopped unexpectedly (${code})${last ? `: ${last.trim().slice(0, 300)}` : ""}.`);
}

async function startServer(context: vscode.ExtensionContext): Promise<void> {
  setState({ kind: "starting" });
  const config = vscode.workspace.getConfiguration(SECTION);
  const interpreter = normaliseInterpreterSetting(config.get("interpreter"));
  if (interpreter === null) {
    showProblem({
      kind: "problem",
      code: "invalid-setting",
      message: "luaguard.interpreter must be a list of strings, e.g. [\"/usr/bin/python3\"].",
      tried: [],
    });
    return;
  }
  const strategy = config.get<string>("importStrategy") === "useBundled" ? "useBundled" : "fromEnvironment";
  const resolution = await resolveServer(
    {
      interpreterSetting: interpreter,
      importStrategy: strategy as ImportStrategy,
      pythonExtension: interpreter.length === 0 ? await pythonExtensionInterpreter() : undefined,
      // a workspace's own .venv is a program the repository supplies: only in a trusted workspace
      workspaceFolders: vscode.workspace.isTrusted ? workspaceFolders() : [],
      bundledLibs: context.asAbsolutePath(path.join("bundled", "libs")),
    },
    machine,
  );
  if (resolution.kind === "problem") {
    showProblem(resolution);
    return;
  }
  for (const note of resolution.notes) {
    output.appendLine(note);
  }
  serverVersion = resolution.probe.luaguard ?? undefined;
  output.appendLine(
    `Starting luaguard ${serverVersion} (${resolution.strategy}) with Python ${resolution.probe.version}: ${resolution.command} ${resolution.args.join(" ")}`,
  );

  const serverOptions: ServerOptions = async () => {
    const env = { ...process.env };
    if (resolution.env.PYTHONPATH) {
      env.PYTHONPATH = prependPythonPath(resolution.env.PYTHONPATH, env.PYTHONPATH, process.platform);
    }
    env.PYTHONUNBUFFERED = "1";
    const child = cp.spawn(resolution.command, resolution.args, { env, cwd: workspaceFolders()[0], windowsHide: true });
    let settle: () => void = () => undefined;
    const exit: ServerProcess = { code: null, signal: null, stderr: [], exited: new Promise<void>((r) => (settle = r)) };
    lastExit = exit;
    child.stderr.setEncoding("utf8");
    child.stderr.on("data", (chunk: string) => {
      output.append(chunk);
      exit.stderr.push(...chunk.split(/\r?\n/));
      exit.stderr.splice(0, Math.max(0, exit.stderr.length - 50));
    });
    child.on("exit", (code, signal) => {
      exit.code = code;
      exit.signal = signal;
      settle();
    });
    child.on("error", (e) => {
      exit.stderr.push(e.message);
      settle();
    });
    return child;
  };

  const clientOptions: LanguageClientOptions = {
    documentSelector: [
      { scheme: "file", language: "luau" },
      { scheme: "untitled", language: "luau" },
      { scheme: "file", language: "lua" },
      { scheme: "untitled", language: "lua" },
      { scheme: "file", pattern: "**/*.luau" },
    ],
    outputChannel: output,
    traceOutputChannel: output,
    revealOutputChannelOn: RevealOutputChannelOn.Never,
    synchronize: {
      configurationSection: SECTION,
      fileEvents: [
        vscode.workspace.createFileSystemWatcher("**/*.project.json"),
        vscode.workspace.createFileSystemWatcher("**/sourcemap.json"),
        vscode.workspace.createFileSystemWatcher("**/luaguard.toml"),
      ],
    },
    middleware: {
      workspace: {
        configuration: async (params, token, next) => {
          const answer = await next(params, token);
          if (!Array.isArray(answer)) {
            return answer;
          }
          return params.items.map((item, i) =>
            item.section === SECTION ? toServerSettings(lookupFor(item.scopeUri ? vscode.Uri.parse(item.scopeUri) : undefined)) : answer[i],
          );
        },
      },
      handleWorkDoneProgress: (token, params, next) => {
        trackProgress(params);
        next(token, params);
      },
    },
    errorHandler: {
      error: (_error, _message, count): ErrorHandlerResult => ({
        action: (count ?? 0) <= 3 ? ErrorAction.Continue : ErrorAction.Shutdown,
      }),
      closed: (): CloseHandlerResult => {
        if (!stopping) {
          void onServerClosed();
        }
        return { action: CloseAction.DoNotRestart, handled: true };
      },
    },
    initializationOptions: toServerSettings(lookupFor()),
  };

  const next = new LanguageClient("luaguard", "luaguard", serverOptions, clientOptions);
  next.registerProposedFeatures(); // textDocument/inlineCompletion
  next.onDidChangeState((e) => {
    if (e.newState === State.Running && state.kind === "starting") {
      setState({ kind: "indexing" });
    } else if (e.newState === State.Stopped && stopping) {
      setState({ kind: "stopped" });
    }
  });
  client = next;
  try {
    await next.start();
  } catch (e) {
    if (state.kind !== "crashed") {
      setState({ kind: "crashed", detail: (e as Error).message });
      offerRestart(`The luaguard server could not start: ${(e as Error).message}`);
    }
  }
}

function trackProgress(params: WorkDoneProgressBegin | WorkDoneProgressReport | WorkDoneProgressEnd): void {
  if (params.kind === "begin") {
    if (params.title.includes("index")) {
      setState({ kind: "indexing", message: params.message, percentage: params.percentage });
    }
  } else if (params.kind === "report") {
    if (state.kind === "indexing") {
      setState({ kind: "indexing", message: params.message ?? state.message, percentage: params.percentage ?? state.percentage });
    }
  } else if (state.kind === "indexing") {
    setState({ kind: "ready", summary: params.message });
  }
}

async function stopServer(): Promise<void> {
  const current = client;
  client = undefined;
  if (!current) {
    return;
  }
  stopping = true;
  try {
    if (current.state !== State.Stopped) {
      await current.stop(5000);
    }
  } catch (e) {
    output.appendLine(`Stopping the server: ${(e as Error).message}`);
  } finally {
    stopping = false;
  }
}

let extensionContext: vscode.ExtensionContext;

async function restart(): Promise<void> {
  if (starting) {
    await starting;
  }
  starting = (async () => {
    await stopServer();
    await startServer(extensionContext);
  })();
  try {
    await starting;
  } finally {
    starting = undefined;
  }
}

// -- commands ---------------------------------------------------------------------------

/** The client, once its server runs; otherwise a message and undefined. */
function runningClient(feature: string): LanguageClient | undefined {
  if (client && client.state === State.Running) {
    return client;
  }
  void vscode.window.showWarningMessage(`luaguard: the server is not running, so ${feature} is not available. Run "luaguard: Restart Server".`);
  return undefined;
}

function serverHasCommand(c: LanguageClient, command: string): boolean {
  const commands = c.initializeResult?.capabilities.executeCommandProvider?.commands ?? [];
  return commands.includes(command);
}

async function showResult(title: string, markdown: string): Promise<void> {
  resultCounter += 1;
  const uri = vscode.Uri.from({ scheme: RESULT_SCHEME, path: `/${title.replace(/[^A-Za-z0-9 _-]/g, "")}.md`, query: String(resultCounter) });
  results.set(uri.toString(), markdown);
  resultsChanged.fire(uri);
  const doc = await vscode.workspace.openTextDocument(uri);
  await vscode.window.showTextDocument(doc, { viewColumn: vscode.ViewColumn.Beside, preview: true, preserveFocus: true });
}

async function validate(kind: "toolCall" | "patch"): Promise<void> {
  const label = kind === "toolCall" ? "tool call" : "patch";
  const editor = vscode.window.activeTextEditor;
  let text: string;
  let origin: string;
  if (editor && !editor.selection.isEmpty) {
    text = editor.document.getText(editor.selection);
    origin = `the selection in ${path.basename(editor.document.uri.fsPath || editor.document.uri.path)}`;
  } else {
    text = await vscode.env.clipboard.readText();
    origin = "the clipboard";
  }
  if (!text.trim()) {
    void vscode.window.showWarningMessage(`luaguard: select a ${label} in an editor or copy one to the clipboard first.`);
    return;
  }
  const c = runningClient(`${label} validation`);
  if (!c) {
    return;
  }
  const command = SERVER_COMMANDS[kind];
  if (!serverHasCommand(c, command)) {
    void vscode.window.showWarningMessage(`luaguard: this luaguard server (${serverVersion ?? "unknown version"}) cannot validate a ${label} (no ${command} command).`);
    return;
  }
  // luaguard.validateToolCall(text) -> list of verdicts; luaguard.validatePatch({uri,
  // content} | {uri, diff}) -> one verdict, for the active file (a diff may name its own).
  const doc = editor?.document;
  const isScript = doc !== undefined && doc.uri.scheme === "file" && (["luau", "lua"].includes(doc.languageId) || /\.(luau|lua)$/i.test(doc.uri.fsPath));
  const target = kind === "patch" && isScript ? doc.uri.toString() : null;
  const args = kind === "toolCall" ? [text] : [looksLikeDiff(text) ? { uri: target, diff: text } : { uri: target, content: text }];
  try {
    const result = await c.sendRequest(ExecuteCommandRequest.type, { command, arguments: args });
    await showResult(`luaguard ${label} result`, renderValidation(label, origin, result));
  } catch (e) {
    void vscode.window.showErrorMessage(`luaguard: ${label} validation failed: ${(e as Error).message}`);
  }
}

async function showStats(): Promise<void> {
  const c = runningClient("the stats");
  if (!c) {
    return;
  }
  try {
    const result = await c.sendRequest(ExecuteCommandRequest.type, { command: SERVER_COMMANDS.stats, arguments: [] });
    await showResult("luaguard stats", renderStats(result));
  } catch (e) {
    void vscode.window.showErrorMessage(`luaguard: could not get the stats: ${(e as Error).message}`);
  }
}

// -- activation -------------------------------------------------------------------------

export async function activate(context: vscode.ExtensionContext): Promise<void> {
  extensionContext = context;
  output = vscode.window.createOutputChannel("luaguard");
  statusItem = vscode.window.createStatusBarItem("luaguard.status", vscode.StatusBarAlignment.Left, 0);
  statusItem.name = "luaguard";
  context.subscriptions.push(output, statusItem, resultsChanged);

  context.subscriptions.push(
    vscode.workspace.registerTextDocumentContentProvider(RESULT_SCHEME, {
      onDidChange: resultsChanged.event,
      provideTextDocumentContent: (uri) => results.get(uri.toString()) ?? "",
    }),
    vscode.commands.registerCommand("luaguard.restartServer", restart),
    vscode.commands.registerCommand("luaguard.validateSelectionAsToolCall", () => validate("toolCall")),
    vscode.commands.registerCommand("luaguard.validateSelectionAsPatch", () => validate("patch")),
    vscode.commands.registerCommand("luaguard.showStats", showStats),
    vscode.commands.registerCommand("luaguard.showOutput", () => output.show(true)),
    vscode.languages.onDidChangeDiagnostics(() => {
      if (state.kind === "ready") {
        renderStatus();
      }
    }),
    vscode.workspace.onDidChangeConfiguration((e) => {
      if (RESTART_SETTINGS.some((s) => e.affectsConfiguration(s))) {
        output.appendLine("Interpreter settings changed: restarting the server.");
        void restart();
      }
    }),
  );

  const python = vscode.extensions.getExtension("ms-python.python");
  if (python) {
    void Promise.resolve(python.isActive ? python.exports : python.activate())
      .then((api) => {
        const event = api?.environments?.onDidChangeActiveEnvironmentPath;
        if (typeof event === "function") {
          context.subscriptions.push(
            event(() => {
              if ((normaliseInterpreterSetting(vscode.workspace.getConfiguration(SECTION).get("interpreter")) ?? []).length === 0) {
                output.appendLine("The Python extension's interpreter changed: restarting the server.");
                void restart();
              }
            }),
          );
        }
      })
      .then(undefined, () => undefined);
  }

  renderStatus();
  starting = startServer(context);
  try {
    await starting;
  } finally {
    starting = undefined;
  }
}

export async function deactivate(): Promise<void> {
  await stopServer();
}
