/**
 * The panel's behaviour: debounced requests, answers of older requests dropped,
 * pictures of another version never shown as current, previews that follow the
 * text, and Apply through the code action. Timers and answers are driven by hand.
 */
import * as assert from "node:assert/strict";
import { beforeEach, describe, it } from "node:test";
import type { CodeAction } from "vscode-languageserver-protocol";
import type { IterationSpaceResult, PreviewResult } from "../src/iterationSpace";
import type { FollowTarget, PanelHost } from "../src/panelController";
import { FOLLOW_DELAY_MS, MAX_RETRIES, NOT_CAUGHT_UP, PanelController } from "../src/panelController";
import type { PanelView, PreviewView } from "../src/panelView";
import { PICTURE } from "./support/pictures";

const URI = "file:///work/k.mlir";

class Deferred<T> {
  resolve!: (value: T) => void;
  reject!: (error: unknown) => void;
  readonly promise = new Promise<T>((resolve, reject) => {
    this.resolve = resolve;
    this.reject = reject;
  });
}

/** Timers that fire only when told. */
class ManualTimers {
  pending = new Map<number, { callback: () => void; milliseconds: number }>();
  private next = 0;

  set = (callback: () => void, milliseconds: number): unknown => {
    this.pending.set(++this.next, { callback, milliseconds });
    return this.next;
  };

  clear = (handle: unknown): void => {
    this.pending.delete(handle as number);
  };

  /** Fires what is pending (what those callbacks schedule waits for the next call). */
  async fire(): Promise<void> {
    const due = [...this.pending.values()];
    this.pending.clear();
    for (const timer of due) {
      timer.callback();
    }
    await settle();
  }
}

async function settle(): Promise<void> {
  for (let round = 0; round < 10; round++) {
    await new Promise((resolve) => setImmediate(resolve));
  }
}

class FakeHost implements PanelHost {
  versions = new Map<string, number>([[URI, 1]]);
  pictures: { target: FollowTarget; answer: Deferred<IterationSpaceResult> }[] = [];
  actionRequests: { target: FollowTarget; answer: Deferred<CodeAction[]> }[] = [];
  previews: { target: FollowTarget; title: string; cancel: AbortSignal; answer: Deferred<PreviewResult> }[] = [];
  applied: CodeAction[] = [];
  views: PanelView[] = [];

  picture(target: FollowTarget): Promise<IterationSpaceResult> {
    const answer = new Deferred<IterationSpaceResult>();
    this.pictures.push({ target, answer });
    return answer.promise;
  }

  refactorings(target: FollowTarget): Promise<CodeAction[]> {
    const answer = new Deferred<CodeAction[]>();
    this.actionRequests.push({ target, answer });
    return answer.promise;
  }

  preview(target: FollowTarget, title: string, cancel: AbortSignal): Promise<PreviewResult> {
    const answer = new Deferred<PreviewResult>();
    this.previews.push({ target, title, cancel, answer });
    return answer.promise;
  }

  apply(action: CodeAction): Promise<void> {
    this.applied.push(action);
    return Promise.resolve();
  }

  version(uri: string): number | undefined {
    return this.versions.get(uri);
  }

  render(view: PanelView): void {
    this.views.push(view);
  }

  describeFailure(error: unknown): string | undefined {
    return (error as { code?: number }).code === -32801 ? undefined : `failed: ${String(error)}`;
  }

  get last(): PanelView {
    return this.views[this.views.length - 1];
  }
}

type ReadyPreview = Extract<PreviewView, { kind: "ready" }>;

function isReady(preview: PreviewView | null, check: (preview: ReadyPreview) => boolean): boolean {
  return preview?.kind === "ready" && check(preview);
}

/** The preview shown now (a call: TypeScript does not narrow it across assertions). */
function shownPreview(): PreviewView | null {
  return host.last.preview;
}

function target(line: number, version = 1, character = 4): FollowTarget {
  return { uri: URI, version, position: { line, character }, label: `k.mlir:${line + 1}` };
}

function pictureAnswer(version: number | null, caption = PICTURE.caption): IterationSpaceResult {
  return { version, picture: { ...PICTURE, caption }, message: caption };
}

function previewAnswer(version: number, title: string): PreviewResult {
  return { version, title, before: [PICTURE], after: [{ ...PICTURE, tiles: 4 }], reason: null, notes: [], disabled: null };
}

const TILE: CodeAction = { title: "Tile 4×4", kind: "refactor.rewrite", data: { id: "1" } };
const INTERCHANGE: CodeAction = { title: "Interchange %i and %j", kind: "refactor.rewrite", disabled: { reason: "illegal" } };
const CONTENT_MODIFIED = Object.assign(new Error("changed"), { code: -32801 });

let host: FakeHost;
let timers: ManualTimers;
let controller: PanelController;

/** Follows `to`, lets the debounce pass and answers both requests. */
async function answerRound(to: FollowTarget, picture: IterationSpaceResult, actions: CodeAction[]): Promise<void> {
  controller.follow(to);
  await timers.fire();
  host.pictures[host.pictures.length - 1].answer.resolve(picture);
  host.actionRequests[host.actionRequests.length - 1].answer.resolve(actions);
  await settle();
}

