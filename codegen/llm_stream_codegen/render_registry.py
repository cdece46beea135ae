"""The registries as IANA publishes its own, each as XML, CSV and JSON under generated/registry.

Every registry becomes a `RegistryTable` first, the one shape that the downloads here and the
registry pages of the documentation (`render_docs`) both print, so the site and the files cannot
disagree. The XML follows IANA's registry format (namespace http://www.iana.org/assignments:
`registry`, `title`, `registration_rule`, `note`, `record` with `value`, `description`, `status` and
`xref`, `controller`, and `people` with the `person` each `xref type="person"` names, e-mail
addresses written as IANA writes them, `mailto:name&domain`); a registry the draft does not ask
IANA to create says in its note that this project keeps it. The CSV has one header row and one
row a record (RFC 4180, CRLF line ends); the JSON holds the same fields as the XML. A registry's
own metadata (title, policy, note, who keeps it, contact) is `Spec.registry_meta`.
"""

from __future__ import annotations

import csv
import io
import json
import re
from collections.abc import Iterator
from dataclasses import dataclass
from functools import cache
from pathlib import Path
from typing import Any
from xml.sax.saxutils import escape, quoteattr

from jinja2 import Environment

from .model import Spec
from .rendering import Artifact, inputs_hash, markup_header, new_environment, template_dir

REGISTRY_OUT = "generated/registry"
XML_TEMPLATE = "registry/registry.xml.j2"
IANA_NAMESPACE = "http://www.iana.org/assignments"
# The registries published, in the order the documentation lists them. (The lifecycle file is a
# state machine, not a registry of values, and is rendered by the documentation only.)
PUBLISHED = ("event-types", "stop-reasons", "error-codes", "roles", "content-part-types",
             "media-types")
FORMATS = ("xml", "csv", "json")


@dataclass(frozen=True)
class Xref:
    """A reference in IANA's terms: `draft` (data: the draft name) or `text` (no data)."""

    type: str
    data: str | None
    text: str
    anchor: str

    def as_dict(self) -> dict[str, Any]:
        return {"type": self.type, "data": self.data, "text": self.text, "anchor": self.anchor}


@dataclass(frozen=True)
class Record:
    value: str
    description: str
    xref: Xref
    status: str
    date: str
    extra: tuple[tuple[str, str], ...] = ()
    """Further columns of this registry, as (element name, value)."""


@dataclass(frozen=True)
class Person:
    """A contact as IANA lists one under `people`: an id made of the name, and a mailto URI."""

    name: str
    email: str

    @property
    def id(self) -> str:
        return "_".join(self.name.split())

    @property
    def uri(self) -> str:
        return "mailto:" + self.email.replace("@", "&")


_PERSON = re.compile(r"([^,<>]+?)\s*<([^<>@\s]+@[^<>\s]+)>")


def people(contact: str) -> tuple[Person, ...]:
    """The people of a contact written as `Name <address>, Name <address>`."""
    return tuple(Person(name.strip(), email) for name, email in _PERSON.findall(contact))


@dataclass(frozen=True)
class RegistryTable:
    id: str
    title: str
    value_label: str
    registration_rule: str | None
    xref: Xref
    note: str | None
    extra_columns: tuple[tuple[str, str], ...]
    """(element name, column label) of the columns beyond value, description, reference,
    status and date."""
    records: tuple[Record, ...]
    requested_by_draft: bool
    """True for a registry the draft asks IANA to create; False for one this project keeps."""
    contact: str

    @property
    def people(self) -> tuple[Person, ...]:
        return people(self.contact)

    @property
    def xml_note(self) -> str | None:
        """The note of the XML, which for a project registry first says whose it is."""
        if self.requested_by_draft:
            return self.note
        own = ("The draft does not ask IANA to create this registry; the LLM-Stream reference "
               f"toolchain keeps it in IANA's format. Contact: {self.contact}.")
        return f"{own} {self.note}" if self.note else own

    @property
    def created(self) -> str:
        return min(record.date for record in self.records)

    @property
    def updated(self) -> str | None:
        latest = max(record.date for record in self.records)
        return None if latest == self.created else latest

    def download(self, fmt: str) -> str:
        return f"{self.id}.{fmt}"


def xref(spec: Spec, reference: str) -> Xref:
    """The IANA reference for a source `reference`: "#section-anchor" or "#decision-<id>"."""
    anchor = reference.removeprefix("#")
    section = spec.section(anchor)
    if section is not None:
        text = f"{spec.meta.draft}, Section {section.number}: {section.title}"
        return Xref("draft", spec.meta.draft, text, anchor)
    for decision in spec.decisions:
        if anchor == "decision-" + decision.id.lower():
            text = f"{spec.meta.short_title} reference toolchain, decision {decision.id}: " \
                   f"{decision.title}"
            return Xref("text", None, text, anchor)
    return Xref("text", None, reference, anchor)


