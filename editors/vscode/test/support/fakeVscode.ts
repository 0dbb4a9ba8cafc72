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

export interface FakeEditor {
  document: { uri: FakeUri; languageId: string };
  selection: { active: FakePosition; start: FakePosition; end: FakePosition };
}

export function fakeEditor(fsPath: string, languageId: string, cursor: FakePosition): FakeEditor {
  return { document: { uri: fakeUri(fsPath), languageId }, selection: { active: cursor, start: cursor, end: cursor } };
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

  reset(): void {
    Object.assign(this, new FakeVscodeState(), { commandHandlers: this.commandHandlers });
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
  window: {
    get activeTextEditor() {
      return state.activeTextEditor;
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
  },
  languages: {
    getDiagnostics: () => [],
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
