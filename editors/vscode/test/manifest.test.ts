/**
 * Consistency of what ships: package.json contributions, the language
 * configuration, the generated grammars, and the boundary that keeps the
 * unit-tested modules free of the VS Code API.
 */
import * as assert from "node:assert/strict";
import * as fs from "node:fs";
import * as path from "node:path";
import { describe, it } from "node:test";
import { GRAMMAR_FILES, serializeGrammar } from "../grammar/files";
import { EMBEDDED_MLIR_SCOPE, MARKDOWN_INJECTION_SCOPE } from "../grammar/markdownInjection";
import { COMMAND_IDS } from "../src/commandIds";
import { BESIDE_LLVM_MLIR_KEY, BESIDE_LLVM_MLIR_MODES, DEFAULT_BESIDE_LLVM_MLIR } from "../src/llvmMlir";
import { DEFAULT_SERVER_SETTINGS, HOVER_PICTURES, LAUNCH_SETTING_KEYS, LOG_LEVELS, SETTINGS_SECTION, SEVERITIES } from "../src/settings";
import { EXTENSION_ROOT } from "./support/tokenizer";

interface Manifest {
  main: string;
  scripts: Record<string, string>;
  vsce: { dependencies: boolean };
  activationEvents: string[];
  contributes: {
    languages: { id: string; extensions: string[]; configuration: string }[];
    grammars: { language?: string; scopeName: string; path: string; injectTo?: string[]; embeddedLanguages?: Record<string, string> }[];
    commands: { command: string; title: string; category: string }[];
    configuration: { properties: Record<string, { type: string; default: unknown; enum?: string[] }> };
  };
}

function readJson<T>(relativePath: string): T {
  return JSON.parse(fs.readFileSync(path.join(EXTENSION_ROOT, relativePath), "utf8")) as T;
}

const manifest = readJson<Manifest>("package.json");

describe("generated grammars", () => {
  for (const file of GRAMMAR_FILES) {
    it(`${file.relativePath} matches its generator (run "npm run build:grammar" after editing grammar/)`, () => {
      const committed = fs.readFileSync(path.join(EXTENSION_ROOT, file.relativePath), "utf8");
      assert.equal(committed, serializeGrammar(file.build()));
    });
  }
});

