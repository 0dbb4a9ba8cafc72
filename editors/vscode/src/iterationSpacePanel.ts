/**
 * "Show Iteration Space": a webview beside the editor that follows the cursor's
 * loop (see panelController.ts for what it does, panelView.ts for what it shows).
 * This module wires it to VS Code: the editor's events, the language client, and
 * the webview's messages.
 */
import * as crypto from "node:crypto";
import * as vscode from "vscode";
import type { CodeAction } from "vscode-languageserver-protocol";
import { CodeActionRequest } from "vscode-languageserver-protocol";
import { COMMAND_IDS } from "./commandIds";
import {
  ITERATION_SPACE_METHOD,
  PANEL_ACTION_TITLE,
  PREVIEW_REFACTORING_METHOD,
  headsLoop,
  iterationSpaceParams,
  parseIterationSpaceResult,
  parsePreviewResult,
  previewParams,
  refactoringParams,
  refactorings,
} from "./iterationSpace";
import type { FollowTarget, PanelHost } from "./panelController";
import { PanelController } from "./panelController";
import { makeNonce, panelDocument, parseWebviewMessage, renderBody } from "./panelView";
import { CONTENT_MODIFIED, describeRequestError, isCancellation } from "./requestErrors";
import type { ServerManager } from "./serverManager";

export const PANEL_VIEW_TYPE = "affineLsp.iterationSpace";
const MLIR_LANGUAGE = "mlir";

/** Applies a code action as the editor would: resolved first when it has no edit. */
export type ApplyCodeAction = (action: CodeAction) => Promise<void>;

function isMlir(editor: vscode.TextEditor | undefined): editor is vscode.TextEditor {
  return editor?.document.languageId === MLIR_LANGUAGE;
}

function targetOf(editor: vscode.TextEditor): FollowTarget {
  const document = editor.document;
  const position = editor.selection.active;
  return {
    uri: document.uri.toString(),
    version: document.version,
    position: { line: position.line, character: position.character },
    label: `${vscode.workspace.asRelativePath(document.uri)}:${position.line + 1}`,
  };
}

class NotRunning extends Error {
  constructor() {
    super("The affine-lsp server is not running.");
  }
}

export class IterationSpacePanel implements vscode.Disposable {
  private static current: IterationSpacePanel | undefined;

  private readonly panel: vscode.WebviewPanel;
  private readonly controller: PanelController;
  private readonly listeners: vscode.Disposable[] = [];
  /** The editor followed last (the panel keeps it when focus goes elsewhere). */
  private editor: vscode.TextEditor | undefined;

  /** Opens the panel beside the active editor, or shows it again. */
  static show(manager: ServerManager, apply: ApplyCodeAction, output: vscode.LogOutputChannel): IterationSpacePanel {
    const existing = IterationSpacePanel.current;
    if (existing !== undefined) {
      existing.panel.reveal(vscode.ViewColumn.Beside, true);
      existing.followActive();
      return existing;
    }
    IterationSpacePanel.current = new IterationSpacePanel(manager, apply, output);
    return IterationSpacePanel.current;
  }

  private constructor(
    private readonly manager: ServerManager,
    private readonly applyAction: ApplyCodeAction,
    private readonly output: vscode.LogOutputChannel,
  ) {
    this.panel = vscode.window.createWebviewPanel(
      PANEL_VIEW_TYPE,
      "Iteration Space",
      { viewColumn: vscode.ViewColumn.Beside, preserveFocus: true },
      { enableScripts: true, enableCommandUris: false, localResourceRoots: [] },
    );
    this.controller = new PanelController(this.host(), {
      set: (callback, milliseconds) => setTimeout(callback, milliseconds),
      clear: (handle) => clearTimeout(handle as ReturnType<typeof setTimeout>),
    });
    const nonce = makeNonce((size) => crypto.randomBytes(size));
    this.panel.webview.html = panelDocument(nonce, renderBody(this.controller.view()));
    this.listeners.push(
      this.panel.webview.onDidReceiveMessage((raw) => this.receive(raw)),
      this.panel.onDidChangeViewState(() => {
        if (this.panel.visible) {
          this.followActive();
        }
      }),
      this.panel.onDidDispose(() => this.dispose()),
      // Opened before the server was running (or the server restarted): ask again.
      this.manager.onDidStart(() => {
        if (this.panel.visible) {
          this.controller.refreshNow();
        }
      }),
      vscode.window.onDidChangeActiveTextEditor((editor) => {
        if (isMlir(editor)) {
          this.follow(editor);
        }
      }),
      vscode.window.onDidChangeTextEditorSelection((event) => {
        if (isMlir(event.textEditor)) {
          this.follow(event.textEditor);
        }
      }),
      vscode.workspace.onDidChangeTextDocument((event) => {
        const editor = this.editor;
        if (editor !== undefined && event.document === editor.document) {
          this.follow(editor);
        }
      }),
    );
    this.followActive();
  }

