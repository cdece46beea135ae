"""Differential testing: compiled validators against jsonschema, the reference oracle.

``assert_agreement(schemas, root_id, instances)`` compiles the schemas, loads the generated module
(written into a throwaway package next to a copy of the diagnostics template, so that its
``from .diagnostics import SchemaError`` works exactly as in the bindings package), and checks for
every instance that ``is_valid`` == ``not validate(...)`` == ``Draft202012Validator.is_valid``.

The rest are the instance sources the tests feed it with: ``sample`` (hypothesis examples as a
deterministic list), ``inline_refs`` (one self-contained schema for hypothesis-jsonschema, which
resolves no remote $ref) and ``mutations`` (near misses of a valid instance).
"""

from __future__ import annotations

import atexit
import copy
import functools
import hashlib
import importlib
import importlib.util
import json
import shutil
import sys
import tempfile
from collections.abc import Callable, Iterator, Mapping, Sequence
from pathlib import Path
from types import ModuleType
from typing import Any, TypeVar

import depth
import hypothesis
from hypothesis import HealthCheck, Phase, given, settings
from hypothesis import strategies as st
from jsonschema import Draft202012Validator
from referencing import Registry, Resource
from referencing.jsonschema import DRAFT202012

from llm_stream_codegen.validator_compiler import ValidatorRoot, compile_validators

REPO = Path(__file__).resolve().parents[1]
DIAGNOSTICS = REPO / "codegen" / "templates" / "python" / "static" / "diagnostics.py"

T = TypeVar("T")
Schemas = Mapping[str, Mapping[str, Any]]


# ---- loading generated code ---------------------------------------------------------------

_WORK = Path(tempfile.mkdtemp(prefix="llm-stream-validators-"))
atexit.register(shutil.rmtree, _WORK, ignore_errors=True)


def load_compiled(source: str) -> ModuleType:
    """Import generated validator source as ``<package>.validators``; cached by content."""
    package = "_validators_" + hashlib.sha256(source.encode()).hexdigest()[:16]
    name = f"{package}.validators"
    if name in sys.modules:
        return sys.modules[name]
    directory = _WORK / package
    directory.mkdir(exist_ok=True)
    (directory / "__init__.py").write_text("")
    shutil.copy(DIAGNOSTICS, directory / "diagnostics.py")
    (directory / "validators.py").write_text(source, encoding="utf-8")
    spec = importlib.util.spec_from_file_location(
        package, directory / "__init__.py", submodule_search_locations=[str(directory)]
    )
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[package] = module
    spec.loader.exec_module(module)
    return importlib.import_module(name)


def compile_and_load(schemas: Schemas, roots: Sequence[ValidatorRoot]) -> tuple[ModuleType, str]:
    source = compile_validators(schemas, roots)
    return load_compiled(source), source


def registry_of(schemas: Schemas) -> Registry[Any]:
    """The referencing registry jsonschema resolves every $id of ``schemas`` in."""
    resources = [
        (uri, Resource.from_contents(schema, default_specification=DRAFT202012))
        for uri, schema in schemas.items()
    ]
    registry: Registry[Any] = Registry().with_resources(resources)
    return registry


def oracle(schemas: Schemas, root_id: str) -> Draft202012Validator:
    return Draft202012Validator({"$ref": root_id}, registry=registry_of(schemas))


# ---- the agreement check ------------------------------------------------------------------


class Disagreement(AssertionError):
    pass


def assert_agreement(
    schemas: Schemas, root_id: str, instances: Sequence[Any], *, default_rule: str = "LS-TEST"
) -> tuple[int, int]:
    """Every instance: compiled is_valid == not compiled validate == jsonschema's is_valid.

    Returns (valid, invalid) counts, so a caller can check that both sides were exercised.
    """
    module, _ = compile_and_load(schemas, [ValidatorRoot("root", root_id, default_rule)])
    reference = oracle(schemas, root_id)
    is_valid: Callable[[object], bool] = module.is_valid_root
    validate: Callable[[object], list[Any]] = module.validate_root
    problems: list[str] = []
    counts = [0, 0]
    for instance in instances:
        expected = reference.is_valid(instance)
        fast = is_valid(instance)
        errors = validate(instance)
        counts[0 if expected else 1] += 1
        if fast == expected and (not errors) == expected:
            if errors:
                _check_errors(instance, errors, problems)
            continue
        problems.append(
            f"{_show(instance)}: jsonschema says {'valid' if expected else 'invalid'}, "
            f"is_valid {fast}, validate {errors!r}"
        )
        if len(problems) >= 10:
            break
    if problems:
        raise Disagreement(f"{root_id}:\n  " + "\n  ".join(problems))
    return counts[0], counts[1]


