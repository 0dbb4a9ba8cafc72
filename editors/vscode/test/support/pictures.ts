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
