/**
 * The command flows of src/commands.ts, run against a fake `vscode` module
 * and a fake language client that records requests and answers them.
 */
import * as assert from "node:assert/strict";
import { before, beforeEach, describe, it } from "node:test";
import type { CodeAction } from "vscode-languageserver-protocol";
import type { ServerManager } from "../src/serverManager";
import { FakeClient } from "./support/fakeClient";
import { fakeEditor, fakeUri, installFakeVscode, state } from "./support/fakeVscode";

installFakeVscode();

const log: string[] = [];
const output = {
  info: (message: string) => log.push(`info ${message}`),
  error: (message: string) => log.push(`error ${message}`),
  show: () => undefined,
};

let client: FakeClient;
let restarts = 0;
const manager = {
  requireClient: () => Promise.resolve(client),
  restart: () => {
    restarts++;
    return Promise.resolve();
  },
} as unknown as ServerManager;

function run(command: string): Promise<unknown> {
  const handler = state.commandHandlers.get(command);
  assert.ok(handler, `${command} is not registered`);
  return Promise.resolve(handler());
}

const range = { start: { line: 2, character: 4 }, end: { line: 2, character: 4 } };
const editOf = (text: string) => ({ changes: { "file:///work/k.mlir": [{ range, newText: text }] } });

before(async () => {
  const { registerCommands } = await import("../src/commands");
  registerCommands(manager, output as never);
});

beforeEach(() => {
  state.reset();
  client = new FakeClient();
  log.length = 0;
  state.activeTextEditor = fakeEditor("/work/k.mlir", "mlir", { line: 2, character: 4 });
});

describe("Fuse Loops at Cursor", () => {
  const lazy: CodeAction = { title: "Fuse %i into %j", kind: "refactor.rewrite", data: { loops: [1, 2] } };
  const blocked: CodeAction = { title: "Fuse %i into %k", disabled: { reason: "would reorder a write to %B" } };
  const unrelated: CodeAction = { title: "Normalize bounds", edit: editOf("x") };

  it("requests refactor.rewrite actions at the cursor, resolves the chosen one and applies its edit", async () => {
    client.answers.set("textDocument/codeAction", () => [lazy, unrelated, blocked]);
    client.answers.set("codeAction/resolve", (action) => ({ ...(action as CodeAction), edit: editOf("fused") }));
    state.pick = (items) => items[0];
    await run("affineLsp.fuseLoopsAtCursor");

    assert.deepEqual(client.sent[0], {
      method: "textDocument/codeAction",
      params: {
        textDocument: { uri: "file:///work/k.mlir" },
        range,
        context: { diagnostics: [], only: ["refactor.rewrite"], triggerKind: 1 },
      },
    });
    assert.equal(state.quickPickItems.length, 2, "only the two Fuse actions are offered");
    assert.deepEqual(client.sent[1], { method: "codeAction/resolve", params: lazy });
    assert.deepEqual(state.appliedEdits, [{ convertedFrom: editOf("fused") }]);
    assert.deepEqual(state.messages, []);
  });

  it("applies an action that already has an edit without resolving it, then runs its command", async () => {
    const ready: CodeAction = { title: "Fuse now", edit: editOf("y"), command: { title: "t", command: "affine-lsp.after", arguments: [1] } };
    client.answers.set("textDocument/codeAction", () => [ready]);
    state.pick = (items) => items[0];
    await run("affineLsp.fuseLoopsAtCursor");
    assert.deepEqual(client.sent.map((request) => request.method), ["textDocument/codeAction"]);
    assert.deepEqual(state.appliedEdits, [{ convertedFrom: editOf("y") }]);
    assert.deepEqual(state.executedCommands, [{ command: "affine-lsp.after", args: [1] }]);
  });

  it("shows a disabled action with its reason and refuses to apply it", async () => {
    client.answers.set("textDocument/codeAction", () => [blocked]);
    state.pick = (items) => items[0];
    await run("affineLsp.fuseLoopsAtCursor");
    const [item] = state.quickPickItems as { label: string; detail?: string }[];
    assert.match(item.label, /Fuse %i into %k/);
    assert.equal(item.detail, "would reorder a write to %B");
    assert.equal(state.appliedEdits.length, 0);
    assert.equal(state.messages[0].level, "warning");
    assert.match(state.messages[0].text, /cannot be applied: would reorder a write to %B/);
  });

  it("says so when nothing can be fused, and does nothing when the pick is cancelled", async () => {
    client.answers.set("textDocument/codeAction", () => null);
    await run("affineLsp.fuseLoopsAtCursor");
    assert.match(state.messages[0].text, /No loop fusion is available/);

    state.reset();
    client.answers.set("textDocument/codeAction", () => [lazy]);
    state.activeTextEditor = fakeEditor("/work/k.mlir", "mlir", { line: 0, character: 0 });
    await run("affineLsp.fuseLoopsAtCursor");
    assert.equal(state.appliedEdits.length, 0);
    assert.deepEqual(state.messages, []);
  });

  it("reports an edit VS Code could not apply", async () => {
    client.answers.set("textDocument/codeAction", () => [unrelated, { ...lazy, edit: editOf("z") }]);
    state.pick = (items) => items[0];
    state.applyEditResult = false;
    await run("affineLsp.fuseLoopsAtCursor");
    assert.equal(state.messages[0].level, "error");
    assert.match(state.messages[0].text, /could not apply the edit/);
  });

  it("asks for an MLIR editor first", async () => {
    state.activeTextEditor = fakeEditor("/work/notes.md", "markdown", { line: 0, character: 0 });
    await run("affineLsp.fuseLoopsAtCursor");
    assert.equal(client.sent.length, 0);
    assert.match(state.messages[0].text, /Open an MLIR file/);
  });
});

