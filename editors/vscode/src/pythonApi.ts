/**
 * Reads the selected interpreter from the Python extension's public API
 * (`ms-python.python`). Both the current `environments` API and the older
 * `settings.getExecutionDetails` API are understood. The API object is typed
 * structurally, so this module needs no VS Code API and is unit-tested.
 */
import type { CommandLine } from "./serverResolution";

export const PYTHON_EXTENSION_ID = "ms-python.python";

/** The parts of the Python extension's API that are used. */
export interface PythonExtensionApi {
  environments?: {
    getActiveEnvironmentPath(resource?: unknown): { path: string } | undefined;
    resolveEnvironment(
      environment: { path: string } | string,
    ): Promise<{ executable: { uri?: { fsPath: string } } } | undefined>;
  };
  settings?: {
    getExecutionDetails?(resource?: unknown): { execCommand: string[] | undefined };
  };
}

/** The interpreter the Python extension has selected for `resource`, if it reports one. */
export async function interpreterFromPythonApi(
  api: PythonExtensionApi | undefined,
  resource?: unknown,
): Promise<CommandLine | undefined> {
  const environments = api?.environments;
  if (environments !== undefined) {
    const active = environments.getActiveEnvironmentPath(resource);
    if (active !== undefined) {
      const resolved = await environments.resolveEnvironment(active);
      const executable = resolved?.executable.uri?.fsPath;
      if (executable !== undefined && executable !== "") {
        return { command: executable, args: [] };
      }
    }
  }
  const execCommand = api?.settings?.getExecutionDetails?.(resource).execCommand;
  if (execCommand !== undefined && execCommand.length > 0 && execCommand[0] !== "") {
    return { command: execCommand[0], args: execCommand.slice(1) };
  }
  return undefined;
}
