"""A real HTTP proxy on loopback for the gateway's client: CONNECT tunnels for https upstreams,
absolute-form requests for http ones, optional Basic credentials (407 without them), or a
refusal of every request with a status of the test's choosing."""

from __future__ import annotations

import asyncio
import base64
import contextlib
from urllib.parse import urlsplit

from llm_stream_server.replay import serving_connections


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

    def running(self) -> contextlib.AbstractContextManager[str]:
        """Serve on 127.0.0.1 in a thread of its own; yields the proxy's URL."""
        return serving_connections(self.handle)


async def _pipe(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
    try:
        while data := await reader.read(65536):
            writer.write(data)
            await writer.drain()
    except (ConnectionError, OSError):
        pass
    finally:
        writer.close()
