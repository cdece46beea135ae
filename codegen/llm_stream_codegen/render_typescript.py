"""The TypeScript bindings: an npm package under generated/typescript, from the same spec model.

Hand-written modules that do not depend on the spec (the SSE layer, the decoder, the encoder) are
copied from `codegen/templates/typescript/static` with a header; the lifecycle tables, the rule
table and the registry constants are rendered from jinja templates beside the Python ones; the
types and the validators are emitted from the schemas (`ts_types`, `ts_validators`). Nothing here
needs Node: the package is TypeScript source, built with `tsc` by whoever uses it.
"""

from __future__ import annotations

from collections.abc import Iterator
from functools import cache
from pathlib import Path

from jinja2 import Environment

from .check import schema_store
from .model import ENVELOPE_ID, Spec
from .render_validators import validator_roots
from .rendering import (
    Artifact,
    inputs_hash,
    markup_header,
    new_environment,
    slashed_header,
    template_dir,
)
from .schema_walk import envelope_constants
from .ts_literals import pascal, ts_literal
from .ts_types import typescript_types
from .ts_validators import compile_typescript_validators

PACKAGE = "generated/typescript"
SOURCE = f"{PACKAGE}/src"
TYPESCRIPT_VERSION = "5.9.3"
"""The TypeScript the package is built with: its one development dependency."""
DISPATCH_TEMPLATE = "typescript/parts/validators_dispatch.ts.j2"
UNION_TEMPLATE = "typescript/parts/types_union.ts.j2"


def package_version(spec: Spec) -> str:
    """The spec's version as npm's semantic version: 1.0 -> 1.0.0."""
    parts = spec.meta.version.split(".")
    return ".".join([*parts, *["0"] * (3 - len(parts))])


def _environment() -> Environment:
    return _environment_of(template_dir())


@cache
def _environment_of(templates: Path) -> Environment:
    """The templates' environment with the TypeScript filters, made once a folder."""
    env = new_environment()
    env.filters["tsrepr"] = ts_literal
    env.filters["pascal"] = pascal
    return env


def _static(spec: Spec) -> Iterator[Artifact]:
    """Modules and configuration that do not depend on the spec, copied with a header."""
    for path in sorted((template_dir() / "typescript" / "static").iterdir()):
        name = f"typescript/static/{path.name}"
        header = slashed_header(spec, f"codegen/templates/{name}", inputs_hash(spec, name))
        target = f"{SOURCE}/{path.name}" if path.suffix == ".ts" else f"{PACKAGE}/{path.name}"
        yield Artifact(target, (header + path.read_text()).encode())


def _rendered(spec: Spec, env: Environment) -> Iterator[Artifact]:
    """Modules and files rendered from the spec with a jinja template each."""
    version, seq_max = envelope_constants(spec.schemas[ENVELOPE_ID].document)
    for path in sorted((template_dir() / "typescript").glob("*.j2")):
        name = f"typescript/{path.name}"
        target = path.name.removesuffix(".j2")
        digest = inputs_hash(spec, name)
        body = env.get_template(name).render(
            spec=spec, version=version, seq_max=seq_max, digest=digest,
            package_version=package_version(spec), typescript_version=TYPESCRIPT_VERSION,
        )
        source = f"the spec source and codegen/templates/{name}"
        if target.endswith(".ts"):
            header = slashed_header(spec, source, digest)
            yield Artifact(f"{SOURCE}/{target}", (header + body).encode())
        elif target.endswith(".md"):
            header = markup_header(spec, source, digest)
            yield Artifact(f"{PACKAGE}/{target}", (header + body).encode())
        else:
            yield Artifact(f"{PACKAGE}/{target}", body.encode())


def _validators(spec: Spec, env: Environment) -> Artifact:
    dispatch = env.get_template(DISPATCH_TEMPLATE).render(spec=spec)
    body = compile_typescript_validators(schema_store(spec), validator_roots(spec), dispatch)
    header = slashed_header(
        spec, "the spec's schemas by llm_stream_codegen.ts_validators and codegen/templates/"
        + DISPATCH_TEMPLATE, inputs_hash(spec, DISPATCH_TEMPLATE),
    )
    doc = ("/**\n * JSON Schema validators of every structure, compiled from the spec's schemas"
           " as the Python\n * bindings' are: the same errors, rules and pointers.\n */\n\n")
    return Artifact(f"{SOURCE}/validators.ts", (header + doc + body).encode())


def _types(spec: Spec, env: Environment) -> Artifact:
    union = env.get_template(UNION_TEMPLATE).render(spec=spec)
    header = slashed_header(
        spec, "the spec's schemas by llm_stream_codegen.ts_types and codegen/templates/"
        + UNION_TEMPLATE, inputs_hash(spec, UNION_TEMPLATE),
    )
    doc = ("/**\n * The types of every LLM-Stream structure, from the spec's schemas; unknown"
           " members are kept.\n */\n\n")
    imports = 'import { EVENT_TYPE_STATUS } from "./registry.js";\n\n'
    text = header + doc + imports + typescript_types(spec) + union
    return Artifact(f"{SOURCE}/types.ts", text.encode())


def render_typescript(spec: Spec) -> Iterator[Artifact]:
    env = _environment()
    yield from _static(spec)
    yield from _rendered(spec, env)
    yield _validators(spec, env)
    yield _types(spec, env)
