"""Thin adapters around the sans-IO `Decoder`: events from iterables, httpx responses and files.

Each adapter returns an iterator of the decoded events, yielded as soon as the bytes that
complete them arrive. The iterator also carries what the decoder found, so nothing is raised at
the end of a body that does not conform; a caller that wants the verdict reads it afterwards:

    events = iter_httpx(response)
    for event in events:
        ...
    if not events.conforming:
        for diagnostic in events.diagnostics:
            ...

`diagnostics` is the decoder's own list: it grows while events are decoded and is complete once
the iterator is exhausted (the end of the body is itself checked, for a missing stream.end say).
Options are the decoder's (`typed`, `strict`, `tools`, `lifecycle`, `validate`,
`max_line_bytes`, `max_event_bytes`); with `strict=True` the first error raises `LLMStreamError`
from the loop, as the decoder does, and the events its chunk completed before the error are on
the error's `events`. A caller can pass a `Decoder` of its own instead, as `decoder=`.

A loop that stops early (`break`) leaves the body unfinished: the decoder is not closed, so no
diagnostic is made up for the part never read. `close()` (or `aclose()`, or leaving a `with`
block) releases what the adapter opened: the file of `iter_file`, the chunk iterator. HTTP status
and headers are the caller's business (`response.raise_for_status()`); the adapters read the body
with `iter_bytes()`/`aiter_bytes()`, so a compressed body is decompressed first. httpx is only
needed for the httpx adapters' argument, never imported at run time.
"""

from __future__ import annotations

import os
from collections.abc import AsyncIterable, AsyncIterator, Iterable, Iterator
from types import TracebackType
from typing import IO, TYPE_CHECKING, TypedDict, Unpack

from .decoder import Decoder, Event
from .diagnostics import Diagnostic

if TYPE_CHECKING:
    import httpx

__all__ = [
    "AsyncEventIterator",
    "DecoderOptions",
    "EventIterator",
    "aiter_events",
    "aiter_httpx",
    "iter_events",
    "iter_file",
    "iter_httpx",
]


class DecoderOptions(TypedDict, total=False):
    """The keyword arguments of `Decoder`, which every adapter passes on."""

    typed: bool
    strict: bool
    tools: Iterable[str] | None
    lifecycle: bool
    max_line_bytes: int
    max_event_bytes: int


def _decoder(decoder: Decoder | None, options: DecoderOptions) -> Decoder:
    if decoder is None:
        return Decoder(**options)
    if options:
        raise TypeError("pass either decoder= or decoder options, not both: "
                        + ", ".join(sorted(options)))
    return decoder


class _Verdict:
    """What both iterators report besides the events, and how both take a chunk."""

    decoder: Decoder
    finished: bool
    """Whether the whole body was read and the decoder closed."""
    _ready: Iterator[Event]

    def _take(self, chunk: bytes | None) -> None:
        """Decode the next chunk, or close the decoder at the end of the body (None)."""
        if chunk is None:
            self.finished = True
            self._ready = iter(self.decoder.close())
        else:
            self._ready = iter(self.decoder.feed(chunk))

    @property
    def diagnostics(self) -> list[Diagnostic]:
        """Every diagnostic so far; all of them once the iterator is exhausted."""
        return self.decoder.diagnostics

    @property
    def conforming(self) -> bool:
        """No error so far (warnings do not count); the verdict once the iterator is exhausted."""
        return self.decoder.conforming


class EventIterator(_Verdict, Iterator[Event]):
    """The events of one body, decoded from an iterable of byte chunks as they arrive."""

    def __init__(
        self, chunks: Iterable[bytes], decoder: Decoder, *, closing: IO[bytes] | None = None
    ) -> None:
        self.decoder = decoder
        self.finished = False
        self._chunks = iter(chunks)
        self._closing = closing
        self._ready: Iterator[Event] = iter(())

    def __iter__(self) -> EventIterator:
        return self

    def __next__(self) -> Event:
        while True:
            event = next(self._ready, None)
            if event is not None:
                return event
            if self.finished:
                raise StopIteration
            try:
                self._take(next(self._chunks, None))
            except BaseException:
                self.finished = True  # strict mode's LLMStreamError, or the source failed
                self.close()
                raise
            if self.finished:
                self.close()

    def close(self) -> None:
        """Release the chunk source (a generator, a file the adapter opened); idempotent."""
        close = getattr(self._chunks, "close", None)
        if close is not None:
            close()
        if self._closing is not None:
            self._closing.close()
            self._closing = None

    def __enter__(self) -> EventIterator:
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        traceback: TracebackType | None,
    ) -> None:
        self.close()


