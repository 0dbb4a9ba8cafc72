/** Which affine-lsp diagnostics are shown beside LLVM's MLIR extension. */
import * as assert from "node:assert/strict";
import { describe, it } from "node:test";
import type { DiagnosticFacts } from "../src/llvmMlir";
import {
  BESIDE_LLVM_MLIR_KEY,
  DEFAULT_BESIDE_LLVM_MLIR,
  coexistenceNotice,
  diagnosticsToShow,
  readBesideLlvmMlir,
} from "../src/llvmMlir";

interface Fake {
  name: string;
  line: number;
  isError: boolean;
}

const ours: Fake[] = [
  { name: "error on 3", line: 3, isError: true },
  { name: "warning on 3", line: 3, isError: false },
  { name: "error on 7", line: 7, isError: true },
  { name: "second error on 7", line: 7, isError: true },
  { name: "error on 9", line: 9, isError: true },
];
const facts = (d: Fake): DiagnosticFacts => ({ line: d.line, isError: d.isError });
const names = (shown: Fake[]) => shown.map((d) => d.name);

describe("diagnosticsToShow", () => {
  it("skips our errors on lines where mlir-lsp-server reports an error, keeps the rest", () => {
    const theirs = [
      { line: 7, isError: true },
      { line: 3, isError: false },
    ];
    assert.deepEqual(names(diagnosticsToShow(ours, theirs, facts, "skipDuplicates")), [
      "error on 3",
      "warning on 3",
      "error on 9",
    ]);
  });

  it("shows everything of ours when mlir-lsp-server reports nothing", () => {
    assert.deepEqual(diagnosticsToShow(ours, [], facts, "skipDuplicates"), ours);
  });

  it("shows all or nothing when asked to", () => {
    const theirs = [{ line: 7, isError: true }];
    assert.deepEqual(diagnosticsToShow(ours, theirs, facts, "showAll"), ours);
    assert.deepEqual(diagnosticsToShow(ours, theirs, facts, "hide"), []);
  });
});

describe("the setting", () => {
  it("falls back to skipDuplicates for missing or unknown values", () => {
    assert.equal(DEFAULT_BESIDE_LLVM_MLIR, "skipDuplicates");
    assert.equal(readBesideLlvmMlir(undefined), "skipDuplicates");
    assert.equal(readBesideLlvmMlir("both"), "skipDuplicates");
    assert.equal(readBesideLlvmMlir("hide"), "hide");
    assert.equal(readBesideLlvmMlir("showAll"), "showAll");
  });

  it("is named in the notice, which says what happens to grammar and diagnostics", () => {
    for (const mode of ["skipDuplicates", "showAll", "hide"] as const) {
      const notice = coexistenceNotice(mode);
      assert.ok(notice.includes(`affineLsp.${BESIDE_LLVM_MLIR_KEY}`));
      assert.ok(notice.includes("grammar"));
    }
    assert.notEqual(coexistenceNotice("hide"), coexistenceNotice("showAll"));
  });
});
