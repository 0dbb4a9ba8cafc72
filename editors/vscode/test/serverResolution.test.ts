/** Server resolution against a fake machine: files, PATH and Python are all simulated. */
import * as assert from "node:assert/strict";
import { describe, it } from "node:test";
import type { CommandLine, Host, ImportCheck, LaunchSettings, ResolutionInput } from "../src/serverResolution";
import {
  describeResolutionFailure,
  expandHome,
  findOnPath,
  formatCommandLine,
  locateExecutable,
  resolveServer,
} from "../src/serverResolution";

interface FakeMachine {
  platform?: NodeJS.Platform;
  path?: string;
  pathext?: string;
  /** Executable files that exist. */
  executables?: string[];
  /** Interpreters (by command) that can import affine_lsp. */
  importers?: string[];
}

/** A host whose files, PATH and interpreters are given; records import checks. */
function fakeHost(machine: FakeMachine): Host & { importChecks: CommandLine[] } {
  // Windows file names are case-insensitive.
  const normalize = (file: string) => (machine.platform === "win32" ? file.toLowerCase() : file);
  const executables = new Set((machine.executables ?? []).map(normalize));
  const importers = new Set(machine.importers ?? []);
  const importChecks: CommandLine[] = [];
  return {
    platform: machine.platform ?? "linux",
    env: { PATH: machine.path ?? "", PATHEXT: machine.pathext },
    homeDir: machine.platform === "win32" ? "C:\\Users\\ada" : "/home/ada",
    isExecutableFile: (file) => Promise.resolve(executables.has(normalize(file))),
    checkImport: (interpreter): Promise<ImportCheck> => {
      importChecks.push(interpreter);
      return Promise.resolve(
        importers.has(interpreter.command)
          ? { ok: true }
          : { ok: false, detail: "ModuleNotFoundError: No module named 'affine_lsp'" },
      );
    },
    importChecks,
  };
}

function settings(overrides: Partial<LaunchSettings> = {}): LaunchSettings {
  return { serverPath: "", serverArgs: [], pythonPath: "", ...overrides };
}

function input(overrides: Partial<ResolutionInput> = {}): ResolutionInput {
  return { settings: settings(), ...overrides };
}

describe("expandHome", () => {
  it("expands ~ and ~/ but not ~user or inner tildes", () => {
    assert.equal(expandHome("~", "/home/ada", "linux"), "/home/ada");
    assert.equal(expandHome("~/venv/bin/affine-lsp", "/home/ada", "linux"), "/home/ada/venv/bin/affine-lsp");
    assert.equal(expandHome("~bob/x", "/home/ada", "linux"), "~bob/x");
    assert.equal(expandHome("/opt/~/x", "/home/ada", "linux"), "/opt/~/x");
  });

  it("accepts a backslash after ~ on Windows", () => {
    assert.equal(expandHome("~\\tools\\affine-lsp.exe", "C:\\Users\\ada", "win32"), "C:\\Users\\ada\\tools\\affine-lsp.exe");
  });
});

describe("findOnPath", () => {
  it("returns the first PATH directory holding the executable", async () => {
    const host = fakeHost({ path: "/usr/local/bin::/usr/bin:/bin", executables: ["/usr/bin/affine-lsp", "/bin/affine-lsp"] });
    assert.equal(await findOnPath("affine-lsp", host), "/usr/bin/affine-lsp");
  });

  it("returns undefined when absent", async () => {
    assert.equal(await findOnPath("affine-lsp", fakeHost({ path: "/usr/bin" })), undefined);
  });

  it("tries PATHEXT extensions on Windows", async () => {
    const host = fakeHost({
      platform: "win32",
      path: "C:\\Python\\Scripts;C:\\Windows",
      pathext: ".COM;.EXE;.CMD",
      executables: ["C:\\Python\\Scripts\\affine-lsp.exe"],
    });
    assert.equal(await findOnPath("affine-lsp", host), "C:\\Python\\Scripts\\affine-lsp.EXE");
  });

  it("skips batch scripts on Windows: they would need a shell", async () => {
    const host = fakeHost({
      platform: "win32",
      path: "C:\\Tools;C:\\Python\\Scripts",
      pathext: ".COM;.EXE;.BAT;.CMD",
      executables: ["C:\\Tools\\affine-lsp.cmd", "C:\\Python\\Scripts\\affine-lsp.exe"],
    });
    assert.equal(await findOnPath("affine-lsp", host), "C:\\Python\\Scripts\\affine-lsp.EXE");
    const onlyBatch = fakeHost({
      platform: "win32",
      path: "C:\\Tools",
      executables: ["C:\\Tools\\affine-lsp.bat"],
    });
    assert.equal(await findOnPath("affine-lsp", onlyBatch), undefined);
  });
});

