"""How a vendor map is read ("from" the vendor format) and written ("to" it).

The maps themselves are data, rendered from mappings/FORMAT.yaml into `tables`; a translator
looks a value up here and never spells a vendor value of its own, so the mapping pages say
exactly what the code does.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True, slots=True)
class ValueMap:
    """The values of one registry (stop reasons, error codes, roles, part types) and the vendor
    format's values for them."""

    vendor_field: str
    """Where the vendor carries the value, as the mappings page names it."""
    from_vendor: Mapping[str, str | None]
    to_vendor: Mapping[str, str | None]
    otherwise: str | None = None

    def read(self, value: str) -> str | None:
        """The registered value a vendor value stands for: a value no row names gives
        `otherwise`; None means it has no counterpart and is refused."""
        return self.from_vendor.get(value, self.otherwise)

    def write(self, value: str) -> str | None:
        """The vendor value for a registered value; None when the format cannot express it."""
        return self.to_vendor.get(value)


@dataclass(frozen=True, slots=True)
class FieldMap:
    """The fields of one LLM-Stream object (the usage event's counts, say) and the vendor's.

    A field of several on the other side is their sum, over those present: Anthropic's input
    counts read into one input_tokens, input_tokens and output_tokens write into total_tokens.
    Vendor fields are dotted paths into nested objects."""

    vendor_field: str
    from_vendor: Mapping[str, tuple[str, ...]]
    """Each LLM-Stream field and the vendor paths it is read from."""
    to_vendor: Mapping[str, tuple[str, ...]]
    """Each vendor path and the LLM-Stream fields it is written from."""

    def read(self, vendor: Mapping[str, Any]) -> dict[str, int]:
        """The LLM-Stream counts of a vendor object; a count none of whose sources is present
        (or a number) stays absent, never zero."""
        result: dict[str, int] = {}
        for field, paths in self.from_vendor.items():
            found = [n for path in paths if (n := _count(_lookup(vendor, path))) is not None]
            if found:
                result[field] = sum(found)
        return result

    def write(self, ours: Mapping[str, Any]) -> dict[str, Any]:
        """The vendor object of LLM-Stream counts, nested along the dotted paths."""
        result: dict[str, Any] = {}
        for path, fields in self.to_vendor.items():
            found = [n for field in fields if (n := _count(ours.get(field))) is not None]
            if not found:
                continue
            *parents, last = path.split(".")
            target = result
            for name in parents:
                target = target.setdefault(name, {})
            target[last] = sum(found)
        return result


def _lookup(value: Any, path: str) -> Any:
    for name in path.split("."):
        if not isinstance(value, Mapping):
            return None
        value = value.get(name)
    return value


def _count(value: Any) -> int | None:
    """A token count, or None for anything else (bool is not a count); an integral number
    written as 3.0 is the count 3, as in our own streams (decision D-INTEGERS)."""
    if type(value) is float and value.is_integer():
        value = int(value)
    return value if isinstance(value, int) and not isinstance(value, bool) and value >= 0 else None
