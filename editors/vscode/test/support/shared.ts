/**
 * Locates the project's shared reference data (`shared/` beside the
 * repository checkout, or `$AFFINE_LSP_SHARED`), which tests use when present.
 */
import * as fs from "node:fs";
import * as path from "node:path";
import { EXTENSION_ROOT } from "./tokenizer";

/** The shared folder, or undefined if it is not on this machine. */
export function sharedDirectory(): string | undefined {
  const candidates = [
    process.env.AFFINE_LSP_SHARED,
    path.resolve(EXTENSION_ROOT, "..", "..", "..", "shared"),
    path.resolve(EXTENSION_ROOT, "..", "..", "shared"),
  ];
  return candidates.find((dir) => dir !== undefined && fs.existsSync(path.join(dir, "corpus"))) ?? undefined;
}

/** One `// -----` chunk of a corpus file, from chunks.tsv (1-based inclusive lines). */
export interface CorpusChunk {
  file: string;
  firstLine: number;
  lastLine: number;
  verifies: boolean;
}

/** Reads `corpus/chunks.tsv`. */
export function readChunks(shared: string): CorpusChunk[] {
  const [header, ...rows] = fs.readFileSync(path.join(shared, "corpus", "chunks.tsv"), "utf8").trim().split("\n");
  const columns = header.split("\t");
  const at = (name: string) => columns.indexOf(name);
  return rows.map((row) => {
    const cells = row.split("\t");
    return {
      file: cells[at("file")],
      firstLine: Number(cells[at("first_line")]),
      lastLine: Number(cells[at("last_line")]),
      verifies: cells[at("verifies_with_mlir_opt_22")] === "yes",
    };
  });
}