class AsyncEventIterator(_Verdict, AsyncIterator[Event]):
    """The events of one body, decoded from an async iterable of byte chunks as they arrive."""

    def __init__(self, chunks: AsyncIterable[bytes], decoder: Decoder) -> None:
        self.decoder = decoder
        self.finished = False
        self._chunks = aiter(chunks)
        self._ready: Iterator[Event] = iter(())

    def __aiter__(self) -> AsyncEventIterator:
        return self

    async def __anext__(self) -> Event:
        while True:
            event = next(self._ready, None)
            if event is not None:
                return event
            if self.finished:
                raise StopAsyncIteration
            try:
                self._take(await anext(self._chunks, None))
            except BaseException:
                self.finished = True  # strict mode's LLMStreamError, or the source failed
                await self.aclose()
                raise
            if self.finished:
                await self.aclose()

    async def aclose(self) -> None:
        """Release the chunk source (an async generator, say); idempotent."""
        aclose = getattr(self._chunks, "aclose", None)
        if aclose is not None:
            await aclose()

    async def __aenter__(self) -> AsyncEventIterator:
        return self

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        traceback: TracebackType | None,
    ) -> None:
        await self.aclose()


def iter_events(
    chunks: Iterable[bytes], *, decoder: Decoder | None = None, **options: Unpack[DecoderOptions]
) -> EventIterator:
    """The events of a body given as any iterable of byte chunks, in any chunking."""
    return EventIterator(chunks, _decoder(decoder, options))


def aiter_events(
    chunks: AsyncIterable[bytes],
    *,
    decoder: Decoder | None = None,
    **options: Unpack[DecoderOptions],
) -> AsyncEventIterator:
    """The events of a body given as any async iterable of byte chunks."""
    return AsyncEventIterator(chunks, _decoder(decoder, options))


def iter_httpx(
    response: httpx.Response,
    *,
    decoder: Decoder | None = None,
    **options: Unpack[DecoderOptions],
) -> EventIterator:
    """The events of a streamed httpx response (`client.stream(...)`), read with iter_bytes()."""
    return EventIterator(response.iter_bytes(), _decoder(decoder, options))


def aiter_httpx(
    response: httpx.Response,
    *,
    decoder: Decoder | None = None,
    **options: Unpack[DecoderOptions],
) -> AsyncEventIterator:
    """The events of a streamed httpx response of an AsyncClient, read with aiter_bytes()."""
    return AsyncEventIterator(response.aiter_bytes(), _decoder(decoder, options))


def iter_file(
    file: str | os.PathLike[str] | IO[bytes],
    chunk_size: int = 1 << 16,
    *,
    decoder: Decoder | None = None,
    **options: Unpack[DecoderOptions],
) -> EventIterator:
    """The events of a response body in a file, read `chunk_size` bytes at a time.

    A path is opened here and closed when the body ends or the iterator is closed; an open
    binary file is read from where it stands and left open for its owner. The file holds the
    body alone: a capture with a status line and headers is for `llm-stream check`.
    """
    if chunk_size <= 0:
        raise ValueError(f"chunk_size must be positive, got {chunk_size}")
    chosen = _decoder(decoder, options)
    owned: IO[bytes] | None = None
    stream: IO[bytes]
    if isinstance(file, (str, os.PathLike)):
        stream = owned = open(file, "rb")  # noqa: SIM115 - the iterator closes it
    else:
        stream = file
    chunks = iter(lambda: stream.read(chunk_size), b"")
    return EventIterator(chunks, chosen, closing=owned)
