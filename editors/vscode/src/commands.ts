/** The extension's commands, wired to the server through the ServerManager. */
import * as vscode from "vscode";
import type { LanguageClient } from "vscode-languageclient/node";
import { CodeActionRequest, CodeActionResolveRequest, ExecuteCommandRequest } from "vscode-languageserver-protocol";
import { checkWorkspaceParams, formatCheckSummary, hasProblems, parseCheckSummary } from "./checkWorkspace";
import { COMMAND_IDS } from "./commandIds";
import type { CodeAction } from "vscode-languageserver-protocol";
import { NO_FUSION_MESSAGE, choiceLabel, fusionChoices, fusionCodeActionParams, needsResolve } from "./fusion";
import { ITERATION_DOMAIN_METHOD, iterationDomainParams, parseIterationDomainResult, presentIterationDomain } from "./iterationDomain";
import { IterationSpacePanel, registerPanelCodeAction } from "./iterationSpacePanel";
import { describeRequestError, isCancellation } from "./requestErrors";
import type { ServerManager } from "./serverManager";

const MLIR_LANGUAGE = "mlir";

/** The active editor if it shows an MLIR document; otherwise tells the user. */
function activeMlirEditor(): vscode.TextEditor | undefined {
  const editor = vscode.window.activeTextEditor;
  if (editor?.document.languageId !== MLIR_LANGUAGE) {
    void vscode.window.showWarningMessage("Open an MLIR file and place the cursor in it first.");
    return undefined;
  }
  return editor;
}

/** Runs a command body, reporting failures (other than cancellation) to the user and the log. */
async function reportingFailures(what: string, output: vscode.LogOutputChannel, body: () => Promise<void>): Promise<void> {
  try {
    await body();
  } catch (error) {
    if (isCancellation(error)) {
      return;
    }
    const message = describeRequestError(what, error);
    output.error(message);
    void vscode.window.showErrorMessage(message);
  }
}

/** Applies a code action as VS Code does: resolved first when it has no edit, then its
 * edit, then its command. */
export async function applyCodeAction(client: LanguageClient, chosen: CodeAction): Promise<void> {
  let action = chosen;
  if (needsResolve(action)) {
    action = await client.sendRequest(CodeActionResolveRequest.type, action);
  }
  if (action.edit === undefined && action.command === undefined) {
    // (resolved disabled: the server says why, in a message of its own too)
    const why = action.disabled?.reason ?? "the server returned no edit";
    throw new Error(`"${action.title}" cannot be applied: ${why}`);
  }
  if (action.edit !== undefined) {
    const edit = await client.protocol2CodeConverter.asWorkspaceEdit(action.edit);
    if (!(await vscode.workspace.applyEdit(edit))) {
      throw new Error(`VS Code could not apply the edit for "${action.title}" (was the file changed meanwhile?)`);
    }
  }
  if (action.command !== undefined) {
    const args: unknown[] = action.command.arguments ?? [];
    await vscode.commands.executeCommand(action.command.command, ...args);
  }
}

async function fuseLoopsAtCursor(manager: ServerManager): Promise<void> {
  const editor = activeMlirEditor();
  const client = editor && (await manager.requireClient());
  if (editor === undefined || client === undefined) {
    return;
  }
  const converter = client.code2ProtocolConverter;
  const selection = editor.selection;
  const overlapping = vscode.languages
    .getDiagnostics(editor.document.uri)
    .filter((diagnostic) => diagnostic.range.intersection(selection) !== undefined);
  const params = fusionCodeActionParams(
    converter.asUri(editor.document.uri),
    converter.asRange(selection),
    await converter.asDiagnostics(overlapping),
  );
  const response = await vscode.window.withProgress(
    { location: vscode.ProgressLocation.Window, title: "Looking for loop fusions" },
    (_progress, token) => client.sendRequest(CodeActionRequest.type, params, token),
  );
  const choices = fusionChoices(response);
  if (choices.length === 0) {
    void vscode.window.showInformationMessage(NO_FUSION_MESSAGE);
    return;
  }
  const picked = await vscode.window.showQuickPick(
    choices.map((choice) => ({ ...choiceLabel(choice), choice })),
    { title: "Fuse loops", placeHolder: "Choose the fusion to apply", matchOnDetail: true },
  );
  if (picked === undefined) {
    return;
  }
  if (!picked.choice.enabled) {
    void vscode.window.showWarningMessage(
      `"${picked.choice.action.title}" cannot be applied: ${picked.choice.disabledReason ?? "the server gave no reason"}`,
    );
    return;
  }
  await applyCodeAction(client, picked.choice.action);
}

