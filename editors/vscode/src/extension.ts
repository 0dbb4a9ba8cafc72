/** Entry point: VS Code calls activate() when an MLIR file is opened or a command runs. */
import * as vscode from "vscode";
import { LlvmMlirCoexistence } from "./coexistence";
import { registerCommands } from "./commands";
import { ServerManager } from "./serverManager";
import { affectsLaunch } from "./settings";

let manager: ServerManager | undefined;

export function activate(context: vscode.ExtensionContext): void {
  const output = vscode.window.createOutputChannel("Affine LSP", { log: true });
  const coexistence = new LlvmMlirCoexistence(context.globalState, output);
  manager = new ServerManager(output, coexistence);
  const current = manager;
  context.subscriptions.push(
    output,
    coexistence,
    current,
    ...registerCommands(current, output),
    vscode.workspace.onDidChangeConfiguration(async (event) => {
      if (!affectsLaunch((key) => event.affectsConfiguration(key))) {
        return;
      }
      const restart = "Restart Server";
      const choice = await vscode.window.showInformationMessage(
        "The affine-lsp server settings changed. Restart the server to use them?",
        restart,
      );
      if (choice === restart) {
        await current.restart();
      }
    }),
  );
  void current.start();
  void coexistence.noticeOnce();
}

export async function deactivate(): Promise<void> {
  await manager?.stop();
  manager = undefined;
}
