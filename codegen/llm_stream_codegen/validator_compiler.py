"""Compile JSON Schema (draft 2020-12) documents into the source of a Python validator module.

The output is straight-line code specialised per schema: each root gets

- ``validate_<name>(instance) -> list[SchemaError]``, every error in a deterministic order, each
  carrying a rule ID, the RFC 6901 pointer of the offending value and a sentence a person reads;
- ``is_valid_<name>(instance) -> bool``, a separate fast path that returns at the first failure
  and builds nothing on success.

The generated module imports only the standard library and ``from .diagnostics import
SchemaError``. Its semantics are those of ``jsonschema.Draft202012Validator`` with the default
format checker (``format`` is an annotation), including jsonschema's reading of ``integer``
(1.0 is an integer, True is not), of equality (1 == 1.0, True != 1, deep for arrays and objects)
and of ``uniqueItems``. Values are the ones ``json.loads`` produces (and their subclasses).

Rule attribution: an error found by a keyword of a schema node carries the ``x-rule`` of that
node, else of the nearest ancestor that has one (the schema tree as traversed from the root; a
``$ref`` target's own ``x-rule`` takes precedence inside it), else the root's ``default_rule``. A
missing required property carries the ``x-rule`` of its subschema under ``properties`` if that
subschema has one.

Every subschema reached through ``$ref`` compiles to one helper function per mode, shared by
all uses (which also makes recursive schemas work). A keyword the compiler does not implement
(``unevaluatedProperties``, ``$dynamicRef``, an unknown or misspelled keyword, ...) is a
compile-time :class:`SchemaCompileError` naming the schema and the JSON pointer of the node:
nothing is silently ignored. ``x-`` keys and the 2020-12 annotations assert nothing.
"""

from __future__ import annotations

import keyword
from collections.abc import Mapping, Sequence
from typing import Any

from .validator_arrays import ArrayKeywords
from .validator_code import LINE_LENGTH, Function, Helper, Ptr, docstring, fit, lit
from .validator_core import ANNOTATION_KEYWORDS, SUPPORTED_KEYWORDS, ValidatorRoot
from .validator_index import Loc, SchemaCompileError
from .validator_modes import Fast, Full
from .validator_objects import ObjectKeywords
from .validator_runtime import RUNTIME, RUNTIME_IMPORTS, uses
from .validator_scalars import NumberKeywords, StringKeywords
from .validator_tidy import merge_nested_ifs, return_last_test

__all__ = [
    "ANNOTATION_KEYWORDS",
    "SUPPORTED_KEYWORDS",
    "SchemaCompileError",
    "ValidatorRoot",
    "compile_validators",
]


def compile_validators(
    schemas: Mapping[str, Mapping[str, Any]],
    roots: Sequence[ValidatorRoot],
    extra_imports: Sequence[str] = (),
) -> str:
    """Return the source of a module validating each root; the same input gives the same bytes.

    ``schemas`` maps each $id (an absolute URI) to its schema document; ``extra_imports`` are
    import lines that code appended to the module needs.
    """
    return Compiler(schemas, roots, extra_imports).module()


