/**
 * Decides how to launch the affine-lsp language server. Pure logic: the
 * machine (files, PATH, running Python) is reached only through {@link Host},
 * so this module is unit-tested without VS Code.
 *
 * Resolution order:
 * 1. `affineLsp.server.path`, if set: an absolute path, a `~` path, a path
 *    relative to the workspace folder, or a command name looked up on PATH.
 *    If it is set but cannot be found, resolution stops there: an explicit
 *    setting is never silently replaced by another server.
 * 2. `affine-lsp` on PATH.
 * 3. A Python interpreter that can `import affine_lsp`, run as
 *    `<python> -m affine_lsp serve`. Candidates, in order: the Python
 *    extension's selected interpreter, `affineLsp.python.path`, `python3` on
 *    PATH, `python` on PATH. The first that passes the import check wins.
 *
 * Extra arguments from `affineLsp.server.args` always follow `serve`.
 */
import * as path from "node:path";

/** Which resolution step produced a launch command. */
export type LaunchSource = "server.path setting" | "PATH" | "Python interpreter";

/** A program and the arguments that precede ours (e.g. `conda run -n env python`). */
export interface CommandLine {
  command: string;
  args: string[];
}

/** How to start the server. */
export interface ServerLaunch extends CommandLine {
  source: LaunchSource;
  /** What was found, for logs, e.g. "affine-lsp on PATH (/usr/bin/affine-lsp)". */
  description: string;
}

/** One candidate that was tried and why it was or was not used. */
export interface Attempt {
  candidate: string;
  outcome: string;
}

export type Resolution =
  | { ok: true; launch: ServerLaunch; attempts: Attempt[] }
  | { ok: false; attempts: Attempt[] };

/** The extension settings that take part in resolution. */
export interface LaunchSettings {
  /** `affineLsp.server.path`; empty when unset. */
  serverPath: string;
  /** `affineLsp.server.args`: appended after `serve`. */
  serverArgs: string[];
  /** `affineLsp.python.path`; empty when unset. */
  pythonPath: string;
}

export interface ResolutionInput {
  settings: LaunchSettings;
  /** The interpreter selected in the Python extension, if that extension is installed. */
  pythonExtensionInterpreter?: CommandLine;
  /** Folder that relative paths in settings are resolved against. */
  workspaceFolder?: string;
}

/** Result of checking whether an interpreter can import affine_lsp. */
export interface ImportCheck {
  ok: boolean;
  /** Why not, e.g. "ModuleNotFoundError: No module named 'affine_lsp'". */
  detail?: string;
}

/** Everything resolution needs from the machine. */
export interface Host {
  platform: NodeJS.Platform;
  env: Readonly<Record<string, string | undefined>>;
  homeDir: string;
  isExecutableFile(file: string): Promise<boolean>;
  checkImport(interpreter: CommandLine): Promise<ImportCheck>;
}

/** The server's executable name, looked up on PATH in step 2. */
export const SERVER_EXECUTABLE = "affine-lsp";

/** The Python module run in step 3. */
export const SERVER_MODULE = "affine_lsp";

const DEFAULT_WINDOWS_PATHEXT = ".COM;.EXE;.BAT;.CMD";

function pathApi(platform: NodeJS.Platform): path.PlatformPath {
  return platform === "win32" ? path.win32 : path.posix;
}

/** Replaces a leading `~` (alone or followed by a separator) with the home directory. */
export function expandHome(value: string, homeDir: string, platform: NodeJS.Platform): string {
  const separators = platform === "win32" ? ["/", "\\"] : ["/"];
  if (value === "~") {
    return homeDir;
  }
  if (value.startsWith("~") && separators.includes(value.charAt(1))) {
    return pathApi(platform).join(homeDir, value.slice(2));
  }
  return value;
}

/** Candidate file names for a command on this platform (PATHEXT on Windows). */
function executableNames(name: string, host: Host): string[] {
  if (host.platform !== "win32") {
    return [name];
  }
  const extensions = (host.env.PATHEXT ?? host.env.Pathext ?? DEFAULT_WINDOWS_PATHEXT)
    .split(";")
    .filter((ext) => ext !== "" && !isBatchScript(ext));
  const hasKnownExtension = extensions.some((ext) => name.toLowerCase().endsWith(ext.toLowerCase()));
  const withExtensions = extensions.map((ext) => name + ext);
  return hasKnownExtension ? [name, ...withExtensions] : withExtensions;
}

/**
 * Windows batch scripts (`.bat`, `.cmd`) run only through `cmd.exe`, a shell:
 * the extension never starts one (programs are started from an argument list,
 * without a shell), so they are skipped on PATH and refused in settings.
 */
export function isBatchScript(file: string): boolean {
  return /\.(bat|cmd)$/i.test(file);
}

/** Finds a command on PATH, returning its full path. */
export async function findOnPath(name: string, host: Host): Promise<string | undefined> {
  const api = pathApi(host.platform);
  const searchPath = host.env.PATH ?? host.env.Path ?? "";
  const directories = searchPath.split(api.delimiter).filter((dir) => dir !== "");
  for (const directory of directories) {
    for (const fileName of executableNames(name, host)) {
      const candidate = api.join(directory, fileName);
      if (await host.isExecutableFile(candidate)) {
        return candidate;
      }
    }
  }
  return undefined;
}

type Located = { found: true; file: string } | { found: false; reason: string };

/**
 * Locates an executable named in a setting: absolute or `~` paths are used as
 * they are, paths with a separator are taken relative to the workspace folder,
 * and bare names are looked up on PATH.
 */
