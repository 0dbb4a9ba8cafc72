/** The panel's HTML: its policy, its pictures (images only), escaping, and states. */
import * as assert from "node:assert/strict";
import { describe, it } from "node:test";
import type { PanelView } from "../src/panelView";
import {
  contentSecurityPolicy,
  describePicture,
  escapeHtml,
  makeNonce,
  panelDocument,
  parseWebviewMessage,
  renderBody,
  svgDataUri,
  svgSize,
} from "../src/panelView";
import { KINDS_PICTURE, PICTURE } from "./support/pictures";

function view(overrides: Partial<PanelView> = {}): PanelView {
  return {
    where: "k.mlir:3",
    picture: PICTURE,
    message: PICTURE.caption,
    stale: false,
    version: 1,
    drawnFor: 1,
    status: "",
    refactorings: [],
    refactoringsStale: false,
    preview: null,
    shownKinds: ["RAW"],
    ...overrides,
  };
}

function images(html: string): string[] {
  return [...html.matchAll(/<img [^>]*>/g)].map((match) => match[0]);
}

describe("the webview document", () => {
  const nonce = "abc123";
  const html = panelDocument(nonce, renderBody(view()));

  it("has a strict Content-Security-Policy: data: images, and style and script by nonce only", () => {
    const policy = contentSecurityPolicy(nonce);
    assert.ok(html.includes(`<meta http-equiv="Content-Security-Policy" content="${policy}">`));
    const directives = new Map(policy.split("; ").map((part) => [part.split(" ")[0], part.split(" ").slice(1)] as const));
    assert.deepEqual(directives.get("default-src"), ["'none'"]);
    assert.deepEqual(directives.get("img-src"), ["data:"]);
    assert.deepEqual(directives.get("script-src"), [`'nonce-${nonce}'`]);
    assert.deepEqual(directives.get("style-src"), [`'nonce-${nonce}'`]);
    assert.doesNotMatch(policy, /unsafe-inline|unsafe-eval|https?:|\*/);
  });

  it("runs only its own script and style, both carrying the nonce", () => {
    const scripts = [...html.matchAll(/<script\b[^>]*>/g)].map((match) => match[0]);
    assert.deepEqual(scripts, [`<script nonce="${nonce}">`]);
    const styles = [...html.matchAll(/<style\b[^>]*>/g)].map((match) => match[0]);
    assert.deepEqual(styles, [`<style nonce="${nonce}">`]);
    assert.doesNotMatch(renderBody(view()), /style=|<script|<style|\bon[a-z]+=/i);
  });

  it("makes nonces of letters and digits", () => {
    const nonce = makeNonce((size) => new Uint8Array(size).map((_, index) => index * 37));
    assert.match(nonce, /^[A-Za-z0-9]{16,}$/);
  });
});

describe("pictures", () => {
  it("are images of data: URIs, never SVG markup in the page", () => {
    const body = renderBody(view());
    assert.doesNotMatch(body, /<svg|<circle/);
    const [img] = images(body);
    assert.ok(img.includes(`src="${svgDataUri(PICTURE.svg)}"`));
    assert.match(img, /data-role="current"/);
    assert.match(img, /data-points="4"/);
    assert.match(img, / width="120" height="41" /, "its natural size");
    assert.deepEqual(svgSize('<svg xmlns="x" width="10" height="20">'), { width: 10, height: 20 });
    assert.equal(svgSize("<svg>"), undefined);
    const encoded = svgDataUri("<svg>é</svg>");
    assert.equal(Buffer.from(encoded.replace("data:image/svg+xml;base64,", ""), "base64").toString("utf8"), "<svg>é</svg>");
  });

  it("say what they show", () => {
    assert.equal(describePicture(PICTURE), "4 points, 3 dependence arrows");
    assert.equal(
      describePicture({ ...PICTURE, points: 1024, total: 4096, arrows: 1, tiles: 16, moved: 900 }),
      "1,024 of 4,096 points drawn, 1 dependence arrow, 16 tiles, 900 moved",
    );
  });

  it("an out-of-date picture is dimmed and says so", () => {
    const body = renderBody(view({ stale: true }));
    assert.match(body, /class="current stale"/);
    assert.match(body, /Out of date/);
    const versions = renderBody(view({ stale: true, version: 3, drawnFor: 2 }));
    assert.match(versions, /<section class="current stale" aria-busy="true" data-version="3" data-drawn-for="2">/);
    assert.doesNotMatch(renderBody(view({ version: null, drawnFor: null })), /data-version|data-drawn-for/);
    assert.doesNotMatch(renderBody(view()), /Out of date/);
  });

  it("without a picture the message is shown", () => {
    const body = renderBody(view({ picture: null, message: "No affine.for or affine.parallel at the cursor." }));
    assert.deepEqual(images(body), []);
    assert.match(body, /No affine\.for or affine\.parallel at the cursor\./);
  });
});

