import { strict as assert } from "node:assert";
import { readFileSync } from "node:fs";
import { test } from "node:test";

import { looksLikeDiff, renderStats, renderValidation } from "../src/results";
import { SettingLookup, toServerSettings } from "../src/settings";
import { indexLabel, statusView } from "../src/status";

const manifest = JSON.parse(readFileSync(`${__dirname}/../../package.json`, "utf8"));
const props = manifest.contributes.configuration.properties as Record<string, { default: unknown }>;

/** A lookup over the manifest's defaults with `user` values set on top. */
function lookup(user: Record<string, unknown>): SettingLookup {
  return (key) => {
    const isSet = key in user;
    return { value: isSet ? user[key] : props[`luaguard.${key}`]?.default, isSet };
  };
}

test("defaults are not sent: every server setting is null", () => {
  const s = toServerSettings(lookup({}));
  assert.deepEqual(s, {
    projectFile: null,
    sourcemapFile: null,
    placeholderMode: null,
    rules: null,
    completion: { enabled: null, model: null, minConfidence: null, maxTokens: null },
    debounceMs: null,
  });
});

test("user settings map to the server's keys", () => {
  const s = toServerSettings(
    lookup({
      "sourcemap.rojoProjectFile": " game.project.json ",
      "sourcemap.sourcemapFile": "",
      placeholderMode: "patch",
      rules: { likely_unknown_instance: "off", placeholder: "warning", bogus: 3 },
      "completion.enabled": false,
      "completion.model": "/models/coder",
      "completion.minConfidence": 0.5,
      "completion.maxTokens": 32,
      debounceMs: 0,
    }),
  );
  assert.equal(s.projectFile, "game.project.json");
  assert.equal(s.sourcemapFile, null);
  assert.equal(s.placeholderMode, "patch");
  assert.deepEqual(s.rules, { likely_unknown_instance: "off", placeholder: "warning" });
  assert.deepEqual(s.completion, { enabled: false, model: "/models/coder", minConfidence: 0.5, maxTokens: 32 });
  assert.equal(s.debounceMs, 0);
});

test("every server setting has a contributed VS Code setting (and client-only ones are not sent)", () => {
  for (const key of [
    "sourcemap.rojoProjectFile",
    "sourcemap.sourcemapFile",
    "placeholderMode",
    "rules",
    "completion.enabled",
    "completion.model",
    "completion.minConfidence",
    "completion.maxTokens",
    "debounceMs",
    "interpreter",
    "importStrategy",
  ]) {
    assert.ok(`luaguard.${key}` in props, key);
  }
  const sent = JSON.stringify(toServerSettings(lookup({ interpreter: ["/x"], importStrategy: "useBundled" })));
  assert.doesNotMatch(sent, /interpreter|importStrategy|\/x/);
});

test("the extension contributes no language or grammar (luau-lsp keeps them)", () => {
  assert.equal(manifest.contributes.languages, undefined);
  assert.equal(manifest.contributes.grammars, undefined);
  assert.ok(manifest.activationEvents.includes("onLanguage:luau"));
  assert.ok(manifest.activationEvents.includes("onLanguage:lua"));
});

test("contributed commands do not reuse the server's command ids", () => {
  const ids = manifest.contributes.commands.map((c: { command: string }) => c.command);
  for (const server of ["luaguard.validateToolCall", "luaguard.validatePatch", "luaguard.stats"]) {
    assert.ok(!ids.includes(server), server);
  }
});

test("status bar: index summary and diagnostic counts", () => {
  assert.deepEqual(indexLabel("27 files, 20 scripts"), { label: "20 scripts", warn: false });
  assert.deepEqual(indexLabel("no project file"), { label: "no project", warn: false });
  assert.deepEqual(indexLabel("project not loaded"), { label: "project error", warn: true });
  const ready = statusView({ kind: "ready", summary: "27 files, 20 scripts" }, { errors: 2, warnings: 1, files: 1 }, "0.1.0");
  assert.equal(ready.text, "luaguard: 20 scripts $(error) 2 $(warning) 1");
  assert.match(ready.tooltip, /luaguard 0\.1\.0: index 27 files, 20 scripts; 2 error\(s\), 1 warning\(s\) in 1 file\(s\)/);
  assert.equal(ready.command, "luaguard.showStats");
  const indexing = statusView({ kind: "indexing", percentage: 60, message: "scanning 20 scripts" }, { errors: 0, warnings: 0, files: 0 });
  assert.equal(indexing.text, "$(sync~spin) luaguard: indexing 60%");
  const crashed = statusView({ kind: "crashed", detail: "exit code 3" }, { errors: 0, warnings: 0, files: 0 });
  assert.equal(crashed.command, "luaguard.restartServer");
  assert.equal(crashed.background, "error");
});

