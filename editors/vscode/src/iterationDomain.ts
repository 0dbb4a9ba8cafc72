/**
 * The custom request `affine-lsp/iterationDomain`: parameters, response
 * validation and how the answer is shown. No VS Code API here.
 */
import type { Position } from "vscode-languageserver-protocol";
import { UnexpectedResponseError, isRecord } from "./protocolShapes";

export const ITERATION_DOMAIN_METHOD = "affine-lsp/iterationDomain";

export interface IterationDomainParams {
  textDocument: { uri: string };
  position: Position;
}

/** The server's answer: the domain as text (e.g. an ISL set), or null with a reason in `message`. */
export interface IterationDomainResult {
  domain: string | null;
  message: string;
}

export function iterationDomainParams(uri: string, position: Position): IterationDomainParams {
  return { textDocument: { uri }, position: { line: position.line, character: position.character } };
}

/** Checks the response shape; throws {@link UnexpectedResponseError} otherwise. */
export function parseIterationDomainResult(raw: unknown): IterationDomainResult {
  if (
    !isRecord(raw) ||
    typeof raw.message !== "string" ||
    !(raw.domain === null || typeof raw.domain === "string")
  ) {
    throw new UnexpectedResponseError("iteration domain response", raw);
  }
  return { domain: raw.domain, message: raw.message };
}

/** What to show: a one-line notification and a fuller entry for the output channel. */
export interface IterationDomainPresentation {
  hasDomain: boolean;
  notification: string;
  log: string;
}

/** Formats an answer for the user; `where` names the cursor position, e.g. "file.mlir:12:5". */
export function presentIterationDomain(result: IterationDomainResult, where: string): IterationDomainPresentation {
  if (result.domain === null) {
    const reason = result.message !== "" ? result.message : "No affine loop nest encloses the cursor.";
    return { hasDomain: false, notification: reason, log: `[${where}] no iteration domain: ${reason}` };
  }
  const note = result.message !== "" ? ` — ${result.message}` : "";
  return {
    hasDomain: true,
    notification: `Iteration domain: ${result.domain}${note}`,
    log: `[${where}] iteration domain${note}\n  ${result.domain}`,
  };
}