describe("locateExecutable", () => {
  it("refuses a batch script named in a setting on Windows", async () => {
    const host = fakeHost({ platform: "win32", executables: ["C:\\Tools\\affine-lsp.cmd"] });
    const located = await locateExecutable("C:\\Tools\\affine-lsp.cmd", host, undefined);
    assert.equal(located.found, false);
    assert.match((located as { reason: string }).reason, /batch script.*shell/);
  });

  it("checks absolute paths directly", async () => {
    const host = fakeHost({ executables: ["/opt/affine/bin/affine-lsp"] });
    assert.deepEqual(await locateExecutable("/opt/affine/bin/affine-lsp", host, undefined), {
      found: true,
      file: "/opt/affine/bin/affine-lsp",
    });
    const missing = await locateExecutable("/opt/nothing", host, undefined);
    assert.equal(missing.found, false);
  });

  it("resolves relative paths against the workspace folder, and refuses them without one", async () => {
    const host = fakeHost({ executables: ["/work/proj/.venv/bin/affine-lsp"] });
    assert.deepEqual(await locateExecutable(".venv/bin/affine-lsp", host, "/work/proj"), {
      found: true,
      file: "/work/proj/.venv/bin/affine-lsp",
    });
    const noFolder = await locateExecutable(".venv/bin/affine-lsp", host, undefined);
    assert.deepEqual(noFolder, { found: false, reason: "is a relative path and no workspace folder is open" });
  });

  it("looks bare names up on PATH", async () => {
    const host = fakeHost({ path: "/usr/bin", executables: ["/usr/bin/my-affine-lsp"] });
    assert.deepEqual(await locateExecutable("my-affine-lsp", host, undefined), { found: true, file: "/usr/bin/my-affine-lsp" });
  });
});

describe("resolveServer: step 1, affineLsp.server.path", () => {
  it("uses the setting (with ~ expanded) and appends serve and the extra args", async () => {
    const host = fakeHost({ path: "/usr/bin", executables: ["/home/ada/bin/affine-lsp", "/usr/bin/affine-lsp"] });
    const result = await resolveServer(
      input({ settings: settings({ serverPath: "~/bin/affine-lsp", serverArgs: ["--log-level", "debug"] }) }),
      host,
    );
    assert.ok(result.ok);
    assert.equal(result.launch.command, "/home/ada/bin/affine-lsp");
    assert.deepEqual(result.launch.args, ["serve", "--log-level", "debug"]);
    assert.equal(result.launch.source, "server.path setting");
  });

  it("looks a command name in the setting up on PATH", async () => {
    const host = fakeHost({ path: "/opt/bin:/usr/bin", executables: ["/opt/bin/affine-lsp-dev"] });
    const result = await resolveServer(input({ settings: settings({ serverPath: "affine-lsp-dev" }) }), host);
    assert.ok(result.ok);
    assert.equal(result.launch.command, "/opt/bin/affine-lsp-dev");
  });

  it("stops with an error instead of falling back when the setting points nowhere", async () => {
    const host = fakeHost({ path: "/usr/bin", executables: ["/usr/bin/affine-lsp"], importers: ["/usr/bin/python3"] });
    const result = await resolveServer(input({ settings: settings({ serverPath: "/opt/missing/affine-lsp" }) }), host);
    assert.equal(result.ok, false);
    assert.equal(result.attempts.length, 1);
    assert.match(result.attempts[0].candidate, /affineLsp\.server\.path "\/opt\/missing\/affine-lsp"/);
    assert.match(result.attempts[0].outcome, /not an executable file/);
    assert.deepEqual(host.importChecks, []);
  });

  it("treats a blank setting as unset", async () => {
    const host = fakeHost({ path: "/usr/bin", executables: ["/usr/bin/affine-lsp"] });
    const result = await resolveServer(input({ settings: settings({ serverPath: "   " }) }), host);
    assert.ok(result.ok);
    assert.equal(result.launch.source, "PATH");
  });
});

