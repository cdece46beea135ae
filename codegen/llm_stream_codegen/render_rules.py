"""The index of every rule and decision, as downloads beside the site's rules index page.

`generated/docs/spec/rules.json` and `rules.csv` hold one row a rule (ID, keyword, section,
binds, checkable, basis, decision, statement), so that a test suite or a tracker can cite rules
by ID without scraping the site; the JSON also lists the decisions, which the site's build reads
to turn every rule and decision ID it prints into a link.
"""

from __future__ import annotations

import csv
import io
import json
from collections.abc import Iterator
from typing import Any

from .model import Rule, Spec
from .rendering import Artifact

RULES_OUT = "generated/docs/spec"
CSV_HEADER = ("id", "keyword", "section", "section_title", "binds", "checkable", "basis",
              "decision", "statement")


def _row(spec: Spec, rule: Rule) -> dict[str, Any]:
    section = spec.section(rule.section)
    return {
        "id": rule.id,
        "keyword": rule.keyword,
        "section": section.number if section else rule.section,
        "section_title": section.title if section else "",
        "binds": list(rule.binds),
        "checkable": rule.checkable,
        "basis": rule.basis,
        "decision": rule.decision,
        "statement": rule.text,
    }


def render_rules_json(spec: Spec) -> bytes:
    document = {
        "standard": f"{spec.meta.short_title} {spec.meta.version}",
        "draft": spec.meta.draft,
        "rules": [_row(spec, rule) for rule in spec.rules.values()],
        "decisions": [
            {"id": d.id, "title": d.title, "rules": list(d.rules)} for d in spec.decisions
        ],
    }
    return (json.dumps(document, indent=2, ensure_ascii=False) + "\n").encode()


def render_rules_csv(spec: Spec) -> bytes:
    out = io.StringIO()
    writer = csv.writer(out, lineterminator="\r\n")
    writer.writerow(CSV_HEADER)
    for rule in spec.rules.values():
        row = _row(spec, rule)
        row["binds"] = " ".join(row["binds"])
        row["checkable"] = "yes" if row["checkable"] else "no"
        writer.writerow([row[key] if row[key] is not None else "" for key in CSV_HEADER])
    return out.getvalue().encode()


def render_rules(spec: Spec) -> Iterator[Artifact]:
    """generated/docs/spec/rules.json and rules.csv."""
    yield Artifact(f"{RULES_OUT}/rules.json", render_rules_json(spec))
    yield Artifact(f"{RULES_OUT}/rules.csv", render_rules_csv(spec))


__all__ = ["render_rules"]
