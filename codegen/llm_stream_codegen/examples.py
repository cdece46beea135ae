"""Judge every tagged example with the generated bindings: valid ones pass, invalid ones fail
with exactly the rules their tag names.

The bindings are the judge because the decoder is what decides a stream's conformance; run as
`python -m llm_stream_codegen.examples ROOT` it does so in a fresh interpreter, so that freshly
generated bindings are the ones imported. The examples come to it as JSON on its standard input,
as the caller loaded them, so that the manifest is parsed once a command.
"""

from __future__ import annotations

import importlib
import json
import os
import subprocess
import sys
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, fields, replace
from pathlib import Path
from typing import Any

from .model import Example, Where
from .sources import SourceError

EXAMPLES_DIR = Path("spec/examples")
CHECKED_KINDS = frozenset({"stream", "http-response", "events", "request", "message"})


def decoder_options(options: Mapping[str, Any], folder: Path) -> dict[str, Any]:
    """The `Decoder` options of an example's manifest options, whose files (`tools`, `request`)
    are read from `folder`, as `llm-stream check --tools` and `--request` read them."""
    from llm_stream.cli import answered_request

    result = dict(options)
    files = {key: str(folder / result.pop(key)) for key in ("request", "tools") if key in result}
    return {**result, **answered_request(**files)}


def diagnose(example: Example, root: Path) -> list[Any]:
    """The diagnostics the bindings report for one example (Diagnostic or SchemaError)."""
    from llm_stream.cli import decode_file
    from llm_stream.decoder import Decoder
    from llm_stream.request import check_request_text
    from llm_stream.validators import validate_message

    folder = root / EXAMPLES_DIR
    path = folder / example.file
    if example.kind in ("stream", "http-response", "events"):
        options = decoder_options(example.options, folder)
        decoder = Decoder(lifecycle=example.kind != "events", **options)
        return decode_file(str(path), decoder)[1]
    text = path.read_text(encoding="utf-8")
    if example.kind == "request":
        return check_request_text(text)
    return validate_message(json.loads(text))


def translate(example: Example, root: Path) -> tuple[bytes, list[Any]]:
    """A vendor stream example's LLM-Stream body and the translator's diagnostics."""
    from llm_stream.encoder import encode_event
    from llm_stream.translate import stream_translator

    assert example.translation is not None
    options = {k: v for k, v in example.translation.items()
               if k in ("created", "model", "request_id")}
    translator = stream_translator(example.translation["format"], **options)
    events = translator.feed((root / EXAMPLES_DIR / example.file).read_bytes())
    events += translator.close()
    return b"".join(encode_event(event) for event in events), translator.diagnostics


def _translation_errors(example: Example, root: Path) -> list[str]:
    """What is wrong with a vendor stream's translation, against its manifest entry."""
    assert example.translation is not None
    body, diagnostics = translate(example, root)
    into = example.translation["into"]
    problems = []
    if body != (root / EXAMPLES_DIR / into).read_bytes():
        problems.append(f"does not translate into {into} byte for byte")
    found = sorted(d.rule for d in diagnostics)
    wanted = sorted(example.translation.get("findings", ()))
    if found != wanted:
        problems.append(f"should give the findings {', '.join(wanted) or 'none'}, but the "
                        f"translator reports {', '.join(found) or 'none'}")
    return problems


def verify_examples(examples: Sequence[Example], root: Path) -> list[SourceError]:
    """One error per example whose diagnostics differ from its tag, or whose translation
    differs from the example it should become."""
    errors = []
    for example in examples:
        if example.translation is not None:
            errors += [SourceError(example.where.path, example.where.line,
                                   f"vendor stream {example.file} {problem}")
                       for problem in _translation_errors(example, root)]
            continue
        if example.expect is None or example.kind not in CHECKED_KINDS:
            continue
        found = tuple(sorted(d.rule for d in diagnose(example, root)))
        if found != example.expect:
            wanted = "valid" if not example.expect else ", ".join(example.expect)
            got = "none" if not found else ", ".join(found)
            errors.append(SourceError(
                example.where.path, example.where.line,
                f"example {example.file} should be {wanted}, but the bindings report {got}",
            ))
    return errors


def example_record(example: Example) -> dict[str, Any]:
    """An example as JSON, for the judging interpreter; its bytes stay in its file."""
    record = {f.name: getattr(example, f.name) for f in fields(Example) if f.name != "content"}
    record["where"] = [example.where.path, example.where.line]
    record["options"] = dict(example.options)
    if example.translation is not None:
        record["translation"] = dict(example.translation)
    return record


def example_of(record: Mapping[str, Any]) -> Example:
    """The example `example_record` gave, without its bytes: the judging reads its file."""
    example = Example(**{**record, "where": Where(*record["where"]),
                         "complete": tuple(record["complete"])})
    if example.expect is not None:
        example = replace(example, expect=tuple(example.expect))
    return example


def verify_in_subprocess(root: Path, examples: Sequence[Example]) -> list[SourceError]:
    """`verify_examples` in a fresh interpreter, against the bindings under `root`."""
    return verdict(start_verifying(root, examples))


@dataclass(frozen=True)
class Judging:
    """The judging interpreter, started, and the examples it is handed (JSON)."""

    process: subprocess.Popen[str]
    examples: str

    def stop(self) -> None:
        """Stop it if it still runs (its verdict is no longer wanted)."""
        if self.process.returncode is None:
            self.process.kill()
            self.process.communicate()


def start_verifying(root: Path, examples: Sequence[Example]) -> Judging:
    """Start `verify_examples` of `examples` in a fresh interpreter, against the bindings under
    `root` as they are now; `verdict` hands it the examples and waits. Started early, it imports
    the bindings while the caller renders."""
    codegen = Path(__file__).resolve().parent.parent
    path = os.pathsep.join([str(root / "generated" / "python"), str(codegen)])
    process = subprocess.Popen(
        [sys.executable, "-m", "llm_stream_codegen.examples", str(root)],
        stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
        env={**os.environ, "PYTHONPATH": path},
    )
    return Judging(process, json.dumps([example_record(e) for e in examples]))


def verdict(judging: Judging) -> list[SourceError]:
    stdout, stderr = judging.process.communicate(judging.examples)
    try:
        found = json.loads(stdout)
    except ValueError:
        return [SourceError("spec/examples/examples.yaml", 0,
                            f"the bindings could not judge the examples:\n{stderr}")]
    return [SourceError(e["path"], e["line"], e["message"]) for e in found]


JUDGES = ("llm_stream.cli", "llm_stream.decoder", "llm_stream.models", "llm_stream.request",
          "llm_stream.validators", "llm_stream.encoder", "llm_stream.translate")
"""The modules of the bindings that judge the examples, imported before the examples come."""


def main() -> int:
    root = Path(sys.argv[1])
    for module in JUDGES:
        importlib.import_module(module)
    examples = [example_of(record) for record in json.load(sys.stdin)]
    errors = verify_examples(examples, root)
    print(json.dumps([{"path": e.path, "line": e.line, "message": e.message} for e in errors]))
    return 1 if errors else 0


if __name__ == "__main__":
    sys.exit(main())
