/** Dimensions versus symbols inside `affine_map<...>` and `affine_set<...>`. */
import * as assert from "node:assert/strict";
import { describe, it } from "node:test";
import { LAYERS, NAME_SLOTS } from "../grammar/affineMaps";
import { TokenizedDocument } from "./support/document";

const DIM_DECL = "variable.parameter.dimension.affine.mlir";
const SYM_DECL = "variable.parameter.symbol.affine.mlir";
const DIM = "variable.other.dimension.affine.mlir";
const SYM = "variable.other.symbol.affine.mlir";

describe("affine maps with conventional names", () => {
  it("declarations in (...) are dimensions and in [...] symbols", async () => {
    const doc = await TokenizedDocument.of("#m = affine_map<(d0, d1)[s0] -> (d0 + s0, d1 floordiv 2)>");
    doc.expectScope("#m", "d0", DIM_DECL);
    doc.expectScope("#m", "d1", DIM_DECL);
    doc.expectScope("#m", "s0", SYM_DECL);
    doc.expectScope("#m", "d0", DIM, 1);
    doc.expectScope("#m", "s0", SYM, 1);
    doc.expectScope("#m", "d1", DIM, 1);
    doc.expectScope("#m", "floordiv", "keyword.operator.word.affine.mlir");
    doc.expectScope("#m", "affine_map", "storage.type.attribute.affine_map.mlir");
    doc.expectScope("#m", "->", "keyword.operator.arrow.mlir");
  });

  it("ceildiv and mod are operators", async () => {
    const doc = await TokenizedDocument.of("#m = affine_map<(d0) -> (d0 ceildiv 4, d0 mod 3)>");
    doc.expectScope("#m", "ceildiv", "keyword.operator.word.affine.mlir");
    doc.expectScope("#m", "mod", "keyword.operator.word.affine.mlir");
  });
});

describe("affine maps with declared custom names", () => {
  it("every use of a custom name follows its declaration", async () => {
    const doc = await TokenizedDocument.of("#m = affine_map<(i, j)[N] -> (i + N, j * 2 + i, N - j)>");
    doc.expectScope("#m", "i", DIM_DECL);
    doc.expectScope("#m", "j", DIM_DECL);
    doc.expectScope("#m", "N", SYM_DECL);
    for (const occurrence of [1, 2]) {
      doc.expectScope("#m", "i", DIM, occurrence);
      doc.expectScope("#m", "j", DIM, occurrence);
      doc.expectScope("#m", "N", SYM, occurrence);
    }
  });

  it("declarations win over the dN/sN convention", async () => {
    const doc = await TokenizedDocument.of("#m = affine_map<(s0)[d0] -> (s0 + d0)>");
    doc.expectScope("#m", "s0", DIM_DECL);
    doc.expectScope("#m", "d0", SYM_DECL);
    doc.expectScope("#m", "s0", DIM, 1);
    doc.expectScope("#m", "d0", SYM, 1);
  });

  it("a header mixing conventional and custom names classifies both", async () => {
    const doc = await TokenizedDocument.of("#m = affine_map<(d0, row)[s0] -> (row + s0, d0)>");
    doc.expectScope("#m", "row", DIM_DECL);
    doc.expectScope("#m", "row", DIM, 1);
    doc.expectScope("#m", "s0", SYM, 1);
    doc.expectScope("#m", "d0", DIM, 1);
  });

  it("a name that is a prefix of another is matched whole", async () => {
    const doc = await TokenizedDocument.of("#m = affine_map<(ij)[i] -> (ij + i, i)>");
    doc.expectScope("#m", "ij", DIM_DECL);
    doc.expectScope("#m", "i", SYM_DECL);
    doc.expectScope("#m", "ij", DIM, 1);
    doc.expectScope("#m", "i", SYM, 1);
    doc.expectScope("#m", "i", SYM, 2);
  });

  it("spaces around the header are allowed", async () => {
    const doc = await TokenizedDocument.of("#m = affine_map< ( x , y ) [ n ] -> ( x + n , y ) >");
    doc.expectScope("#m", "x", DIM_DECL);
    doc.expectScope("#m", "n", SYM_DECL);
    doc.expectScope("#m", "x", DIM, 1);
    doc.expectScope("#m", "n", SYM, 1);
    doc.expectScope("#m", "y", DIM, 1);
  });

  it(`the first ${LAYERS} uses are classified; later ones fall back to the convention`, async () => {
    const uses = LAYERS + 3;
    const body = Array.from({ length: uses }, (_, k) => (k % 2 === 0 ? "i" : "d1")).join(" + ");
    const doc = await TokenizedDocument.of(`#m = affine_map<(i, d1) -> (${body})>`);
    const tokens = doc.allTokens();
    const iUses = tokens.filter((token) => token.text === "i").slice(1);
    const classified = iUses.filter((token) => token.scopes.includes(DIM));
    const expectedClassified = Math.ceil(LAYERS / 2);
    assert.equal(classified.length, expectedClassified);
    for (const token of iUses.slice(expectedClassified)) {
      assert.ok(token.scopes.includes("variable.other.affine.mlir"), `late use has ${token.scopes.join(" ")}`);
    }
    const d1Uses = tokens.filter((token) => token.text === "d1").slice(1);
    assert.ok(d1Uses.every((token) => token.scopes.includes(DIM)), "d1 is a dimension by declaration or convention");
    doc.expectScope("#m", ">", "punctuation.definition.attribute.end.mlir", 1);
  });

  it(`names past the ${NAME_SLOTS} remembered slots fall back to the convention`, async () => {
    const dims = Array.from({ length: NAME_SLOTS + 2 }, (_, k) => `d${k}`);
    const last = dims[dims.length - 1];
    const doc = await TokenizedDocument.of(`#m = affine_map<(${dims.join(", ")}) -> (${last})>`);
    doc.expectScope("#m", last, DIM_DECL);
    doc.expectScope("#m", last, DIM, 1);
  });
});

