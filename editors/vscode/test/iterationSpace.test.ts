/** The requests behind the Iteration Space panel: parameters and answers. */
import * as assert from "node:assert/strict";
import { describe, it } from "node:test";
import type { CodeAction, Command } from "vscode-languageserver-protocol";
import {
  ITERATION_SPACE_METHOD,
  PREVIEW_REFACTORING_METHOD,
  headsLoop,
  iterationSpaceParams,
  parseIterationSpaceResult,
  parsePreviewResult,
  previewParams,
  refactoringParams,
  refactorings,
} from "../src/iterationSpace";
import { UnexpectedResponseError } from "../src/protocolShapes";
import { PICTURE } from "./support/pictures";


describe("affine-lsp/iterationSpace", () => {
  it("sends the document and the cursor", () => {
    assert.equal(ITERATION_SPACE_METHOD, "affine-lsp/iterationSpace");
    assert.deepEqual(iterationSpaceParams("file:///k.mlir", { line: 3, character: 9 }), {
      textDocument: { uri: "file:///k.mlir" },
      position: { line: 3, character: 9 },
    });
  });

  it("accepts a picture or none, with the version it describes", () => {
    assert.deepEqual(parseIterationSpaceResult({ version: 7, picture: PICTURE, message: "m" }), {
      version: 7,
      picture: PICTURE,
      message: "m",
    });
    assert.deepEqual(parseIterationSpaceResult({ version: null, picture: null, message: "not open" }), {
      version: null,
      picture: null,
      message: "not open",
    });
  });

  it("rejects other shapes", () => {
    const bad = [
      null,
      {},
      { version: "1", picture: null, message: "" },
      { version: 1, picture: null },
      { version: 1, picture: { ...PICTURE, svg: 3 }, message: "" },
      { version: 1, picture: { ...PICTURE, domain: undefined }, message: "" },
      { version: 1, picture: { ...PICTURE, points: -1 }, message: "" },
      { version: 1.5, picture: null, message: "" },
    ];
    for (const raw of bad) {
      assert.throws(() => parseIterationSpaceResult(raw), UnexpectedResponseError, JSON.stringify(raw));
    }
  });
});

describe("affine-lsp/previewRefactoring", () => {
  it("sends the document, the cursor as a range and the code action's title", () => {
    assert.equal(PREVIEW_REFACTORING_METHOD, "affine-lsp/previewRefactoring");
    assert.deepEqual(previewParams("file:///k.mlir", { line: 1, character: 2 }, "Tile 32×32"), {
      textDocument: { uri: "file:///k.mlir" },
      range: { start: { line: 1, character: 2 }, end: { line: 1, character: 2 } },
      title: "Tile 32×32",
    });
  });

  it("reads pictures before and after, the reason and the notes", () => {
    const raw = { version: 3, title: "t", before: [PICTURE], after: [], reason: "illegal", notes: ["n"], disabled: "illegal" };
    assert.deepEqual(parsePreviewResult(raw), raw);
    const minimal = parsePreviewResult({ version: 3, title: "t", before: [], after: [PICTURE] });
    assert.deepEqual(minimal, { version: 3, title: "t", before: [], after: [PICTURE], reason: null, notes: [], disabled: null });
  });

  it("rejects other shapes", () => {
    const good = { version: 3, title: "t", before: [], after: [], reason: null, notes: [], disabled: null };
    for (const bad of [{ ...good, before: [{}] }, { ...good, title: 1 }, { ...good, notes: [1] }, { ...good, reason: 2 }, { ...good, after: null }]) {
      assert.throws(() => parsePreviewResult(bad), UnexpectedResponseError, JSON.stringify(bad));
    }
  });
});

describe("the refactorings listed", () => {
  it("are the code actions of the refactor kinds, asked for explicitly at the cursor", () => {
    const at = { line: 4, character: 2 };
    assert.deepEqual(refactoringParams("file:///k.mlir", at), {
      textDocument: { uri: "file:///k.mlir" },
      range: { start: at, end: at },
      context: { diagnostics: [], only: ["refactor"], triggerKind: 1 },
    });
    const tile: CodeAction = { title: "Tile 32×32", kind: "refactor.rewrite" };
    const fix: CodeAction = { title: "Remove step 0", kind: "quickfix" };
    const command: Command = { title: "Fuse", command: "x" };
    const unkinded: CodeAction = { title: "Fuse all" };
    assert.deepEqual(refactorings([fix, tile, command, unkinded]), [tile, unkinded]);
    assert.deepEqual(refactorings(null), []);
  });

  it("come with a menu entry on the line of a loop's header", () => {
    assert.equal(headsLoop("  affine.for %i = 0 to 10 {"), true);
    assert.equal(headsLoop("affine.parallel (%i, %j) = (0, 0) to (8, 8) {"), true);
    assert.equal(headsLoop('  "affine.for"(%n) ({'), true);
    assert.equal(headsLoop("  %x = affine.load %A[%i] : memref<8xf32>"), false);
    assert.equal(headsLoop("  // affine.for in a comment"), false);
    assert.equal(headsLoop("  my.affine.for"), false);
  });
});
