/** Debug helper: prints the tokens of a file (`node out/test/support/dump.js FILE [scope]`). */
import * as fs from "node:fs";
import { tokenize } from "./tokenizer";

async function main(): Promise<void> {
  const [file, scopeName] = process.argv.slice(2);
  const lines = await tokenize(fs.readFileSync(file, "utf8"), scopeName ?? "source.mlir");
  for (const tokens of lines) {
    for (const token of tokens) {
      if (token.text.trim() !== "") {
        console.log(`${token.line + 1}:${token.startIndex}\t${JSON.stringify(token.text)}\t${token.scopes.slice(1).join(" ")}`);
      }
    }
  }
}

void main();
