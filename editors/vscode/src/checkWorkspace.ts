/**
 * The server command `affine-lsp.checkWorkspace`: parameters, response
 * validation and the summary shown to the user. No VS Code API here.
 */
import type { ExecuteCommandParams } from "vscode-languageserver-protocol";
import { UnexpectedResponseError, isNonNegativeInteger, isRecord } from "./protocolShapes";

/** The command id the server registers (not the extension's palette command). */
export const CHECK_WORKSPACE_SERVER_COMMAND = "affine-lsp.checkWorkspace";

export interface CheckSummary {
  files: number;
  errors: number;
  warnings: number;
}

export function checkWorkspaceParams(folderUris: readonly string[]): ExecuteCommandParams {
  return { command: CHECK_WORKSPACE_SERVER_COMMAND, arguments: [...folderUris] };
}

/** Checks the response shape; throws {@link UnexpectedResponseError} otherwise. */
export function parseCheckSummary(raw: unknown): CheckSummary {
  if (
    !isRecord(raw) ||
    !isNonNegativeInteger(raw.files) ||
    !isNonNegativeInteger(raw.errors) ||
    !isNonNegativeInteger(raw.warnings)
  ) {
    throw new UnexpectedResponseError("check-workspace summary", raw);
  }
  return { files: raw.files, errors: raw.errors, warnings: raw.warnings };
}

function count(n: number, singular: string, plural: string): string {
  return `${n} ${n === 1 ? singular : plural}`;
}

/** E.g. "Checked 12 MLIR files: 3 errors, 1 warning." */
export function formatCheckSummary(summary: CheckSummary): string {
  const files = count(summary.files, "MLIR file", "MLIR files");
  if (summary.errors === 0 && summary.warnings === 0) {
    return `Checked ${files}: no errors or warnings.`;
  }
  return `Checked ${files}: ${count(summary.errors, "error", "errors")}, ${count(summary.warnings, "warning", "warnings")}.`;
}

/** True when the summary reports problems worth opening the Problems view for. */
export function hasProblems(summary: CheckSummary): boolean {
  return summary.errors > 0 || summary.warnings > 0;
}
