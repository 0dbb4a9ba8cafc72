/**
 * The Iteration Space panel's HTML: the webview's document (a strict
 * Content-Security-Policy: nothing loads but `data:` images, and only the
 * panel's own script, by nonce, runs) and the body rendered from a
 * {@link PanelView}. Pictures are SVG shown as `data:image/svg+xml` images, so
 * nothing in them is part of the page. Every text is escaped. No VS Code API here.
 */
import type { DependenceKind } from "./dependenceKinds";
import { DEPENDENCE_KINDS, KIND_WORDS, isDependenceKind, showKinds } from "./dependenceKinds";
import type { NestPicture, PreviewResult } from "./iterationSpace";

/** A refactoring listed at the cursor's loop. */
export interface ListedRefactoring {
  title: string;
  disabledReason?: string;
  selected: boolean;
}

/** What the preview part shows. */
export type PreviewView =
  | { kind: "loading"; title: string }
  | { kind: "ready"; result: PreviewResult; stale: boolean; canApply: boolean; applying: boolean }
  | { kind: "failed"; title: string; message: string };

/** Everything the panel shows. */
export interface PanelView {
  /** What is followed, e.g. "producer_consumer.mlir:9". */
  where: string;
  /** The picture of the loop at the cursor, if one was drawn. */
  picture: NestPicture | null;
  /** The server's message (the loop's header, or why there is no picture). */
  message: string;
  /** True when what is shown was computed for another version of the file. */
  stale: boolean;
  /** The version of the file followed (the editor's), and the one the picture was drawn for. */
  version: number | null;
  drawnFor: number | null;
  /** A problem to tell (the server is not running, a request failed). */
  status: string;
  refactorings: ListedRefactoring[];
  /** True when the list was made for another version or place. */
  refactoringsStale: boolean;
  preview: PreviewView | null;
  /** The kinds of dependence whose arrows the pictures show (the toggles pressed). */
  shownKinds: readonly DependenceKind[];
}

/** Messages the webview's script posts. */
export type WebviewMessage =
  | { command: "ready" }
  | { command: "preview"; index: number }
  | { command: "apply" }
  | { command: "closePreview" }
  | { command: "reveal"; line: number }
  | { command: "toggleKind"; kind: DependenceKind };

const ESCAPES: Record<string, string> = { "&": "&amp;", "<": "&lt;", ">": "&gt;", '"': "&quot;", "'": "&#39;" };