async function showIterationDomain(manager: ServerManager, output: vscode.LogOutputChannel): Promise<void> {
  const editor = activeMlirEditor();
  const client = editor && (await manager.requireClient());
  if (editor === undefined || client === undefined) {
    return;
  }
  const position = editor.selection.active;
  const params = iterationDomainParams(
    client.code2ProtocolConverter.asUri(editor.document.uri),
    client.code2ProtocolConverter.asPosition(position),
  );
  const result = parseIterationDomainResult(await client.sendRequest(ITERATION_DOMAIN_METHOD, params));
  const where = `${vscode.workspace.asRelativePath(editor.document.uri)}:${position.line + 1}:${position.character + 1}`;
  const shown = presentIterationDomain(result, where);
  output.info(shown.log);
  if (!shown.hasDomain) {
    void vscode.window.showInformationMessage(shown.notification);
    return;
  }
  const copy = "Copy";
  const choice = await vscode.window.showInformationMessage(shown.notification, copy, "Show Output");
  if (choice === copy && result.domain !== null) {
    await vscode.env.clipboard.writeText(result.domain);
  } else if (choice === "Show Output") {
    output.show(true);
  }
}

async function checkWorkspace(manager: ServerManager): Promise<void> {
  const folders = vscode.workspace.workspaceFolders ?? [];
  if (folders.length === 0) {
    void vscode.window.showWarningMessage("Open a folder or workspace to check its MLIR files.");
    return;
  }
  const client = await manager.requireClient();
  if (client === undefined) {
    return;
  }
  const params = checkWorkspaceParams(folders.map((folder) => client.code2ProtocolConverter.asUri(folder.uri)));
  const raw: unknown = await vscode.window.withProgress(
    { location: vscode.ProgressLocation.Notification, title: "Checking MLIR files", cancellable: true },
    (_progress, token) => client.sendRequest(ExecuteCommandRequest.type, params, token),
  );
  const summary = parseCheckSummary(raw);
  const message = formatCheckSummary(summary);
  if (!hasProblems(summary)) {
    void vscode.window.showInformationMessage(message);
    return;
  }
  const showProblems = "Show Problems";
  if ((await vscode.window.showWarningMessage(message, showProblems)) === showProblems) {
    await vscode.commands.executeCommand("workbench.actions.view.problems");
  }
}

/** Registers every contributed command. */
export function registerCommands(manager: ServerManager, output: vscode.LogOutputChannel): vscode.Disposable[] {
  return [
    vscode.commands.registerCommand(COMMAND_IDS.restartServer, async () => {
      output.info("restarting the server on request");
      await manager.restart();
    }),
    vscode.commands.registerCommand(COMMAND_IDS.fuseLoopsAtCursor, () =>
      reportingFailures("Fuse loops", output, () => fuseLoopsAtCursor(manager)),
    ),
    vscode.commands.registerCommand(COMMAND_IDS.showIterationDomain, () =>
      reportingFailures("Show iteration domain", output, () => showIterationDomain(manager, output)),
    ),
    vscode.commands.registerCommand(COMMAND_IDS.checkWorkspace, () =>
      reportingFailures("Check workspace", output, () => checkWorkspace(manager)),
    ),
    vscode.commands.registerCommand(COMMAND_IDS.showIterationSpace, () => {
      const apply = async (action: CodeAction) => {
        const client = await manager.requireClient();
        if (client !== undefined) {
          await applyCodeAction(client, action);
        }
      };
      IterationSpacePanel.show(manager, apply, output);
    }),
    registerPanelCodeAction(),
  ];
}