describe("the toggles of the kinds of dependence", () => {
  const decoded = (img: string): string =>
    Buffer.from(/src="data:image\/svg\+xml;base64,([^"]*)"/.exec(img)?.[1] ?? "", "base64").toString("utf8");
  const kindsView = (shownKinds: PanelView["shownKinds"], overrides: Partial<PanelView> = {}) =>
    view({ picture: { ...PICTURE, svg: KINDS_PICTURE }, shownKinds, ...overrides });

  it("are three buttons, pressed for the kinds shown (RAW by default)", () => {
    const body = renderBody(kindsView(["RAW"]));
    const buttons = [...body.matchAll(/<button class="kind (\w+)" data-command="toggleKind" data-kind="\1" aria-pressed="(\w+)"[^>]*>(\w+)<\/button>/g)];
    assert.deepEqual(
      buttons.map((match) => [match[1], match[2], match[3]]),
      [
        ["RAW", "true", "RAW"],
        ["WAR", "false", "WAR"],
        ["WAW", "false", "WAW"],
      ],
    );
    assert.match(body, /<div class="kinds" role="group" aria-label="Dependences drawn">/);
    assert.match(body, /title="Show the WAR \(write after read\) dependences"/);
    assert.match(renderBody(kindsView(["RAW", "WAR"])), /data-kind="WAR" aria-pressed="true" title="Hide the WAR/);
  });

  it("show or hide those kinds' groups in every picture, current, before and after", () => {
    const [current] = images(renderBody(kindsView(["RAW"])));
    assert.equal(decoded(current), KINDS_PICTURE, "RAW only: as the server drew it");
    assert.match(current, /data-shown="RAW"/);
    const picture = { ...PICTURE, svg: KINDS_PICTURE };
    const result = { version: 1, title: "Tile", before: [picture], after: [picture], reason: null, notes: [], disabled: null };
    const body = renderBody(kindsView(["WAR"], { preview: { kind: "ready", result, stale: false, canApply: true, applying: false } }));
    const drawn = images(body);
    assert.equal(drawn.length, 2);
    for (const img of drawn) {
      const svg = decoded(img);
      assert.match(svg, /<g class="deps WAR" stroke="#539bf5" stroke-width="1.9" stroke-dasharray="4 2" marker-end="url\(#head-WAR\)">/);
      assert.match(svg, /<g class="deps RAW" [^>]*display="none"/);
      assert.match(svg, /<g class="deps WAW" [^>]*display="none"/);
      assert.match(img, /data-shown="WAR"/);
    }
  });

  it("are shown only with pictures", () => {
    assert.doesNotMatch(renderBody(view({ picture: null, message: "No loop." })), /toggleKind/);
    const loading = renderBody(view({ picture: null, preview: { kind: "loading", title: "Tile" } }));
    assert.doesNotMatch(loading, /toggleKind/);
  });
});

