/** Scopes assigned by the `source.mlir` grammar to a hand-written sample. */
import { before, describe, it } from "node:test";
import { TokenizedDocument, readFixture } from "./support/document";

let doc: TokenizedDocument;

before(async () => {
  doc = await TokenizedDocument.of(readFixture("sample.mlir"));
});

describe("operation names are scoped by dialect", () => {
  it("custom-form ops after results and at line start", () => {
    doc.expectScope("%sum = affine.for", "affine.for", "entity.name.function.operation.affine.mlir");
    doc.expectScope("%v = affine.load", "affine.load", "entity.name.function.operation.affine.mlir");
    doc.expectScope("affine.store %sum", "affine.store", "entity.name.function.operation.affine.mlir");
    doc.expectScope("%zero = arith.constant", "arith.constant", "entity.name.function.operation.arith.mlir");
    doc.expectScope("func.func @stencil", "func.func", "entity.name.function.operation.func.mlir");
    doc.expectScope("cf.br ^exit", "cf.br", "entity.name.function.operation.cf.mlir");
  });

  it("affine.if, affine.parallel and ops without a dialect prefix", () => {
    doc.expectScope("affine.if #band", "affine.if", "entity.name.function.operation.affine.mlir");
    doc.expectScope("%r:2 = affine.parallel", "affine.parallel", "entity.name.function.operation.affine.mlir");
    doc.expectScope("return %out", "return", "entity.name.function.operation.func.mlir");
  });

  it("generic-form op names inside quotes", () => {
    doc.expectScope('"test.make_vector"', "test.make_vector", "entity.name.function.operation.test.mlir");
    doc.expectScope('"test.opaque"', "test.opaque", "entity.name.function.operation.test.mlir");
  });

  it("a dotted attribute key is not an op name", () => {
    doc.expectScope("attributes {llvm.emit_c_interface}", "llvm.emit_c_interface", "entity.other.attribute-name.mlir");
    doc.expectNoScopeStartingWith("attributes {llvm.emit_c_interface}", "llvm.emit_c_interface", "entity.name.function");
  });
});

describe("values, labels and symbols", () => {
  it("SSA values keep their sigil in one token", () => {
    doc.expectScope("func.func @stencil", "%A", "variable.other.ssa.mlir");
    doc.expectScope("%sum = affine.for", "%sum", "variable.other.ssa.mlir");
    doc.expectScope("%sum = affine.for", "%acc", "variable.other.ssa.mlir");
    doc.expectScope("%r:2 = affine.parallel", "%r", "variable.other.ssa.mlir");
  });

  it("result numbers of multi-result values", () => {
    doc.expectScope("cf.br ^exit", "%r", "variable.other.ssa.mlir");
    doc.expectScope("cf.br ^exit", "#", "punctuation.separator.result-index.mlir");
    doc.expectScope("cf.br ^exit", "1", "constant.numeric.integer.result-index.mlir");
  });

  it("block labels and symbols", () => {
    doc.expectScope("cf.br ^exit", "^exit", "entity.name.label.block.mlir");
    doc.expectScope("^exit(%out: f32):", "^exit", "entity.name.label.block.mlir");
    doc.expectScope("func.func @stencil", "@stencil", "variable.other.constant.symbol.mlir");
    doc.expectScope("func.func private @external", "@external", "variable.other.constant.symbol.mlir");
    doc.expectScope("func.func private @external", "private", "storage.modifier.visibility.mlir");
  });
});