class Compiler(ObjectKeywords, ArrayKeywords, StringKeywords, NumberKeywords):
    # ---- functions and the module ------------------------------------------------------------

    def _helper_source(self, helper: Helper) -> list[str]:
        fn = Function()
        doc = docstring(str(helper.loc))
        if helper.mode == "is":
            header = [f"def {helper.name}(x: Any) -> bool:", f"    {doc}"]
            Fast(self, fn).visit(1, helper.node, helper.loc, "x", Ptr(), "")
            fn.emit(1, "return True")
            fn.lines = return_last_test(merge_nested_ifs(fn.lines))
        else:
            rule = ", rule: str" if helper.takes_rule else ""
            head = f"def {helper.name}(x: Any, p: str, errors: list[SchemaError]{rule}) -> None:"
            if len(head) > LINE_LENGTH:
                params = f"x: Any, p: str, errors: list[SchemaError]{rule}"
                head = f"def {helper.name}(\n    {params}\n) -> None:"
            header = [head, f"    {doc}"]
            Full(self, fn).visit(1, helper.node, helper.loc, "x", Ptr(((True, "p"),)), "rule")
            fn.lines = merge_nested_ifs(fn.lines)
        return header + fn.lines

    def module(self) -> str:
        public: list[list[str]] = []
        exported: list[str] = []
        seen_names: set[str] = set()
        for root in self.roots:
            if not root.name.isidentifier() or keyword.iskeyword(root.name):
                raise ValueError(f"root name {root.name!r} is not a Python identifier")
            if root.name in seen_names:
                raise ValueError(f"two roots are named {root.name!r}")
            seen_names.add(root.name)
            try:
                node, loc = self.index.resolve(root.schema_id, Loc(root.schema_id, ""))
            except SchemaCompileError:
                raise SchemaCompileError(
                    root.schema_id, "", "no schema has this $id (roots name a schema by $id)"
                ) from None
            public.append(self._public_is(root, node, loc))
            public.append(self._public_validate(root, node, loc))
            exported += [f"is_valid_{root.name}", f"validate_{root.name}"]
        helpers: list[list[str]] = []
        while self.helpers.pending:
            helpers.append(self._helper_source(self.helpers.pending.pop(0)))
        return self._assemble(public, helpers, exported)

    def _public_is(self, root: ValidatorRoot, node: object, loc: Loc) -> list[str]:
        fn = Function()
        fn.emit(1, "x: Any = instance")
        Fast(self, fn).visit(1, node, loc, "x", Ptr(), "")
        fn.emit(1, "return True")
        fn.lines = return_last_test(merge_nested_ifs(fn.lines))
        doc = docstring(f"True if instance is valid against {root.schema_id}.")
        return [f"def is_valid_{root.name}(instance: object) -> bool:", f"    {doc}", *fn.lines]

    def _public_validate(self, root: ValidatorRoot, node: object, loc: Loc) -> list[str]:
        fn = Function()
        fn.emit(1, "x: Any = instance")
        fn.emit(1, "errors: list[SchemaError] = []")
        Full(self, fn).visit(1, node, loc, "x", Ptr(), lit(root.default_rule))
        fn.emit(1, "return errors")
        fn.lines = merge_nested_ifs(fn.lines)
        doc = docstring(f"Every error of instance against {root.schema_id}.")
        return [
            f"def validate_{root.name}(instance: object) -> list[SchemaError]:",
            f"    {doc}",
            *fn.lines,
        ]

    def _assemble(
        self, public: list[list[str]], helpers: list[list[str]], exported: list[str]
    ) -> str:
        code = "\n\n\n".join("\n".join(f) for f in public + helpers)
        constants = "\n".join(self.constants.lines)
        runtime: list[str] = []
        used_text = code + constants
        changed = True
        while changed:
            changed = False
            for name, source in RUNTIME.items():
                if name not in runtime and uses(name, used_text):
                    runtime.append(name)
                    used_text += source
                    changed = True
        runtime_code = "\n\n\n".join(RUNTIME[n].strip() for n in RUNTIME if n in runtime)
        imports = {"from typing import Any", *self.extra_imports}
        if uses("re", constants):
            imports.add("import re")
        for name in runtime:
            if name in RUNTIME_IMPORTS:
                imports.add(RUNTIME_IMPORTS[name])
        ordered = sorted(i for i in imports if i.startswith("import ")) + sorted(
            i for i in imports if i.startswith("from ")
        )
        out = [
            '"""JSON Schema validators, generated by llm_stream_codegen.validator_compiler.',
            "",
            "Generated code: do not edit. validate_<name>(instance) returns every error;",
            "is_valid_<name>(instance) is the fast path and stops at the first one.",
            '"""',
            "",
            "from __future__ import annotations",
            "",
            *ordered,
            "",
            "from .diagnostics import SchemaError",
            "",
            "__all__ = [",
            *[f"    {lit(name)}," for name in sorted(exported)],
            "]",
        ]
        if constants:
            out += ["", constants]
        if runtime_code:
            out += ["", "", runtime_code]
        out += ["", "", code, ""]
        return "\n".join(fit(line) for line in "\n".join(out).split("\n"))