describe("package.json contributions", () => {
  it("declares the mlir language for .mlir files with its configuration", () => {
    const [language] = manifest.contributes.languages;
    assert.equal(language.id, "mlir");
    assert.deepEqual(language.extensions, [".mlir"]);
    assert.ok(fs.existsSync(path.join(EXTENSION_ROOT, language.configuration)));
    assert.ok(manifest.activationEvents.includes("onLanguage:mlir"));
    assert.ok(manifest.activationEvents.includes("workspaceContains:**/.affine-lsp.toml"));
  });

  it("points at existing grammar files with matching scope names", () => {
    for (const grammar of manifest.contributes.grammars) {
      const content = readJson<{ scopeName: string }>(grammar.path);
      assert.equal(content.scopeName, grammar.scopeName);
    }
    const injection = manifest.contributes.grammars.find((grammar) => grammar.scopeName === MARKDOWN_INJECTION_SCOPE);
    assert.ok(injection);
    assert.deepEqual(injection.injectTo, ["text.html.markdown"]);
    assert.deepEqual(injection.embeddedLanguages, { [EMBEDDED_MLIR_SCOPE]: "mlir" });
    assert.ok(manifest.contributes.grammars.some((grammar) => grammar.language === "mlir" && grammar.scopeName === "source.mlir"));
  });

  it("contributes exactly the commands the extension registers", () => {
    assert.deepEqual(
      manifest.contributes.commands.map((command) => command.command).sort(),
      Object.values(COMMAND_IDS).sort(),
    );
    assert.ok(manifest.contributes.commands.every((command) => command.category === "Affine LSP"));
  });

  it("declares every setting the extension reads, with matching defaults and choices", () => {
    const properties = manifest.contributes.configuration.properties;
    const key = (name: string) => `${SETTINGS_SECTION}.${name}`;
    for (const name of LAUNCH_SETTING_KEYS) {
      assert.ok(properties[key(name)], `missing ${key(name)}`);
    }
    assert.equal(properties[key("fusion.tolerance")].type, "number");
    assert.equal(properties[key("fusion.tolerance")].default, DEFAULT_SERVER_SETTINGS.fusion.tolerance);
    assert.deepEqual(properties[key("legacySyntax.severity")].enum, [...SEVERITIES]);
    assert.equal(properties[key("legacySyntax.severity")].default, DEFAULT_SERVER_SETTINGS.legacySyntax.severity);
    assert.equal(properties[key("lints.enabled")].default, DEFAULT_SERVER_SETTINGS.lints.enabled);
    assert.deepEqual(properties[key("logLevel")].enum, [...LOG_LEVELS]);
    assert.equal(properties[key("logLevel")].default, DEFAULT_SERVER_SETTINGS.logLevel);
    assert.deepEqual(properties[key("trace.server")].enum, ["off", "messages", "verbose"]);
    assert.deepEqual(properties[key("transforms.tileSizes")].default, DEFAULT_SERVER_SETTINGS.transforms.tileSizes);
    assert.equal(properties[key("transforms.unrollFactor")].default, DEFAULT_SERVER_SETTINGS.transforms.unrollFactor);
    assert.equal(
      properties[key("transforms.unrollJamFactor")].default,
      DEFAULT_SERVER_SETTINGS.transforms.unrollJamFactor,
    );
    assert.deepEqual(properties[key("hover.pictures")].enum, [...HOVER_PICTURES]);
    assert.equal(properties[key("hover.pictures")].default, DEFAULT_SERVER_SETTINGS.hover.pictures);
    assert.equal(properties[key("refactorings.planInBackground")].type, "boolean");
    assert.equal(
      properties[key("refactorings.planInBackground")].default,
      DEFAULT_SERVER_SETTINGS.refactorings.planInBackground,
    );
    assert.equal(
      properties[key("performanceHints.enabled")].default,
      DEFAULT_SERVER_SETTINGS.performanceHints.enabled,
    );
    assert.equal(properties[key("optimize.tune")].default, DEFAULT_SERVER_SETTINGS.optimize.tune);
    assert.equal(
      properties[key("optimize.enabled")].default,
      DEFAULT_SERVER_SETTINGS.optimize.enabled,
    );
  });

  it("names as main module the esbuild bundle that vscode:prepublish builds from src/extension.ts", () => {
    const bundle = manifest.scripts.bundle;
    assert.equal(manifest.main, "./dist/extension.js");
    assert.match(bundle, /^esbuild src\/extension\.ts --bundle /);
    assert.ok(bundle.includes(" --external:vscode "), "vscode is provided by the editor");
    assert.ok(bundle.includes(` --outfile=${manifest.main.replace("./", "")} `));
    assert.match(manifest.scripts["vscode:prepublish"], /npm run bundle$/);
    assert.equal(manifest.vsce.dependencies, false, "the bundle needs no node_modules in the .vsix");
  });

  it("keeps the bundle, grammars and configuration in the .vsix and nothing else", () => {
    const ignore = fs.readFileSync(path.join(EXTENSION_ROOT, ".vscodeignore"), "utf8");
    const kept = ignore.split("\n").filter((line) => line.startsWith("!"));
    assert.ok(ignore.split("\n").includes("**"));
    assert.deepEqual(kept, [
      `!${manifest.main.replace("./", "")}`,
      "!syntaxes/*.json",
      "!language-configuration.json",
      "!README.md",
    ]);
  });

  it("declares the setting that decides what is shown beside LLVM's MLIR extension", () => {
    const property = manifest.contributes.configuration.properties[`${SETTINGS_SECTION}.${BESIDE_LLVM_MLIR_KEY}`];
    assert.deepEqual(property.enum, [...BESIDE_LLVM_MLIR_MODES]);
    assert.equal(property.default, DEFAULT_BESIDE_LLVM_MLIR);
  });
});

