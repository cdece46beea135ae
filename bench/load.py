"""`nox -s load`: many concurrent streams through the gateway, against the same upstream read
directly. Loopback only, bounded, and it stops by itself.

Three processes: an upstream that makes OpenAI Chat chunks as it sends them (each content chunk
carries its index and the upstream's monotonic send time), `llm-stream serve --upstream
openai-chat` as a gateway translating them in front of it, and this one, the client, which
opens every stream at once, decodes each body, checks that every event arrived, in order,
conforming, and takes each delta's latency from its send time to its arrival. Latency is
measured with events paced as a model sends tokens; throughput with the upstream sending as
fast as it can. The gateway's figures are reported against the same upstream read directly,
in the same run. The send times and the arrival times are read from the one monotonic clock
the processes share, so a latency is the whole path's, gateway and both hops. The three
processes share the machine's cores, and with them anything else that runs: the run reports the
load average and each process's CPU time per event, to tell the gateway's own cost from waiting
for a core, and to show that the client (this process) is not what limits the figures.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import statistics
import subprocess
import sys
import threading
import time
from collections.abc import AsyncIterator
from dataclasses import dataclass, field
from pathlib import Path
from urllib.parse import urlsplit

from llm_stream import Decoder, Encoder
from llm_stream.registry import REQUEST_MEDIA_TYPE
from llm_stream.translate import OpenAIChatWriter, stream_translator
from llm_stream_server.replay import Received, ReplayServer, Reply

TIME_LIMIT = 600.0
"""Seconds after which the whole run is abandoned, whatever it is doing."""
ROUND_LIMIT = 180.0


# The upstream ----------------------------------------------------------------------------


def _plan(model: str) -> tuple[int, float]:
    """Events and pause, from a model named "load-EVENTS-MILLISECONDS"."""
    _, events, pause = model.split("-")
    return int(events), int(pause) / 1000


def upstream_reply(request: Received) -> Reply:
    """LLM-Stream on /v1/stream, OpenAI Chat chunks (written from the same events) elsewhere."""
    import json

    events, pause = _plan(json.loads(request.body)["model"])
    openai = request.path != "/v1/stream"

    async def body() -> AsyncIterator[bytes]:
        encoder = Encoder()
        writer = OpenAIChatWriter(completion_id="chatcmpl-load", model="load", created=1)

        def framed(*envelopes: dict[str, object]) -> bytes:
            if openai:
                return writer.write(envelopes)
            return b"".join(encoder.encode(e) for e in envelopes)

        yield framed({"type": "stream.start", "model": "load", "created": 1749292800})
        for index in range(events):
            if pause:
                await asyncio.sleep(pause)
            yield framed({"type": "content.delta", "index": 0, "role": "assistant",
                          "delta": {"text": f"{index}:{time.monotonic_ns()}"}})
        yield framed({"type": "content.stop", "index": 0, "stop_reason": "end_turn"},
                     {"type": "usage", "input_tokens": 1, "output_tokens": events},
                     {"type": "stream.end"}) + (writer.close() if openai else b"")

    return Reply(stream=body)


def serve_upstream() -> None:
    """The upstream's own process: prints its URL, serves until stdin closes."""
    with ReplayServer(upstream_reply).running() as url:
        print(url, flush=True)
        sys.stdin.read()


# The client ------------------------------------------------------------------------------


@dataclass
class Run:
    """What one round of concurrent streams measured."""

    latencies_ms: list[float] = field(default_factory=list)
    events: int = 0
    faults: list[str] = field(default_factory=list)
    seconds: float = 0.0
    cpu_seconds: dict[str, float] = field(default_factory=dict)
    """CPU time each process (upstream, gateway, client) spent on the round."""

    def percentile(self, p: float) -> float:
        return statistics.quantiles(self.latencies_ms, n=1000)[int(p * 10) - 1]


