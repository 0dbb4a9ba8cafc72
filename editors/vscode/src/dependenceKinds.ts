/**
 * The kinds of dependence the Iteration Space panel shows as arrows. The server's
 * pictures hold every kind's arrows, each kind in its own group
 * (`<g class="deps RAW" ...>`), the kinds not shown hidden by `display="none"`;
 * the panel shows or hides those groups by rewriting that attribute, leaving every
 * other byte of the picture as it is. No VS Code API here.
 */

export const DEPENDENCE_KINDS = ["RAW", "WAR", "WAW"] as const;
export type DependenceKind = (typeof DEPENDENCE_KINDS)[number];

/** What the panel shows until the user toggles: what a value depends on. */
export const DEFAULT_SHOWN_KINDS: readonly DependenceKind[] = ["RAW"];

export const KIND_WORDS: Record<DependenceKind, string> = {
  RAW: "read after write",
  WAR: "write after read",
  WAW: "write after write",
};

export function isDependenceKind(value: unknown): value is DependenceKind {
  return typeof value === "string" && (DEPENDENCE_KINDS as readonly string[]).includes(value);
}

/** A `<g ...>` start tag (attribute values may hold `>`), its attributes in group 1. */
const GROUP_TAG = /<g((?:\s+[^\s=>/"']+(?:\s*=\s*(?:"[^"]*"|'[^']*'|[^\s>"']+))?)*)\s*(\/?)>/g;
/** One attribute of a start tag: leading space, name, and value (quoted or not). */
const ATTRIBUTE = /(\s+)([^\s=>/"']+)(?:\s*=\s*("[^"]*"|'[^']*'|[^\s>"']+))?/g;

function unquote(value: string | undefined): string {
  if (value === undefined) {
    return "";
  }
  return value.startsWith('"') || value.startsWith("'") ? value.slice(1, -1) : value;
}

/** The dependence kind a group's class names (`deps KIND`), if it is such a group. */
function kindOfGroup(attributes: string): DependenceKind | undefined {
  for (const match of attributes.matchAll(ATTRIBUTE)) {
    if (match[2] === "class") {
      const classes = unquote(match[3]).split(/\s+/).filter(Boolean);
      return classes.includes("deps") ? classes.find(isDependenceKind) : undefined;
    }
  }
  return undefined;
}

/**
 * The picture with the arrows of the kinds in `shown` showing and those of the
 * other kinds hidden: only the `display` attribute of the `deps KIND` groups
 * changes (removed to show, `display="none"` to hide).
 */
export function showKinds(svg: string, shown: Iterable<DependenceKind>): string {
  const visible = new Set(shown);
  return svg.replace(GROUP_TAG, (tag: string, attributes: string) => {
    const kind = kindOfGroup(attributes);
    if (kind === undefined) {
      return tag;
    }
    const hiddenNow = [...attributes.matchAll(ATTRIBUTE)].some(
      (match) => match[2] === "display" && unquote(match[3]).trim() === "none",
    );
    if (hiddenNow === !visible.has(kind)) {
      return tag;
    }
    const kept = attributes.replace(ATTRIBUTE, (attribute: string, _space: string, name: string) =>
      name === "display" ? "" : attribute,
    );
    const display = visible.has(kind) ? "" : ' display="none"';
    const end = tag.slice(2 + attributes.length);
    return `<g${kept}${display}${end}`;
  });
}

/** The kinds in their usual order (RAW, WAR, WAW). */
export function orderedKinds(kinds: Iterable<DependenceKind>): DependenceKind[] {
  const set = new Set(kinds);
  return DEPENDENCE_KINDS.filter((kind) => set.has(kind));
}
