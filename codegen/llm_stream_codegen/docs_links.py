"""Where things are on the documentation site and how a generated page links to them: the pages'
paths, the anchors of rules, decisions, values and schemas, markdown-safe text, and `Links`, the
relative links from one page to every kind of target.
"""

from __future__ import annotations

import posixpath
import re
from dataclasses import dataclass
from typing import Any

from .model import (
    ENVELOPE_ID,
    URN,
    Spec,
)

SPEC_PAGE = "spec/index.md"
DECISIONS_PAGE = "spec/decisions.md"
RULES_PAGE = "spec/rules.md"
LIFECYCLE_PAGE = "spec/lifecycle.md"
REQUEST_PAGE = "spec/request.md"
MEDIA_TYPES_PAGE = "spec/media-types.md"
EVENTS_INDEX = "events/index.md"
REGISTRIES_INDEX = "registries/index.md"


def slug(text: str) -> str:
    """An anchor for free text such as a media type: lowercase, runs of other characters to -."""
    return re.sub(r"[^a-z0-9]+", "-", text.lower()).strip("-")


def value_anchor(value: str) -> str:
    """A registered value's anchor on its registry page: the value itself where it can be."""
    return value if re.fullmatch(r"[A-Za-z0-9_.-]+", value) else slug(value)


def rule_anchor(rule_id: str) -> str:
    return rule_id.lower()


def decision_anchor(decision_id: str) -> str:
    return "decision-" + decision_id.lower()


def event_page(name: str) -> str:
    return f"events/{name}.md"


def registry_page(name: str) -> str:
    return f"registries/{name}.md"


def schema_anchor(schema_id: str) -> str:
    """`urn:ietf:params:llm-stream:content-part:1.0` -> `content-part`."""
    return schema_id.removeprefix(URN).rsplit(":", 1)[0]


_CODE_SPAN = re.compile(r"(`+)(.+?)\1", re.DOTALL)


def _outside_code(text: str, change: Any) -> str:
    """Apply `change` to the parts of markdown `text` that are not inside code spans."""
    out, last = [], 0
    for match in _CODE_SPAN.finditer(text):
        out += [change(text[last:match.start()]), match.group(0)]
        last = match.end()
    out.append(change(text[last:]))
    return "".join(out)


def prose(text: object) -> str:
    """Source text as markdown prose: a `<` is text, never the start of an HTML tag."""
    return _outside_code(str(text), lambda part: part.replace("<", "&lt;"))


def cell(text: object) -> str:
    """Text safe inside a markdown table cell: one line, pipes outside code spans escaped."""
    one_line = " ".join(str(text).split())
    return _outside_code(one_line, lambda part: part.replace("<", "&lt;").replace("|", "\\|"))


def code(value: str) -> str:
    """Inline code that survives any backticks inside it."""
    fence = "``" if "`" in value else "`"
    pad = " " if value.startswith("`") or value.endswith("`") else ""
    return f"{fence}{pad}{value}{pad}{fence}"


@dataclass(frozen=True)
class Links:
    """Relative markdown links from one generated page to every kind of target of the site."""

    spec: Spec
    page: str

    def to(self, target: str, anchor: str = "") -> str:
        path, _, own = target.partition("#")
        anchor = anchor or own
        if path == self.page:
            return f"#{anchor}" if anchor else posixpath.basename(path)
        relative = posixpath.relpath(path, posixpath.dirname(self.page) or ".")
        return f"{relative}#{anchor}" if anchor else relative

    def rule(self, rule_id: str) -> str:
        if rule_id not in self.spec.rules:
            raise KeyError(f"{self.page}: no rule {rule_id}")
        return f"[{rule_id}]({self.to(SPEC_PAGE, rule_anchor(rule_id))})"

    def decision(self, decision_id: str) -> str:
        if all(d.id != decision_id for d in self.spec.decisions):
            raise KeyError(f"{self.page}: no decision {decision_id}")
        return f"[{decision_id}]({self.to(DECISIONS_PAGE, decision_anchor(decision_id))})"

    def rule_or_decision(self, identifier: str) -> str:
        if identifier in self.spec.rules:
            return self.rule(identifier)
        return self.decision(identifier)

    def section(self, anchor: str, *, number_only: bool = False) -> str:
        section = self.spec.section(anchor)
        if section is None:
            return anchor
        text = f"§{section.number}" if number_only else f"§{section.number} {section.title}"
        return f"[{text}]({self.to(SPEC_PAGE, anchor)})"

    def reference(self, reference: str) -> str:
        """A registry entry's reference ("#section" or "#decision-...") as a link."""
        anchor = reference.removeprefix("#")
        if self.spec.section(anchor) is not None:
            return self.section(anchor, number_only=False)
        for decision in self.spec.decisions:
            if anchor == decision_anchor(decision.id):
                return f"{self.decision(decision.id)} (decision)"
        return reference

    def event(self, name: str) -> str:
        if self.spec.event_type(name) is None:
            return code(name)
        return f"[{code(name)}]({self.to(event_page(name))})"

    def registry(self, name: str, text: str) -> str:
        return f"[{text}]({self.to(registry_page(name))})"

    def schema(self, schema_id: str, text: str) -> str:
        target = EVENTS_INDEX if schema_id == ENVELOPE_ID else REQUEST_PAGE
        for event in self.spec.event_types:
            if event.schema_id == schema_id:
                target = event_page(event.name)
                return f"[{text}]({self.to(target)})"
        return f"[{text}]({self.to(target, schema_anchor(schema_id))})"