test("validation results: verdicts with errors, suggestions and feedback", () => {
  const md = renderValidation("tool call", "the clipboard", [
    { valid: true, errors: [], feedback: "" },
    {
      valid: false,
      errors: [{ code: "unknown_path", message: "Path 'ServerScriptService.MainScrpt' does not exist.", field: "path", suggestions: ["ServerScriptService.MainScript"] }],
      feedback: "Path 'ServerScriptService.MainScrpt' does not exist.\nDid you mean 'ServerScriptService.MainScript'?",
    },
  ]);
  assert.match(md, /1 of 2 valid\./);
  assert.match(md, /### Call 2\n\n\*\*Invalid\.\*\*/);
  assert.match(md, /- \*\*unknown_path\*\* \(field `path`\): Path 'ServerScriptService\.MainScrpt' does not exist\./);
  assert.match(md, /did you mean: `ServerScriptService\.MainScript`/);
  assert.match(md, /> Did you mean 'ServerScriptService\.MainScript'\?/);
});

test("validation results: findings with LSP ranges, and unknown shapes as JSON", () => {
  const md = renderValidation("patch", "the selection", { findings: [{ rule: "placeholder", message: "placeholder comment", range: { start: { line: 4, character: 0 } } }] });
  assert.match(md, /- \*\*placeholder\*\* \(line 5\): placeholder comment/);
  const other = renderValidation("patch", "the selection", { weird: [1, 2] });
  assert.match(other, /```json\n\{\n  "weird": \[/);
});

test("stats: rules sorted by count with a total", () => {
  const md = renderStats({ rules: { placeholder: 1, unknown_instance: 3 }, files: 2 });
  assert.match(md, /4 finding\(s\) in 2 linted file\(s\)\./);
  assert.ok(md.indexOf("unknown_instance") < md.indexOf("placeholder"));
  assert.match(md, /\| `unknown_instance` \| 3 \|/);
});

test("validation results: warnings, patch findings with their file, input lines", () => {
  const md = renderValidation("patch", "the selection", {
    valid: false,
    errors: [{ code: "placeholder", message: "src/a.luau:12: Placeholder comment", field: null, suggestions: [], range: { start: { line: 11, character: 1 } }, file: "src/a.luau" }],
    warnings: [{ code: "deprecated_property", message: "old", field: "property", suggestions: [] }],
    feedback: "Write the code.",
  });
  assert.match(md, /- \*\*placeholder\*\*: src\/a\.luau:12: Placeholder comment/);
  assert.doesNotMatch(md, /line 12\)/);
  assert.match(md, /Warnings:\n\n- \*\*deprecated_property\*\* \(field `property`\): old/);
  const calls = renderValidation("tool call", "x", [{ valid: true, errors: [], warnings: [], feedback: "", tool: "read_script", line: 3 }]);
  assert.match(calls, /### Call 1 \(input line 3\): `read_script`/);
});

test("stats: tool-call counts are summarised, not dumped", () => {
  const md = renderStats({ rules: {}, files: 0, toolcalls: { calls: 3, valid: 1, invalid: 2, patches: 1, invalid_patches: 1 } });
  assert.match(md, /Tool calls: 3 validated, 2 rejected\. Patches: 1 validated, 1 rejected\./);
  assert.doesNotMatch(md, /```json/);
});

test("looksLikeDiff: unified diffs only", () => {
  assert.equal(looksLikeDiff("--- a/x.luau\n+++ b/x.luau\n@@ -1,2 +1,3 @@\n a\n+b\n"), true);
  assert.equal(looksLikeDiff("local x = 1\n-- @@ not a hunk\nreturn x\n"), false);
  assert.equal(looksLikeDiff("@@ -1 +1 @@\n-a\n+b\n"), false);
});
