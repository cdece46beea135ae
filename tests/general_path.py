"""A decoder kept off its hot paths, the reference they are held to.

An event that continues an open content block takes a hot path that checks only what may have
changed; the decoder knows such blocks by its `_steady` registry. With a registry that forgets
every block, each event goes through every check. Any other event takes the quick path
(`decoder._QUICK`), which checks what the general path checks from tables read once per type;
the reference has none. Typed, the hot and quick paths parse and validate an event in one step
(`_Typed.whole`), and the general path lets pydantic's strict mode stand in for the validators
where it can (`_Typed.trusted`); the reference does neither, so that every event is checked by
the validators and then built.
"""

from __future__ import annotations

from typing import Any

from llm_stream import Decoder


class _NeverSteady(dict[object, Any]):
    def __setitem__(self, key: object, value: Any) -> None:
        pass


def general_only(**options: Any) -> Decoder:
    """A `Decoder(**options)` whose every event takes the general path, validators first."""
    decoder = Decoder(**options)
    decoder._steady = _NeverSteady()
    decoder._kinds = {}
    if decoder._typed is not None:
        decoder._typed = decoder._typed._replace(whole={}, trusted={})
    return decoder

