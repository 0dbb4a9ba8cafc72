/** Parameters and response handling for the custom request and the check-workspace command. */
import * as assert from "node:assert/strict";
import { describe, it } from "node:test";
import {
  CHECK_WORKSPACE_SERVER_COMMAND,
  checkWorkspaceParams,
  formatCheckSummary,
  hasProblems,
  parseCheckSummary,
} from "../src/checkWorkspace";
import {
  ITERATION_DOMAIN_METHOD,
  iterationDomainParams,
  parseIterationDomainResult,
  presentIterationDomain,
} from "../src/iterationDomain";
import { UnexpectedResponseError } from "../src/protocolShapes";
import { describeRequestError, isCancellation } from "../src/requestErrors";

describe("affine-lsp/iterationDomain", () => {
  it("sends the document URI and the cursor position", () => {
    assert.equal(ITERATION_DOMAIN_METHOD, "affine-lsp/iterationDomain");
    assert.deepEqual(iterationDomainParams("file:///k.mlir", { line: 3, character: 9 }), {
      textDocument: { uri: "file:///k.mlir" },
      position: { line: 3, character: 9 },
    });
  });

  it("accepts a domain or null, and rejects other shapes", () => {
    const domain = "[N] -> { [i, j] : 0 <= i < N and 0 <= j <= i }";
    assert.deepEqual(parseIterationDomainResult({ domain, message: "" }), { domain, message: "" });
    assert.deepEqual(parseIterationDomainResult({ domain: null, message: "not in a loop" }), {
      domain: null,
      message: "not in a loop",
    });
    for (const bad of [null, "x", {}, { domain: 3, message: "" }, { domain: "x" }]) {
      assert.throws(() => parseIterationDomainResult(bad), UnexpectedResponseError);
    }
  });

  it("presents a domain with its message, and a missing domain with the reason", () => {
    const shown = presentIterationDomain({ domain: "{ [i] : 0 <= i < 8 }", message: "2 loops" }, "k.mlir:4:3");
    assert.equal(shown.hasDomain, true);
    assert.equal(shown.notification, "Iteration domain: { [i] : 0 <= i < 8 } — 2 loops");
    assert.match(shown.log, /^\[k\.mlir:4:3\] iteration domain/);
    const none = presentIterationDomain({ domain: null, message: "The cursor is not inside an affine.for." }, "k.mlir:1:1");
    assert.deepEqual(none, {
      hasDomain: false,
      notification: "The cursor is not inside an affine.for.",
      log: "[k.mlir:1:1] no iteration domain: The cursor is not inside an affine.for.",
    });
    assert.match(presentIterationDomain({ domain: null, message: "" }, "x").notification, /No affine loop nest/);
  });
});

describe("affine-lsp.checkWorkspace", () => {
  it("executes the server command with the folder URIs as arguments", () => {
    assert.deepEqual(checkWorkspaceParams(["file:///w/a", "file:///w/b"]), {
      command: CHECK_WORKSPACE_SERVER_COMMAND,
      arguments: ["file:///w/a", "file:///w/b"],
    });
    assert.equal(CHECK_WORKSPACE_SERVER_COMMAND, "affine-lsp.checkWorkspace");
  });

  it("validates the summary", () => {
    assert.deepEqual(parseCheckSummary({ files: 3, errors: 1, warnings: 0 }), { files: 3, errors: 1, warnings: 0 });
    for (const bad of [null, [], { files: 1, errors: 0 }, { files: -1, errors: 0, warnings: 0 }, { files: 1.5, errors: 0, warnings: 0 }]) {
      assert.throws(() => parseCheckSummary(bad), UnexpectedResponseError);
    }
  });

  it("summarises with correct plurals", () => {
    assert.equal(formatCheckSummary({ files: 12, errors: 3, warnings: 1 }), "Checked 12 MLIR files: 3 errors, 1 warning.");
    assert.equal(formatCheckSummary({ files: 1, errors: 1, warnings: 2 }), "Checked 1 MLIR file: 1 error, 2 warnings.");
    assert.equal(formatCheckSummary({ files: 4, errors: 0, warnings: 0 }), "Checked 4 MLIR files: no errors or warnings.");
    assert.equal(hasProblems({ files: 4, errors: 0, warnings: 0 }), false);
    assert.equal(hasProblems({ files: 4, errors: 0, warnings: 2 }), true);
  });
});

describe("request errors", () => {
  it("explains a method the server does not implement", () => {
    assert.equal(
      describeRequestError("Show iteration domain", { code: -32601, message: "Unhandled method" }),
      "Show iteration domain: this version of the affine-lsp server does not support it.",
    );
  });

  it("passes other messages through and recognises cancellation", () => {
    assert.equal(describeRequestError("Fuse loops", new Error("boom")), "Fuse loops failed: boom");
    assert.equal(isCancellation({ code: -32800 }), true);
    assert.equal(isCancellation(new Error("x")), false);
  });
});
