"""How deep the searches go: the everyday run draws the numbers the tests name, the hypothesis
profile "long" (`nox -s fuzz`, registered in conftest.py) `LONG_FACTOR` times as many.

Property tests name their everyday count as `max_examples=examples(n)`; the validators'
differential corpora scale their generated instances the same way.
"""

from __future__ import annotations

from hypothesis import settings

LONG = "long"
LONG_FACTOR = 5


def examples(everyday: int) -> int:
    """`everyday`, or `LONG_FACTOR` times it under the profile "long"."""
    return everyday * LONG_FACTOR if settings.get_current_profile_name() == LONG else everyday