def _check_errors(instance: Any, errors: list[Any], problems: list[str]) -> None:
    for error in errors:
        ok = (
            isinstance(error.rule, str)
            and error.rule
            and isinstance(error.message, str)
            and error.message
            and (error.pointer == "" or error.pointer.startswith("/"))
            and _parent_resolves(instance, error.pointer)
        )
        if not ok:
            problems.append(f"{_show(instance)}: malformed error {error!r}")


def _parent_resolves(instance: Any, pointer: str) -> bool:
    """The pointer's parent names a value in the instance (its last member may be missing)."""
    node = instance
    segments = pointer.split("/")[1:-1] if pointer else []
    for raw in segments:
        segment = raw.replace("~1", "/").replace("~0", "~")
        if isinstance(node, dict) and segment in node:
            node = node[segment]
        elif isinstance(node, list) and segment.isdigit() and int(segment) < len(node):
            node = node[int(segment)]
        else:
            return False
    return True


def _show(instance: Any) -> str:
    try:
        text = json.dumps(instance, ensure_ascii=True)
    except (TypeError, ValueError):
        text = repr(instance)
    return text if len(text) < 300 else text[:297] + "..."


# ---- instance sources ----------------------------------------------------------------------


def sample(strategy: st.SearchStrategy[T], n: int) -> list[T]:
    """n examples of a strategy, the same ones on every run."""
    found: list[T] = []

    @settings(
        max_examples=n,
        database=None,
        derandomize=True,
        deadline=None,
        phases=[Phase.generate],
        suppress_health_check=list(HealthCheck),
    )
    @given(strategy)
    def collect(value: T) -> None:
        found.append(value)

    collect()
    return found


def json_values() -> st.SearchStrategy[Any]:
    """Arbitrary JSON, with the numbers and strings validators get wrong."""
    scalars = st.one_of(
        st.none(),
        st.booleans(),
        st.integers(),
        st.sampled_from([0, 1, -1, 0.0, 1.0, -0.0, 1.5, 2**53 + 1, 1e308, True, False]),
        st.floats(allow_nan=False, allow_infinity=False),
        st.text(),
        st.sampled_from(["", "a", "é", "\U0001f600", "a/b", "~", "1.0", "content.delta"]),
    )
    return st.recursive(
        scalars,
        lambda children: st.one_of(
            st.lists(children, max_size=4),
            st.dictionaries(st.text(max_size=6), children, max_size=4),
        ),
        max_leaves=12,
    )


@functools.cache
def arbitrary_json(n: int) -> tuple[Any, ...]:
    """n values of ``json_values()``: the same ones on every call, so made once per process
    (every corpus adds them, and drawing them costs more than judging them)."""
    return tuple(sample(json_values(), n))


def inline_refs(schemas: Schemas, root_id: str) -> Any:
    """The root schema with every $ref replaced by its target (for generators without $ref
    support); x- annotations dropped. Recursive schemas cannot be inlined: RecursionError."""
    resolver = registry_of(schemas).resolver()

    def walk(node: Any, resolver: Any, depth: int) -> Any:
        if depth > 40:
            raise RecursionError("recursive schema")
        if isinstance(node, list):
            return [walk(n, resolver, depth) for n in node]
        if not isinstance(node, dict):
            return node
        if "$id" in node:
            resolver = resolver.in_subresource(
                Resource.from_contents(node, default_specification=DRAFT202012)
            )
        out: dict[str, Any] = {}
        for key, value in node.items():
            if key.startswith("x-") or key in ("$id", "$defs", "$schema", "$ref"):
                continue
            if key in ("properties", "patternProperties", "dependentSchemas"):
                out[key] = {k: walk(v, resolver, depth) for k, v in value.items()}
            elif key in ("const", "enum", "examples", "default"):
                out[key] = copy.deepcopy(value)
            else:
                out[key] = walk(value, resolver, depth)
        if "$ref" in node:
            resolved = resolver.lookup(node["$ref"])
            target = walk(resolved.contents, resolved.resolver, depth + 1)
            if not out:
                return target
            return {"allOf": [target, out]}
        return out

    root = resolver.lookup(root_id)
    return walk(root.contents, root.resolver, 0)


