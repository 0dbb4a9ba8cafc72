/** Showing and hiding the kinds of dependence in a picture: only the `display` of the `deps KIND` groups changes. */
import * as assert from "node:assert/strict";
import { describe, it } from "node:test";
import { DEFAULT_SHOWN_KINDS, isDependenceKind, orderedKinds, showKinds } from "../src/dependenceKinds";
import { KINDS_PICTURE } from "./support/pictures";

/** The `display` of each `deps KIND` group, in order, by kind. */
function displays(svg: string): [string, string | null][] {
  return [...svg.matchAll(/<g class="deps (\w+)"[^>]*>/g)].map((match) => [match[1], /display="([^"]*)"/.exec(match[0])?.[1] ?? null]);
}

describe("showing kinds of dependence", () => {
  it("shows RAW only by default, as the server draws it (the picture is unchanged)", () => {
    assert.deepEqual(DEFAULT_SHOWN_KINDS, ["RAW"]);
    assert.equal(showKinds(KINDS_PICTURE, DEFAULT_SHOWN_KINDS), KINDS_PICTURE);
  });

  it("shows and hides each kind's groups (arrows across panels too)", () => {
    const both = showKinds(KINDS_PICTURE, ["WAR", "WAW"]);
    assert.deepEqual(displays(both), [
      ["RAW", "none"],
      ["WAR", null],
      ["WAW", null],
      ["WAR", null],
    ]);
    assert.deepEqual(displays(showKinds(KINDS_PICTURE, [])), [
      ["RAW", "none"],
      ["WAR", "none"],
      ["WAW", "none"],
      ["WAR", "none"],
    ]);
  });

  it("keeps everything else byte for byte, and toggling back restores the picture", () => {
    const shown = showKinds(KINDS_PICTURE, ["RAW", "WAR", "WAW"]);
    assert.equal(shown, KINDS_PICTURE.replace(/ display="none"/g, ""));
    const hidden = showKinds(shown, ["RAW"]);
    // Back to the same groups hidden; the attribute goes at the end of the tag.
    assert.deepEqual(displays(hidden), displays(KINDS_PICTURE));
    assert.equal(hidden.replace(/ display="none"/g, ""), shown);
    assert.equal(showKinds(hidden, ["RAW", "WAR", "WAW"]), shown);
  });

  it("reads the group by its class, whatever the attributes' order, quotes and spacing", () => {
    const svg =
      "<svg><g class='legend deps'/><g\n stroke=\"a>b\"  class='x deps WAR'  display = 'none' ><path/></g>" +
      '<g class="depsWAR"><path/></g><g class="deps WAW"/><text>&lt;g class="deps RAW"&gt;</text><gx class="deps RAW"></gx></svg>';
    const out = showKinds(svg, ["WAR"]);
    assert.equal(
      out,
      "<svg><g class='legend deps'/><g\n stroke=\"a>b\"  class='x deps WAR' ><path/></g>" +
        '<g class="depsWAR"><path/></g><g class="deps WAW" display="none"/><text>&lt;g class="deps RAW"&gt;</text><gx class="deps RAW"></gx></svg>',
    );
  });

  it("knows the kinds and their order", () => {
    assert.ok(isDependenceKind("WAR"));
    assert.ok(!isDependenceKind("war") && !isDependenceKind(3) && !isDependenceKind("deps"));
    assert.deepEqual(orderedKinds(["WAW", "RAW"]), ["RAW", "WAW"]);
  });
});