export function escapeHtml(text: string): string {
  return text.replace(/[&<>"']/g, (character) => ESCAPES[character]);
}

/** An SVG as a `data:` URI (base64: no character of it reaches the HTML). */
export function svgDataUri(svg: string): string {
  return `data:image/svg+xml;base64,${Buffer.from(svg, "utf8").toString("base64")}`;
}

function plural(count: number, word: string): string {
  return `${count.toLocaleString("en-US")} ${word}${count === 1 ? "" : "s"}`;
}

/** A picture's numbers in words, e.g. "99 points, 168 arrows, 12 tiles". */
export function describePicture(picture: NestPicture): string {
  const parts = [
    picture.points === picture.total
      ? plural(picture.points, "point")
      : `${picture.points.toLocaleString("en-US")} of ${plural(picture.total, "point")} drawn`,
    plural(picture.arrows, "dependence arrow"),
  ];
  if (picture.tiles > 0) {
    parts.push(plural(picture.tiles, "tile"));
  }
  if (picture.moved > 0) {
    parts.push(`${picture.moved.toLocaleString("en-US")} moved`);
  }
  return parts.join(", ");
}

const SIZE = /^<svg\b[^>]*?\swidth="(\d+(?:\.\d+)?)"[^>]*?\sheight="(\d+(?:\.\d+)?)"/;

/** The width and height an SVG declares (its natural size), if it declares them. */
export function svgSize(svg: string): { width: number; height: number } | undefined {
  const found = SIZE.exec(svg.trimStart());
  return found === null ? undefined : { width: Math.ceil(Number(found[1])), height: Math.ceil(Number(found[2])) };
}

function image(picture: NestPicture, role: string, shown: readonly DependenceKind[]): string {
  const alt = `${picture.caption}: ${describePicture(picture)}`;
  const size = svgSize(picture.svg);
  // Shown at its natural size, smaller where the panel is narrower (never blurred up).
  const dimensions = size !== undefined ? ` width="${size.width}" height="${size.height}"` : "";
  return (
    `<img class="nest" data-role="${role}" data-points="${picture.points}" data-arrows="${picture.arrows}" ` +
    `data-tiles="${picture.tiles}" data-moved="${picture.moved}" data-shown="${shown.join(" ")}"` +
    `${dimensions} alt="${escapeHtml(alt)}" src="${svgDataUri(showKinds(picture.svg, shown))}">`
  );
}

function caption(picture: NestPicture): string {
  return (
    `<figcaption><button class="link" data-command="reveal" data-line="${picture.line}" ` +
    `title="Go to this loop">${escapeHtml(picture.caption)}</button>` +
    `<span class="counts">${escapeHtml(describePicture(picture))}</span>` +
    `<code class="domain">${escapeHtml(picture.domain)}</code></figcaption>`
  );
}

function figure(picture: NestPicture, role: string, shown: readonly DependenceKind[]): string {
  return `<figure>${caption(picture)}${image(picture, role, shown)}</figure>`;
}

/** The toggles of the kinds of dependence drawn, one button each (pressed: shown). */
function kindToggles(shown: readonly DependenceKind[]): string {
  const buttons = DEPENDENCE_KINDS.map(
    (kind) =>
      `<button class="kind ${kind}" data-command="toggleKind" data-kind="${kind}" aria-pressed="${shown.includes(kind)}" ` +
      `title="${shown.includes(kind) ? "Hide" : "Show"} the ${kind} (${KIND_WORDS[kind]}) dependences">${kind}</button>`,
  );
  return `<div class="kinds" role="group" aria-label="Dependences drawn"><span>Dependences:</span>${buttons.join("")}</div>`;
}

/** Whether the panel shows a picture (the toggles are shown with them). */
function hasPictures(view: PanelView): boolean {
  const preview = view.preview;
  return view.picture !== null || (preview?.kind === "ready" && preview.result.before.length + preview.result.after.length > 0);
}

/** A `data-` attribute naming a version of the file (for tests and tools reading the page). */
function versionAttribute(name: string, version: number | null): string {
  return version === null ? "" : ` data-${name}="${version}"`;
}

const STALE_BANNER = '<p class="banner" role="status">Out of date: the file changed. Redrawing…</p>';

function currentSection(view: PanelView): string {
  const parts = [
    `<section class="current${view.stale ? " stale" : ""}" aria-busy="${view.stale}"` +
      `${versionAttribute("version", view.version)}${versionAttribute("drawn-for", view.drawnFor)}>`,
  ];
  parts.push(`<h1>${escapeHtml(view.where || "Iteration space")}</h1>`);
  if (hasPictures(view)) {
    parts.push(kindToggles(view.shownKinds));
  }
  if (view.stale) {
    parts.push(STALE_BANNER);
  }
  if (view.picture !== null && view.preview !== null) {
    // The preview draws this loop (before); its caption is enough here.
    parts.push(`<figure>${caption(view.picture)}</figure>`);
  } else if (view.picture !== null) {
    parts.push(figure(view.picture, "current", view.shownKinds));
  } else {
    parts.push(`<p class="message">${escapeHtml(view.message || "Place the cursor on an affine loop.")}</p>`);
  }
  parts.push("</section>");
  return parts.join("");
}

function refactoringSection(view: PanelView): string {
  if (view.picture === null && view.refactorings.length === 0) {
    return "";
  }
  const parts = [`<section class="refactorings${view.refactoringsStale ? " stale" : ""}"><h2>Refactorings at this loop</h2>`];
  if (view.refactorings.length === 0) {
    parts.push(`<p class="message">${view.refactoringsStale ? "Looking for refactorings…" : "None offered here."}</p>`);
  } else {
    parts.push("<ul>");
    view.refactorings.forEach((refactoring, index) => {
      const reason =
        refactoring.disabledReason !== undefined
          ? `<span class="reason">${escapeHtml(refactoring.disabledReason)}</span>`
          : "";
      const disabled = view.refactoringsStale ? " disabled" : "";
      parts.push(
        `<li${refactoring.disabledReason !== undefined ? ' class="unavailable"' : ""}>` +
          `<button data-command="preview" data-index="${index}" aria-pressed="${refactoring.selected}"${disabled}>` +
          `${escapeHtml(refactoring.title)}</button>${reason}</li>`,
      );
    });
    parts.push("</ul>");
  }
  parts.push("</section>");
  return parts.join("");
}

function side(label: string, pictures: NestPicture[], role: string, empty: string, shown: readonly DependenceKind[]): string {
  const content =
    pictures.length > 0 ? pictures.map((picture) => figure(picture, role, shown)).join("") : `<p class="message">${escapeHtml(empty)}</p>`;
  return `<div class="side ${role}"><h3>${label}</h3>${content}</div>`;
}

function previewSection(preview: PreviewView | null, shown: readonly DependenceKind[]): string {
  if (preview === null) {
    return "";
  }
  const close = '<button data-command="closePreview" title="Close the preview">Close</button>';
  if (preview.kind === "loading") {
    return (
      `<section class="preview" aria-busy="true"><h2>${escapeHtml(preview.title)}</h2>` +
      `<p class="message" role="status">Computing the refactoring and its pictures…</p>${close}</section>`
    );
  }
  if (preview.kind === "failed") {
    return (
      `<section class="preview"><h2>${escapeHtml(preview.title)}</h2>` +
      `<p class="message error" role="alert">${escapeHtml(preview.message)}</p>${close}</section>`
    );
  }
  const result = preview.result;
  const apply = preview.canApply
    ? `<button class="primary" data-command="apply"${preview.applying ? " disabled" : ""}>${preview.applying ? "Applying…" : "Apply"}</button>`
    : "";
  const why = result.disabled ?? result.reason;
  const parts = [
    `<section class="preview${preview.stale ? " stale" : ""}" aria-busy="${preview.stale}"${versionAttribute("drawn-for", result.version)}>`,
    `<h2>${escapeHtml(result.title)}</h2>`,
    preview.stale ? STALE_BANNER : "",
    why !== null ? `<p class="message reason">${escapeHtml(why)}</p>` : "",
    ...result.notes.map((note) => `<p class="message note">${escapeHtml(note)}</p>`),
    `<div class="actions">${apply}${close}</div>`,
    '<div class="sides">',
    side("Before", result.before, "before", "Nothing to draw.", shown),
    side("After", result.after, "after", why ?? "Nothing to draw.", shown),
    "</div></section>",
  ];
  return parts.join("");
}

/** The panel's body for a view. */
export function renderBody(view: PanelView): string {
  const status = view.status !== "" ? `<p class="status" role="alert">${escapeHtml(view.status)}</p>` : "";
  return status + currentSection(view) + previewSection(view.preview, view.shownKinds) + refactoringSection(view);
}

/** The Content-Security-Policy of the panel: `data:` images, styles and script by nonce. */
export function contentSecurityPolicy(nonce: string): string {
  return [
    "default-src 'none'",
    "img-src data:",
    `style-src 'nonce-${nonce}'`,
    `script-src 'nonce-${nonce}'`,
    "base-uri 'none'",
    "form-action 'none'",
  ].join("; ");
}

const STYLE = `
body { color: var(--vscode-foreground); background: var(--vscode-editor-background);
  font-family: var(--vscode-font-family); font-size: var(--vscode-font-size); padding: 0 12px 16px; }
h1 { font-size: 1.1em; margin: 12px 0 4px; font-weight: 600; }
h2 { font-size: 1.05em; margin: 14px 0 6px; font-weight: 600; }
h3 { font-size: 0.95em; margin: 4px 0; opacity: 0.8; text-transform: uppercase; letter-spacing: 0.04em; }
figure { margin: 0 0 10px; }
figcaption { display: flex; flex-wrap: wrap; gap: 2px 10px; align-items: baseline; margin-bottom: 4px; }
.counts, .reason, .note { opacity: 0.75; font-size: 0.92em; }
img.nest { display: block; max-width: 100%; height: auto; }
.domain { display: block; width: 100%; font-family: var(--vscode-editor-font-family); font-size: 0.9em; opacity: 0.85;
  overflow-wrap: anywhere; }
.stale img.nest { opacity: 0.35; filter: grayscale(1); }
.banner, .status { padding: 4px 8px; border-left: 3px solid var(--vscode-editorWarning-foreground, #cca700);
  background: var(--vscode-inputValidation-warningBackground, transparent); }
.error { color: var(--vscode-errorForeground); }
.sides { display: flex; flex-wrap: wrap; gap: 16px; align-items: flex-start; }
.side { flex: 1 1 240px; min-width: 0; }
ul { list-style: none; padding: 0; margin: 0; }
li { margin: 3px 0; }
li .reason { display: block; margin-left: 8px; }
button { font: inherit; color: var(--vscode-button-secondaryForeground); background: var(--vscode-button-secondaryBackground);
  border: 1px solid var(--vscode-button-border, transparent); border-radius: 2px; padding: 3px 10px; cursor: pointer; text-align: left; }
button:hover:not([disabled]) { background: var(--vscode-button-secondaryHoverBackground); }
button[aria-pressed="true"] { outline: 1px solid var(--vscode-focusBorder); }
button.primary { color: var(--vscode-button-foreground); background: var(--vscode-button-background); }
button.primary:hover:not([disabled]) { background: var(--vscode-button-hoverBackground); }
button[disabled] { opacity: 0.5; cursor: default; }
button.link { background: none; border: none; padding: 0; color: var(--vscode-textLink-foreground); font-weight: 600; }
li.unavailable button { opacity: 0.7; }
.actions { display: flex; gap: 8px; margin: 6px 0 10px; }
.kinds { display: flex; flex-wrap: wrap; gap: 4px; align-items: baseline; margin: 4px 0 8px; }
.kinds span { opacity: 0.75; font-size: 0.92em; margin-right: 4px; }
.kinds button[aria-pressed="true"] { color: var(--vscode-button-foreground); background: var(--vscode-button-background); }
.kinds button[aria-pressed="false"] { opacity: 0.7; }
`;

/**
 * The panel's script: replaces the body with each rendering the extension posts
 * (its own escaped HTML; scripts inserted that way never run, and the policy runs
 * none but this one), keeps the keyboard focus on the same control, and posts
 * the controls' commands back.
 */
const SCRIPT = `
(function () {
  const vscode = acquireVsCodeApi();
  const root = document.getElementById("root");
  const keyOf = (element) => element && element.getAttribute && element.getAttribute("data-command") !== null
    ? element.getAttribute("data-command") + ":" + (element.getAttribute("data-index") || element.getAttribute("data-kind") || "")
    : null;
  window.addEventListener("message", (event) => {
    const message = event.data;
    if (!message || message.type !== "render" || typeof message.html !== "string") return;
    const focused = keyOf(document.activeElement);
    root.innerHTML = message.html;
    if (focused !== null) {
      const again = [...root.querySelectorAll("[data-command]")].find((element) => keyOf(element) === focused);
      if (again) again.focus();
    }
  });
  document.addEventListener("click", (event) => {
    const control = event.target instanceof Element ? event.target.closest("[data-command]") : null;
    if (!control || control.hasAttribute("disabled")) return;
    vscode.postMessage({
      command: control.getAttribute("data-command"),
      index: Number(control.getAttribute("data-index") || "-1"),
      line: Number(control.getAttribute("data-line") || "-1"),
      kind: control.getAttribute("data-kind") || "",
    });
  });
  vscode.postMessage({ command: "ready" });
})();
`;

/** The webview's whole document, showing `body` until the first rendering arrives. */
export function panelDocument(nonce: string, body: string): string {
  return [
    "<!DOCTYPE html>",
    '<html lang="en"><head><meta charset="UTF-8">',
    `<meta http-equiv="Content-Security-Policy" content="${contentSecurityPolicy(nonce)}">`,
    '<meta name="viewport" content="width=device-width, initial-scale=1.0">',
    "<title>Iteration Space</title>",
    `<style nonce="${nonce}">${STYLE}</style>`,
    `</head><body><main id="root">${body}</main>`,
    `<script nonce="${nonce}">${SCRIPT}</script>`,
    "</body></html>",
  ].join("\n");
}

/** A nonce for the document's style and script (`random` gives bytes). */
export function makeNonce(random: (size: number) => Uint8Array): string {
  return Buffer.from(random(18)).toString("base64").replace(/[^A-Za-z0-9]/g, "");
}

function integer(value: unknown): number | undefined {
  return typeof value === "number" && Number.isInteger(value) && value >= 0 ? value : undefined;
}

/** A message from the webview, if it is one of the panel's; anything else is ignored. */
export function parseWebviewMessage(raw: unknown): WebviewMessage | undefined {
  if (typeof raw !== "object" || raw === null) {
    return undefined;
  }
  const message = raw as Record<string, unknown>;
  switch (message.command) {
    case "ready":
    case "apply":
    case "closePreview":
      return { command: message.command };
    case "preview": {
      const index = integer(message.index);
      return index === undefined ? undefined : { command: "preview", index };
    }
    case "reveal": {
      const line = integer(message.line);
      return line === undefined ? undefined : { command: "reveal", line };
    }
    case "toggleKind":
      return isDependenceKind(message.kind) ? { command: "toggleKind", kind: message.kind } : undefined;
    default:
      return undefined;
  }
}