describe("resolveServer: step 2, affine-lsp on PATH", () => {
  it("prefers affine-lsp on PATH over any Python interpreter", async () => {
    const host = fakeHost({
      path: "/home/ada/.local/bin:/usr/bin",
      executables: ["/home/ada/.local/bin/affine-lsp", "/usr/bin/python3"],
      importers: ["/usr/bin/python3"],
    });
    const result = await resolveServer(input({ pythonExtensionInterpreter: { command: "/venv/bin/python", args: [] } }), host);
    assert.ok(result.ok);
    assert.deepEqual([result.launch.command, ...result.launch.args], ["/home/ada/.local/bin/affine-lsp", "serve"]);
    assert.deepEqual(host.importChecks, []);
  });
});

describe("resolveServer: step 3, Python interpreters", () => {
  it("uses the Python extension's interpreter first, keeping its prefix arguments", async () => {
    const host = fakeHost({
      path: "/usr/bin",
      executables: ["/usr/bin/python3"],
      importers: ["conda", "/usr/bin/python3"],
    });
    const result = await resolveServer(
      input({
        pythonExtensionInterpreter: { command: "conda", args: ["run", "-n", "mlir", "python"] },
        settings: settings({ serverArgs: ["--verbose"] }),
      }),
      host,
    );
    assert.ok(result.ok);
    assert.equal(result.launch.source, "Python interpreter");
    assert.deepEqual(
      [result.launch.command, ...result.launch.args],
      ["conda", "run", "-n", "mlir", "python", "-m", "affine_lsp", "serve", "--verbose"],
    );
  });

  it("skips interpreters that cannot import affine_lsp and uses affineLsp.python.path next", async () => {
    const host = fakeHost({
      path: "/usr/bin",
      executables: ["/usr/bin/python3", "/home/ada/venvs/mlir/bin/python"],
      importers: ["/home/ada/venvs/mlir/bin/python"],
    });
    const result = await resolveServer(
      input({
        pythonExtensionInterpreter: { command: "/usr/bin/python3", args: [] },
        settings: settings({ pythonPath: "~/venvs/mlir/bin/python" }),
      }),
      host,
    );
    assert.ok(result.ok);
    assert.equal(result.launch.command, "/home/ada/venvs/mlir/bin/python");
    assert.deepEqual(result.launch.args, ["-m", "affine_lsp", "serve"]);
    assert.deepEqual(
      host.importChecks.map((check) => check.command),
      ["/usr/bin/python3", "/home/ada/venvs/mlir/bin/python"],
    );
  });

  it("falls back to python3, then python, on PATH, checking each interpreter once", async () => {
    const host = fakeHost({
      path: "/usr/local/bin:/usr/bin",
      executables: ["/usr/bin/python3", "/usr/local/bin/python"],
      importers: ["/usr/local/bin/python"],
    });
    const result = await resolveServer(input({ pythonExtensionInterpreter: { command: "/usr/bin/python3", args: [] } }), host);
    assert.ok(result.ok);
    assert.equal(result.launch.command, "/usr/local/bin/python");
    assert.deepEqual(
      host.importChecks.map((check) => check.command),
      ["/usr/bin/python3", "/usr/local/bin/python"],
    );
  });

  it("fails naming everything that was tried, in order", async () => {
    const host = fakeHost({ path: "/usr/bin", executables: ["/usr/bin/python3"] });
    const result = await resolveServer(input({ settings: settings({ pythonPath: "/opt/py/bin/python" }) }), host);
    assert.equal(result.ok, false);
    assert.deepEqual(
      result.attempts.map((attempt) => attempt.candidate),
      ["affine-lsp on PATH", 'affineLsp.python.path "/opt/py/bin/python"', "python3 on PATH (/usr/bin/python3)", "python on PATH"],
    );
    assert.match(result.attempts[2].outcome, /cannot import affine_lsp \(ModuleNotFoundError/);
    const message = describeResolutionFailure(result.attempts);
    assert.match(message, /^Could not find the affine-lsp language server\./);
    for (const attempt of result.attempts) {
      assert.ok(message.includes(attempt.candidate), `message lacks ${attempt.candidate}`);
    }
    assert.match(message, /affineLsp\.server\.path/);
  });
});

describe("formatCommandLine", () => {
  it("quotes arguments with spaces or quotes", () => {
    assert.equal(
      formatCommandLine({ command: "/opt/My Tools/python", args: ["-m", "affine_lsp", "serve"] }),
      '"/opt/My Tools/python" -m affine_lsp serve',
    );
  });
});
