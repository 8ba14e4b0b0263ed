/**
 * Markdown for the results panel: tool-call / patch validation answers and the
 * hallucination stats, as returned by the server's `workspace/executeCommand`
 * commands (`luaguard.validateToolCall`, `luaguard.validatePatch`, `luaguard.stats`).
 *
 * Known shapes are rendered as prose; anything else is shown as JSON, so a newer
 * server never makes the panel fail.
 */

type Json = null | boolean | number | string | Json[] | { [key: string]: Json };

function isObject(v: unknown): v is Record<string, Json> {
  return typeof v === "object" && v !== null && !Array.isArray(v);
}

function code(s: unknown): string {
  const text = String(s);
  const ticks = text.includes("`") ? "``" : "`";
  return `${ticks}${text}${ticks}`;
}

function jsonBlock(value: unknown): string {
  return "```json\n" + JSON.stringify(value, null, 2) + "\n```";
}

/** One error/finding as a list item: code, where, message, suggestions. */
function renderProblem(p: unknown): string {
  if (!isObject(p)) {
    return `- ${String(p)}`;
  }
  const rule = p.code ?? p.rule ?? p.rule_id ?? p.ruleId;
  const where: string[] = [];
  if (typeof p.field === "string" && p.field) {
    where.push(`field ${code(p.field)}`);
  }
  const range = isObject(p.range) && isObject(p.range.start) ? p.range.start : null;
  const line = typeof p.line === "number" ? p.line : range && typeof range.line === "number" ? range.line + 1 : null;
  // Patch findings carry "file" and already start their message with "file:line: ".
  if (line !== null && typeof p.file !== "string") {
    where.push(`line ${line}`);
  }
  const severity = typeof p.severity === "string" ? `${p.severity} ` : "";
  let out = `- ${severity}${rule !== undefined ? `**${String(rule)}**` : ""}${where.length ? ` (${where.join(", ")})` : ""}: ${String(p.message ?? "")}`;
  const suggestions = Array.isArray(p.suggestions) ? p.suggestions : [];
  if (suggestions.length > 0) {
    out += `\n  - did you mean: ${suggestions.slice(0, 5).map(code).join(", ")}`;
  }
  return out;
}

function renderVerdict(r: Record<string, Json>, index: number | null): string {
  const at = typeof r.line === "number" ? ` (input line ${r.line})` : "";
  const title = index === null ? "" : `### Call ${index + 1}${at}${typeof r.tool === "string" ? `: ${code(r.tool)}` : ""}\n\n`;
  const lines = [`${title}${r.valid ? "**Valid.**" : "**Invalid.**"}`];
  const problems = Array.isArray(r.errors) ? r.errors : Array.isArray(r.findings) ? r.findings : [];
  if (problems.length > 0) {
    lines.push("", ...problems.map(renderProblem));
  }
  const warnings = Array.isArray(r.warnings) ? r.warnings : [];
  if (warnings.length > 0) {
    lines.push("", "Warnings:", "", ...warnings.map(renderProblem));
  }
  if (typeof r.feedback === "string" && r.feedback.trim()) {
    lines.push("", "Feedback for the model:", "", r.feedback.split(/\r?\n/).map((l) => `> ${l}`).join("\n"));
  }
  return lines.join("\n");
}

/** Markdown for a validation answer (`kind`: "tool call" or "patch"). */
export function renderValidation(kind: string, origin: string, result: unknown): string {
  const head = `# luaguard: ${kind} validation\n\nInput: ${origin}.\n`;
  if (Array.isArray(result) && result.every((r) => isObject(r) && "valid" in r)) {
    const valid = result.filter((r) => isObject(r) && r.valid).length;
    const body = result.map((r, i) => renderVerdict(r as Record<string, Json>, i)).join("\n\n");
    return `${head}\n${valid} of ${result.length} valid.\n\n${body}\n`;
  }
  if (isObject(result) && "valid" in result) {
    return `${head}\n${renderVerdict(result, null)}\n`;
  }
  if (isObject(result) && (Array.isArray(result.findings) || Array.isArray(result.diagnostics))) {
    const list = (Array.isArray(result.findings) ? result.findings : result.diagnostics) as Json[];
    const body = list.length === 0 ? "No problems found." : list.map(renderProblem).join("\n");
    return `${head}\n${body}\n`;
  }
  if (Array.isArray(result) && result.every(isObject)) {
    const body = result.length === 0 ? "No problems found." : result.map(renderProblem).join("\n");
    return `${head}\n${body}\n`;
  }
  return `${head}\n${jsonBlock(result)}\n`;
}

/** Markdown for `luaguard.stats`: `{"rules": {rule: count}, "files": n, ...}`. */
export function renderStats(result: unknown): string {
  const head = "# luaguard: hallucination stats (this session)\n";
  if (!isObject(result) || !isObject(result.rules)) {
    return `${head}\n${jsonBlock(result)}\n`;
  }
  const rows = Object.entries(result.rules)
    .filter(([, n]) => typeof n === "number")
    .sort((a, b) => (b[1] as number) - (a[1] as number) || a[0].localeCompare(b[0]));
  const total = rows.reduce((sum, [, n]) => sum + (n as number), 0);
  const files = typeof result.files === "number" ? result.files : null;
  const lines = [head, `${total} finding(s)${files !== null ? ` in ${files} linted file(s)` : ""}.`, ""];
  if (rows.length > 0) {
    lines.push("| rule | findings |", "| --- | ---: |", ...rows.map(([rule, n]) => `| ${code(rule)} | ${n} |`));
  }
  if (isObject(result.toolcalls)) {
    const t = result.toolcalls;
    const n = (k: string) => (typeof t[k] === "number" ? (t[k] as number) : 0);
    lines.push("", `Tool calls: ${n("calls")} validated, ${n("invalid")} rejected. Patches: ${n("patches")} validated, ${n("invalid_patches")} rejected.`);
  }
  const extra = Object.fromEntries(Object.entries(result).filter(([k]) => k !== "rules" && k !== "files" && k !== "toolcalls"));
  if (Object.keys(extra).length > 0) {
    lines.push("", jsonBlock(extra));
  }
  return lines.join("\n") + "\n";
}

/** Whether `text` is a unified diff (has a hunk header) rather than a whole file. */
export function looksLikeDiff(text: string): boolean {
  return /^@@ -\d+(,\d+)? \+\d+(,\d+)? @@/m.test(text) && /^(---|\+\+\+) /m.test(text);
}
