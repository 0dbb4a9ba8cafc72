/**
 * What the Iteration Space panel does, without the VS Code API: it follows a
 * position in a document (the cursor), asks the server for the picture of the
 * loop there and for the refactorings the code actions offer there, previews the
 * one the user selects, and applies it through the code action.
 *
 * Requests wait until the cursor and the text have rested for a moment
 * (debounced); answers to older requests are dropped. Every answer says which
 * version of the document it describes, and what was drawn for another version
 * than the editor's is never shown as current: it is shown dimmed, marked out
 * of date, until the new picture arrives (the panel asks again until it gets
 * the current one).
 */
import type { CodeAction, Position } from "vscode-languageserver-protocol";
import type { DependenceKind } from "./dependenceKinds";
import { DEFAULT_SHOWN_KINDS, orderedKinds } from "./dependenceKinds";
import type { IterationSpaceResult, PreviewResult } from "./iterationSpace";
import type { PanelView, PreviewView } from "./panelView";

/** A quiet time after the last cursor move or keystroke before asking. */
export const FOLLOW_DELAY_MS = 250;

/** Answers for another version in a row after which the panel stops asking (and says so). */
export const MAX_RETRIES = 40;

export const NOT_CAUGHT_UP = "The server has not caught up with the file; move the cursor to ask again.";

/** What the panel follows. */
export interface FollowTarget {
  /** The document's URI, as the server knows it. */
  uri: string;
  version: number;
  position: Position;
  /** How to name it, e.g. "k.mlir:10". */
  label: string;
}

/** What the controller needs from VS Code and the server. */
export interface PanelHost {
  picture(target: FollowTarget): Promise<IterationSpaceResult>;
  refactorings(target: FollowTarget): Promise<CodeAction[]>;
  preview(target: FollowTarget, title: string, cancel: AbortSignal): Promise<PreviewResult>;
  /** Applies a code action (resolving it first when it has no edit). */
  apply(action: CodeAction): Promise<void>;
  /** The editor's current version of a document (undefined: not open). */
  version(uri: string): number | undefined;
  render(view: PanelView): void;
  /** The words for a failed request; undefined when it only means the text changed. */
  describeFailure(error: unknown): string | undefined;
}

export interface Timers {
  set(callback: () => void, milliseconds: number): unknown;
  clear(handle: unknown): void;
}

interface Answer<T> {
  target: FollowTarget;
  result: T;
}

/** The code action chosen in the list, and where the list was asked for. */
interface Chosen {
  action: CodeAction;
  target: FollowTarget;
}

type PreviewState =
  | { kind: "loading"; chosen: Chosen; again?: boolean }
  | { kind: "ready"; chosen: Chosen; answer: Answer<PreviewResult> }
  | { kind: "failed"; chosen: Chosen; message: string };

export class PanelController {
  private target: FollowTarget | undefined;
  private shown: Answer<IterationSpaceResult> | undefined;
  private actions: Answer<CodeAction[]> | undefined;
  private previewState: PreviewState | undefined;
  private status = "";
  private applying = false;
  private timer: unknown;
  private requests = 0;
  private retries = 0;
  private previews = 0;
  private previewCancel: AbortController | undefined;
  private disposed = false;
  /** The kinds of dependence drawn: kept while the panel is open, whatever it draws. */
  private readonly shownKinds = new Set<DependenceKind>(DEFAULT_SHOWN_KINDS);

  constructor(
    private readonly host: PanelHost,
    private readonly timers: Timers,
  ) {}

  /** Follow `target` (the cursor moved, the text changed, another editor): redraw soon. */
  follow(target: FollowTarget): void {
    this.target = target;
    this.retries = 0;
    this.render();
    this.schedule(FOLLOW_DELAY_MS);
  }

  /** Ask again now (the panel became visible, the server restarted). */
  refreshNow(): void {
    this.schedule(0);
  }

  /** Preview the refactoring at `index` of the list shown. */
  select(index: number): void {
    const action = this.currentActions()?.[index];
    const listed = this.actions?.target;
    if (action === undefined || listed === undefined) {
      return;
    }
    this.startPreview({ action, target: listed });
  }

