"""Reading pictures back: the SVG parsed with xml.etree, its points and arrows counted."""

from __future__ import annotations

import xml.etree.ElementTree as ET
from dataclasses import dataclass

NS = "{http://www.w3.org/2000/svg}"


@dataclass
class Picture:
    root: ET.Element
    circles: list[ET.Element]
    arrows: list[ET.Element]  # elements whose class list holds "dep"
    texts: list[str]

    def text(self) -> str:
        return "\n".join(self.texts)

    def arrows_of(self, kind: str) -> list[ET.Element]:
        """Arrows inside the group of `kind` (`<g class="deps RAW">`)."""
        found = []
        for group in self.root.iter(f"{NS}g"):
            if group.get("class", "").split() == ["deps", kind]:
                found += [e for e in group if "dep" in e.get("class", "").split()]
        return found

    def circles_in(self, group_class: str) -> int:
        return sum(
            len(list(group.iter(f"{NS}circle")))
            for group in self.root.iter(f"{NS}g")
            if group.get("class") == group_class
        )


def read_svg(text: str | bytes) -> Picture:
    root = ET.fromstring(text)
    assert root.tag == f"{NS}svg"
    circles = list(root.iter(f"{NS}circle"))
    arrows = [e for e in root.iter() if "dep" in (e.get("class") or "").split()]
    texts = ["".join(e.itertext()) for e in root.iter(f"{NS}text")]
    return Picture(root, circles, arrows, texts)