beforeEach(() => {
  host = new FakeHost();
  timers = new ManualTimers();
  controller = new PanelController(host, timers);
});

describe("following the cursor", () => {
  it("asks once the cursor rests, and shows the picture of that version as current", async () => {
    controller.follow(target(2));
    controller.follow(target(3));
    controller.follow(target(4));
    assert.equal(host.pictures.length, 0, "nothing is asked before the cursor rests");
    assert.deepEqual([...timers.pending.values()].map((timer) => timer.milliseconds), [FOLLOW_DELAY_MS]);
    await timers.fire();
    assert.deepEqual(host.pictures.map((request) => request.target.position.line), [4]);
    assert.deepEqual(host.actionRequests.map((request) => request.target.position.line), [4]);
    host.pictures[0].answer.resolve(pictureAnswer(1));
    await settle();
    assert.equal(host.last.picture?.caption, PICTURE.caption);
    assert.equal(host.last.stale, false);
    assert.equal(host.last.where, "k.mlir:5");
  });

  it("drops the answer of a request a newer one replaced", async () => {
    controller.follow(target(2));
    await timers.fire();
    controller.follow(target(6));
    await timers.fire();
    host.pictures[1].answer.resolve(pictureAnswer(1, "newer"));
    await settle();
    host.pictures[0].answer.resolve(pictureAnswer(1, "older"));
    await settle();
    assert.equal(host.last.picture?.caption, "newer");
    assert.ok(host.views.every((view) => view.picture?.caption !== "older"));
  });

  it("never shows a picture of another version as current: dimmed at once, asked again until current", async () => {
    await answerRound(target(2), pictureAnswer(1, "v1"), [TILE]);
    assert.equal(host.last.stale, false);
    // A keystroke: version 2. What is shown is marked out of date right away.
    host.versions.set(URI, 2);
    controller.follow(target(2, 2));
    assert.equal(host.last.picture?.caption, "v1");
    assert.equal(host.last.stale, true);
    assert.deepEqual([host.last.version, host.last.drawnFor], [2, 1]);
    assert.equal(host.last.refactoringsStale, true, "the list of version 1 cannot be used");
    await timers.fire();
    // The server still answers for version 1 (it had not seen the change): still out of date...
    host.pictures[1].answer.resolve(pictureAnswer(1, "v1 again"));
    host.actionRequests[1].answer.reject(CONTENT_MODIFIED);
    await settle();
    assert.equal(host.last.stale, true);
    // ... and the panel asks again by itself.
    await timers.fire();
    assert.equal(host.pictures.length, 3);
    host.pictures[2].answer.resolve(pictureAnswer(2, "v2"));
    host.actionRequests[2].answer.resolve([TILE]);
    await settle();
    assert.equal(host.last.picture?.caption, "v2");
    assert.equal(host.last.stale, false);
    assert.deepEqual([host.last.version, host.last.drawnFor], [2, 2]);
    assert.equal(host.last.refactoringsStale, false);
    assert.equal(timers.pending.size, 0, "nothing more to ask");
  });

  it("stops asking when the server never catches up, and says so", async () => {
    controller.follow(target(2, 5));
    host.versions.set(URI, 5);
    for (let round = 0; round <= MAX_RETRIES; round++) {
      await timers.fire();
      host.pictures[host.pictures.length - 1].answer.resolve(pictureAnswer(4));
      host.actionRequests[host.actionRequests.length - 1].answer.resolve([]);
      await settle();
    }
    assert.equal(timers.pending.size, 0);
    assert.equal(host.last.status, NOT_CAUGHT_UP);
    assert.equal(host.last.stale, true);
  });

  it("reports a failed request in the panel", async () => {
    controller.follow(target(2));
    await timers.fire();
    host.pictures[0].answer.reject(new Error("no server"));
    host.actionRequests[0].answer.resolve([]);
    await settle();
    assert.match(host.last.status, /failed: Error: no server/);
    assert.equal(timers.pending.size, 0);
  });
});