  dispose(): void {
    if (IterationSpacePanel.current === this) {
      IterationSpacePanel.current = undefined;
    }
    this.controller.dispose();
    for (const listener of this.listeners.splice(0)) {
      listener.dispose();
    }
    this.panel.dispose();
  }

  private followActive(): void {
    const active = vscode.window.activeTextEditor;
    const editor = isMlir(active) ? active : this.editor;
    if (editor !== undefined) {
      this.follow(editor);
    }
  }

  private follow(editor: vscode.TextEditor): void {
    this.editor = editor;
    if (this.panel.visible) {
      this.controller.follow(targetOf(editor));
    }
  }

  private receive(raw: unknown): void {
    const message = parseWebviewMessage(raw);
    switch (message?.command) {
      case "ready":
        void this.panel.webview.postMessage({ type: "render", html: renderBody(this.controller.view()) });
        return;
      case "preview":
        this.controller.select(message.index);
        return;
      case "apply":
        void this.controller.apply();
        return;
      case "closePreview":
        this.controller.closePreview();
        return;
      case "reveal":
        this.reveal(message.line);
        return;
      case "toggleKind":
        this.controller.toggleKind(message.kind);
        return;
      default:
        return;
    }
  }

  private reveal(line: number): void {
    const editor = this.editor;
    if (editor === undefined) {
      return;
    }
    const position = new vscode.Position(line, editor.document.lineAt(Math.min(line, editor.document.lineCount - 1)).firstNonWhitespaceCharacterIndex);
    void vscode.window.showTextDocument(editor.document, { viewColumn: editor.viewColumn, selection: new vscode.Range(position, position) });
  }

  private client() {
    const client = this.manager.runningClient;
    if (client === undefined) {
      throw new NotRunning();
    }
    return client;
  }

  private host(): PanelHost {
    return {
      picture: async (target) => {
        const client = this.client();
        const params = iterationSpaceParams(target.uri, target.position);
        return parseIterationSpaceResult(await client.sendRequest(ITERATION_SPACE_METHOD, params));
      },
      refactorings: async (target) => {
        const client = this.client();
        return refactorings(await client.sendRequest(CodeActionRequest.type, refactoringParams(target.uri, target.position)));
      },
      preview: async (target, title, cancel) => {
        const client = this.client();
        const source = new vscode.CancellationTokenSource();
        cancel.addEventListener("abort", () => source.cancel());
        try {
          const params = previewParams(target.uri, target.position, title);
          return parsePreviewResult(await client.sendRequest(PREVIEW_REFACTORING_METHOD, params, source.token));
        } finally {
          source.dispose();
        }
      },
      apply: (action) => this.applyAction(action),
      version: (uri) => vscode.workspace.textDocuments.find((document) => document.uri.toString() === uri)?.version,
      render: (view) => {
        void this.panel.webview.postMessage({ type: "render", html: renderBody(view) });
      },
      describeFailure: (error) => {
        if (isCancellation(error) || (error as { code?: unknown } | null)?.code === CONTENT_MODIFIED) {
          return undefined;
        }
        if (error instanceof NotRunning) {
          return error.message;
        }
        const message = describeRequestError("Iteration space", error);
        this.output.warn(message);
        return message;
      },
    };
  }
}

/**
 * VS Code has no way to watch which entry of its code-action menu is highlighted,
 * so the menu gets an entry of its own on a loop's header line: "Preview
 * Refactorings in Iteration Space" opens the panel, which lists the same
 * refactorings and previews the one chosen there.
 */
export function registerPanelCodeAction(): vscode.Disposable {
  const kind = vscode.CodeActionKind.Refactor.append("preview");
  return vscode.languages.registerCodeActionsProvider(
    { language: MLIR_LANGUAGE },
    {
      provideCodeActions(document, range, context) {
        // Only on request (Ctrl+.): the lightbulb stays the server's.
        if (context.triggerKind !== vscode.CodeActionTriggerKind.Invoke) {
          return [];
        }
        if (context.only !== undefined && !context.only.contains(kind) && !kind.contains(context.only)) {
          return [];
        }
        if (!headsLoop(document.lineAt(range.start.line).text)) {
          return [];
        }
        const action = new vscode.CodeAction(PANEL_ACTION_TITLE, kind);
        action.command = { command: COMMAND_IDS.showIterationSpace, title: PANEL_ACTION_TITLE };
        return [action];
      },
    },
    { providedCodeActionKinds: [kind] },
  );
}
