"""The wheel's build hook: the bindings' decoder modules compiled with mypyc, and with them the
C scanner of JSON text (`jsonscan.c`) and the C parser of plain JSON (`plainjson.c`), where a C
compiler is at hand (llm_stream_codegen.native does the work).

An editable install compiles into the source tree's `generated/python/llm_stream/_native/`
(nothing when it already holds a build of the same sources); a wheel compiles in a temporary
folder and carries the files as `llm_stream/_native/`, tagged for this interpreter and platform.
A build that fails (or a tree it cannot write) says why in one line and leaves the package pure
Python, which decodes the same.
"""

from __future__ import annotations

import shutil
import sys
import tempfile
from pathlib import Path
from typing import Any

from hatchling.builders.hooks.plugin.interface import BuildHookInterface

PACKAGE = Path("generated/python/llm_stream")


class NativeBuildHook(BuildHookInterface):
    PLUGIN_NAME = "custom"
    _work: str | None = None
    """The temporary folder of a wheel's build, removed once the wheel is written."""

    def initialize(self, version: str, build_data: dict[str, Any]) -> None:
        sys.path.insert(0, str(Path(self.root) / "codegen"))  # the builder, by its own path
        from llm_stream_codegen.native import BuildError

        try:
            if version == "editable":
                self._compile_in_the_tree()
            else:
                self._compile_into_the_wheel(build_data)
        except BuildError as exc:
            print(f"llm-stream: the decoder stays pure Python, its compilation failed: {exc}",
                  file=sys.stderr)

    def _compile_in_the_tree(self) -> None:
        from llm_stream_codegen.native import install

        print(f"llm-stream: {install(Path(self.root) / PACKAGE, Path(self.root))}",
              file=sys.stderr)

    def _compile_into_the_wheel(self, build_data: dict[str, Any]) -> None:
        from llm_stream_codegen.native import NATIVE, compile_modules

        self._work = tempfile.mkdtemp(prefix="llm-stream-wheel-")
        native = Path(self._work) / NATIVE
        compile_modules(Path(self.root) / PACKAGE, native)
        for built in sorted(path for path in native.rglob("*") if path.is_file()):
            place = built.relative_to(native).as_posix()
            build_data["force_include"][str(built)] = f"llm_stream/{NATIVE}/{place}"
        build_data["pure_python"] = False  # a wheel for this interpreter and platform
        build_data["infer_tag"] = True
        print(f"llm-stream: compiled the decoder's modules into the wheel's llm_stream/{NATIVE}",
              file=sys.stderr)

    def finalize(self, version: str, build_data: dict[str, Any], artifact_path: str) -> None:
        if self._work is not None:
            shutil.rmtree(self._work, ignore_errors=True)