describe("escaping", () => {
  it("escapes every text that comes from the file or the server", () => {
    assert.equal(escapeHtml(`<a href="x">'&'</a>`), "&lt;a href=&quot;x&quot;&gt;&#39;&amp;&#39;&lt;/a&gt;");
    const evil = '<img src=x onerror="alert(1)"><script>alert(2)</script>';
    const body = renderBody(
      view({
        where: evil,
        picture: { ...PICTURE, caption: evil },
        status: evil,
        refactorings: [{ title: evil, disabledReason: evil, selected: false }],
        preview: {
          kind: "ready",
          result: { version: 1, title: evil, before: [], after: [], reason: evil, notes: [evil], disabled: null },
          stale: false,
          canApply: false,
          applying: false,
        },
      }),
    );
    assert.doesNotMatch(body, /<script|<img src=x|onerror="/);
    assert.ok(body.includes("&lt;script&gt;"));
  });
});

describe("refactorings and previews", () => {
  const listed = [
    { title: "Interchange %i and %j", selected: false },
    { title: "Tile 32×32", disabledReason: "would break a dependence", selected: true },
  ];

  it("lists the refactorings as buttons that preview them, disabled while the list is out of date", () => {
    const body = renderBody(view({ refactorings: listed }));
    assert.match(body, /<button data-command="preview" data-index="0" aria-pressed="false">Interchange %i and %j<\/button>/);
    assert.match(body, /data-index="1" aria-pressed="true">Tile 32×32<\/button><span class="reason">would break a dependence/);
    assert.match(renderBody(view({ refactorings: listed, refactoringsStale: true })), /data-index="0" aria-pressed="false" disabled>/);
  });

  it("shows before and after side by side, with Apply when it can be applied", () => {
    const result = { version: 1, title: "Tile 32×32", before: [PICTURE], after: [{ ...PICTURE, tiles: 4 }], reason: null, notes: [], disabled: null };
    const body = renderBody(view({ preview: { kind: "ready", result, stale: false, canApply: true, applying: false } }));
    const roles = images(body).map((img) => /data-role="(\w+)"/.exec(img)?.[1]);
    assert.deepEqual(roles, ["before", "after"], "the loop at the cursor is the one before");
    assert.match(body, /<section class="preview" aria-busy="false" data-drawn-for="1">/);
    assert.match(body, /class="domain">\{ \[i\] : 0 &lt;= i &lt;= 3 \}</);
    assert.match(body, /class="sides"><div class="side before"><h3>Before<\/h3>.*<div class="side after"><h3>After<\/h3>/);
    assert.match(body, /<button class="primary" data-command="apply">Apply<\/button>/);
    const stale = renderBody(view({ preview: { kind: "ready", result, stale: true, canApply: false, applying: false } }));
    assert.match(stale, /class="preview stale"/);
    assert.doesNotMatch(stale, /data-command="apply"/);
  });

  it("shows why a refactoring has no after picture", () => {
    const result = { version: 1, title: "Tile", before: [PICTURE], after: [], reason: "r", notes: [], disabled: "it would run first" };
    const body = renderBody(view({ preview: { kind: "ready", result, stale: false, canApply: false, applying: false } }));
    assert.match(body, /<p class="message reason">it would run first<\/p>/);
    assert.equal(images(body).length, 1);
  });

  it("says when a preview is being computed or failed", () => {
    assert.match(renderBody(view({ preview: { kind: "loading", title: "Tile" } })), /aria-busy="true"><h2>Tile<\/h2>.*Computing/);
    assert.match(renderBody(view({ preview: { kind: "failed", title: "Tile", message: "boom" } })), /role="alert">boom</);
  });
});

describe("messages from the webview", () => {
  it("are the panel's commands, anything else is ignored", () => {
    assert.deepEqual(parseWebviewMessage({ command: "ready" }), { command: "ready" });
    assert.deepEqual(parseWebviewMessage({ command: "preview", index: 2, line: -1 }), { command: "preview", index: 2 });
    assert.deepEqual(parseWebviewMessage({ command: "apply", index: -1 }), { command: "apply" });
    assert.deepEqual(parseWebviewMessage({ command: "closePreview" }), { command: "closePreview" });
    assert.deepEqual(parseWebviewMessage({ command: "reveal", line: 8 }), { command: "reveal", line: 8 });
    assert.deepEqual(parseWebviewMessage({ command: "toggleKind", kind: "WAW", index: -1 }), { command: "toggleKind", kind: "WAW" });
    assert.equal(parseWebviewMessage({ command: "toggleKind", kind: "deps" }), undefined);
    assert.equal(parseWebviewMessage({ command: "toggleKind" }), undefined);
    for (const bad of [null, "ready", {}, { command: "preview", index: -1 }, { command: "preview", index: 1.5 }, { command: "eval" }]) {
      assert.equal(parseWebviewMessage(bad), undefined, JSON.stringify(bad));
    }
  });
});
