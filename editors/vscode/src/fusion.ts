/**
 * "Fuse loops at cursor": the code-action request sent to the server and the
 * choices offered from its answer. No VS Code API here.
 */
import type { CodeAction, CodeActionParams, Command, Diagnostic, Range } from "vscode-languageserver-protocol";

/** Code actions of this kind are requested; the server files loop fusion under it. */
export const FUSION_ACTION_KIND = "refactor.rewrite";

/** Only actions whose title starts with this are offered. */
export const FUSION_TITLE_PREFIX = "Fuse";

/** LSP's CodeActionTriggerKind.Invoked: the user asked explicitly. */
const TRIGGER_INVOKED = 1;

/** The `textDocument/codeAction` parameters for the cursor (or selection) `range`. */
export function fusionCodeActionParams(uri: string, range: Range, diagnostics: Diagnostic[]): CodeActionParams {
  return {
    textDocument: { uri },
    range,
    context: { diagnostics, only: [FUSION_ACTION_KIND], triggerKind: TRIGGER_INVOKED },
  };
}

/** A `Command` has a string `command`; a `CodeAction`'s `command`, if any, is an object. */
export function isCodeAction(item: Command | CodeAction): item is CodeAction {
  return typeof item.title === "string" && typeof (item as { command?: unknown }).command !== "string";
}

/** One entry of the quick pick. */
export interface FusionChoice {
  action: CodeAction;
  enabled: boolean;
  /** Shown under the title: why a disabled action cannot be applied. */
  disabledReason?: string;
}

/** The fusion actions in a code-action response, in the server's order. */
export function fusionChoices(response: readonly (Command | CodeAction)[] | null | undefined): FusionChoice[] {
  return (response ?? [])
    .filter(isCodeAction)
    .filter((action) => action.title.startsWith(FUSION_TITLE_PREFIX))
    .map((action) =>
      action.disabled !== undefined
        ? { action, enabled: false, disabledReason: action.disabled.reason }
        : { action, enabled: true },
    );
}

/** An action without an edit must be completed with `codeAction/resolve` before it is applied. */
export function needsResolve(action: CodeAction): boolean {
  return action.edit === undefined;
}

/** Label, description and detail for a quick-pick item (`$(...)` are VS Code codicons). */
export function choiceLabel(choice: FusionChoice): { label: string; description?: string; detail?: string } {
  if (!choice.enabled) {
    return {
      label: `$(circle-slash) ${choice.action.title}`,
      description: "unavailable",
      detail: choice.disabledReason,
    };
  }
  return {
    label: `$(combine) ${choice.action.title}`,
    description: choice.action.isPreferred === true ? "preferred" : undefined,
  };
}

/** The message when the server offers no fusion at the cursor. */
export const NO_FUSION_MESSAGE = "No loop fusion is available at the cursor. Place it on an affine.for loop.";
