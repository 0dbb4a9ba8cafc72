/**
 * Owns the language client: finds the server (see serverResolution.ts),
 * starts, stops and restarts it, and reports failures with a way to fix them.
 */
import * as vscode from "vscode";
import type { LanguageClientOptions, ServerOptions } from "vscode-languageclient/node";
import { LanguageClient, State, TransportKind } from "vscode-languageclient/node";
import { COMMAND_IDS } from "./commandIds";
import type { LlvmMlirCoexistence } from "./coexistence";
import { createNodeHost } from "./nodeHost";
import { PYTHON_EXTENSION_ID, interpreterFromPythonApi } from "./pythonApi";
import type { PythonExtensionApi } from "./pythonApi";
import type { CommandLine, ServerLaunch } from "./serverResolution";
import { describeResolutionFailure, formatCommandLine, resolveServer } from "./serverResolution";
import type { SettingsReader } from "./settings";
import { DOCUMENT_SELECTOR, SETTINGS_SECTION, answerConfigurationItem, readLaunchSettings, readServerSettings } from "./settings";

const OPEN_SETTINGS = "Open Settings";
const SHOW_OUTPUT = "Show Output";
const RESTART = "Restart Server";

/** Settings of the `affineLsp` section for a resource (or the window). */
export function settingsReader(scope?: vscode.Uri): SettingsReader {
  const configuration = vscode.workspace.getConfiguration(SETTINGS_SECTION, scope ?? null);
  return { get: (key) => configuration.get(key) };
}

/** The interpreter selected in the Python extension, if it is installed and reports one. */
async function selectedPythonInterpreter(resource: vscode.Uri | undefined): Promise<CommandLine | undefined> {
  const extension = vscode.extensions.getExtension<PythonExtensionApi>(PYTHON_EXTENSION_ID);
  if (extension === undefined) {
    return undefined;
  }
  try {
    const api = extension.isActive ? extension.exports : await extension.activate();
    return await interpreterFromPythonApi(api, resource);
  } catch {
    return undefined;
  }
}

function serverOptions(launch: ServerLaunch): ServerOptions {
  return {
    command: launch.command,
    args: launch.args,
    transport: TransportKind.stdio,
    // An argument list, never a shell: resolution does not pick batch scripts.
    options: { shell: false },
  };
}

export class ServerManager implements vscode.Disposable {
  private client: LanguageClient | undefined;
  /** Start/stop requests run one after another. */
  private queue: Promise<void> = Promise.resolve();
  private readonly startListeners = new Set<() => void>();

  constructor(
    private readonly output: vscode.LogOutputChannel,
    private readonly coexistence: LlvmMlirCoexistence,
  ) {}

  /** The client if its server is running. */
  get runningClient(): LanguageClient | undefined {
    return this.client?.state === State.Running ? this.client : undefined;
  }

  /** Calls `listener` each time a server has started (also after a restart). */
  onDidStart(listener: () => void): vscode.Disposable {
    this.startListeners.add(listener);
    return { dispose: () => this.startListeners.delete(listener) };
  }

  start(): Promise<void> {
    return this.enqueue(() => this.startNow());
  }

  stop(): Promise<void> {
    return this.enqueue(() => this.stopNow());
  }

  restart(): Promise<void> {
    return this.enqueue(async () => {
      await this.stopNow();
      await this.startNow();
    });
  }

  dispose(): void {
    void this.stop();
  }

  /** The running client, or undefined after telling the user the server is not running. */
  async requireClient(): Promise<LanguageClient | undefined> {
    await this.queue;
    const client = this.runningClient;
    if (client === undefined) {
      const choice = await vscode.window.showErrorMessage(
        "The affine-lsp language server is not running.",
        RESTART,
        SHOW_OUTPUT,
      );
      if (choice === RESTART) {
        await vscode.commands.executeCommand(COMMAND_IDS.restartServer);
      } else if (choice === SHOW_OUTPUT) {
        this.output.show();
      }
    }
    return client;
  }

  /** Runs `step` after the previous ones; a failing step is logged and never blocks later ones. */
  private enqueue(step: () => Promise<void>): Promise<void> {
    this.queue = this.queue.then(step).catch((error: unknown) => {
      const message = `affine-lsp: ${error instanceof Error ? error.message : String(error)}`;
      this.output.error(message);
      void this.reportStartFailure(message);
    });
    return this.queue;
  }

  private async startNow(): Promise<void> {
    const folder = vscode.workspace.workspaceFolders?.[0];
    const reader = settingsReader(folder?.uri);
    const resolution = await resolveServer(
      {
        settings: readLaunchSettings(reader),
        pythonExtensionInterpreter: await selectedPythonInterpreter(folder?.uri),
        workspaceFolder: folder?.uri.fsPath,
      },
      createNodeHost(),
    );
    for (const attempt of resolution.attempts) {
      this.output.info(`server lookup: ${attempt.candidate}: ${attempt.outcome}`);
    }
    if (!resolution.ok) {
      const message = describeResolutionFailure(resolution.attempts);
      this.output.error(message);
      void this.reportStartFailure(message);
      return;
    }

    const launch = resolution.launch;
    this.output.info(`starting ${formatCommandLine(launch)} (from ${launch.description})`);
    const client = new LanguageClient(SETTINGS_SECTION, "Affine LSP", serverOptions(launch), this.clientOptions(reader));
    this.client = client;
    try {
      await client.start();
      this.coexistence.attach(client.diagnostics);
      for (const listener of [...this.startListeners]) {
        listener();
      }
    } catch (error) {
      const detail = error instanceof Error ? error.message : String(error);
      const message = `The affine-lsp server (${formatCommandLine(launch)}, found via ${launch.source}) failed to start: ${detail}`;
      this.output.error(message);
      void this.reportStartFailure(message);
    }
  }

  private async stopNow(): Promise<void> {
    const client = this.client;
    this.client = undefined;
    this.coexistence.detach();
    if (client === undefined) {
      return;
    }
    try {
      await client.dispose();
    } catch (error) {
      this.output.warn(`stopping the server: ${error instanceof Error ? error.message : String(error)}`);
    }
  }

  private clientOptions(reader: SettingsReader): LanguageClientOptions {
    return {
      documentSelector: DOCUMENT_SELECTOR,
      outputChannel: this.output,
      initializationOptions: readServerSettings(reader),
      synchronize: { configurationSection: SETTINGS_SECTION },
      middleware: {
        handleDiagnostics: this.coexistence.handleDiagnostics,
        workspace: {
          configuration: async (params, token, next) => {
            const defaults = await next(params, token);
            if (!Array.isArray(defaults)) {
              return defaults;
            }
            return params.items.map((item, index) => {
              const scope = item.scopeUri !== undefined ? vscode.Uri.parse(item.scopeUri) : undefined;
              const answer = answerConfigurationItem(item.section, readServerSettings(settingsReader(scope)));
              return answer.handled ? answer.value : (defaults[index] as unknown);
            });
          },
        },
      },
    };
  }

  private async reportStartFailure(message: string): Promise<void> {
    const choice = await vscode.window.showErrorMessage(message, OPEN_SETTINGS, SHOW_OUTPUT);
    if (choice === OPEN_SETTINGS) {
      await vscode.commands.executeCommand("workbench.action.openSettings", SETTINGS_SECTION);
    } else if (choice === SHOW_OUTPUT) {
      this.output.show();
    }
  }
}
