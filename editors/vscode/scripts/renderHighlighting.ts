/**
 * Renders an MLIR file as HTML coloured by the extension's grammar and VS
 * Code's Dark+ theme (from tm-themes), and optionally screenshots it with
 * headless Chromium:
 *
 *   node out/scripts/renderHighlighting.js [file.mlir] [--html out.html] [--png out.png]
 *
 * Used to produce images/highlighting.png.
 */
import { spawnSync } from "node:child_process";
import * as fs from "node:fs";
import * as os from "node:os";
import * as path from "node:path";
import * as vsctm from "vscode-textmate";
import { EXTENSION_ROOT, createRegistry } from "../test/support/tokenizer";

interface ThemeFile {
  colors: Record<string, string>;
  tokenColors: vsctm.IRawTheme["settings"];
}

/** Bit layout of vscode-textmate's encoded token metadata. */
const FONT_STYLE_OFFSET = 11;
const FONT_STYLE_MASK = 0b1111 << FONT_STYLE_OFFSET;
const FOREGROUND_OFFSET = 15;
const FOREGROUND_MASK = 0b111111111 << FOREGROUND_OFFSET;
const ITALIC = 1;
const BOLD = 2;

/**
 * The `editor.tokenColorCustomizations` example from README.md: Dark+ colours
 * dimensions and symbols alike, this rule sets symbols apart.
 */
const README_CUSTOMIZATION: vsctm.IRawTheme["settings"] = [
  { scope: "variable.other.symbol.affine.mlir", settings: { foreground: "#C586C0" } },
  { scope: "variable.parameter.symbol.affine.mlir", settings: { foreground: "#C586C0" } },
];

function escapeHtml(text: string): string {
  return text.replace(/&/g, "&amp;").replace(/</g, "&lt;").replace(/>/g, "&gt;");
}

function option(name: string): string | undefined {
  const index = process.argv.indexOf(name);
  return index === -1 ? undefined : process.argv[index + 1];
}

async function renderHtml(source: string, theme: ThemeFile, title: string): Promise<string> {
  const background = theme.colors["editor.background"];
  const foreground = theme.colors["editor.foreground"];
  const registry = await createRegistry({
    name: "Dark+",
    settings: [{ settings: { foreground, background } }, ...theme.tokenColors, ...README_CUSTOMIZATION],
  });
  const grammar = await registry.loadGrammar("source.mlir");
  if (grammar === null) {
    throw new Error("source.mlir could not be loaded");
  }
  const colors = registry.getColorMap();
  let state = vsctm.INITIAL;
  const rows = source.split(/\r?\n/).map((line, index) => {
    const result = grammar.tokenizeLine2(line, state);
    state = result.ruleStack;
    const spans: string[] = [];
    for (let i = 0; i < result.tokens.length; i += 2) {
      const start = result.tokens[i];
      const end = i + 2 < result.tokens.length ? result.tokens[i + 2] : line.length;
      const metadata = result.tokens[i + 1];
      const color = colors[(metadata & FOREGROUND_MASK) >>> FOREGROUND_OFFSET];
      const fontStyle = (metadata & FONT_STYLE_MASK) >>> FONT_STYLE_OFFSET;
      const style = [
        `color:${color}`,
        fontStyle & ITALIC ? "font-style:italic" : "",
        fontStyle & BOLD ? "font-weight:bold" : "",
      ].filter((part) => part !== "");
      spans.push(`<span style="${style.join(";")}">${escapeHtml(line.slice(start, end))}</span>`);
    }
    return `<div class="row"><span class="number">${index + 1}</span><span class="code">${spans.join("")}</span></div>`;
  });
  return `<!doctype html>
<html><head><meta charset="utf-8"><title>${escapeHtml(title)}</title>
<style>
  body { margin: 0; background: ${background}; color: ${foreground}; }
  .tab { font: 13px sans-serif; color: #ffffff; background: #252526; padding: 8px 16px; border-bottom: 1px solid #333; }
  pre { margin: 0; padding: 10px 0; font: 14px/20px "DejaVu Sans Mono", monospace; }
  .number { display: inline-block; width: 40px; padding-right: 16px; text-align: right; color: #858585; }
  .code { white-space: pre; }
</style></head>
<body><div class="tab">${escapeHtml(title)} — Affine LSP highlighting, Dark+ theme with the README's symbol colour rule</div><pre>${rows.join("")}</pre></body></html>
`;
}

function screenshot(htmlFile: string, pngFile: string, lineCount: number): void {
  const browser = ["chromium", "chromium-browser"].find((name) => spawnSync(name, ["--version"]).status === 0);
  if (browser === undefined) {
    throw new Error("chromium is not installed (apt-get install chromium)");
  }
  const height = 56 + lineCount * 20;
  const result = spawnSync(
    browser,
    [
      "--headless",
      "--no-sandbox",
      "--disable-gpu",
      "--disable-background-networking",
      "--disable-component-update",
      "--disable-sync",
      "--no-first-run",
      `--user-data-dir=${fs.mkdtempSync(path.join(os.tmpdir(), "chromium-"))}`,
      `--screenshot=${path.resolve(pngFile)}`,
      `--window-size=1240,${height}`,
      `file://${path.resolve(htmlFile)}`,
    ],
    { stdio: "inherit" },
  );
  if (result.status !== 0) {
    throw new Error(`chromium exited with ${result.status}`);
  }
}

async function main(): Promise<void> {
  const input = process.argv[2] !== undefined && !process.argv[2].startsWith("--")
    ? process.argv[2]
    : path.join(EXTENSION_ROOT, "test", "fixtures", "showcase.mlir");
  const htmlFile = option("--html") ?? path.join(EXTENSION_ROOT, "out", "highlighting.html");
  const pngFile = option("--png");
  const theme = JSON.parse(fs.readFileSync(require.resolve("tm-themes/themes/dark-plus.json"), "utf8")) as ThemeFile;
  const source = fs.readFileSync(input, "utf8").replace(/\n$/, "");
  fs.mkdirSync(path.dirname(htmlFile), { recursive: true });
  fs.writeFileSync(htmlFile, await renderHtml(source, theme, path.basename(input)));
  console.log(`wrote ${htmlFile}`);
  if (pngFile !== undefined) {
    screenshot(htmlFile, pngFile, source.split("\n").length);
    console.log(`wrote ${pngFile}`);
  }
}

main().catch((error: unknown) => {
  console.error(error instanceof Error ? error.message : error);
  process.exit(1);
});
