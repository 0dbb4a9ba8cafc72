/** Reading settings and answering the server's workspace/configuration requests. */
import * as assert from "node:assert/strict";
import { describe, it } from "node:test";
import type { SettingsReader } from "../src/settings";
import {
  DEFAULT_SERVER_SETTINGS,
  DOCUMENT_SELECTOR,
  PROJECT_FILE_PATTERN,
  affectsLaunch,
  answerConfigurationItem,
  readLaunchSettings,
  readServerSettings,
} from "../src/settings";

function reader(values: Record<string, unknown>): SettingsReader {
  return { get: (key) => values[key] };
}

describe("readServerSettings", () => {
  it("uses the defaults when nothing is set (tolerance 0.3)", () => {
    assert.deepEqual(readServerSettings(reader({})), DEFAULT_SERVER_SETTINGS);
    assert.equal(DEFAULT_SERVER_SETTINGS.fusion.tolerance, 0.3);
  });

  it("passes valid values through", () => {
    const settings = readServerSettings(
      reader({
        "fusion.tolerance": 1.5,
        "legacySyntax.severity": "hint",
        "lints.enabled": false,
        logLevel: "debug",
        "transforms.tileSizes": [16, 8],
        "transforms.unrollFactor": 8,
        "hover.pictures": "never",
        "refactorings.planInBackground": false,
        "performanceHints.enabled": false,
        "optimize.enabled": false,
        "optimize.tune": true,
      }),
    );
    assert.deepEqual(settings, {
      fusion: { tolerance: 1.5 },
      legacySyntax: { severity: "hint" },
      lints: { enabled: false },
      logLevel: "debug",
      transforms: { tileSizes: [16, 8], unrollFactor: 8, unrollJamFactor: 2 },
      hover: { pictures: "never" },
      refactorings: { planInBackground: false },
      performanceHints: { enabled: false },
      optimize: { enabled: false, tune: true },
    });
  });

  it("replaces invalid values with defaults", () => {
    const settings = readServerSettings(
      reader({
        "fusion.tolerance": -1,
        "legacySyntax.severity": "fatal",
        "lints.enabled": "yes",
        logLevel: 3,
        "transforms.tileSizes": [0],
        "transforms.unrollFactor": 1,
        "transforms.unrollJamFactor": 2.5,
        "hover.pictures": true,
        "refactorings.planInBackground": "no",
        "performanceHints.enabled": 1,
        "optimize.enabled": "no",
        "optimize.tune": "yes",
      }),
    );
    assert.deepEqual(settings, DEFAULT_SERVER_SETTINGS);
    assert.equal(readServerSettings(reader({ "fusion.tolerance": Number.NaN })).fusion.tolerance, 0.3);
  });
});

describe("readLaunchSettings", () => {
  it("reads paths and keeps only string arguments", () => {
    assert.deepEqual(
      readLaunchSettings(reader({ "server.path": "~/bin/affine-lsp", "server.args": ["--x", 3, "y"], "python.path": "py" })),
      { serverPath: "~/bin/affine-lsp", serverArgs: ["--x", "y"], pythonPath: "py" },
    );
    assert.deepEqual(readLaunchSettings(reader({})), { serverPath: "", serverArgs: [], pythonPath: "" });
  });
});

describe("answerConfigurationItem", () => {
  const settings = readServerSettings(reader({ "fusion.tolerance": 0.5 }));

  it("answers the whole affineLsp section with the server's keys", () => {
    assert.deepEqual(answerConfigurationItem("affineLsp", settings), { handled: true, value: settings });
  });

  it("answers dotted sub-sections and single keys", () => {
    assert.deepEqual(answerConfigurationItem("affineLsp.fusion", settings), { handled: true, value: { tolerance: 0.5 } });
    assert.deepEqual(answerConfigurationItem("affineLsp.fusion.tolerance", settings), { handled: true, value: 0.5 });
    assert.deepEqual(answerConfigurationItem("affineLsp.legacySyntax.severity", settings), {
      handled: true,
      value: "warning",
    });
    assert.deepEqual(answerConfigurationItem("affineLsp.nothing.here", settings), { handled: true, value: null });
  });

  it("leaves other sections to the default handler", () => {
    assert.deepEqual(answerConfigurationItem("editor", settings), { handled: false });
    assert.deepEqual(answerConfigurationItem("affineLspExtra", settings), { handled: false });
    assert.deepEqual(answerConfigurationItem(undefined, settings), { handled: false });
  });
});

describe("affectsLaunch", () => {
  it("is true only for settings that decide what is launched", () => {
    assert.equal(affectsLaunch((key) => key === "affineLsp.server.path"), true);
    assert.equal(affectsLaunch((key) => key === "affineLsp.python.path"), true);
    assert.equal(affectsLaunch((key) => key === "affineLsp.fusion.tolerance"), false);
  });
});

describe("DOCUMENT_SELECTOR", () => {
  it("gives the server MLIR documents and project files, whose problems it shows", () => {
    assert.ok(DOCUMENT_SELECTOR.some((filter) => "language" in filter && filter.language === "mlir"));
    assert.ok(DOCUMENT_SELECTOR.some((filter) => "pattern" in filter && filter.pattern === PROJECT_FILE_PATTERN));
    assert.equal(PROJECT_FILE_PATTERN, "**/.affine-lsp.toml");
  });
});
