/**
 * "Show Iteration Space" wired to (fake) VS Code and a (fake) language client: the
 * webview it opens, the requests it sends as the cursor and the text change, the
 * messages it posts to the webview and how it answers the webview's buttons.
 */
import * as assert from "node:assert/strict";
import { after, before, beforeEach, describe, it, mock } from "node:test";
import type { CodeAction } from "vscode-languageserver-protocol";
import { COMMAND_IDS } from "../src/commandIds";
import { PANEL_ACTION_TITLE } from "../src/iterationSpace";
import { FOLLOW_DELAY_MS } from "../src/panelController";
import type { ServerManager } from "../src/serverManager";
import { FakeClient } from "./support/fakeClient";
import type { FakeEditor, FakeWebviewPanel } from "./support/fakeVscode";
import { fakeEditor, fakeVscodeApi, installFakeVscode, moveCursor, state } from "./support/fakeVscode";
import { PICTURE } from "./support/pictures";

installFakeVscode();

const LINES = ["func.func @f(%A: memref<8x8xf32>) {", "  affine.for %i = 0 to 8 {", "    affine.for %j = 0 to 8 {", "    }", "  }", "}"];
const URI = "file:///work/k.mlir";
const TILE: CodeAction = { title: "Tile 4×4", kind: "refactor.rewrite", data: { id: "3" } };
const EDIT = { changes: { [URI]: [] } };

let client: FakeClient;
let running = true;
const startListeners = new Set<() => void>();
const manager = {
  get runningClient() {
    return running ? client : undefined;
  },
  requireClient: () => Promise.resolve(running ? client : undefined),
  onDidStart: (listener: () => void) => {
    startListeners.add(listener);
    return { dispose: () => startListeners.delete(listener) };
  },
} as unknown as ServerManager;
const output = { info: () => undefined, warn: () => undefined, error: () => undefined, show: () => undefined };

let editor: FakeEditor;

function panel(): FakeWebviewPanel {
  assert.equal(state.webviewPanels.length, 1, "one panel");
  return state.webviewPanels[0];
}

/** The last body the extension posted to the webview. */
function shownHtml(): string {
  const renders = panel().posted.filter((message) => (message as { type?: string }).type === "render");
  assert.ok(renders.length > 0, "nothing rendered");
  return (renders[renders.length - 1] as { html: string }).html;
}

function methods(): string[] {
  return client.sent.map((request) => request.method);
}

async function settle(): Promise<void> {
  for (let round = 0; round < 10; round++) {
    await Promise.resolve();
  }
}

async function pass(milliseconds: number): Promise<void> {
  mock.timers.tick(milliseconds);
  await settle();
}

function answerVersion(version: () => number): void {
  client.answers.set("affine-lsp/iterationSpace", () => ({ version: version(), picture: PICTURE, message: PICTURE.caption }));
  client.answers.set("textDocument/codeAction", () => [TILE]);
}

before(async () => {
  const { registerCommands } = await import("../src/commands");
  registerCommands(manager, output as never);
  mock.timers.enable({ apis: ["setTimeout"] });
});

after(() => mock.timers.reset());

beforeEach(() => {
  for (const opened of state.webviewPanels) {
    opened.dispose();
  }
  state.reset();
  client = new FakeClient();
  running = true;
  editor = fakeEditor("/work/k.mlir", "mlir", { line: 1, character: 4 }, LINES);
  state.activeTextEditor = editor;
  state.textDocuments = [editor.document];
});

function run(command: string): unknown {
  const handler = state.commandHandlers.get(command);
  assert.ok(handler, `${command} is not registered`);
  return handler();
}

