"""What importing the bindings costs: the package loads its names when they are first used, and
only typed decoding builds the pydantic models. Each case runs in a fresh interpreter, the only
place where what is imported can be seen."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

import llm_stream

COMPLETE = Path(__file__).resolve().parent.parent / "spec/examples/complete/complete-example.sse"


def loaded_after(code: str) -> set[str]:
    """The modules of llm_stream and pydantic that a fresh interpreter holds after `code`."""
    script = (f"{code}\nimport json, sys\n"
              "print(json.dumps(sorted(m for m in sys.modules "
              "if m.split('.')[0] in ('llm_stream', 'pydantic', 'pydantic_core'))))")
    result = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True,
                            check=True)
    return set(json.loads(result.stdout.splitlines()[-1]))


def test_importing_the_package_imports_none_of_its_modules() -> None:
    assert loaded_after("import llm_stream") == {"llm_stream"}


@pytest.mark.parametrize("code", [
    "from llm_stream import Decoder\n"
    f"d = Decoder(typed=False)\nd.feed(open({str(COMPLETE)!r}, 'rb').read())\nd.close()\n"
    "assert d.conforming and d.diagnostics == []",
    "from llm_stream.cli import main\n"
    f"assert main(['check', {str(COMPLETE)!r}]) == 0",
    "from llm_stream.cli import main\n"
    f"assert main(['decode', {str(COMPLETE)!r}]) == 0",
], ids=["untyped decoder", "check", "decode"])
def test_untyped_decoding_never_builds_the_models(code: str) -> None:
    loaded = loaded_after(code)
    assert "llm_stream.models" not in loaded
    assert "pydantic" not in loaded


def test_a_typed_decoder_builds_them() -> None:
    assert {"llm_stream.models", "pydantic"} <= loaded_after(
        "import llm_stream\nllm_stream.Decoder()")


def test_every_exported_name_resolves_and_is_listed() -> None:
    for name in llm_stream.__all__:
        assert getattr(llm_stream, name) is not None
    assert set(llm_stream.__all__) <= set(dir(llm_stream))
    with pytest.raises(AttributeError, match="no_such_name"):
        llm_stream.no_such_name  # type: ignore[attr-defined]  # noqa: B018


def test_a_function_keeps_its_name_over_the_module_it_lives_in() -> None:
    assert loaded_after(
        "import llm_stream.aggregate\nfrom llm_stream import aggregate\n"
        "from llm_stream.aggregate import Usage\nassert callable(aggregate)\n"
        "assert aggregate([]).usage is None"
    ) >= {"llm_stream.aggregate"}
