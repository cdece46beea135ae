"""registry/event-types.yaml edited as text, so that the file's comments and layout stay: a new
entry appended in the file's own style, an entry's status changed in place. Each edit is read
back (`plain`) and compared with what was meant by its caller."""

from __future__ import annotations

import json
import re
import textwrap
from collections.abc import Mapping
from typing import Any

import yaml

from .registry_proposal import RegistryError
from .sources import line_of

EVENTS_FILE = "registry/event-types.yaml"
LINE_WIDTH = 100
DATE_PATTERN = re.compile(r"\d{4}-\d{2}-\d{2}")


def _scalar(value: Any) -> str:
    """One YAML scalar as the registry file writes them: plain where that reads back the same."""
    if isinstance(value, bool) or value is None or isinstance(value, int | float):
        return json.dumps(value)
    text = str(value)
    if DATE_PATTERN.fullmatch(text):
        return text  # the source's loader keeps dates as strings
    try:
        plain_ok = text == text.strip() and yaml.safe_load(f"k: {text}") == {"k": text}
    except yaml.YAMLError:
        plain_ok = False
    if plain_ok and "\n" not in text and not text.startswith(("{", "[", "&", "*", "!", "|", ">")):
        return text
    return json.dumps(text, ensure_ascii=False)


def member(key: str, value: Any, indent: int) -> list[str]:
    """The lines of `key: value` at `indent`, long text folded (`>-`) as the file's note is."""
    pad = " " * indent
    if isinstance(value, Mapping):
        lines = [f"{pad}{key}:"]
        for sub_key, sub_value in value.items():
            lines += member(str(sub_key), sub_value, indent + 2)
        return lines
    if isinstance(value, list):
        lines = [f"{pad}{key}:"]
        for item in value:
            if isinstance(item, Mapping):
                inner = ", ".join(f"{k}: {_scalar(v)}" for k, v in item.items())
                lines.append(f"{pad}  - {{{inner}}}")
            else:
                lines.append(f"{pad}  - {_scalar(item)}")
        return lines
    scalar = _scalar(value)
    line = f"{pad}{key}: {scalar}"
    foldable = isinstance(value, str) and value == " ".join(value.split())
    if len(line) <= LINE_WIDTH or not foldable:
        return [line]
    wrapped = textwrap.wrap(value, width=LINE_WIDTH - indent - 2, break_long_words=False,
                            break_on_hyphens=False)
    return [f"{pad}{key}: >-", *(f"{pad}  {part}" for part in wrapped)]


def entry_text(entry: Mapping[str, Any]) -> str:
    """The entry as a YAML sequence item at the indentation of registry/event-types.yaml."""
    lines = []
    for key, value in entry.items():
        lines += member(key, value, 4)
    lines[0] = "  - " + lines[0].lstrip()
    return "\n".join(lines) + "\n"


def appended(text: str, entry: Mapping[str, Any]) -> tuple[str, int]:
    """The registry file's text with the entry appended, and the line the entry starts on."""
    base = text if text.endswith("\n") else text + "\n"
    if not base.endswith("\n\n"):
        base += "\n"
    return base + entry_text(entry), base.count("\n") + 1


def plain(value: Any) -> Any:
    """Located mappings to plain dicts, for comparing parsed YAML with what was meant."""
    if isinstance(value, Mapping):
        return {k: plain(v) for k, v in value.items()}
    if isinstance(value, list):
        return [plain(v) for v in value]
    return value


def deprecated_text(text: str, data: Any, name: str, reason: str) -> str:
    """The file's text with the entry of `name` (which `data`, the file parsed, has) deprecated:
    its status line changed and its deprecated_reason put after it."""
    entries = data["entries"]
    index = next(i for i, e in enumerate(entries) if e.get("name") == name)
    entry = entries[index]
    lines = text.splitlines(keepends=True)
    start = line_of(entry) - 1
    end = line_of(entries[index + 1]) - 1 if index + 1 < len(entries) else len(lines)
    indent = len(lines[start]) - len(lines[start].lstrip(" -"))
    pad = " " * indent
    status_at = next((i for i in range(start, end)
                      if re.match(rf"{pad}status:\s", lines[i]) or
                      (i == start and re.match(r"\s*-\s+status:\s", lines[i]))), None)
    if status_at is None:
        raise RegistryError([f"cannot find the status line of {name!r} in {EVENTS_FILE}"])
    keep = [i for i in range(start, end) if not re.match(rf"{pad}deprecated_reason:", lines[i])]
    new_member = "\n".join(member("deprecated_reason", reason, indent)) + "\n"
    out: list[str] = lines[:start]
    for i in keep:
        if i == status_at:
            head = lines[i][: lines[i].index("status:")]
            out.append(f"{head}status: deprecated\n")
            out.append(new_member)
        else:
            out.append(lines[i])
    out += lines[end:]
    return "".join(out)
