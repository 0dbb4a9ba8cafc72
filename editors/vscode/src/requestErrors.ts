/** Turns a failed server request into a message for the user. No VS Code API here. */

/** JSON-RPC "method not found": the server does not implement the request. */
export const METHOD_NOT_FOUND = -32601;

/** LSP "request cancelled". */
export const REQUEST_CANCELLED = -32800;

/** LSP "content modified": the document changed while the request was answered. */
export const CONTENT_MODIFIED = -32801;

function errorCode(error: unknown): number | undefined {
  const code = (error as { code?: unknown } | null)?.code;
  return typeof code === "number" ? code : undefined;
}

/** Whether the request was cancelled (nothing to report then). */
export function isCancellation(error: unknown): boolean {
  return errorCode(error) === REQUEST_CANCELLED;
}

/** A message naming what failed; `what` reads like "Fuse loops". */
export function describeRequestError(what: string, error: unknown): string {
  if (errorCode(error) === METHOD_NOT_FOUND) {
    return `${what}: this version of the affine-lsp server does not support it.`;
  }
  const detail = error instanceof Error ? error.message : String(error);
  return `${what} failed: ${detail}`;
}
