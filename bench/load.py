"""`nox -s load`: many concurrent streams through the gateway, against the same upstream read
directly. Loopback only, bounded, and it stops by itself.

Three processes: an upstream that makes OpenAI Chat chunks as it sends them (each content chunk
carries its index and the upstream's monotonic send time), `llm-stream serve --upstream
openai-chat` as a gateway translating them in front of it, and this one, the client, which
opens every stream at once, keeps each body's pieces with their arrival times and, once the
round is over, decodes them, checks that every event arrived, in order, conforming, and takes
each delta's latency from its send time to its arrival. Latency is measured with events paced
as a model sends tokens, each stream on its own schedule: the streams' events are spread evenly
over the pause, as independent requests' tokens are (`--in-step` sends every stream's event at
the same instant instead, the worst case); throughput with the upstream sending as fast as it
can. The gateway's figures are reported against the same upstream read directly, in the same
run. The send times and the arrival times are read from the one monotonic clock the processes
share, so a latency is the whole path's, gateway and both hops. The upstream and the client are
kept cheap (raw asyncio streams on uvloop where it is installed, nothing decoded while a round
runs), so that they wait for a core as little as possible. The processes share the machine's
cores, and with them anything else that runs: where it may (as root), the run schedules its
three processes real-time, ahead of the machine's other work, so that what it measures is the
gateway and not its neighbours (`--no-realtime` to share the cores as everything else does), and
it reports the load average and each process's CPU time per event, to tell the gateway's own
cost from waiting for a core.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import resource
import statistics
import subprocess
import sys
import threading
import time
from collections.abc import AsyncIterator, Callable
from dataclasses import dataclass, field
from pathlib import Path
from urllib.parse import urlsplit

import polite

from llm_stream import Decoder, Encoder
from llm_stream.registry import REQUEST_MEDIA_TYPE
from llm_stream.translate import OpenAIChatWriter, stream_translator
from llm_stream_server.replay import Received, ReplayServer, Reply

TIME_LIMIT = 600.0
"""Seconds after which the whole run is abandoned, whatever it is doing."""
ROUND_LIMIT = 180.0
REALTIME_BUDGET = 5.0
"""Seconds of CPU time a process scheduled real-time may take without once waiting (a round
without pause takes about one)."""


# The upstream ----------------------------------------------------------------------------


def _plan(model: str) -> tuple[int, float, int]:
    """Events, pause and first send time (monotonic ns), from a model named
    "load-EVENTS-MILLISECONDS-START"."""
    _, events, pause, start = model.split("-")
    return int(events), int(pause) / 1000, int(start)


def upstream_reply(request: Received) -> Reply:
    """LLM-Stream on /v1/stream, OpenAI Chat chunks (written from the same events) elsewhere."""
    import json

    events, pause, start = _plan(json.loads(request.body)["model"])
    openai = request.path != "/v1/stream"

    async def body() -> AsyncIterator[bytes]:
        encoder = Encoder()
        writer = OpenAIChatWriter(completion_id="chatcmpl-load", model="load", created=1)

        def framed(*envelopes: dict[str, object]) -> bytes:
            if openai:
                return writer.write(envelopes)
            return b"".join(encoder.encode(e) for e in envelopes)

        yield framed({"type": "stream.start", "model": "load", "created": 1749292800})
        first = max(start, time.monotonic_ns())  # the stream's place in the schedule
        for index in range(events):
            if pause:  # on schedule, not `pause` after the last send: no drift
                await asyncio.sleep(max(0, first + int(index * pause * 1e9)
                                        - time.monotonic_ns()) / 1e9)
            yield framed({"type": "content.delta", "index": 0, "role": "assistant",
                          "delta": {"text": f"{index}:{time.monotonic_ns()}"}})
        yield framed({"type": "content.stop", "index": 0, "stop_reason": "end_turn"},
                     {"type": "usage", "input_tokens": 1, "output_tokens": events},
                     {"type": "stream.end"}) + (writer.close() if openai else b"")

    return Reply(stream=body)


def loop_factory() -> Callable[[], asyncio.AbstractEventLoop]:
    """uvloop's loop where it is installed (the serve extra has it), else asyncio's."""
    try:
        import uvloop
    except ImportError:
        return asyncio.new_event_loop
    return uvloop.new_event_loop


def serve_upstream() -> None:
    """The upstream's own process: prints its URL, serves until stdin closes."""
    with ReplayServer(upstream_reply).running(loop_factory()) as url:
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


Body = list[tuple[int, bytes]]
"""The pieces of a response body, each with its arrival time (monotonic ns)."""


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


async def receive(url: str, model: str) -> tuple[int, Body]:
    """One stream's status and body, kept as it arrived: decoding waits for the round's end."""
    reader, writer, status = await open_stream(url, model)
    body: Body = []
    try:
        if status == 200:  # the pieces of a chunked body, as they arrive
            while size := int((await reader.readuntil(b"\r\n")).split(b";")[0], 16):
                piece = await reader.readexactly(size + 2)
                body.append((time.monotonic_ns(), piece[:-2]))
    finally:
        writer.close()
    return status, body


