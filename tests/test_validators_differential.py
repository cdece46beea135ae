"""The shipped validators agree with jsonschema on every instance of a large corpus.

For each structure (the request, a message, the envelope, every registered event type) the
corpus holds the spec's own examples, valid instances generated from the schema, every near miss
of each (a member dropped, added or retyped), and arbitrary JSON: thousands per schema. The
generated `llm_stream.validators` module is tested as shipped, against Draft202012Validator.
"""

from __future__ import annotations

import json
import random
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from differential import instances_for, oracle

import llm_stream.validators as shipped
from llm_stream import decoder
from llm_stream_codegen.check import schema_store
from llm_stream_codegen.load import load
from llm_stream_codegen.render_validators import validator_roots

ROOT = Path(__file__).resolve().parent.parent
SPEC = load(ROOT)
SCHEMAS = {key: dict(value) for key, value in schema_store(SPEC).items()}
ROOTS = validator_roots(SPEC)
CORPUS = 6000
"""Instances per structure; the near misses of large documents are sampled down to this."""
EVENT_URN = "urn:ietf:params:llm-stream:event"
"""Events also get instances generated from their schema; requests and messages, whose
generation takes minutes, rely on the spec's examples and their near misses."""


def seeds(schema_id: str) -> list[Any]:
    """The valid instances of this structure among the spec's examples."""
    found: list[Any] = []
    for example in SPEC.examples:
        if example.expect != () or not example.content:
            continue
        if example.kind in ("request", "message") and example.file.endswith(".json"):
            document = json.loads(example.content)
            found.append(document)
            if isinstance(document, dict):
                found.extend(document.get("messages", []))
        elif example.kind in ("stream", "events"):
            for line in example.content.decode().splitlines():
                if line.startswith("data: "):
                    found.append(json.loads(line[6:]))
    reference = oracle(SCHEMAS, schema_id)
    return [instance for instance in found if reference.is_valid(instance)]


@pytest.mark.deep
@pytest.mark.parametrize("root", ROOTS, ids=lambda r: r.name)
def test_shipped_validators_agree_with_jsonschema(root: Any) -> None:
    is_valid: Callable[[object], bool] = getattr(shipped, f"is_valid_{root.name}")
    validate: Callable[[object], list[Any]] = getattr(shipped, f"validate_{root.name}")
    reference = oracle(SCHEMAS, root.schema_id)
    known = seeds(root.schema_id)
    generated = 12 if root.schema_id.startswith(EVENT_URN) else 0
    corpus = instances_for(SCHEMAS, root.schema_id, valid=generated, seeds=known)
    if len(corpus) > CORPUS:
        corpus = random.Random(root.name).sample(corpus, CORPUS)
    disagreements = []
    valid = 0
    for instance in corpus:
        expected = reference.is_valid(instance)
        valid += expected
        if is_valid(instance) != expected or (not validate(instance)) != expected:
            disagreements.append(instance)
    assert not disagreements[:5], f"{len(disagreements)} of {len(corpus)} disagree"
    assert len(corpus) >= 1000 and 0 < valid < len(corpus), (len(corpus), valid)


WHOLE = [root for root in ROOTS if root.schema_id in {
    event.schema_id for event in SPEC.event_types if event.name in decoder._typed_tables().whole
}]


def _strictly_accepted(validate: Callable[..., Any], data: str) -> bool:
    try:
        event = validate(data, strict=True)
    except ValueError:
        return False
    return bool(event.seq <= SEQ_MAX)  # the decoder checks the largest seq itself


SEQ_MAX = decoder._SEQ_MAX
"""The models take a seq past it, which draws only a warning (LS-SEC-6), so that the decoder
can return such an event; its hot and trusted paths check it themselves."""


def _guarded(kind: str, data: str) -> bool:
    """Whether the decoder's hot and quick paths keep this JSON text from the model's verdict:
    a text with as many colons as the members its type's required fields make is trusted as
    it is (`_Typed.members`); another is searched for NaN, Infinity and, where the model takes
    one, null."""
    tables = decoder._typed_tables()
    if data.count(":") == tables.members.get(kind):
        return False
    return "NaN" in data or "Infinity" in data or (kind in tables.nullable and "null" in data)


@pytest.mark.deep
@pytest.mark.parametrize("root", WHOLE, ids=lambda r: r.name)
def test_the_typed_hot_and_quick_paths_accept_only_valid_events(root: Any) -> None:
    """The decoder's typed hot and quick paths trust pydantic's strict mode instead of the
    validators (`_Typed.whole`); whatever it accepts of the text they give it must be valid by
    the schema."""
    is_valid: Callable[[object], bool] = getattr(shipped, f"is_valid_{root.name}")
    kind = next(e.name for e in SPEC.event_types if e.schema_id == root.schema_id)
    validate = decoder._typed_tables().whole[kind]
    corpus = instances_for(SCHEMAS, root.schema_id, valid=12, seeds=seeds(root.schema_id))
    texts = [json.dumps(instance, separators=separators, ensure_ascii=ascii)
             for instance in corpus for separators in ((",", ":"), (", ", ": "))
             for ascii in (True, False)]
    accepted = [text for text in texts
                if not _guarded(kind, text) and _strictly_accepted(validate, text)]
    wrongly = [text for text in accepted if not is_valid(json.loads(text))]
    assert not wrongly[:5]
    assert accepted


TRUSTED = [root for root in ROOTS if root.schema_id in {
    event.schema_id for event in SPEC.event_types if event.name in decoder._typed_tables().trusted
}]


def _strictly_built(build: Callable[..., Any], instance: dict[str, Any]) -> bool:
    if None in instance.values():  # the decoder leaves such an object to the validator
        return False
    try:
        event = build(instance, strict=True)
    except ValueError:
        return False
    return bool(event.seq <= SEQ_MAX)


@pytest.mark.deep
@pytest.mark.parametrize("root", TRUSTED, ids=lambda r: r.name)
def test_the_typed_general_path_builds_only_valid_events(root: Any) -> None:
    """The decoder's general path, typed, lets pydantic's strict mode stand in for the
    validators for these types (`_Typed.trusted`); whatever it builds must be valid by the
    schema."""
    is_valid: Callable[[object], bool] = getattr(shipped, f"is_valid_{root.name}")
    kind = next(e.name for e in SPEC.event_types if e.schema_id == root.schema_id)
    build = decoder._typed_tables().trusted[kind]
    corpus = instances_for(SCHEMAS, root.schema_id, valid=12, seeds=seeds(root.schema_id))
    built = [instance for instance in corpus
             if isinstance(instance, dict) and _strictly_built(build, instance)]
    wrongly = [instance for instance in built if not is_valid(instance)]
    assert not wrongly[:5]
    assert built
