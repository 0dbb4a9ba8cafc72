/**
 * Regenerates the TextMate grammars in `syntaxes/` from `grammar/`.
 * Run with `npm run build:grammar`.
 */
import * as fs from "node:fs";
import * as path from "node:path";
import { GRAMMAR_FILES, serializeGrammar } from "../grammar/files";

/** The extension root: this file runs from `out/scripts/`. */
const EXTENSION_ROOT = path.resolve(__dirname, "..", "..");

for (const file of GRAMMAR_FILES) {
  const target = path.join(EXTENSION_ROOT, file.relativePath);
  fs.mkdirSync(path.dirname(target), { recursive: true });
  fs.writeFileSync(target, serializeGrammar(file.build()));
  console.log(`wrote ${file.relativePath}`);
}
