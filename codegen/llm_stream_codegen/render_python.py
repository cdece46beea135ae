"""The bindings' Python modules: those that do not depend on the spec copied from
templates/python/static, the others rendered from the spec with a jinja template each."""

from __future__ import annotations

from collections.abc import Iterator

from .model import ENVELOPE_ID, Spec
from .rendering import (
    PACKAGE_DIR,
    Artifact,
    environment,
    inputs_hash,
    python_header,
    slashed_header,
    template_dir,
)
from .schema_walk import envelope_constants, integer_members

STATIC_HEADERS = {".py": python_header, ".c": slashed_header}
"""The files of templates/python/static copied, by suffix, with the header each one's comments
allow: Python modules, and the C sources of extension modules (`jsonscan.c`, `plainjson.c`),
which the install compiles beside the mypyc modules (`native`)."""


def static_python(spec: Spec) -> Iterator[Artifact]:
    """Modules (and C sources) that do not depend on the spec: copied with the generated-file
    header; a folder of static/ is a subpackage of the bindings."""
    static = template_dir() / "python" / "static"
    for path in sorted(p for p in static.rglob("*") if p.suffix in STATIC_HEADERS):
        module = path.relative_to(static).as_posix()
        name = f"python/static/{module}"
        header = STATIC_HEADERS[path.suffix](
            spec, f"codegen/templates/{name}", inputs_hash(spec, name))
        yield Artifact(f"{PACKAGE_DIR}/{module}", (header + path.read_text()).encode())
    yield Artifact(f"{PACKAGE_DIR}/py.typed", b"")  # PEP 561: the bindings ship their types


RENDERED_PACKAGES = ("", "translate/")
"""The folders of templates/python whose *.py.j2 are modules (parts/ holds included pieces)."""


def rendered_python(spec: Spec) -> Iterator[Artifact]:
    """Modules rendered from the spec with a jinja template each."""
    env = environment()
    version, seq_max = envelope_constants(spec.schemas[ENVELOPE_ID].document)
    integers = integer_tables(spec)
    for package in RENDERED_PACKAGES:
        for path in sorted((template_dir() / "python" / package).glob("*.py.j2")):
            name = f"python/{package}{path.name}"
            header = python_header(
                spec, f"the spec source and codegen/templates/{name}", inputs_hash(spec, name)
            )
            body = env.get_template(name).render(
                spec=spec, version=version, seq_max=seq_max, integers=integers
            )
            module = f"{package}{path.name.removesuffix('.j2')}"
            yield Artifact(f"{PACKAGE_DIR}/{module}", (header + body).encode())


def integer_tables(spec: Spec) -> dict[str, tuple[str, ...]]:
    """The integer members of the envelope (under "") and of each event type, its envelope's
    included (decision D-INTEGERS)."""
    envelope = integer_members(spec.schemas[ENVELOPE_ID].document)
    tables = {"": envelope}
    for event in spec.event_types:
        own = integer_members(spec.schemas[event.schema_id].document)
        tables[event.name] = tuple(sorted({*envelope, *own}))
    return tables
