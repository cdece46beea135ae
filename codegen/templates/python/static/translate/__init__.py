"""Vendor formats and LLM-Stream, both ways: the value maps of mappings/ and the translators.

Everything here is sans-IO, like the decoder: bytes or bodies in, events or bodies out.
"""

from __future__ import annotations

from .maps import FieldMap, ValueMap
from .request import FROM_FORMATS, TranslationError, request_from, request_path, request_to
from .tables import FIELD_MAPS, FORMATS, VALUE_MAPS

__all__ = [
    "FIELD_MAPS",
    "FORMATS",
    "FROM_FORMATS",
    "VALUE_MAPS",
    "FieldMap",
    "TranslationError",
    "ValueMap",
    "request_from",
    "request_path",
    "request_to",
]