interface LanguageConfiguration {
  comments: { lineComment: string };
  brackets: [string, string][];
  autoClosingPairs: { open: string; close: string }[];
  folding: { markers: { start: string; end: string } };
  indentationRules: { increaseIndentPattern: string; decreaseIndentPattern: string };
  wordPattern: string;
}

const configuration = readJson<LanguageConfiguration>("language-configuration.json");

/** The word at `offset` the way VS Code finds it: the word-pattern match that covers the offset. */
function wordAt(text: string, offset: number): string | undefined {
  const pattern = new RegExp(configuration.wordPattern, "g");
  for (const match of text.matchAll(pattern)) {
    if (match.index <= offset && offset < match.index + match[0].length) {
      return match[0];
    }
  }
  return undefined;
}

describe("language configuration", () => {
  it("has // comments and <> among brackets and auto-closing pairs", () => {
    assert.equal(configuration.comments.lineComment, "//");
    assert.ok(configuration.brackets.some(([open, close]) => open === "<" && close === ">"));
    assert.ok(configuration.autoClosingPairs.some((pair) => pair.open === "<" && pair.close === ">"));
  });

  it("keeps sigiled names whole as words", () => {
    const line = '%arg0 = affine.load %A[%i0] : memref<4xf32, #map1>  ^bb2 @kernel_0 !llvm.ptr @"quoted name" %x-y';
    for (const word of ["%arg0", "affine.load", "%A", "%i0", "#map1", "^bb2", "@kernel_0", "!llvm.ptr", '@"quoted name"', "%x-y"]) {
      const offset = line.indexOf(word) + Math.floor(word.length / 2);
      assert.equal(wordAt(line, offset), word);
    }
    assert.equal(wordAt("(d0 + s0)", 1), "d0");
    assert.equal(wordAt("(d0 + s0)", 6), "s0");
  });

  it("indents after an opening brace and dedents on a closing one", () => {
    const increase = new RegExp(configuration.indentationRules.increaseIndentPattern);
    const decrease = new RegExp(configuration.indentationRules.decreaseIndentPattern);
    assert.ok(increase.test("  affine.for %i = 0 to 10 {"));
    assert.ok(increase.test("  affine.if #set(%i) {  // guarded"));
    assert.ok(increase.test("func.func @f(") && !increase.test("func.func @f(%a: index,"));
    assert.ok(!increase.test("  // a comment {"));
    assert.ok(decrease.test("  }"));
    assert.ok(decrease.test("  } else {"));
    assert.ok(!decrease.test("  affine.yield"));
  });

  it("folds // region ... // endregion", () => {
    assert.ok(new RegExp(configuration.folding.markers.start).test("  // region fused loops"));
    assert.ok(new RegExp(configuration.folding.markers.end).test("  // endregion"));
  });
});

describe("module boundaries", () => {
  /** Modules allowed to use the VS Code API; everything else is unit-tested under plain node. */
  const VSCODE_GLUE = new Set(["extension.ts", "commands.ts", "serverManager.ts", "coexistence.ts", "iterationSpacePanel.ts"]);

  it("only the glue modules import vscode or load vscode-languageclient", () => {
    const sourceDir = path.join(EXTENSION_ROOT, "src");
    for (const file of fs.readdirSync(sourceDir).filter((name) => name.endsWith(".ts"))) {
      if (VSCODE_GLUE.has(file)) {
        continue;
      }
      const source = fs.readFileSync(path.join(sourceDir, file), "utf8");
      assert.doesNotMatch(source, /from "vscode"/, `${file} imports vscode`);
      assert.doesNotMatch(source, /^import (?!type )[^;]*from "vscode-languageclient/m, `${file} loads vscode-languageclient`);
    }
  });
});