  /** Show the arrows of `kind` if hidden, hide them if shown (no request: the
   * pictures hold every kind's arrows). */
  toggleKind(kind: DependenceKind): void {
    if (!this.shownKinds.delete(kind)) {
      this.shownKinds.add(kind);
    }
    this.render();
  }

  closePreview(): void {
    this.cancelPreview();
    this.previewState = undefined;
    this.render();
  }

  /** Apply the previewed refactoring through its code action. */
  async apply(): Promise<void> {
    const state = this.previewState;
    if (state?.kind !== "ready" || !this.canApply(state) || this.applying) {
      return;
    }
    this.applying = true;
    this.render();
    try {
      await this.host.apply(state.chosen.action);
      this.previewState = undefined;
    } catch (error) {
      const message = this.host.describeFailure(error) ?? "The file changed: choose the refactoring again.";
      this.previewState = { kind: "failed", chosen: state.chosen, message };
    } finally {
      this.applying = false;
    }
    this.render();
  }

  dispose(): void {
    this.disposed = true;
    this.cancelPreview();
    if (this.timer !== undefined) {
      this.timers.clear(this.timer);
      this.timer = undefined;
    }
  }

  /** What the panel shows now. */
  view(): PanelView {
    const target = this.target;
    const shown = this.shown;
    const current = shown !== undefined && target !== undefined && shown.target.uri === target.uri && this.isCurrent(shown);
    const actions = this.currentActions();
    const selected = this.previewState?.chosen.action.title;
    return {
      where: target?.label ?? "",
      picture: shown?.result.picture ?? null,
      message: shown?.result.message ?? "",
      stale: shown !== undefined && !current,
      version: target?.version ?? null,
      drawnFor: shown?.result.version ?? null,
      status: this.status,
      refactorings: (actions ?? this.actions?.result ?? []).map((action) => ({
        title: action.title,
        disabledReason: action.disabled?.reason,
        selected: action.title === selected,
      })),
      refactoringsStale: actions === undefined,
      preview: this.previewView(),
      shownKinds: orderedKinds(this.shownKinds),
    };
  }

  // -- requests ----------------------------------------------------------------------

  private schedule(milliseconds: number): void {
    if (this.disposed) {
      return;
    }
    if (this.timer !== undefined) {
      this.timers.clear(this.timer);
    }
    this.timer = this.timers.set(() => {
      this.timer = undefined;
      void this.refresh();
    }, milliseconds);
  }

  private async refresh(): Promise<void> {
    const target = this.target;
    if (target === undefined || this.disposed) {
      return;
    }
    const request = ++this.requests;
    const latest = () => request === this.requests && !this.disposed;
    this.status = "";
    // Each answer is shown as it arrives; either may ask for another round.
    const picture = this.host.picture(target).then(
      (result) => {
        if (!latest()) {
          return false;
        }
        this.shown = { target, result };
        this.render();
        return !this.isCurrent(this.shown);
      },
      (error: unknown) => latest() && this.failed(error),
    );
    const actions = this.host.refactorings(target).then(
      (result) => {
        if (latest() && this.host.version(target.uri) === target.version) {
          this.actions = { target, result };
          this.followPreview();
          this.render();
        }
        return false;
      },
      (error: unknown) => latest() && this.failed(error),
    );
    const again = (await Promise.all([picture, actions])).some(Boolean);
    if (!latest()) {
      return;
    }
    if (again && this.host.version(target.uri) !== undefined) {
      if (++this.retries <= MAX_RETRIES) {
        this.schedule(FOLLOW_DELAY_MS);
      } else {
        this.status = NOT_CAUGHT_UP;
      }
    }
    this.render();
  }

  /** A failed request: true when it only means the text changed (ask again). */
  private failed(error: unknown): boolean {
    const message = this.host.describeFailure(error);
    if (message === undefined) {
      return true;
    }
    this.status = message;
    return false;
  }