REPLACEMENTS: tuple[Any, ...] = (
    None,
    True,
    False,
    0,
    1,
    1.0,
    -1,
    0.5,
    -1.5,
    2**63,
    1e300,
    "",
    "x",
    "1.0",
    "\u00e9\U0001f600",
    "x" * 300,
    [],
    [1, 1],
    [1, 1.0],
    [True, 1],
    {},
    {"a": 1},
)


def mutations(instance: Any) -> Iterator[Any]:
    """Near misses: at every location, drop a member, add one, and swap the value for another
    (type changes, 1 vs 1.0 vs True, out-of-range numbers, unicode, duplicates)."""
    for path, value in list(_locations(instance)):
        for replacement in _replacements(value):
            yield _replace(instance, path, replacement)
        if isinstance(value, dict):
            for key in value:
                yield _replace(instance, path, {k: v for k, v in value.items() if k != key})
            yield _replace(instance, path, {**value, "zz_extra": 1})
        elif isinstance(value, list):
            if value:
                yield _replace(instance, path, value[:-1])
                yield _replace(instance, path, [*value, value[0]])
            yield _replace(instance, path, [*value, None])


def _replacements(value: Any) -> Iterator[Any]:
    yield from REPLACEMENTS
    if isinstance(value, bool):
        yield not value
        yield int(value)
    elif isinstance(value, int | float):
        for delta in (1, -1, 0.5):
            yield value + delta
        yield float(value)
        yield -value
        if isinstance(value, float) and value.is_integer():
            yield int(value)
        yield value * 10
    elif isinstance(value, str):
        yield value + "\u00e9"
        yield value[:-1]
        yield value + value
        yield value.upper()


def _locations(node: Any, path: tuple[Any, ...] = ()) -> Iterator[tuple[tuple[Any, ...], Any]]:
    yield path, node
    if isinstance(node, dict):
        for key, value in node.items():
            yield from _locations(value, (*path, key))
    elif isinstance(node, list):
        for i, value in enumerate(node):
            yield from _locations(value, (*path, i))


def _replace(instance: Any, path: tuple[Any, ...], value: Any) -> Any:
    if not path:
        return value
    head, *rest = path
    if isinstance(instance, dict):
        return {**instance, head: _replace(instance[head], tuple(rest), value)}
    items = list(instance)
    items[head] = _replace(items[head], tuple(rest), value)
    return items


def _patch_hypothesis_jsonschema() -> None:
    """hypothesis-jsonschema 0.23.1 drives ``many`` with ``.more()``, which newer hypothesis
    replaced by iteration; give its module (only) a ``many`` that still has ``.more()``."""
    import types

    from hypothesis.internal.conjecture import utils
    from hypothesis_jsonschema import _from_schema

    if hasattr(utils.many, "more") or isinstance(
        getattr(_from_schema, "cu", None), types.SimpleNamespace
    ):
        return
    stop = object()

    class Many(utils.many):
        _elements: Iterator[None] | None = None

        def more(self) -> bool:
            if self._elements is None:
                self.__enter__()
                self._elements = iter(self)
            if next(self._elements, stop) is stop:
                self.__exit__(None)
                return False
            return True

    setattr(_from_schema, "cu", types.SimpleNamespace(**{**vars(utils), "many": Many}))  # noqa: B010


def valid_examples(schemas: Schemas, root_id: str, n: int) -> list[Any]:
    """Examples hypothesis-jsonschema generates from the (inlined) root; [] if it cannot."""
    from hypothesis_jsonschema import from_schema

    _patch_hypothesis_jsonschema()
    try:
        schema = inline_refs(schemas, root_id)
        return sample(from_schema(schema), n)
    except (RecursionError, hypothesis.errors.InvalidArgument, hypothesis.errors.Unsatisfiable):
        return []


def instances_for(
    schemas: Schemas,
    root_id: str,
    *,
    valid: int = 40,
    noise: int = 300,
    seeds: Sequence[Any] = (),
) -> list[Any]:
    """Thousands of instances: valid examples (generated, plus ``seeds`` for what
    hypothesis-jsonschema cannot generate, such as recursive schemas), all their mutations,
    and arbitrary JSON; ``valid`` and ``noise`` are the everyday counts (`depth.examples`)."""
    examples = [*seeds, *valid_examples(schemas, root_id, depth.examples(valid))]
    found: list[Any] = list(examples)
    for example in examples:
        found.extend(mutations(example))
    found.extend(arbitrary_json(depth.examples(noise)))
    return found
