/**
 * A small stand-in for the `vscode` module, enough to run src/commands.ts
 * under plain node: it records what the extension shows and asks, and
 * answers prompts with scripted choices. `installFakeVscode()` makes
 * `require("vscode")` return it.
 */
import Module from "node:module";

/** A message the extension showed, with the buttons it offered. */
export interface ShownMessage {
  level: "information" | "warning" | "error";
  text: string;
  buttons: string[];
}

export interface FakeUri {
  fsPath: string;
  toString(): string;
}

export function fakeUri(fsPath: string): FakeUri {
  return { fsPath, toString: () => `file://${fsPath}` };
}

export interface FakePosition {
  line: number;
  character: number;
}

export interface FakeDocument {
  uri: FakeUri;
  languageId: string;
  version: number;
  lines: string[];
  lineCount: number;
  lineAt(line: number): { text: string; firstNonWhitespaceCharacterIndex: number };
}

export interface FakeEditor {
  document: FakeDocument;
  selection: { active: FakePosition; start: FakePosition; end: FakePosition };
  viewColumn?: number;
}

export function fakeDocument(fsPath: string, languageId: string, lines: string[] = [""], version = 1): FakeDocument {
  return {
    uri: fakeUri(fsPath),
    languageId,
    version,
    lines,
    get lineCount() {
      return this.lines.length;
    },
    lineAt(line: number) {
      const text = this.lines[line] ?? "";
      return { text, firstNonWhitespaceCharacterIndex: text.length - text.trimStart().length };
    },
  };
}

export function fakeEditor(fsPath: string, languageId: string, cursor: FakePosition, lines?: string[]): FakeEditor {
  return { document: fakeDocument(fsPath, languageId, lines), selection: { active: cursor, start: cursor, end: cursor }, viewColumn: 1 };
}

/** Moves an editor's cursor (without telling listeners). */
export function moveCursor(editor: FakeEditor, cursor: FakePosition): void {
  editor.selection = { active: cursor, start: cursor, end: cursor };
}

type Listener = (event: unknown) => void;

/** An event of the fake API: `fire` calls every listener. */
export class FakeEvent {
  listeners: Listener[] = [];

  readonly subscribe = (listener: Listener) => {
    this.listeners.push(listener);
    return { dispose: () => (this.listeners = this.listeners.filter((other) => other !== listener)) };
  };

  fire(event: unknown): void {
    for (const listener of [...this.listeners]) {
      listener(event);
    }
  }
}

/** A webview panel that records what the extension does with it. */
export class FakeWebviewPanel {
  visible = true;
  disposed = false;
  revealed: unknown[][] = [];
  posted: unknown[] = [];
  readonly received = new FakeEvent();
  readonly viewState = new FakeEvent();
  readonly disposal = new FakeEvent();
  readonly webview = {
    html: "",
    cspSource: "vscode-webview://fake",
    postMessage: (message: unknown) => {
      this.posted.push(message);
      return Promise.resolve(true);
    },
    onDidReceiveMessage: this.received.subscribe,
  };
  readonly onDidChangeViewState = this.viewState.subscribe;
  readonly onDidDispose = this.disposal.subscribe;

  constructor(
    readonly viewType: string,
    readonly title: string,
    readonly showOptions: unknown,
    readonly options: Record<string, unknown>,
  ) {}

  reveal(...args: unknown[]): void {
    this.revealed.push(args);
  }

  dispose(): void {
    if (!this.disposed) {
      this.disposed = true;
      this.disposal.fire(undefined);
    }
  }
}

class FakeCodeActionKind {
  static readonly Refactor = new FakeCodeActionKind("refactor");
  static readonly QuickFix = new FakeCodeActionKind("quickfix");

  constructor(readonly value: string) {}

  append(part: string): FakeCodeActionKind {
    return new FakeCodeActionKind(`${this.value}.${part}`);
  }

  contains(other: FakeCodeActionKind): boolean {
    return other.value === this.value || other.value.startsWith(`${this.value}.`);
  }
}

class FakeCodeAction {
  command: unknown;

  constructor(
    readonly title: string,
    readonly kind: FakeCodeActionKind,
  ) {}
}

class FakePositionClass {
  constructor(
    readonly line: number,
    readonly character: number,
  ) {}
}

class FakeRange {
  constructor(
    readonly start: FakePositionClass,
    readonly end: FakePositionClass,
  ) {}
}

class FakeCancellationTokenSource {
  readonly token = { isCancellationRequested: false, onCancellationRequested: () => ({ dispose() {} }) };

  cancel(): void {
    this.token.isCancellationRequested = true;
  }

  dispose(): void {}
}

type Handler = (...args: unknown[]) => unknown;

