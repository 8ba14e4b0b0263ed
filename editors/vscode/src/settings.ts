/**
 * VS Code settings (`luaguard.*`) -> the object the server reads from
 * `workspace/configuration` section `luaguard` (see `server/luaguard/config.py`).
 *
 * Only settings the user actually set (in user, workspace or folder settings) are
 * sent; the others are `null`, which the server reads as "not set", so a project's
 * `luaguard.toml` is not overridden by VS Code's defaults.  Client-only settings
 * (interpreter, importStrategy, trace) are not sent.
 */

/** Reads one setting: `value` is the effective value, `isSet` whether any settings
 *  layer (not the default) defines it. */
export type SettingLookup = (key: string) => { value: unknown; isSet: boolean };

export interface ServerSettings {
  projectFile: string | null;
  sourcemapFile: string | null;
  placeholderMode: string | null;
  rules: Record<string, string> | null;
  completion: {
    enabled: boolean | null;
    model: string | null;
    minConfidence: number | null;
    maxTokens: number | null;
  };
  debounceMs: number | null;
}

/** Settings whose change needs a new server process (not just a configuration pull). */
export const RESTART_SETTINGS = ["luaguard.interpreter", "luaguard.importStrategy"];

function setValue<T>(lookup: SettingLookup, key: string, accept: (v: unknown) => v is T): T | null {
  const { value, isSet } = lookup(key);
  if (!isSet || !accept(value)) {
    return null;
  }
  return value;
}

const isString = (v: unknown): v is string => typeof v === "string";
const isBool = (v: unknown): v is boolean => typeof v === "boolean";
const isNumber = (v: unknown): v is number => typeof v === "number" && Number.isFinite(v);

function fileName(lookup: SettingLookup, key: string): string | null {
  const v = setValue(lookup, key, isString);
  return v === null || v.trim() === "" ? null : v.trim();
}

/** The server's view of the settings (see the module comment). */
export function toServerSettings(lookup: SettingLookup): ServerSettings {
  const rulesRaw = lookup("rules");
  let rules: Record<string, string> | null = null;
  if (rulesRaw.isSet && typeof rulesRaw.value === "object" && rulesRaw.value !== null && !Array.isArray(rulesRaw.value)) {
    rules = {};
    for (const [rule, severity] of Object.entries(rulesRaw.value as Record<string, unknown>)) {
      if (typeof severity === "string") {
        rules[rule] = severity;
      }
    }
  }
  const model = setValue(lookup, "completion.model", isString);
  return {
    projectFile: fileName(lookup, "sourcemap.rojoProjectFile"),
    sourcemapFile: fileName(lookup, "sourcemap.sourcemapFile"),
    placeholderMode: setValue(lookup, "placeholderMode", isString),
    rules,
    completion: {
      enabled: setValue(lookup, "completion.enabled", isBool),
      model: model === null || model.trim() === "" ? null : model,
      minConfidence: setValue(lookup, "completion.minConfidence", isNumber),
      maxTokens: setValue(lookup, "completion.maxTokens", isNumber),
    },
    debounceMs: setValue(lookup, "debounceMs", isNumber),
  };
}

/** The value of the `luaguard.completion.enabled` setting as the client sees it
 *  (default true), used to decide whether to offer inline completions. */
export function completionEnabled(lookup: SettingLookup): boolean {
  const { value } = lookup("completion.enabled");
  return value !== false;
}
