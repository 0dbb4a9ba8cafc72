/**
 * Runs every compiled `out/test/*.test.js` file with node's built-in test
 * runner (a plain directory argument would also run the helper modules).
 */
import { spawnSync } from "node:child_process";
import * as fs from "node:fs";
import * as path from "node:path";

const testDirectory = path.resolve(__dirname, "..", "test");
const files = fs
  .readdirSync(testDirectory)
  .filter((name) => name.endsWith(".test.js"))
  .sort()
  .map((name) => path.join(testDirectory, name));

if (files.length === 0) {
  console.error(`no compiled tests in ${testDirectory}; run "npm run compile" first`);
  process.exit(1);
}

const result = spawnSync(process.execPath, ["--test", ...process.argv.slice(2), ...files], { stdio: "inherit" });
process.exit(result.status ?? 1);
