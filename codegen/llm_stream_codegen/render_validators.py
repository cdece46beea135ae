"""The validators module: the compiler's per-structure functions plus the registry's dispatch."""

from __future__ import annotations

from collections.abc import Iterator

from .check import schema_store
from .model import URN, Spec
from .rendering import PACKAGE_DIR, Artifact, environment, inputs_hash, python_header
from .validator_compiler import ValidatorRoot, compile_validators

DISPATCH_TEMPLATE = "python/parts/validators_dispatch.py.j2"
STRUCTURE_ROOTS = (
    ("request", URN + "request:1.0", "LS-REQ-4"),
    ("message", URN + "message:1.0", "LS-MSG-1"),
    ("envelope", URN + "event-envelope:1.0", "LS-ENV-3"),
)


def validator_roots(spec: Spec) -> list[ValidatorRoot]:
    roots = [ValidatorRoot(name, schema_id, rule) for name, schema_id, rule in STRUCTURE_ROOTS]
    for event in spec.event_types:
        rule = str(spec.schemas[event.schema_id].document.get("x-rule", "LS-ENV-3"))
        roots.append(ValidatorRoot(event.identifier, event.schema_id, rule))
    return roots


def render_validators(spec: Spec) -> Iterator[Artifact]:
    body = compile_validators(
        schema_store(spec), validator_roots(spec), ["from collections.abc import Callable"]
    )
    dispatch = environment().get_template(DISPATCH_TEMPLATE).render(spec=spec)
    header = python_header(
        spec,
        "the spec's schemas by llm_stream_codegen.validator_compiler and codegen/templates/"
        + DISPATCH_TEMPLATE,
        inputs_hash(spec, DISPATCH_TEMPLATE),
    )
    text = f"{header}{body.rstrip()}\n{dispatch}"
    yield Artifact(f"{PACKAGE_DIR}/validators.py", text.encode())
