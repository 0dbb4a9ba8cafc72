/**
 * The requests behind the Iteration Space panel: `affine-lsp/iterationSpace` (the
 * picture of the loop at the cursor), `affine-lsp/previewRefactoring` (a
 * refactoring's pictures before and after) and the code actions it lists.
 * Parameters and response validation; no VS Code API here.
 */
import type { CodeAction, CodeActionParams, Command, Position, Range } from "vscode-languageserver-protocol";
import { isCodeAction } from "./fusion";
import { UnexpectedResponseError, isNonNegativeInteger, isRecord } from "./protocolShapes";

export const ITERATION_SPACE_METHOD = "affine-lsp/iterationSpace";
export const PREVIEW_REFACTORING_METHOD = "affine-lsp/previewRefactoring";

/** Code actions of this kind (and below it) are the refactorings the panel lists. */
export const REFACTOR_KIND = "refactor";

/** The code action that opens the panel, offered on the line of a loop's header. */
export const PANEL_ACTION_TITLE = "Preview Refactorings in Iteration Space";

const LOOP_HEADER = /(^|[\s"])affine\.(for|parallel)\b/;

/** Whether the line of the cursor heads an affine loop (where the panel's action is offered). */
export function headsLoop(lineText: string): boolean {
  return LOOP_HEADER.test(lineText.replace(/\/\/.*$/, ""));
}

/** LSP's CodeActionTriggerKind.Invoked. */
const TRIGGER_INVOKED = 1;

/** One nest's picture, as the server draws it. */
export interface NestPicture {
  svg: string;
  /** The loop's header and line, e.g. "affine.for %i = 0 to 64 (line 9)". */
  caption: string;
  /** The nest's iteration domain, e.g. "[N] -> { [i, j] : 0 <= i < N and 0 <= j <= i }". */
  domain: string;
  /** 0-based line of the loop. */
  line: number;
  /** Points drawn (one circle each), of `total` in the domain. */
  points: number;
  total: number;
  arrows: number;
  tiles: number;
  moved: number;
}

/** The answer about the loop at a position, for document version `version`. */
export interface IterationSpaceResult {
  version: number | null;
  picture: NestPicture | null;
  message: string;
}

/** A refactoring's pictures; `reason` says why there are none after. */
export interface PreviewResult {
  version: number | null;
  title: string;
  before: NestPicture[];
  after: NestPicture[];
  reason: string | null;
  notes: string[];
  /** Why the code action is disabled (it is then shown before only). */
  disabled: string | null;
}

export function iterationSpaceParams(uri: string, position: Position): { textDocument: { uri: string }; position: Position } {
  return { textDocument: { uri }, position: { line: position.line, character: position.character } };
}

export function previewParams(
  uri: string,
  position: Position,
  title: string,
): { textDocument: { uri: string }; range: Range; title: string } {
  const at = { line: position.line, character: position.character };
  return { textDocument: { uri }, range: { start: at, end: { ...at } }, title };
}

/** The code-action request whose refactorings the panel lists (as an explicit request). */
export function refactoringParams(uri: string, position: Position): CodeActionParams {
  const at = { line: position.line, character: position.character };
  return {
    textDocument: { uri },
    range: { start: at, end: { ...at } },
    context: { diagnostics: [], only: [REFACTOR_KIND], triggerKind: TRIGGER_INVOKED },
  };
}

/** The refactorings of a code-action answer, in the server's order. */
export function refactorings(response: readonly (Command | CodeAction)[] | null | undefined): CodeAction[] {
  return (response ?? [])
    .filter(isCodeAction)
    .filter((action) => action.kind === undefined || action.kind === REFACTOR_KIND || action.kind.startsWith(`${REFACTOR_KIND}.`));
}

function isVersion(value: unknown): value is number | null {
  return value === null || (typeof value === "number" && Number.isInteger(value));
}

function parsePicture(raw: unknown, what: string): NestPicture {
  const counts = ["line", "points", "total", "arrows", "tiles", "moved"] as const;
  if (
    !isRecord(raw) ||
    typeof raw.svg !== "string" ||
    typeof raw.caption !== "string" ||
    typeof raw.domain !== "string" ||
    !counts.every((key) => isNonNegativeInteger(raw[key]))
  ) {
    throw new UnexpectedResponseError(what, raw);
  }
  const picture: NestPicture = {
    svg: raw.svg,
    caption: raw.caption,
    domain: raw.domain,
    line: raw.line as number,
    points: raw.points as number,
    total: raw.total as number,
    arrows: raw.arrows as number,
    tiles: raw.tiles as number,
    moved: raw.moved as number,
  };
  return picture;
}

/** Checks the shape of an `affine-lsp/iterationSpace` answer. */
export function parseIterationSpaceResult(raw: unknown): IterationSpaceResult {
  const what = "iteration space response";
  if (!isRecord(raw) || !isVersion(raw.version) || typeof raw.message !== "string") {
    throw new UnexpectedResponseError(what, raw);
  }
  const picture = raw.picture === null || raw.picture === undefined ? null : parsePicture(raw.picture, what);
  return { version: raw.version, picture, message: raw.message };
}

function textOrNull(value: unknown): value is string | null | undefined {
  return value === null || value === undefined || typeof value === "string";
}

/** Checks the shape of an `affine-lsp/previewRefactoring` answer. */
export function parsePreviewResult(raw: unknown): PreviewResult {
  const what = "refactoring preview";
  if (
    !isRecord(raw) ||
    !isVersion(raw.version) ||
    typeof raw.title !== "string" ||
    !Array.isArray(raw.before) ||
    !Array.isArray(raw.after) ||
    !textOrNull(raw.reason) ||
    !textOrNull(raw.disabled) ||
    !(raw.notes === undefined || (Array.isArray(raw.notes) && raw.notes.every((note) => typeof note === "string")))
  ) {
    throw new UnexpectedResponseError(what, raw);
  }
  return {
    version: raw.version,
    title: raw.title,
    before: raw.before.map((picture) => parsePicture(picture, what)),
    after: raw.after.map((picture) => parsePicture(picture, what)),
    reason: raw.reason ?? null,
    notes: raw.notes ?? [],
    disabled: raw.disabled ?? null,
  };
}