def judge(url: str, status: int, body: Body, run: Run, expected: int) -> None:
    """Decode a stream's body: every event conforming, every delta there, in order, and each
    delta's latency from its send time to the arrival of the piece that carried it."""
    if status != 200:
        run.faults.append(f"HTTP {status}")
        return
    decoder = (stream_translator("openai-chat") if url.endswith("/chat/completions")
               else Decoder(typed=False))
    seen = 0
    for arrived, piece in body:
        for event in decoder.feed(piece):
            run.events += 1
            if event["type"] != "content.delta":
                continue
            index, sent = event["delta"]["text"].split(":")
            if int(index) != seen:
                run.faults.append(f"delta {index} arrived where {seen} was expected")
            seen = int(index) + 1
            run.latencies_ms.append((arrived - int(sent)) / 1e6)
    decoder.close()
    if seen != expected:
        run.faults.append(f"{seen} of {expected} deltas arrived")
    run.faults.extend(f"{d.rule} {d.message}" for d in decoder.diagnostics[:3])


def cpu_seconds(pid: int) -> float:
    """User and system CPU time a process has used so far (Linux /proc)."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


async def round_of(url: str, streams: int, events: int, pause_ms: int,
                   processes: dict[str, int], in_step: bool = False) -> Run:
    """One round; `processes` names the pids whose CPU time it accounts for. Paced streams
    start a second from now (every connection is open by then): stream i i/streams of a pause
    after the first and with i % (events / 10) more events, so that the streams end over a
    tenth of their length rather than all in the same pause, as independent requests do; or
    all at once and of one length, `in_step`."""
    run = Run()
    before = {name: cpu_seconds(pid) for name, pid in processes.items()}
    started = time.monotonic()
    first = time.monotonic_ns() + 1_000_000_000 if pause_ms else 0
    lengths = [events + (0 if in_step or not pause_ms else i % max(1, events // 10))
               for i in range(streams)]
    models = [f"load-{length}-{pause_ms}-"
              f"{first + (0 if in_step else i * pause_ms * 1_000_000 // streams)}"
              for i, length in enumerate(lengths)]
    bodies = await asyncio.wait_for(asyncio.gather(*(receive(url, model) for model in models)),
                                    ROUND_LIMIT)
    run.seconds = time.monotonic() - started - (1.0 if pause_ms else 0.0)
    run.cpu_seconds = {name: cpu_seconds(pid) - before[name] for name, pid in processes.items()}
    for (status, body), length in zip(bodies, lengths, strict=True):
        judge(url, status, body, run, length)
    return run


# The processes ---------------------------------------------------------------------------


def realtime(pid: int) -> None:
    """Schedule every thread of a process round-robin at the lowest real-time priority (as
    `chrt --rr 1` does): ahead of all ordinary work, still capped by the kernel's real-time
    throttling, and killed should it ever run REALTIME_BUDGET seconds without waiting, so that
    the machine's other work never waits for long."""
    budget = int(REALTIME_BUDGET * 1_000_000)
    resource.prlimit(pid, resource.RLIMIT_RTTIME, (budget, budget))
    for thread in threads(pid):
        os.sched_setscheduler(thread, os.SCHED_RR, os.sched_param(1))


def threads(pid: int) -> list[int]:
    return [int(thread.name) for thread in Path(f"/proc/{pid}/task").iterdir()]


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
    parser.add_argument("--in-step", action="store_true",
                        help="send every paced stream's events at the same instant")
    parser.add_argument("--realtime", action=argparse.BooleanOptionalAction,
                        help="schedule the three processes ahead of the machine's other work "
                        "(real-time round-robin, which needs root), so that a shared "
                        "machine's load is kept out of the figures (default: where permitted)")
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
    args.scheduled = "ordinary scheduling"
    if args.realtime is not False:
        try:
            for pid in (upstream.pid, gateway.pid, os.getpid()):
                realtime(pid)
            args.scheduled = "scheduled real-time, ahead of the machine's other work"
        except PermissionError:
            if args.realtime:
                for process in (gateway, upstream):
                    process.kill()
                parser.error("--realtime needs root")
            args.scheduled += " (real-time needs root)"
    try:
        with asyncio.Runner(loop_factory=loop_factory()) as runner:
            return runner.run(measure(args, f"{upstream_url}/v1/chat/completions",
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
    paced = {name: await round_of(url, args.streams, args.events, args.pause_ms, pids,
                                  args.in_step)
             for name, url, pids in targets}
    flood = {name: await round_of(url, args.streams, args.flood_events, 0, pids)
             for name, url, pids in targets}
    print(f"load: {args.streams} concurrent streams through `llm-stream serve --upstream "
          f"openai-chat` (its own process, translating) in front of a loopback upstream of "
          f"OpenAI Chat chunks, against the same upstream read directly (and translated by the "
          f"client); {os.cpu_count()} cores, {args.scheduled}, load average {load_before:.2f} "
          f"before the run and {os.getloadavg()[0]:.2f} after it\n")
    if args.in_step:
        shape = (f"{args.events} content.delta events a stream, one every {args.pause_ms} ms, "
                 f"every stream's at the same instant")
    else:
        shape = (f"{args.events} to {args.events + max(1, args.events // 10) - 1} "
                 f"content.delta events a stream, one every {args.pause_ms} ms, the streams' "
                 f"spread evenly over the {args.pause_ms} ms")
    print(f"latency, {shape} (send to arrival, ms per event)")
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
    sys.exit(polite.run(main))