describe("Show Iteration Domain at Cursor", () => {
  it("sends the custom request and shows the domain, with Copy", async () => {
    const domain = "[N] -> { [i, j] : 0 <= i < N and 0 <= j < 8 }";
    client.answers.set("affine-lsp/iterationDomain", () => ({ domain, message: "2 enclosing loops" }));
    state.messageAnswer = "Copy";
    await run("affineLsp.showIterationDomain");
    assert.deepEqual(client.sent, [
      {
        method: "affine-lsp/iterationDomain",
        params: { textDocument: { uri: "file:///work/k.mlir" }, position: { line: 2, character: 4 } },
      },
    ]);
    assert.equal(state.messages[0].text, `Iteration domain: ${domain} — 2 enclosing loops`);
    assert.equal(state.clipboard, domain);
    assert.ok(log.some((line) => line.startsWith("info [k.mlir:3:5] iteration domain")));
  });

  it("shows the server's message when there is no domain", async () => {
    client.answers.set("affine-lsp/iterationDomain", () => ({ domain: null, message: "Not inside an affine.for." }));
    await run("affineLsp.showIterationDomain");
    assert.deepEqual(state.messages, [{ level: "information", text: "Not inside an affine.for.", buttons: [] }]);
  });

  it("explains a server that does not implement the request, and a malformed answer", async () => {
    await run("affineLsp.showIterationDomain");
    assert.equal(state.messages[0].level, "error");
    assert.match(state.messages[0].text, /does not support it/);

    state.reset();
    state.activeTextEditor = fakeEditor("/work/k.mlir", "mlir", { line: 0, character: 0 });
    client.answers.set("affine-lsp/iterationDomain", () => ({ domain: 42 }));
    await run("affineLsp.showIterationDomain");
    assert.match(state.messages[0].text, /unexpected iteration domain response/);
  });
});

describe("Check Workspace", () => {
  it("sends the folder URIs to affine-lsp.checkWorkspace and offers the Problems view", async () => {
    state.workspaceFolders = [
      { uri: fakeUri("/work/a"), name: "a" },
      { uri: fakeUri("/work/b"), name: "b" },
    ];
    client.answers.set("workspace/executeCommand", () => ({ files: 7, errors: 2, warnings: 1 }));
    state.messageAnswer = "Show Problems";
    await run("affineLsp.checkWorkspace");
    assert.deepEqual(client.sent, [
      {
        method: "workspace/executeCommand",
        params: { command: "affine-lsp.checkWorkspace", arguments: ["file:///work/a", "file:///work/b"] },
      },
    ]);
    assert.deepEqual(state.messages, [
      { level: "warning", text: "Checked 7 MLIR files: 2 errors, 1 warning.", buttons: ["Show Problems"] },
    ]);
    assert.deepEqual(state.executedCommands, [{ command: "workbench.actions.view.problems", args: [] }]);
  });

  it("reports a clean workspace as information, and needs an open folder", async () => {
    state.workspaceFolders = [{ uri: fakeUri("/work/a"), name: "a" }];
    client.answers.set("workspace/executeCommand", () => ({ files: 3, errors: 0, warnings: 0 }));
    await run("affineLsp.checkWorkspace");
    assert.deepEqual(state.messages, [{ level: "information", text: "Checked 3 MLIR files: no errors or warnings.", buttons: [] }]);

    state.reset();
    await run("affineLsp.checkWorkspace");
    assert.match(state.messages[0].text, /Open a folder/);
  });
});

describe("Restart Server", () => {
  it("restarts through the server manager", async () => {
    const before = restarts;
    await run("affineLsp.restartServer");
    assert.equal(restarts, before + 1);
  });
});