def _text(value: Any) -> str | None:
    return None if value is None else " ".join(str(value).split())


def registry_tables(spec: Spec) -> tuple[RegistryTable, ...]:
    """Every published registry, as the rows the XML, CSV, JSON and the site print."""
    tables: list[RegistryTable] = []
    metadata = spec.registry_meta
    for name in PUBLISHED:
        meta = metadata[name]
        extra_columns: tuple[tuple[str, str], ...] = ()
        if name == "event-types":
            value_label = "Event Type"
            extra_columns = (("controller", "Change Controller"),)
            records = tuple(
                Record(e.name, e.description, xref(spec, e.reference), e.status, e.date,
                       (("controller", e.change_controller),))
                for e in spec.event_types
            )
        elif name == "media-types":
            value_label = "Media Type"
            records = tuple(
                Record(m.name, _media_description(spec, m.reference), xref(spec, m.reference),
                       m.status, m.date)
                for m in spec.media_types
            )
        else:
            value_label = "Value"
            records = tuple(
                Record(v.value, v.description, xref(spec, v.reference), v.status, v.date)
                for v in spec.value_registries[name].entries
            )
        tables.append(RegistryTable(
            id=name,
            title=str(meta["title"]),
            value_label=value_label,
            registration_rule=_text(meta.get("policy")),
            xref=xref(spec, str(meta["reference"])),
            note=_text(meta.get("note")),
            extra_columns=extra_columns,
            records=records,
            requested_by_draft=meta.get("kept_by") == "draft",
            contact=str(meta["contact"]),
        ))
    return tuple(tables)


def _media_description(spec: Spec, reference: str) -> str:
    """A media type's description: the summary of the section that defines it."""
    section = spec.section(reference.removeprefix("#"))
    return section.summary if section is not None else ""


def _xml_text(value: str) -> str:
    return escape(value)


def _xml_attr(value: str) -> str:
    return quoteattr(value)


@cache
def xml_environment(templates: Path) -> Environment:
    """The environment of the XML registry files, with their filters, made once."""
    env = new_environment()
    env.filters["xml"] = _xml_text
    env.filters["xmlattr"] = _xml_attr
    return env


def render_xml(spec: Spec, table: RegistryTable) -> bytes:
    env = xml_environment(template_dir())
    header = markup_header(spec, f"registry/{table.id}.yaml and codegen/templates/{XML_TEMPLATE}",
                           inputs_hash(spec, XML_TEMPLATE))
    body = env.get_template(XML_TEMPLATE).render(
        spec=spec, table=table, header=header.rstrip("\n"), namespace=IANA_NAMESPACE
    )
    return body.encode()


def csv_reference(ref: Xref) -> str:
    """A reference the way IANA's CSV files print one: in brackets."""
    return f"[{ref.text}]"


def render_csv(table: RegistryTable) -> bytes:
    out = io.StringIO()
    writer = csv.writer(out, lineterminator="\r\n")
    writer.writerow([table.value_label, "Description", "Reference", "Status", "Date",
                     *(label for _, label in table.extra_columns)])
    for record in table.records:
        writer.writerow([record.value, record.description, csv_reference(record.xref),
                         record.status, record.date, *(value for _, value in record.extra)])
    return out.getvalue().encode()


def render_json(table: RegistryTable) -> bytes:
    document = {
        "id": table.id,
        "title": table.title,
        "created": table.created,
        "updated": table.updated,
        "registration_rule": table.registration_rule,
        "reference": table.xref.as_dict(),
        "note": table.note,
        "kept_by": "draft" if table.requested_by_draft else "project",
        "contact": table.contact,
        "people": [{"id": p.id, "name": p.name, "uri": p.uri} for p in table.people],
        "records": [
            {
                "value": record.value,
                "description": record.description,
                "status": record.status,
                "date": record.date,
                "reference": record.xref.as_dict(),
                **dict(record.extra),
            }
            for record in table.records
        ],
    }
    return (json.dumps(document, indent=2, ensure_ascii=False) + "\n").encode()


def render_registry(spec: Spec) -> Iterator[Artifact]:
    """generated/registry/<registry>.xml, .csv and .json for every published registry."""
    for table in registry_tables(spec):
        yield Artifact(f"{REGISTRY_OUT}/{table.download('xml')}", render_xml(spec, table))
        yield Artifact(f"{REGISTRY_OUT}/{table.download('csv')}", render_csv(table))
        yield Artifact(f"{REGISTRY_OUT}/{table.download('json')}", render_json(table))


__all__ = ["FORMATS", "PUBLISHED", "Person", "RegistryTable", "people", "registry_tables",
           "render_registry", "xref"]