/** Recorded interactions and scripted answers. */
export class FakeVscodeState {
  activeTextEditor: FakeEditor | undefined;
  workspaceFolders: { uri: FakeUri; name: string }[] | undefined;
  messages: ShownMessage[] = [];
  /** Button to press on the next message that offers it. */
  messageAnswer: string | undefined;
  /** Chooses a quick-pick item (or undefined to cancel). */
  pick: (items: unknown[]) => unknown = () => undefined;
  quickPickItems: unknown[] = [];
  appliedEdits: unknown[] = [];
  applyEditResult = true;
  executedCommands: { command: string; args: unknown[] }[] = [];
  clipboard = "";
  commandHandlers = new Map<string, Handler>();
  webviewPanels: FakeWebviewPanel[] = [];
  codeActionProviders: { selector: unknown; provider: unknown; metadata: unknown }[] = [];
  textDocuments: FakeDocument[] = [];
  shownDocuments: { document: unknown; options: unknown }[] = [];
  readonly activeEditorChanged = new FakeEvent();
  readonly selectionChanged = new FakeEvent();
  readonly documentChanged = new FakeEvent();

  reset(): void {
    Object.assign(this, new FakeVscodeState(), {
      commandHandlers: this.commandHandlers,
      codeActionProviders: this.codeActionProviders,
      activeEditorChanged: this.activeEditorChanged,
      selectionChanged: this.selectionChanged,
      documentChanged: this.documentChanged,
    });
  }
}

export const state = new FakeVscodeState();

function showMessage(level: ShownMessage["level"]) {
  return (text: string, ...buttons: string[]): Promise<string | undefined> => {
    state.messages.push({ level, text, buttons });
    const answer = state.messageAnswer !== undefined && buttons.includes(state.messageAnswer) ? state.messageAnswer : undefined;
    return Promise.resolve(answer);
  };
}

const cancellationToken = { isCancellationRequested: false, onCancellationRequested: () => ({ dispose() {} }) };

/** The fake module object returned for `require("vscode")`. */
export const fakeVscodeApi = {
  ProgressLocation: { SourceControl: 1, Window: 10, Notification: 15 },
  ViewColumn: { Active: -1, Beside: -2, One: 1, Two: 2 },
  CodeActionKind: FakeCodeActionKind,
  CodeActionTriggerKind: { Invoke: 1, Automatic: 2 },
  CodeAction: FakeCodeAction,
  Position: FakePositionClass,
  Range: FakeRange,
  CancellationTokenSource: FakeCancellationTokenSource,
  window: {
    get activeTextEditor() {
      return state.activeTextEditor;
    },
    createWebviewPanel: (viewType: string, title: string, showOptions: unknown, options: Record<string, unknown>) => {
      const panel = new FakeWebviewPanel(viewType, title, showOptions, options);
      state.webviewPanels.push(panel);
      return panel;
    },
    onDidChangeActiveTextEditor: (listener: Listener) => state.activeEditorChanged.subscribe(listener),
    onDidChangeTextEditorSelection: (listener: Listener) => state.selectionChanged.subscribe(listener),
    showTextDocument: (document: unknown, options: unknown) => {
      state.shownDocuments.push({ document, options });
      return Promise.resolve(undefined);
    },
    showInformationMessage: showMessage("information"),
    showWarningMessage: showMessage("warning"),
    showErrorMessage: showMessage("error"),
    showQuickPick: (items: unknown[]) => {
      state.quickPickItems = items;
      return Promise.resolve(state.pick(items));
    },
    withProgress: (_options: unknown, task: (progress: unknown, token: unknown) => Promise<unknown>) =>
      task({ report() {} }, cancellationToken),
  },
  workspace: {
    get workspaceFolders() {
      return state.workspaceFolders;
    },
    applyEdit: (edit: unknown) => {
      state.appliedEdits.push(edit);
      return Promise.resolve(state.applyEditResult);
    },
    asRelativePath: (uri: FakeUri) => uri.fsPath.replace(/^\/work\//, ""),
    get textDocuments() {
      return state.textDocuments;
    },
    onDidChangeTextDocument: (listener: Listener) => state.documentChanged.subscribe(listener),
  },
  languages: {
    getDiagnostics: () => [],
    registerCodeActionsProvider: (selector: unknown, provider: unknown, metadata: unknown) => {
      const entry = { selector, provider, metadata };
      state.codeActionProviders.push(entry);
      return { dispose: () => (state.codeActionProviders = state.codeActionProviders.filter((other) => other !== entry)) };
    },
  },
  commands: {
    registerCommand: (command: string, handler: Handler) => {
      state.commandHandlers.set(command, handler);
      return { dispose: () => state.commandHandlers.delete(command) };
    },
    executeCommand: (command: string, ...args: unknown[]) => {
      state.executedCommands.push({ command, args });
      return Promise.resolve(undefined);
    },
  },
  env: {
    clipboard: {
      writeText: (text: string) => {
        state.clipboard = text;
        return Promise.resolve();
      },
    },
  },
};

interface ModuleLoader {
  _load(request: string, parent: unknown, isMain: boolean): unknown;
}

/** Makes `require("vscode")` return {@link fakeVscodeApi} in this process. */
export function installFakeVscode(): void {
  const loader = Module as unknown as ModuleLoader;
  const original = loader._load.bind(Module);
  loader._load = (request, parent, isMain) => (request === "vscode" ? fakeVscodeApi : original(request, parent, isMain));
}