describe("aliases, attributes and types", () => {
  it("attribute and type aliases, where defined and where used", () => {
    doc.expectScope("#tile = affine_map", "#tile", "constant.other.attribute.alias.mlir");
    doc.expectScope("affine.for %j = max", "#tile", "constant.other.attribute.alias.mlir");
    doc.expectScope("!elem = f32", "!elem", "entity.name.type.alias.mlir");
    doc.expectScope("func.func private @external", "!cell", "entity.name.type.alias.mlir");
  });

  it("dialect types and attributes", () => {
    doc.expectScope("!cell = !test.cell", "!test.cell", "support.type.dialect.mlir");
    doc.expectScope("tag = #test.tag", "#test.tag", "constant.other.attribute.dialect.mlir");
    doc.expectScope("tag = #test.tag", "keep", "string.quoted.double.mlir");
  });

  it("builtin scalar and shaped types with their shapes", () => {
    doc.expectScope("func.func @stencil", "memref", "support.type.builtin.mlir");
    doc.expectScope("func.func @stencil", "4", "constant.numeric.integer.dimension.mlir", 0, true);
    doc.expectScope("func.func @stencil", "?", "constant.language.dynamic.mlir");
    doc.expectScope("func.func @stencil", "f32", "support.type.builtin.mlir");
    doc.expectScope("func.func @stencil", "index", "support.type.builtin.mlir");
    doc.expectScope("%c16 = arith.constant", "i64", "support.type.builtin.mlir");
  });

  it("scalable vectors and unranked tensors", () => {
    doc.expectScope('"test.make_vector"', "vector", "support.type.builtin.mlir");
    doc.expectScope('"test.make_vector"', "[", "punctuation.section.brackets.scalable.begin.mlir");
    doc.expectScope('"test.make_vector"', "8", "constant.numeric.integer.dimension.mlir", 1, true);
    doc.expectScope('"test.opaque"', "*", "constant.language.unranked.mlir");
    doc.expectScope('"test.opaque"', "tensor", "support.type.builtin.mlir", 1);
  });

  it("builtin attributes, attribute keys and literals", () => {
    doc.expectScope('"test.opaque"', "dense", "storage.type.attribute.dense.mlir");
    doc.expectScope('"test.make_vector"', "array", "storage.type.attribute.array.mlir");
    doc.expectScope('"test.make_vector"', "lanes", "entity.other.attribute-name.mlir");
    doc.expectScope('"test.make_vector"', "true", "constant.language.boolean.mlir");
    doc.expectScope('"test.make_vector"', "splat", "string.quoted.double.mlir");
    doc.expectScope('"test.opaque"', "1.5", "constant.numeric.float.mlir");
    doc.expectScope("%c16 = arith.constant", "0x10", "constant.numeric.integer.hexadecimal.mlir");
    doc.expectScope("%zero = arith.constant", "0.0", "constant.numeric.float.mlir");
  });
});

describe("affine op keywords", () => {
  it("to, step and iter_args in affine.for", () => {
    doc.expectScope("%sum = affine.for", "to", "keyword.control.affine.mlir");
    doc.expectScope("%sum = affine.for", "step", "keyword.control.affine.mlir");
    doc.expectScope("%sum = affine.for", "iter_args", "keyword.control.affine.mlir");
  });

  it("max and min bounds", () => {
    doc.expectScope("affine.for %j = max", "max", "keyword.control.affine.mlir");
    doc.expectScope("affine.for %j = max", "min", "keyword.control.affine.mlir");
  });

  it("reduce in affine.parallel and else after affine.if", () => {
    doc.expectScope("%r:2 = affine.parallel", "reduce", "keyword.control.affine.mlir");
    doc.expectScope("} else {", "else", "keyword.control.else.mlir");
  });

  it("the same words outside affine headers are plain keywords", () => {
    doc.expectScope("%cast = arith.index_cast", "to", "keyword.other.mlir");
  });

  it("floordiv, ceildiv, mod and symbol() in inline affine expressions", () => {
    doc.expectScope("%v = affine.load", "symbol", "keyword.other.symbol.affine.mlir");
    doc.expectScope("%v = affine.load", "floordiv", "keyword.operator.word.affine.mlir");
    doc.expectScope("%w = affine.apply", "ceildiv", "keyword.operator.word.affine.mlir");
  });
});

describe("comments", () => {
  it("line comments, FileCheck directives and split markers", () => {
    doc.expectScope("// A hand-written", "//", "comment.line.double-slash.mlir");
    doc.expectScope("// CHECK-LABEL", "CHECK-LABEL:", "keyword.other.directive.filecheck.mlir");
    doc.expectScope("// CHECK-LABEL", "CHECK-LABEL:", "comment.line.double-slash.mlir");
    doc.expectScope("// -----", "// -----", "comment.line.double-slash.split-marker.mlir");
  });

  it("code in a comment is not highlighted as code", () => {
    doc.expectNoScopeStartingWith("// CHECK-LABEL: func @stencil", " func @stencil", "variable");
  });
});
