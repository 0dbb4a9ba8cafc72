/**
 * The real {@link Host} for server resolution, built on Node's fs and
 * child_process. No VS Code API here, so it is tested under plain node.
 */
import { execFile } from "node:child_process";
import * as fs from "node:fs";
import * as os from "node:os";
import type { CommandLine, Host, ImportCheck } from "./serverResolution";
import { SERVER_MODULE } from "./serverResolution";

/** How long an interpreter may take to import the server module. */
export const IMPORT_CHECK_TIMEOUT_MS = 20_000;

/** True if `file` is a regular file this process may execute. */
export async function isExecutableFile(file: string, platform: NodeJS.Platform = process.platform): Promise<boolean> {
  try {
    const stat = await fs.promises.stat(file);
    if (!stat.isFile()) {
      return false;
    }
    if (platform === "win32") {
      return true;
    }
    await fs.promises.access(file, fs.constants.X_OK);
    return true;
  } catch {
    return false;
  }
}

/** The last non-empty line of a process's stderr, where Python puts the exception. */
function lastLine(text: string): string | undefined {
  const lines = text.split(/\r?\n/).map((line) => line.trim()).filter((line) => line !== "");
  return lines.at(-1);
}

/** Runs `<interpreter> -c "import affine_lsp"` and reports whether it succeeded. */
export function checkImport(interpreter: CommandLine, timeoutMs = IMPORT_CHECK_TIMEOUT_MS): Promise<ImportCheck> {
  return new Promise((resolve) => {
    execFile(
      interpreter.command,
      [...interpreter.args, "-c", `import ${SERVER_MODULE}`],
      { timeout: timeoutMs, windowsHide: true },
      (error, _stdout, stderr) => {
        if (error === null) {
          resolve({ ok: true });
          return;
        }
        const code = (error as NodeJS.ErrnoException).code;
        if (code === "ENOENT") {
          resolve({ ok: false, detail: "the interpreter could not be run: not found" });
        } else if (error.killed) {
          resolve({ ok: false, detail: `no answer within ${timeoutMs / 1000} s` });
        } else {
          resolve({ ok: false, detail: lastLine(stderr) ?? error.message });
        }
      },
    );
  });
}

/** The host for this machine and process environment. */
export function createNodeHost(env: NodeJS.ProcessEnv = process.env): Host {
  return {
    platform: process.platform,
    env,
    homeDir: os.homedir(),
    isExecutableFile: (file) => isExecutableFile(file),
    checkImport: (interpreter) => checkImport(interpreter),
  };
}
