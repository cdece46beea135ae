"""A real HTTP proxy on loopback for the gateway's client: CONNECT tunnels for https upstreams,
absolute-form requests for http ones, optional Basic credentials (407 without them), or a
refusal of every request with a status of the test's choosing."""

from __future__ import annotations

import asyncio
import base64
import contextlib
import threading
from collections.abc import Iterator
from urllib.parse import urlsplit


class LoopbackProxy:
    """The proxy; `heads` holds the head of the first request of every connection."""

    def __init__(self, *, credentials: tuple[str, str] | None = None,
                 refuse: int | None = None) -> None:
        self.credentials = credentials
        self.refuse = refuse
        self.heads: list[str] = []

    async def handle(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        try:
            head = (await reader.readuntil(b"\r\n\r\n")).decode("latin-1")
            self.heads.append(head)
            method, target, _ = head.split("\r\n", 1)[0].split(" ", 2)
            lines = head.split("\r\n")[1:-2]
            headers = {k.strip().lower(): v.strip()
                       for k, _, v in (line.partition(":") for line in lines)}
            refusal = self.refuse or self._check(headers.get("proxy-authorization"))
            if refusal:
                writer.write(f"HTTP/1.1 {refusal} Refused\r\nContent-Length: 0\r\n"
                             "Connection: close\r\n\r\n".encode())
                await writer.drain()
                return
            if method == "CONNECT":
                host, _, port = target.rpartition(":")
                up_reader, up_writer = await asyncio.open_connection(host, int(port))
                writer.write(b"HTTP/1.1 200 Connection established\r\n\r\n")
            else:
                parts = urlsplit(target)
                up_reader, up_writer = await asyncio.open_connection(parts.hostname,
                                                                     parts.port or 80)
                kept = [line for line in lines
                        if not line.lower().startswith("proxy-authorization:")]
                up_writer.write("\r\n".join([f"{method} {target} HTTP/1.1", *kept, "", ""])
                                .encode("latin-1"))
            await asyncio.gather(_pipe(reader, up_writer), _pipe(up_reader, writer))
        except (ConnectionError, asyncio.IncompleteReadError, OSError):
            pass
        finally:
            writer.close()

    def _check(self, authorization: str | None) -> int | None:
        if self.credentials is None:
            return None
        expected = "Basic " + base64.b64encode(":".join(self.credentials).encode()).decode()
        return None if authorization == expected else 407

    @contextlib.contextmanager
    def running(self) -> Iterator[str]:
        """Serve on 127.0.0.1 in a thread of its own; yields the proxy's URL."""
        loop = asyncio.new_event_loop()
        started = threading.Event()
        port: list[int] = []
        stop = loop.create_future()

        handlers: set[asyncio.Task[None]] = set()

        async def handle(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
            task = asyncio.current_task()
            assert task is not None
            handlers.add(task)
            with contextlib.suppress(asyncio.CancelledError):
                await self.handle(reader, writer)
            handlers.discard(task)

        async def serve() -> None:
            server = await asyncio.start_server(handle, "127.0.0.1", 0)
            port.append(server.sockets[0].getsockname()[1])
            started.set()
            async with server:
                await stop
                for task in list(handlers):
                    task.cancel()
                await asyncio.gather(*handlers, return_exceptions=True)

        thread = threading.Thread(target=loop.run_until_complete, args=(serve(),), daemon=True)
        thread.start()
        started.wait(10)
        try:
            yield f"http://127.0.0.1:{port[0]}"
        finally:
            loop.call_soon_threadsafe(stop.set_result, None)
            thread.join(10)
            loop.close()


async def _pipe(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
    try:
        while data := await reader.read(65536):
            writer.write(data)
            await writer.drain()
    except (ConnectionError, OSError):
        pass
    finally:
        writer.close()