async def open_stream(url: str, model: str) -> tuple[asyncio.StreamReader,
                                                     asyncio.StreamWriter, int]:
    """POST a request for `model` and read the response head: a client of its own, lighter
    than any general HTTP client, so that the client's own cost stays out of the figures."""
    address = urlsplit(url)
    reader, writer = await asyncio.open_connection(address.hostname, address.port)
    body = (b'{"version":"1.0","stream":true,"model":"' + model.encode()
            + b'","messages":[{"role":"user","content":"load"}]}')
    writer.write(b"POST %s HTTP/1.1\r\nHost: %s\r\nContent-Type: %s\r\n"
                 b"Accept: text/event-stream\r\nContent-Length: %d\r\n\r\n%s" % (
                     address.path.encode(), address.netloc.encode(),
                     REQUEST_MEDIA_TYPE.encode(), len(body), body))
    head = await reader.readuntil(b"\r\n\r\n")
    if b"chunked" not in head.lower():
        raise ValueError(f"expected a chunked body: {head[:200]!r}")
    return reader, writer, int(head.split(b" ", 2)[1])


async def chunks(reader: asyncio.StreamReader) -> AsyncIterator[bytes]:
    """The pieces of a chunked body, as they arrive."""
    while size := int((await reader.readuntil(b"\r\n")).split(b";")[0], 16):
        yield (await reader.readexactly(size + 2))[:-2]


async def one_stream(url: str, model: str, run: Run, expected: int) -> None:
    reader, writer, status = await open_stream(url, model)
    decoder = (stream_translator("openai-chat") if url.endswith("/chat/completions")
               else Decoder(typed=False))
    seen = 0
    try:
        if status != 200:
            run.faults.append(f"HTTP {status}")
            return
        async for chunk in chunks(reader):
            arrived = time.monotonic_ns()
            for event in decoder.feed(chunk):
                run.events += 1
                if event["type"] != "content.delta":
                    continue
                index, sent = event["delta"]["text"].split(":")
                if int(index) != seen:
                    run.faults.append(f"delta {index} arrived where {seen} was expected")
                seen = int(index) + 1
                run.latencies_ms.append((arrived - int(sent)) / 1e6)
    finally:
        writer.close()
    decoder.close()
    if seen != expected:
        run.faults.append(f"{seen} of {expected} deltas arrived")
    run.faults.extend(f"{d.rule} {d.message}" for d in decoder.diagnostics[:3])


