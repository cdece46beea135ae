"""The site's mapping pages: one page a vendor format, and an index, from mappings/FORMAT.yaml.

A page lists every map of its format as a four-column table (vendor value, LLM-Stream value, the
direction it goes, a note) so that nothing hides behind sideways scrolling, and beside them the
event types' correspondences of the event type registry. The vocabulary pages show, under each
value, what each format calls it, from the same rows.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

from .model import FormatMappings, MapRow, Side, Spec, VendorMap

MAPPINGS_INDEX = "mappings/index.md"


def mapping_page(format_name: str) -> str:
    return f"mappings/{format_name}.md"


@dataclass(frozen=True)
class ShownRow:
    """A map row ready to print: markdown for each cell."""

    vendor: str
    ours: str
    way: str
    note: str


WAYS = {None: "both", "from": "from only", "to": "to only"}


def side_text(side: Side, link: Mapping[str, str] | None = None) -> str:
    """A row's side as markdown: a code value (linked when `link` knows it), a sum, or a dash
    for no counterpart."""
    if side is None:
        return "— (none)"
    if isinstance(side, tuple):
        return " + ".join(f"`{name}`" for name in side)
    return f"[`{side}`]({link[side]})" if link and side in link else f"`{side}`"


def shown_rows(vendor_map: VendorMap, link: Mapping[str, str] | None) -> list[ShownRow]:
    return [ShownRow(side_text(row.vendor), side_text(row.ours, link), WAYS[row.only], row.note)
            for row in vendor_map.rows]


@dataclass(frozen=True)
class VendorValue:
    """What one vendor format calls a registered value: the value written and those read."""

    format: FormatMappings
    map: VendorMap
    written: MapRow | None
    read: tuple[MapRow, ...]


def vendor_values(spec: Spec, registry: str, value: str) -> list[VendorValue]:
    """For a registered value, each format's rows that write it and that read into it."""
    found = []
    for mappings in spec.mappings.values():
        for vendor_map in mappings.maps.values():
            if vendor_map.registry != registry:
                continue
            written = next((r for r in vendor_map.rows if r.ours == value and r.goes("to")), None)
            read = tuple(r for r in vendor_map.rows
                         if r.ours == value and r.goes("from") and r.vendor is not None)
            found.append(VendorValue(mappings, vendor_map, written, read))
    return found


__all__ = ["MAPPINGS_INDEX", "ShownRow", "VendorValue", "mapping_page", "shown_rows",
           "side_text", "vendor_values"]
