/**
 * Living beside LLVM's MLIR extension (`llvm-vs-code-extensions.vscode-mlir`),
 * which registers the same `mlir` language and `source.mlir` grammar and runs
 * mlir-lsp-server: which of affine-lsp's diagnostics are shown next to the
 * ones mlir-lsp-server reports. No VS Code API here.
 */

export const LLVM_MLIR_EXTENSION_ID = "llvm-vs-code-extensions.vscode-mlir";

/** The `source` of mlir-lsp-server's diagnostics. */
export const MLIR_SERVER_SOURCE = "mlir";

/** The setting (below `affineLsp`) that decides; see {@link BESIDE_LLVM_MLIR_MODES}. */
export const BESIDE_LLVM_MLIR_KEY = "diagnostics.besideLlvmMlir";

/**
 * - `skipDuplicates`: on a line where mlir-lsp-server reports an error, affine-lsp's
 *   errors are not shown (one error per mistake, MLIR's own wording); everything
 *   else affine-lsp reports is.
 * - `showAll`: every diagnostic of both servers.
 * - `hide`: no diagnostics from affine-lsp (hovers, code actions, commands stay).
 */
export const BESIDE_LLVM_MLIR_MODES = ["skipDuplicates", "showAll", "hide"] as const;
export type BesideLlvmMlir = (typeof BESIDE_LLVM_MLIR_MODES)[number];
export const DEFAULT_BESIDE_LLVM_MLIR: BesideLlvmMlir = "skipDuplicates";

export function readBesideLlvmMlir(value: unknown): BesideLlvmMlir {
  return typeof value === "string" && (BESIDE_LLVM_MLIR_MODES as readonly string[]).includes(value)
    ? (value as BesideLlvmMlir)
    : DEFAULT_BESIDE_LLVM_MLIR;
}

/** What the filter needs to know of a diagnostic. */
export interface DiagnosticFacts {
  line: number;
  isError: boolean;
}

/**
 * The diagnostics of ours to show, given mlir-lsp-server's for the same file
 * (`theirs`), while LLVM's extension is active.
 */
export function diagnosticsToShow<T>(
  ours: readonly T[],
  theirs: readonly DiagnosticFacts[],
  facts: (diagnostic: T) => DiagnosticFacts,
  mode: BesideLlvmMlir,
): T[] {
  if (mode === "showAll") {
    return [...ours];
  }
  if (mode === "hide") {
    return [];
  }
  const errorLines = new Set(theirs.filter((d) => d.isError).map((d) => d.line));
  return ours.filter((diagnostic) => {
    const { line, isError } = facts(diagnostic);
    return !(isError && errorLines.has(line));
  });
}

/** The message shown once when both extensions are active. */
export function coexistenceNotice(mode: BesideLlvmMlir): string {
  const diagnostics: Record<BesideLlvmMlir, string> = {
    skipDuplicates: "affine-lsp leaves out its errors on lines where mlir-lsp-server already reports one",
    showAll: "both servers' diagnostics are shown, so some errors appear twice",
    hide: "affine-lsp shows no diagnostics of its own (hovers, refactorings and commands stay)",
  };
  return (
    "LLVM's MLIR extension is also active. Both provide the `mlir` language: VS Code highlights with the " +
    "grammar of the extension it loads last (LLVM's), affine-lsp's semantic highlighting colours on top, and " +
    `${diagnostics[mode]} (setting affineLsp.${BESIDE_LLVM_MLIR_KEY}).`
  );
}