describe("previewing a refactoring", () => {
  it("lists the code actions and previews the one selected, at the position they were listed for", async () => {
    await answerRound(target(2), pictureAnswer(1), [INTERCHANGE, TILE]);
    assert.deepEqual(
      host.last.refactorings.map((entry) => [entry.title, entry.disabledReason, entry.selected]),
      [
        ["Interchange %i and %j", "illegal", false],
        ["Tile 4×4", undefined, false],
      ],
    );
    controller.follow(target(3)); // the cursor moves on; the list stays usable (same version)
    controller.select(1);
    assert.deepEqual(host.last.preview, { kind: "loading", title: "Tile 4×4" });
    assert.equal(host.previews[0].title, "Tile 4×4");
    assert.equal(host.previews[0].target.position.line, 2);
    host.previews[0].answer.resolve(previewAnswer(1, "Tile 4×4"));
    await settle();
    const preview = shownPreview();
    assert.ok(preview?.kind === "ready" && preview.canApply && !preview.stale);
    assert.equal(host.last.refactorings[1].selected, true);
  });

  it("applies the previewed refactoring through its code action", async () => {
    await answerRound(target(2), pictureAnswer(1), [TILE]);
    controller.select(0);
    host.previews[0].answer.resolve(previewAnswer(1, TILE.title));
    await settle();
    await controller.apply();
    assert.deepEqual(host.applied, [TILE]);
    assert.equal(host.last.preview, null);
  });

  it("does not apply a disabled refactoring or a preview of another version", async () => {
    await answerRound(target(2), pictureAnswer(1), [INTERCHANGE, TILE]);
    controller.select(0);
    host.previews[0].answer.resolve({ ...previewAnswer(1, INTERCHANGE.title), after: [], disabled: "illegal" });
    await settle();
    assert.ok(isReady(shownPreview(), (p) => !p.canApply));
    await controller.apply();
    controller.select(1);
    host.previews[1].answer.resolve(previewAnswer(1, TILE.title));
    await settle();
    host.versions.set(URI, 2); // the file changed; the preview is out of date
    controller.follow(target(2, 2));
    const outdated = shownPreview();
    assert.ok(outdated?.kind === "ready" && outdated.stale && !outdated.canApply);
    await controller.apply();
    assert.deepEqual(host.applied, []);
  });

  it("follows the text: previewed again for the new version while still offered, closed when not", async () => {
    await answerRound(target(2), pictureAnswer(1), [TILE]);
    controller.select(0);
    host.previews[0].answer.resolve(previewAnswer(1, TILE.title));
    await settle();
    host.versions.set(URI, 2);
    await answerRound(target(2, 2), pictureAnswer(2), [TILE]);
    assert.equal(host.previews.length, 2, "previewed again");
    assert.ok(isReady(shownPreview(), (p) => p.stale), "the old pictures stay, out of date");
    host.previews[1].answer.resolve(previewAnswer(2, TILE.title));
    await settle();
    assert.ok(isReady(shownPreview(), (p) => !p.stale));
    // Another loop, the same text: the preview stays with its loop, and can be applied.
    await answerRound(target(9, 2), pictureAnswer(2, "another loop"), [INTERCHANGE]);
    assert.ok(isReady(shownPreview(), (p) => p.canApply && !p.stale));
    // The text changes where the refactoring is not offered: the preview goes.
    host.versions.set(URI, 3);
    await answerRound(target(9, 3), pictureAnswer(3, "another loop"), [INTERCHANGE]);
    assert.equal(host.last.preview, null);
  });

  it("asks again when the text changed while the preview was computed", async () => {
    await answerRound(target(2), pictureAnswer(1), [TILE]);
    controller.select(0);
    host.versions.set(URI, 2);
    host.previews[0].answer.reject(CONTENT_MODIFIED);
    await settle();
    assert.deepEqual(host.last.preview, { kind: "loading", title: TILE.title });
    await answerRound(target(2, 2), pictureAnswer(2), [TILE]);
    assert.equal(host.previews.length, 2);
    assert.equal(host.previews[1].target.version, 2);
  });

  it("cancels a preview that another selection or Close replaces", async () => {
    await answerRound(target(2), pictureAnswer(1), [INTERCHANGE, TILE]);
    controller.select(0);
    controller.select(1);
    assert.equal(host.previews[0].cancel.aborted, true);
    host.previews[0].answer.resolve(previewAnswer(1, INTERCHANGE.title));
    await settle();
    assert.deepEqual(host.last.preview, { kind: "loading", title: TILE.title });
    controller.closePreview();
    assert.equal(host.previews[1].cancel.aborted, true);
    assert.equal(host.last.preview, null);
  });
});

describe("the kinds of dependence shown", () => {
  it("are RAW until toggled, and stay as toggled while the panel redraws elsewhere, without asking", async () => {
    assert.deepEqual(controller.view().shownKinds, ["RAW"]);
    await answerRound(target(2), pictureAnswer(1), [TILE]);
    const asked = host.pictures.length;
    controller.toggleKind("WAW");
    controller.toggleKind("WAR");
    assert.deepEqual(host.last.shownKinds, ["RAW", "WAR", "WAW"], "rendered at once, in their order");
    controller.toggleKind("RAW");
    assert.deepEqual(host.last.shownKinds, ["WAR", "WAW"]);
    assert.equal(host.pictures.length, asked, "the pictures hold every kind: nothing is asked");
    assert.equal(timers.pending.size, 0);
    // The cursor moves on, a preview opens: the choice stays.
    await answerRound(target(7), pictureAnswer(1, "affine.for %k = 0 to 4 (line 8)"), [TILE]);
    controller.select(0);
    host.previews[0].answer.resolve(previewAnswer(1, TILE.title));
    await settle();
    assert.equal(host.last.picture?.caption, "affine.for %k = 0 to 4 (line 8)");
    assert.equal(host.last.preview?.kind, "ready");
    assert.deepEqual(host.last.shownKinds, ["WAR", "WAW"]);
  });
});
