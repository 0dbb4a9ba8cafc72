/** The real host: executable checks on temporary files and import checks with stand-in interpreters. */
import * as assert from "node:assert/strict";
import * as fs from "node:fs";
import * as os from "node:os";
import * as path from "node:path";
import { after, before, describe, it } from "node:test";
import { checkImport, createNodeHost, isExecutableFile } from "../src/nodeHost";
import { findOnPath } from "../src/serverResolution";

const posixOnly = process.platform === "win32" ? "uses POSIX shell scripts and permissions" : false;

describe("node host", { skip: posixOnly }, () => {
  let dir: string;

  /** Writes a shell script standing in for an interpreter. */
  function script(name: string, body: string, mode = 0o755): string {
    const file = path.join(dir, name);
    fs.writeFileSync(file, `#!/bin/sh\n${body}\n`, { mode });
    fs.chmodSync(file, mode);
    return file;
  }

  before(() => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), "affine-lsp-host-"));
  });

  after(() => {
    fs.rmSync(dir, { recursive: true, force: true });
  });

  it("isExecutableFile: executable files only, not plain files or directories", async () => {
    const runnable = script("runnable", "exit 0");
    const plain = script("plain", "exit 0", 0o644);
    assert.equal(await isExecutableFile(runnable), true);
    assert.equal(await isExecutableFile(plain), false);
    assert.equal(await isExecutableFile(dir), false);
    assert.equal(await isExecutableFile(path.join(dir, "missing")), false);
  });

  it("checkImport passes when the interpreter exits 0 and passes along the import statement", async () => {
    const log = path.join(dir, "args.txt");
    const python = script("good-python", `printf '%s\\n' "$@" > '${log}'\nexit 0`);
    assert.deepEqual(await checkImport({ command: python, args: ["-X", "utf8"] }), { ok: true });
    assert.deepEqual(fs.readFileSync(log, "utf8").trim().split("\n"), ["-X", "utf8", "-c", "import affine_lsp"]);
  });

  it("checkImport reports the last stderr line when the import fails", async () => {
    const python = script(
      "bad-python",
      "echo 'Traceback (most recent call last):' >&2\necho \"ModuleNotFoundError: No module named 'affine_lsp'\" >&2\nexit 1",
    );
    assert.deepEqual(await checkImport({ command: python, args: [] }), {
      ok: false,
      detail: "ModuleNotFoundError: No module named 'affine_lsp'",
    });
  });

  it("checkImport reports a missing interpreter and a hanging one", async () => {
    const missing = await checkImport({ command: path.join(dir, "no-such-python"), args: [] });
    assert.deepEqual(missing, { ok: false, detail: "the interpreter could not be run: not found" });
    const slow = script("slow-python", "exec sleep 5");
    const hanging = await checkImport({ command: slow, args: [] }, 200);
    assert.equal(hanging.ok, false);
    assert.match(hanging.detail ?? "", /no answer within/);
  });

  it("createNodeHost finds executables on the given PATH", async () => {
    const server = script("affine-lsp", "exit 0");
    const host = createNodeHost({ PATH: `/nonexistent${path.delimiter}${dir}` });
    assert.equal(await findOnPath("affine-lsp", host), server);
  });
});
