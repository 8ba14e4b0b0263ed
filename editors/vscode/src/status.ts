/**
 * The status bar item's content as a pure function of the client state, so it is
 * unit-tested without VS Code.
 *
 * Index state comes from the server's work-done progress (`luaguard: indexing`,
 * begin/report/end; the end message is "N files, M scripts", "no project file" or
 * "project not loaded"), counts from the luaguard diagnostics currently shown.
 */

export type ServerState =
  | { kind: "starting" }
  | { kind: "indexing"; message?: string; percentage?: number }
  | { kind: "ready"; summary?: string }
  | { kind: "stopped" }
  | { kind: "crashed"; detail: string }
  | { kind: "problem"; message: string };

export interface Counts {
  errors: number;
  warnings: number;
  /** Files with at least one luaguard diagnostic. */
  files: number;
}

export interface StatusView {
  text: string;
  tooltip: string;
  /** "error" | "warning" background, or none. */
  background?: "error" | "warning";
  /** Command run on click. */
  command: string;
}

/** Index summary (the progress end message) -> short label. */
export function indexLabel(summary: string | undefined): { label: string; warn: boolean } {
  if (!summary) {
    return { label: "ready", warn: false };
  }
  if (summary === "no project file") {
    return { label: "no project", warn: false };
  }
  if (summary === "project not loaded" || summary === "failed") {
    return { label: "project error", warn: true };
  }
  const scripts = /(\d+) scripts?/.exec(summary);
  if (scripts) {
    return { label: `${scripts[1]} scripts`, warn: false };
  }
  return { label: summary, warn: false };
}

function countsText(c: Counts): string {
  if (c.errors === 0 && c.warnings === 0) {
    return "$(check) 0";
  }
  return `$(error) ${c.errors} $(warning) ${c.warnings}`;
}

/** What the status bar shows for `state` and `counts`. */
export function statusView(state: ServerState, counts: Counts, version?: string): StatusView {
  const who = version ? `luaguard ${version}` : "luaguard";
  switch (state.kind) {
    case "starting":
      return { text: "$(sync~spin) luaguard", tooltip: `${who}: starting the server`, command: "luaguard.showOutput" };
    case "indexing": {
      const pct = typeof state.percentage === "number" ? ` ${state.percentage}%` : "";
      return {
        text: `$(sync~spin) luaguard: indexing${pct}`,
        tooltip: `${who}: indexing the Rojo project${state.message ? ` (${state.message})` : ""}`,
        command: "luaguard.showOutput",
      };
    }
    case "ready": {
      const { label, warn } = indexLabel(state.summary);
      const problems = `${counts.errors} error(s), ${counts.warnings} warning(s) in ${counts.files} file(s)`;
      return {
        text: `luaguard: ${label} ${countsText(counts)}`,
        tooltip: `${who}: index ${state.summary ?? "ready"}; ${problems}. Click for hallucination stats.`,
        background: warn ? "warning" : undefined,
        command: "luaguard.showStats",
      };
    }
    case "stopped":
      return { text: "$(circle-slash) luaguard", tooltip: `${who}: server stopped. Click to restart.`, command: "luaguard.restartServer" };
    case "crashed":
      return {
        text: "$(error) luaguard: crashed",
        tooltip: `${who}: the server stopped unexpectedly (${state.detail}). Click to restart.`,
        background: "error",
        command: "luaguard.restartServer",
      };
    case "problem":
      return { text: "$(error) luaguard: not running", tooltip: state.message, background: "error", command: "luaguard.showOutput" };
  }
}