export async function locateExecutable(
  value: string,
  host: Host,
  workspaceFolder: string | undefined,
): Promise<Located> {
  const api = pathApi(host.platform);
  const expanded = expandHome(value.trim(), host.homeDir, host.platform);
  const hasSeparator = expanded.includes("/") || (host.platform === "win32" && expanded.includes("\\"));
  if (host.platform === "win32" && isBatchScript(expanded)) {
    return {
      found: false,
      reason: "is a batch script, which only runs through a shell; name an executable instead (affine-lsp.exe, or a Python interpreter)",
    };
  }
  if (api.isAbsolute(expanded) || hasSeparator) {
    let file = expanded;
    if (!api.isAbsolute(expanded)) {
      if (workspaceFolder === undefined) {
        return { found: false, reason: "is a relative path and no workspace folder is open" };
      }
      file = api.resolve(workspaceFolder, expanded);
    }
    return (await host.isExecutableFile(file))
      ? { found: true, file }
      : { found: false, reason: `${file} is not an executable file` };
  }
  const onPath = await findOnPath(expanded, host);
  return onPath !== undefined
    ? { found: true, file: onPath }
    : { found: false, reason: `"${expanded}" was not found on PATH` };
}

/**
 * Python interpreters to try, in order, each with a label for messages.
 * Candidates that cannot even be located are recorded in `attempts` as the
 * generator reaches them, so messages list everything in the order tried.
 */
async function* pythonCandidates(
  input: ResolutionInput,
  host: Host,
  attempts: Attempt[],
): AsyncGenerator<{ label: string; interpreter: CommandLine }> {
  if (input.pythonExtensionInterpreter !== undefined) {
    yield { label: "the Python extension's selected interpreter", interpreter: input.pythonExtensionInterpreter };
  }
  const configured = input.settings.pythonPath.trim();
  if (configured !== "") {
    const located = await locateExecutable(configured, host, input.workspaceFolder);
    if (located.found) {
      yield { label: "affineLsp.python.path", interpreter: { command: located.file, args: [] } };
    } else {
      attempts.push({ candidate: `affineLsp.python.path "${configured}"`, outcome: located.reason });
    }
  }
  for (const name of ["python3", "python"]) {
    const found = await findOnPath(name, host);
    if (found !== undefined) {
      yield { label: `${name} on PATH`, interpreter: { command: found, args: [] } };
    } else {
      attempts.push({ candidate: `${name} on PATH`, outcome: "not found" });
    }
  }
}

function commandText(line: CommandLine): string {
  return [line.command, ...line.args].join(" ");
}

/** Runs the resolution order described at the top of this module. */
export async function resolveServer(input: ResolutionInput, host: Host): Promise<Resolution> {
  const attempts: Attempt[] = [];
  const serveArgs = ["serve", ...input.settings.serverArgs];

  const explicit = input.settings.serverPath.trim();
  if (explicit !== "") {
    const candidate = `affineLsp.server.path "${explicit}"`;
    const located = await locateExecutable(explicit, host, input.workspaceFolder);
    if (!located.found) {
      attempts.push({ candidate, outcome: located.reason });
      return { ok: false, attempts };
    }
    attempts.push({ candidate, outcome: `using ${located.file}` });
    return {
      ok: true,
      attempts,
      launch: {
        command: located.file,
        args: serveArgs,
        source: "server.path setting",
        description: `${candidate} (${located.file})`,
      },
    };
  }

  const onPath = await findOnPath(SERVER_EXECUTABLE, host);
  if (onPath !== undefined) {
    attempts.push({ candidate: `${SERVER_EXECUTABLE} on PATH`, outcome: `using ${onPath}` });
    return {
      ok: true,
      attempts,
      launch: { command: onPath, args: serveArgs, source: "PATH", description: `${SERVER_EXECUTABLE} on PATH (${onPath})` },
    };
  }
  attempts.push({ candidate: `${SERVER_EXECUTABLE} on PATH`, outcome: "not found" });

  const tried = new Set<string>();
  for await (const { label, interpreter } of pythonCandidates(input, host, attempts)) {
    const key = commandText(interpreter);
    if (tried.has(key)) {
      continue;
    }
    tried.add(key);
    const candidate = `${label} (${key})`;
    const check = await host.checkImport(interpreter);
    if (!check.ok) {
      const why = check.detail !== undefined ? ` (${check.detail})` : "";
      attempts.push({ candidate, outcome: `cannot import ${SERVER_MODULE}${why}` });
      continue;
    }
    attempts.push({ candidate, outcome: `using it: it can import ${SERVER_MODULE}` });
    return {
      ok: true,
      attempts,
      launch: {
        command: interpreter.command,
        args: [...interpreter.args, "-m", SERVER_MODULE, ...serveArgs],
        source: "Python interpreter",
        description: candidate,
      },
    };
  }
  return { ok: false, attempts };
}

/** The user-facing explanation when no server could be found. */
export function describeResolutionFailure(attempts: readonly Attempt[]): string {
  const tried = attempts.map((attempt) => `${attempt.candidate}: ${attempt.outcome}`).join("; ");
  return (
    `Could not find the affine-lsp language server. Tried ${tried}. ` +
    `Install it (pip install affine-lsp) or set affineLsp.server.path or affineLsp.python.path.`
  );
}

/** A shell-like rendering of a launch command for logs. */
export function formatCommandLine(line: CommandLine): string {
  return [line.command, ...line.args].map((part) => (/[\s"']/.test(part) ? JSON.stringify(part) : part)).join(" ");
}
