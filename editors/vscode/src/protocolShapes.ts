/** Small runtime checks for values received from the server. */

/** Raised when a server response does not have the documented shape. */
export class UnexpectedResponseError extends Error {
  constructor(what: string, received: unknown) {
    super(`The server sent an unexpected ${what}: ${JSON.stringify(received) ?? String(received)}`);
    this.name = "UnexpectedResponseError";
  }
}

export function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

export function isNonNegativeInteger(value: unknown): value is number {
  return typeof value === "number" && Number.isInteger(value) && value >= 0;
}