def cpu_seconds(pid: int) -> float:
    """User and system CPU time a process has used so far (Linux /proc)."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


async def round_of(url: str, streams: int, events: int, pause_ms: int,
                   processes: dict[str, int]) -> Run:
    """One round; `processes` names the pids whose CPU time it accounts for."""
    run = Run()
    before = {name: cpu_seconds(pid) for name, pid in processes.items()}
    started = time.monotonic()
    await asyncio.wait_for(asyncio.gather(*(
        one_stream(url, f"load-{events}-{pause_ms}", run, events) for _ in range(streams))),
        ROUND_LIMIT)
    run.seconds = time.monotonic() - started
    run.cpu_seconds = {name: cpu_seconds(pid) - before[name] for name, pid in processes.items()}
    return run


# The processes ---------------------------------------------------------------------------


def start(command: list[str], marker: str) -> tuple[subprocess.Popen[str], str]:
    """Start a process and wait for the line that carries its URL."""
    process = subprocess.Popen(command, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                               stderr=subprocess.PIPE, text=True)
    stream = process.stdout if marker == "" else process.stderr
    assert stream is not None and process.stderr is not None
    if stream is not process.stderr:
        threading.Thread(target=lambda: sys.stderr.writelines(process.stderr or ()),
                         daemon=True).start()
    line = stream.readline()
    if marker not in line or "http://127.0.0.1:" not in line:
        process.kill()
        raise SystemExit(f"load: {command[0]} did not start: {line!r}")
    threading.Thread(target=lambda: [None for _ in stream], daemon=True).start()
    url = line.split(marker, 1)[1].split()[0] if marker else line.strip()
    return process, url


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--streams", type=int, default=200)
    parser.add_argument("--events", type=int, default=100,
                        help="content.delta events per paced stream (default 100)")
    parser.add_argument("--pause-ms", type=int, default=20,
                        help="the paced upstream's pause between events (default 20)")
    parser.add_argument("--flood-events", type=int, default=500,
                        help="events per stream in the throughput round (default 500)")
    parser.add_argument("--serve-upstream", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.serve_upstream:
        serve_upstream()
        return 0
    limit = threading.Timer(TIME_LIMIT, _exit_now)
    limit.daemon = True  # it ends a run that hangs, and never holds up one that finished
    limit.start()
    upstream, upstream_url = start([sys.executable, str(Path(__file__)), "--serve-upstream"], "")
    command = Path(sys.executable).with_name("llm-stream")
    gateway, gateway_url = start(
        [str(command), "serve", "--port", "0", "--upstream", "openai-chat",
         "--upstream-url", upstream_url], "listening on ")
    try:
        return asyncio.run(measure(args, f"{upstream_url}/v1/chat/completions",
                                   f"{gateway_url}/v1/stream", upstream.pid, gateway.pid))
    finally:
        for process in (gateway, upstream):
            process.terminate()
            process.wait(15)


def _exit_now() -> None:
    print("load: time limit reached", file=sys.stderr)
    os._exit(3)


async def measure(args: argparse.Namespace, direct_url: str, gateway_url: str,
                  upstream_pid: int, gateway_pid: int) -> int:
    load_before = os.getloadavg()[0]
    direct_processes = {"upstream": upstream_pid, "client": os.getpid()}
    gateway_processes = {**direct_processes, "gateway": gateway_pid}
    await round_of(gateway_url, 10, 5, 0, {})  # warm both paths up
    await round_of(direct_url, 10, 5, 0, {})
    targets = (("direct", direct_url, direct_processes),
               ("gateway", gateway_url, gateway_processes))
    paced = {name: await round_of(url, args.streams, args.events, args.pause_ms, pids)
             for name, url, pids in targets}
    flood = {name: await round_of(url, args.streams, args.flood_events, 0, pids)
             for name, url, pids in targets}
    print(f"load: {args.streams} concurrent streams through `llm-stream serve --upstream "
          f"openai-chat` (its own process, translating) in front of a loopback upstream of "
          f"OpenAI Chat chunks, against the same upstream read directly (and translated by the "
          f"client); {os.cpu_count()} cores, load average {load_before:.2f} before the run and "
          f"{os.getloadavg()[0]:.2f} after it\n")
    print(f"latency, {args.events} content.delta events a stream, one every "
          f"{args.pause_ms} ms (send to arrival, ms per event)")
    print(f"  {'':<22}{'p50':>8}{'p99':>8}{'max':>8}")
    for name, run in paced.items():
        print(f"  {name:<22}{run.percentile(50):>8.2f}{run.percentile(99):>8.2f}"
              f"{max(run.latencies_ms):>8.2f}")
    added_p50 = paced["gateway"].percentile(50) - paced["direct"].percentile(50)
    added_p99 = paced["gateway"].percentile(99) - paced["direct"].percentile(99)
    verdict = "met" if added_p99 < 5 else "missed"
    print(f"  {'added by the gateway':<22}{added_p50:>8.2f}{added_p99:>8.2f}"
          f"{'':>8}  (target: p99 under 5 ms, {verdict})")
    rates = {name: run.events / run.seconds for name, run in flood.items()}
    print(f"\nthroughput, {args.flood_events} events a stream sent without pause")
    for name, rate in rates.items():
        print(f"  {name:<22}{rate:>12,.0f} events/s")
    print(f"  {'gateway / direct':<22}{rates['gateway'] / rates['direct']:>12.2f}")
    print("\nCPU time per event of each process (user + system, us), paced / without pause")
    for name, pid_names in (("direct", ("upstream", "client")),
                            ("gateway", ("upstream", "gateway", "client"))):
        print(f"  {name:<22}" + ", ".join(
            f"{process} {1e6 * paced[name].cpu_seconds[process] / paced[name].events:.0f}"
            f" / {1e6 * flood[name].cpu_seconds[process] / flood[name].events:.0f}"
            for process in pid_names))
    faults = [f"{name}: {fault}" for rounds in (paced, flood) for name, run in rounds.items()
              for fault in run.faults]
    total = sum(run.events for rounds in (paced, flood) for run in rounds.values())
    if faults:
        print(f"\nFAULTS ({len(faults)}):\n  " + "\n  ".join(faults[:20]))
        return 1
    print(f"\nevery stream complete and in order, every event conforming ({total:,} events)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
