/** The fuse-loops code-action request and the choices built from its answer. */
import * as assert from "node:assert/strict";
import { describe, it } from "node:test";
import type { CodeAction, Command } from "vscode-languageserver-protocol";
import { choiceLabel, fusionChoices, fusionCodeActionParams, isCodeAction, needsResolve } from "../src/fusion";

const range = { start: { line: 4, character: 2 }, end: { line: 4, character: 2 } };

const fuseEdit: CodeAction = {
  title: "Fuse %i into %j (producer-consumer)",
  kind: "refactor.rewrite",
  edit: { changes: { "file:///a.mlir": [{ range, newText: "affine.for" }] } },
  isPreferred: true,
};
const fuseLazy: CodeAction = { title: "Fuse sibling loops %i and %k", kind: "refactor.rewrite", data: { id: 7 } };
const fuseDisabled: CodeAction = {
  title: "Fuse %i into %m",
  kind: "refactor.rewrite",
  disabled: { reason: "a dependence on %B would be violated" },
};
const otherAction: CodeAction = { title: "Normalize loop bounds", kind: "refactor.rewrite" };
const bareCommand: Command = { title: "Fuse everything", command: "affine-lsp.fuseAll" };

describe("fusionCodeActionParams", () => {
  it("asks only for refactor.rewrite actions at the cursor, as an explicit request", () => {
    const diagnostics = [{ range, message: "legacy syntax" }];
    assert.deepEqual(fusionCodeActionParams("file:///a.mlir", range, diagnostics), {
      textDocument: { uri: "file:///a.mlir" },
      range,
      context: { diagnostics, only: ["refactor.rewrite"], triggerKind: 1 },
    });
  });
});

describe("fusionChoices", () => {
  it("keeps code actions titled Fuse..., in order, marking disabled ones with their reason", () => {
    const choices = fusionChoices([fuseEdit, otherAction, bareCommand, fuseDisabled, fuseLazy]);
    assert.deepEqual(
      choices.map((choice) => [choice.action.title, choice.enabled, choice.disabledReason]),
      [
        [fuseEdit.title, true, undefined],
        [fuseDisabled.title, false, "a dependence on %B would be violated"],
        [fuseLazy.title, true, undefined],
      ],
    );
  });

  it("handles an empty or null response", () => {
    assert.deepEqual(fusionChoices(null), []);
    assert.deepEqual(fusionChoices(undefined), []);
    assert.deepEqual(fusionChoices([]), []);
  });

  it("tells commands from code actions that carry a command", () => {
    assert.equal(isCodeAction(bareCommand), false);
    assert.equal(isCodeAction({ title: "Fuse", command: { title: "x", command: "y" } }), true);
  });
});

describe("needsResolve", () => {
  it("is true exactly when the action has no edit yet", () => {
    assert.equal(needsResolve(fuseLazy), true);
    assert.equal(needsResolve(fuseEdit), false);
  });
});

describe("choiceLabel", () => {
  it("shows disabled actions as unavailable with their reason", () => {
    const [disabled] = fusionChoices([fuseDisabled]);
    assert.deepEqual(choiceLabel(disabled), {
      label: "$(circle-slash) Fuse %i into %m",
      description: "unavailable",
      detail: "a dependence on %B would be violated",
    });
  });

  it("marks the preferred action", () => {
    const [preferred] = fusionChoices([fuseEdit]);
    assert.equal(choiceLabel(preferred).description, "preferred");
    const [plain] = fusionChoices([fuseLazy]);
    assert.equal(choiceLabel(plain).description, undefined);
  });
});