describe("Show Iteration Space", () => {
  it("opens a webview beside the editor, keeping the focus there, under a strict policy", () => {
    run(COMMAND_IDS.showIterationSpace);
    const opened = panel();
    assert.equal(opened.viewType, "affineLsp.iterationSpace");
    assert.equal(opened.title, "Iteration Space");
    assert.deepEqual(opened.showOptions, { viewColumn: -2, preserveFocus: true });
    assert.equal(opened.options.enableScripts, true);
    assert.equal(opened.options.enableCommandUris, false);
    assert.deepEqual(opened.options.localResourceRoots, []);
    assert.match(opened.webview.html, /Content-Security-Policy" content="default-src 'none'; img-src data:;/);
    run(COMMAND_IDS.showIterationSpace);
    assert.equal(state.webviewPanels.length, 1, "shown again, not opened twice");
    assert.deepEqual(opened.revealed, [[-2, true]]);
  });

  it("draws the loop at the cursor once it rests, and lists the refactorings there", async () => {
    answerVersion(() => editor.document.version);
    run(COMMAND_IDS.showIterationSpace);
    assert.deepEqual(methods(), [], "nothing asked before the cursor rests");
    await pass(FOLLOW_DELAY_MS);
    assert.deepEqual(client.sent, [
      { method: "affine-lsp/iterationSpace", params: { textDocument: { uri: URI }, position: { line: 1, character: 4 } } },
      {
        method: "textDocument/codeAction",
        params: {
          textDocument: { uri: URI },
          range: { start: { line: 1, character: 4 }, end: { line: 1, character: 4 } },
          context: { diagnostics: [], only: ["refactor"], triggerKind: 1 },
        },
      },
    ]);
    const html = shownHtml();
    assert.match(html, /<img class="nest" data-role="current" data-points="4"/);
    assert.match(html, /data-command="preview" data-index="0" aria-pressed="false">Tile 4×4</);
    assert.doesNotMatch(html, /Out of date/);
  });

  it("opened before the server runs, says so, and draws once the server has started", async () => {
    answerVersion(() => editor.document.version);
    running = false;
    run(COMMAND_IDS.showIterationSpace);
    await pass(FOLLOW_DELAY_MS);
    assert.match(shownHtml(), /server is not running/);
    assert.deepEqual(methods(), []);
    running = true;
    for (const listener of startListeners) {
      listener();
    }
    await pass(0);
    assert.deepEqual(methods(), ["affine-lsp/iterationSpace", "textDocument/codeAction"]);
    assert.match(shownHtml(), /<img class="nest" data-role="current" data-points="4"/);
    assert.doesNotMatch(shownHtml(), /server is not running/);
  });

  it("stops listening for the server once closed", () => {
    run(COMMAND_IDS.showIterationSpace);
    assert.equal(startListeners.size, 1);
    panel().dispose();
    assert.equal(startListeners.size, 0);
  });

  it("follows the cursor and the text; what was drawn for an older version is marked out of date", async () => {
    let answered = 1;
    answerVersion(() => answered);
    run(COMMAND_IDS.showIterationSpace);
    await pass(FOLLOW_DELAY_MS);
    moveCursor(editor, { line: 2, character: 6 });
    state.selectionChanged.fire({ textEditor: editor });
    await pass(FOLLOW_DELAY_MS);
    assert.deepEqual(client.sent[2].params, { textDocument: { uri: URI }, position: { line: 2, character: 6 } });
    editor.document.version = 2;
    state.documentChanged.fire({ document: editor.document });
    assert.match(shownHtml(), /class="current stale"/);
    await pass(FOLLOW_DELAY_MS);
    assert.match(shownHtml(), /Out of date/, "the server answered for version 1");
    answered = 2;
    await pass(FOLLOW_DELAY_MS);
    assert.doesNotMatch(shownHtml(), /Out of date/);
  });

  it("previews the refactoring chosen in the panel and applies it through code action resolve", async () => {
    answerVersion(() => editor.document.version);
    client.answers.set("affine-lsp/previewRefactoring", (params) => ({
      version: editor.document.version,
      title: (params as { title: string }).title,
      before: [PICTURE],
      after: [{ ...PICTURE, tiles: 4 }],
      reason: null,
      notes: [],
      disabled: null,
    }));
    client.answers.set("codeAction/resolve", (action) => ({ ...(action as CodeAction), edit: EDIT }));
    run(COMMAND_IDS.showIterationSpace);
    await pass(FOLLOW_DELAY_MS);
    panel().received.fire({ command: "preview", index: 0 });
    await settle();
    assert.deepEqual(client.sent[2], {
      method: "affine-lsp/previewRefactoring",
      params: { textDocument: { uri: URI }, range: { start: { line: 1, character: 4 }, end: { line: 1, character: 4 } }, title: "Tile 4×4" },
    });
    const html = shownHtml();
    assert.match(html, /data-role="before"/);
    assert.match(html, /data-role="after" data-points="4" data-arrows="3" data-tiles="4"/);
    panel().received.fire({ command: "apply" });
    await settle();
    assert.deepEqual(client.sent[3], { method: "codeAction/resolve", params: TILE });
    assert.deepEqual(state.appliedEdits, [{ convertedFrom: EDIT }]);
  });

  it("answers the webview's ready with the current view and goes to a loop on request", async () => {
    answerVersion(() => editor.document.version);
    run(COMMAND_IDS.showIterationSpace);
    await pass(FOLLOW_DELAY_MS);
    const before = panel().posted.length;
    panel().received.fire({ command: "ready" });
    assert.equal(panel().posted.length, before + 1);
    panel().received.fire({ command: "reveal", line: 2 });
    assert.equal(state.shownDocuments.length, 1);
    panel().received.fire({ command: "eval", code: "x" });
    assert.equal(state.shownDocuments.length, 1);
  });

  it("stops following once closed", async () => {
    answerVersion(() => editor.document.version);
    run(COMMAND_IDS.showIterationSpace);
    panel().dispose();
    await pass(FOLLOW_DELAY_MS);
    state.selectionChanged.fire({ textEditor: editor });
    await pass(FOLLOW_DELAY_MS);
    assert.deepEqual(methods(), []);
    assert.equal(state.selectionChanged.listeners.length, 0);
  });
});

describe("the code-action menu's entry", () => {
  type Provided = { title: string; command: { command: string } }[];
  const kinds = fakeVscodeApi.CodeActionKind;

  function provide(line: number, triggerKind: number, only?: unknown): Provided {
    const provider = state.codeActionProviders[0].provider as {
      provideCodeActions(document: unknown, range: unknown, context: unknown): Provided;
    };
    return provider.provideCodeActions(editor.document, { start: { line, character: 0 } }, { triggerKind, only });
  }

  it("opens the panel from Ctrl+. on a loop's header line, and only there", () => {
    assert.equal(state.codeActionProviders.length, 1);
    const [action] = provide(1, 1);
    assert.equal(action.title, PANEL_ACTION_TITLE);
    assert.equal(action.command.command, COMMAND_IDS.showIterationSpace);
    assert.deepEqual(provide(0, 1), [], "not a loop");
    assert.deepEqual(provide(1, 2), [], "not for the lightbulb: that stays the server's");
    assert.equal(provide(1, 1, kinds.Refactor).length, 1);
    assert.deepEqual(provide(1, 1, kinds.QuickFix), []);
  });
});
