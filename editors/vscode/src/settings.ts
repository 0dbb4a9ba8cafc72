/**
 * The extension's settings (section `affineLsp`): reading and validating them,
 * and answering the server's `workspace/configuration` requests. Settings are
 * read through {@link SettingsReader}, so this module needs no VS Code API.
 */
import type { LaunchSettings } from "./serverResolution";

/** The settings section shared by the extension and the server. */
export const SETTINGS_SECTION = "affineLsp";

/** Where a project's own dialects and ops' traits are declared (read by the server). */
export const PROJECT_FILE_PATTERN = "**/.affine-lsp.toml";

/** The documents the server gets: MLIR, and project files (it shows their problems). */
export const DOCUMENT_SELECTOR = [
  { scheme: "file", language: "mlir" },
  { scheme: "untitled", language: "mlir" },
  { scheme: "file", pattern: PROJECT_FILE_PATTERN },
];

/** Reads one setting by its key relative to the section, e.g. `fusion.tolerance`. */
export interface SettingsReader {
  get(key: string): unknown;
}

export const SEVERITIES = ["error", "warning", "information", "hint"] as const;
export type Severity = (typeof SEVERITIES)[number];

export const LOG_LEVELS = ["error", "warning", "info", "debug"] as const;
export type LogLevel = (typeof LOG_LEVELS)[number];

export const HOVER_PICTURES = ["auto", "always", "never"] as const;
export type HoverPictures = (typeof HOVER_PICTURES)[number];

/** The settings the server reads; sent as initializationOptions and via workspace/configuration. */
export interface ServerSettings {
  fusion: { tolerance: number };
  legacySyntax: { severity: Severity };
  lints: { enabled: boolean };
  logLevel: LogLevel;
  transforms: { tileSizes: number[]; unrollFactor: number; unrollJamFactor: number };
  hover: { pictures: HoverPictures };
  refactorings: { planInBackground: boolean };
  performanceHints: { enabled: boolean };
  optimize: { enabled: boolean; tune: boolean };
}

export const DEFAULT_SERVER_SETTINGS: ServerSettings = {
  fusion: { tolerance: 0.3 },
  legacySyntax: { severity: "warning" },
  lints: { enabled: true },
  logLevel: "info",
  transforms: { tileSizes: [32], unrollFactor: 4, unrollJamFactor: 2 },
  hover: { pictures: "auto" },
  refactorings: { planInBackground: true },
  performanceHints: { enabled: true },
  optimize: { enabled: true, tune: false },
};

/** Settings whose change needs a server restart (they decide what is launched). */
export const LAUNCH_SETTING_KEYS = ["server.path", "server.args", "python.path"] as const;

function oneOf<T extends string>(value: unknown, allowed: readonly T[], fallback: T): T {
  return typeof value === "string" && (allowed as readonly string[]).includes(value) ? (value as T) : fallback;
}

function nonNegativeNumber(value: unknown, fallback: number): number {
  return typeof value === "number" && Number.isFinite(value) && value >= 0 ? value : fallback;
}

function factor(value: unknown, fallback: number): number {
  return typeof value === "number" && Number.isInteger(value) && value >= 2 && value <= 64 ? value : fallback;
}

function tileSizes(value: unknown, fallback: number[]): number[] {
  const sizes = typeof value === "number" ? [value] : value;
  const valid =
    Array.isArray(sizes) &&
    sizes.length >= 1 &&
    sizes.length <= 8 &&
    sizes.every((size) => typeof size === "number" && Number.isInteger(size) && size >= 1);
  return valid ? (sizes as number[]) : fallback;
}

function boolean(value: unknown, fallback: boolean): boolean {
  return typeof value === "boolean" ? value : fallback;
}

function text(value: unknown): string {
  return typeof value === "string" ? value : "";
}

function textList(value: unknown): string[] {
  return Array.isArray(value) ? value.filter((item): item is string => typeof item === "string") : [];
}

/** Reads the server settings, replacing invalid values with their defaults. */
export function readServerSettings(reader: SettingsReader): ServerSettings {
  const defaults = DEFAULT_SERVER_SETTINGS;
  return {
    fusion: { tolerance: nonNegativeNumber(reader.get("fusion.tolerance"), defaults.fusion.tolerance) },
    legacySyntax: {
      severity: oneOf(reader.get("legacySyntax.severity"), SEVERITIES, defaults.legacySyntax.severity),
    },
    lints: { enabled: boolean(reader.get("lints.enabled"), defaults.lints.enabled) },
    logLevel: oneOf(reader.get("logLevel"), LOG_LEVELS, defaults.logLevel),
    transforms: {
      tileSizes: tileSizes(reader.get("transforms.tileSizes"), defaults.transforms.tileSizes),
      unrollFactor: factor(reader.get("transforms.unrollFactor"), defaults.transforms.unrollFactor),
      unrollJamFactor: factor(reader.get("transforms.unrollJamFactor"), defaults.transforms.unrollJamFactor),
    },
    hover: { pictures: oneOf(reader.get("hover.pictures"), HOVER_PICTURES, defaults.hover.pictures) },
    refactorings: {
      planInBackground: boolean(reader.get("refactorings.planInBackground"), defaults.refactorings.planInBackground),
    },
    performanceHints: {
      enabled: boolean(reader.get("performanceHints.enabled"), defaults.performanceHints.enabled),
    },
    optimize: {
      enabled: boolean(reader.get("optimize.enabled"), defaults.optimize.enabled),
      tune: boolean(reader.get("optimize.tune"), defaults.optimize.tune),
    },
  };
}

/** Reads the settings used to find and start the server. */
export function readLaunchSettings(reader: SettingsReader): LaunchSettings {
  return {
    serverPath: text(reader.get("server.path")),
    serverArgs: textList(reader.get("server.args")),
    pythonPath: text(reader.get("python.path")),
  };
}

/** Answer to one `workspace/configuration` item: ours, or left to the default handler. */
export type ConfigurationAnswer = { handled: true; value: unknown } | { handled: false };

/**
 * Answers a `workspace/configuration` item for `affineLsp` or any key below
 * it (`affineLsp.fusion`, `affineLsp.fusion.tolerance`, ...) from validated
 * settings. Other sections are not ours.
 */
export function answerConfigurationItem(section: string | undefined, settings: ServerSettings): ConfigurationAnswer {
  if (section === undefined) {
    return { handled: false };
  }
  const parts = section.split(".");
  if (parts[0] !== SETTINGS_SECTION) {
    return { handled: false };
  }
  let value: unknown = settings;
  for (const part of parts.slice(1)) {
    value = typeof value === "object" && value !== null ? (value as Record<string, unknown>)[part] : undefined;
  }
  return { handled: true, value: value ?? null };
}

/** True if a configuration change touched a setting that decides what is launched. */
export function affectsLaunch(affectsConfiguration: (fullKey: string) => boolean): boolean {
  return LAUNCH_SETTING_KEYS.some((key) => affectsConfiguration(`${SETTINGS_SECTION}.${key}`));
}