  /** After new refactorings at the cursor: a preview of the current text stays (it is
   * pinned to its loop); one of an older text is previewed again where the new list
   * offers it, or goes. */
  private followPreview(): void {
    const state = this.previewState;
    const actions = this.currentActions();
    const listed = this.actions?.target;
    if (state === undefined || actions === undefined || listed === undefined) {
      return;
    }
    const outdated =
      (state.kind === "ready" && !this.previewIsCurrent(state.answer)) ||
      (state.kind === "loading" && state.again === true) ||
      (state.kind === "failed" && state.chosen.target.version !== listed.version);
    if (!outdated) {
      return;
    }
    const action = actions.find((candidate) => candidate.title === state.chosen.action.title);
    if (action === undefined) {
      this.closePreviewQuietly();
    } else {
      this.startPreview({ action, target: listed }, state);
    }
  }

  private startPreview(chosen: Chosen, keep?: PreviewState): void {
    this.cancelPreview();
    const cancel = new AbortController();
    this.previewCancel = cancel;
    const request = ++this.previews;
    const title = chosen.action.title;
    // While it is computed again, the old pictures stay (shown out of date).
    this.previewState =
      keep?.kind === "ready" && keep.chosen.action.title === title ? { ...keep, chosen } : { kind: "loading", chosen };
    this.render();
    const target = chosen.target;
    this.host.preview(target, title, cancel.signal).then(
      (result) => {
        if (request !== this.previews || this.disposed) {
          return;
        }
        this.previewCancel = undefined;
        const answer = { target, result };
        this.previewState = { kind: "ready", chosen, answer };
        this.render();
        if (!this.previewIsCurrent(answer)) {
          this.schedule(FOLLOW_DELAY_MS);
        }
      },
      (error: unknown) => {
        if (request !== this.previews || this.disposed) {
          return;
        }
        this.previewCancel = undefined;
        const message = this.host.describeFailure(error);
        if (message === undefined) {
          // The text changed: previewed again once the refactorings are listed again.
          this.previewState = { kind: "loading", chosen, again: true };
          this.schedule(FOLLOW_DELAY_MS);
        } else {
          this.previewState = { kind: "failed", chosen, message };
        }
        this.render();
      },
    );
  }

  private cancelPreview(): void {
    this.previews++;
    this.previewCancel?.abort();
    this.previewCancel = undefined;
  }

  private closePreviewQuietly(): void {
    this.cancelPreview();
    this.previewState = undefined;
  }

  // -- versions ----------------------------------------------------------------------

  private isCurrent(answer: Answer<IterationSpaceResult>): boolean {
    return answer.result.version !== null && answer.result.version === this.host.version(answer.target.uri);
  }

  private previewIsCurrent(answer: Answer<PreviewResult>): boolean {
    return answer.result.version !== null && answer.result.version === this.host.version(answer.target.uri);
  }

  /** The refactorings listed for the current version of the followed document (at the
   * position they were asked for, which previews and applies use). */
  private currentActions(): CodeAction[] | undefined {
    const actions = this.actions;
    const target = this.target;
    if (actions === undefined || target === undefined || actions.target.uri !== target.uri) {
      return undefined;
    }
    return actions.target.version === this.host.version(target.uri) ? actions.result : undefined;
  }

  /** A preview of the current text, of an enabled action listed for this text. */
  private canApply(state: Extract<PreviewState, { kind: "ready" }>): boolean {
    const { action, target } = state.chosen;
    return (
      this.previewIsCurrent(state.answer) &&
      target.version === this.host.version(target.uri) &&
      action.disabled === undefined &&
      state.answer.result.after.length > 0
    );
  }

  private previewView(): PreviewView | null {
    const state = this.previewState;
    if (state === undefined) {
      return null;
    }
    const title = state.chosen.action.title;
    if (state.kind === "loading") {
      return { kind: "loading", title };
    }
    if (state.kind === "failed") {
      return { kind: "failed", title, message: state.message };
    }
    return {
      kind: "ready",
      result: state.answer.result,
      stale: !this.previewIsCurrent(state.answer),
      canApply: this.canApply(state),
      applying: this.applying,
    };
  }

  private render(): void {
    if (!this.disposed) {
      this.host.render(this.view());
    }
  }
}