describe("affine sets", () => {
  it("constraints with >= and == and the closing angle", async () => {
    const doc = await TokenizedDocument.of("#s = affine_set<(d0, d1)[s0] : (d0 - 10 >= 0, s0 - d1 == 0)> // done");
    doc.expectScope("#s", "d1", DIM_DECL);
    doc.expectScope("#s", "s0", SYM, 1);
    doc.expectScope("#s", ">=", "keyword.operator.comparison.affine.mlir");
    doc.expectScope("#s", "==", "keyword.operator.comparison.affine.mlir");
    doc.expectScope("#s", ":", "punctuation.separator.colon.mlir");
    doc.expectScope("#s", ">", "punctuation.definition.attribute.end.mlir", 1);
    doc.expectScope("#s", "//", "comment.line.double-slash.mlir");
  });

  it("empty sets and maps", async () => {
    const doc = await TokenizedDocument.of("affine.if affine_set<() : ()> () {\n#z = affine_map<() -> (0)>");
    doc.expectScope("affine.if", "affine_set", "storage.type.attribute.affine_set.mlir");
    doc.expectScope("affine.if", "{", "punctuation.section.braces.begin.mlir");
    doc.expectScope("#z", "0", "constant.numeric.integer.mlir");
  });
});

describe("maps inside other constructs", () => {
  it("a layout map inside a memref type closes before the type does", async () => {
    const doc = await TokenizedDocument.of("%a = memref.alloc() : memref<8xf32, affine_map<(d0)[s0] -> (d0 + s0)>, 1>");
    doc.expectScope("%a", "s0", SYM, 1);
    doc.expectScope("%a", "1", "constant.numeric.integer.mlir");
    doc.expectScope("%a", ">", "punctuation.definition.type.end.mlir", 2);
  });

  it("an inline map in affine.apply is followed by its SSA operands", async () => {
    const doc = await TokenizedDocument.of("%w = affine.apply affine_map<(d0)[s0] -> (d0 * s0)>(%i)[%n]");
    doc.expectScope("%w", "*", "keyword.operator.arithmetic.mlir");
    doc.expectScope("%w", "%i", "variable.other.ssa.mlir");
    doc.expectScope("%w", "%n", "variable.other.ssa.mlir");
  });

  it("a header split over lines falls back to the convention", async () => {
    const doc = await TokenizedDocument.of("#m = affine_map<(d0)[s0]\n    -> (d0 + s0)>\nfunc.func @after()");
    doc.expectScope("-> (d0 + s0)", "d0", DIM);
    doc.expectScope("-> (d0 + s0)", "s0", SYM);
    doc.expectScope("func.func @after", "func.func", "entity.name.function.operation.func.mlir");
  });
});
