/** A small picture as the server answers it, for the panel's tests. */
import type { NestPicture } from "../../src/iterationSpace";

export const PICTURE: NestPicture = {
  svg: '<svg xmlns="http://www.w3.org/2000/svg" width="120" height="40.5" viewBox="0 0 120 40.5"><circle cx="1" cy="1" r="1"/></svg>',
  caption: "affine.for %i = 0 to 4 (line 3)",
  domain: "{ [i] : 0 <= i <= 3 }",
  line: 2,
  points: 4,
  total: 4,
  arrows: 3,
  tiles: 0,
  moved: 0,
};

/** A picture with every kind's group as the server draws them (RAW shown), one kind's
 * arrows between panels in a group of their own. */
export const KINDS_PICTURE =
  '<svg xmlns="http://www.w3.org/2000/svg" width="200" height="100" viewBox="0 0 200 100"><style>.deps{fill:none}</style>' +
  '<defs><marker id="head-RAW"><path d="M0 0L6 3L0 6z"/></marker></defs><g class="points"><circle cx="1" cy="1" r="1"/></g>' +
  '<g class="deps RAW" stroke="#e5534b" stroke-width="1.9" marker-end="url(#head-RAW)"><path class="dep" d="M1 1Q2 2 3 3"/></g>' +
  '<g class="deps WAR" stroke="#539bf5" stroke-width="1.9" stroke-dasharray="4 2" display="none" marker-end="url(#head-WAR)"><path class="dep" d="M1 1Q2 2 4 4"/></g>' +
  '<g class="deps WAW" stroke="#c69026" stroke-width="1.9" display="none" marker-end="url(#head-WAW)"><path class="dep" d="M1 1Q2 2 5 5"/></g>' +
  '<g class="deps WAR" stroke="#539bf5" stroke-width="1.9" opacity="0.4" display="none" marker-end="url(#head-WAR)"><path class="dep" d="M9 9Q2 2 4 4"/></g>' +
  '<text x="1" y="90">RAW (read after write) on %A: (1) ×3</text></svg>\n';
