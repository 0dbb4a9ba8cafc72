/**
 * Robustness of the grammar on real MLIR: the upstream test corpus in
 * shared/corpus (skipped when absent) and a generated affine program.
 */
import * as assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import * as fs from "node:fs";
import * as os from "node:os";
import * as path from "node:path";
import { describe, it } from "node:test";
import type { CorpusChunk } from "./support/shared";
import { readChunks, sharedDirectory } from "./support/shared";
import type { Token, TokenizedLine } from "./support/tokenizer";
import { tokenizeLines } from "./support/tokenizer";

/** A custom-form op at the start of a statement, after an optional result list. */
const OP_STATEMENT =
  /^(\s*(?:%[\w$.-]+(?::\d+)?\s*,\s*)*(?:%[\w$.-]+(?::\d+)?\s*=\s*)?)([A-Za-z_][\w$]*)\.[A-Za-z_][\w$.]*/;

function isCommentOrString(token: Token): boolean {
  return token.scopes.some((scope) => scope.startsWith("comment.") || scope.startsWith("string."));
}

/** Problems found in lines [first, last] (0-based, inclusive) of a tokenized file. */
function checkChunk(source: string[], lines: TokenizedLine[], first: number, last: number): string[] {
  const problems: string[] = [];
  for (let index = first; index <= last; index++) {
    const text = source[index];
    const where = `line ${index + 1}: ${text.trim()}`;
    const statement = OP_STATEMENT.exec(text);
    if (statement !== null && !text.trimStart().startsWith("//")) {
      const column = statement[1].length;
      const token = lines[index].tokens.find((candidate) => candidate.startIndex === column);
      const expected = `entity.name.function.operation.${statement[2]}.mlir`;
      if (token === undefined || !token.scopes.includes(expected)) {
        problems.push(`${where}: op name lacks ${expected} (${token?.scopes.join(" ") ?? "no token"})`);
      }
    }
    for (const token of lines[index].tokens) {
      if (token.text.includes("%") && !isCommentOrString(token)) {
        if (!token.scopes.includes("variable.other.ssa.mlir") || !/^%[\w$.-]+$/.test(token.text)) {
          problems.push(`${where}: ${JSON.stringify(token.text)} is not a whole SSA value (${token.scopes.join(" ")})`);
        }
      }
    }
  }
  if (lines[last].depthAfter !== 1) {
    problems.push(`line ${last + 1}: the chunk ends inside an unclosed construct (rule depth ${lines[last].depthAfter})`);
  }
  return problems;
}

const shared = sharedDirectory();

describe("upstream MLIR corpus", { skip: shared === undefined ? "shared/corpus not found" : false }, () => {
  it("every verified chunk: op names scoped by dialect, SSA values whole, all constructs closed", async () => {
    const chunks = readChunks(shared as string).filter((chunk) => chunk.verifies);
    assert.ok(chunks.length > 400, `expected the full corpus, found ${chunks.length} verified chunks`);
    const byFile = new Map<string, CorpusChunk[]>();
    for (const chunk of chunks) {
      byFile.set(chunk.file, [...(byFile.get(chunk.file) ?? []), chunk]);
    }
    const problems: string[] = [];
    for (const [file, fileChunks] of byFile) {
      const text = fs.readFileSync(path.join(shared as string, "corpus", file), "utf8");
      const lines = await tokenizeLines(text);
      const source = text.split(/\r?\n/);
      for (const chunk of fileChunks) {
        problems.push(...checkChunk(source, lines, chunk.firstLine - 1, chunk.lastLine - 1).map((p) => `${file} ${p}`));
      }
    }
    assert.deepEqual(problems.slice(0, 20), [], `${problems.length} problems`);
  });

  it("tokenizes the whole corpus quickly", async () => {
    const files = ["affine", "memref", "ir"].flatMap((dir) =>
      fs.readdirSync(path.join(shared as string, "corpus", dir)).map((name) => path.join(shared as string, "corpus", dir, name)),
    );
    const started = Date.now();
    let lineCount = 0;
    for (const file of files) {
      lineCount += (await tokenizeLines(fs.readFileSync(file, "utf8"))).length;
    }
    const perThousandLines = ((Date.now() - started) / lineCount) * 1000;
    assert.ok(perThousandLines < 1000, `${perThousandLines.toFixed(0)} ms per 1000 lines`);
  });
});

function generatorScript(): string | undefined {
  const script = shared !== undefined ? path.join(shared, "tools", "gen_affine.py") : undefined;
  return script !== undefined && fs.existsSync(script) ? script : undefined;
}

function findPython(): string | undefined {
  return ["python3", "python"].find((name) => spawnSync(name, ["--version"]).status === 0);
}

const generator = generatorScript();
const python = findPython();

describe("generated affine program", {
  skip: generator === undefined ? "gen_affine.py not found" : python === undefined ? "no Python interpreter" : false,
}, () => {
  it("a 2000-line program with split markers tokenizes cleanly", async () => {
    const output = path.join(fs.mkdtempSync(path.join(os.tmpdir(), "affine-lsp-")), "generated.mlir");
    const run = spawnSync(python as string, [generator as string, "2000", "--split", "5", "-o", output], {
      encoding: "utf8",
    });
    assert.equal(run.status, 0, run.stderr);
    const text = fs.readFileSync(output, "utf8");
    const source = text.split(/\r?\n/);
    const lines = await tokenizeLines(text);
    const problems = checkChunk(source, lines, 0, lines.length - 1);
    assert.deepEqual(problems.slice(0, 20), [], `${problems.length} problems`);

    const affineStatements = source.filter((line) => OP_STATEMENT.exec(line)?.[2] === "affine").length;
    const affineOpNames = lines
      .flatMap((line) => line.tokens)
      .filter((token) => token.scopes.includes("entity.name.function.operation.affine.mlir")).length;
    assert.ok(affineStatements > 100, `the generator wrote only ${affineStatements} affine ops`);
    assert.equal(affineOpNames, affineStatements);

    const markers = source.flatMap((line, index) => (line.trim() === "// -----" ? [index] : []));
    assert.ok(markers.length > 0, "the generator wrote no split markers");
    for (const index of markers) {
      assert.ok(
        lines[index].tokens.some((token) => token.scopes.includes("comment.line.double-slash.split-marker.mlir")),
        `split marker on line ${index + 1} not recognised`,
      );
    }
  });
});
