"""The gateway's client through the HTTP proxy the environment names, against a real proxy and
real upstreams on loopback: absolute-form requests for an http upstream, a CONNECT tunnel with
TLS inside for an https one, credentials from the proxy URL, NO_PROXY, and clear refusals."""

from __future__ import annotations

import json
import os
import ssl
import subprocess
import sys
from pathlib import Path

import httpx
import pytest
import trustme
from proxies import LoopbackProxy
from servers import serving_upstream
from test_serve import HEADERS, _gateway, _recorded, checked, request

from llm_stream import aggregate
from llm_stream_server.replay import ReplayServer, Reply

VARIABLES = ("HTTP_PROXY", "HTTPS_PROXY", "ALL_PROXY", "NO_PROXY")


@pytest.fixture(autouse=True)
def no_proxy_yet(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in VARIABLES:
        monkeypatch.delenv(name, raising=False)
        monkeypatch.delenv(name.lower(), raising=False)


@pytest.fixture
def upstream_tls(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> ssl.SSLContext:
    """A certificate for 127.0.0.1 whose CA the gateway trusts through SSL_CERT_FILE."""
    authority = trustme.CA()
    authority.cert_pem.write_to_path(str(tmp_path / "ca.pem"))
    monkeypatch.setenv("SSL_CERT_FILE", str(tmp_path / "ca.pem"))
    context = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
    authority.issue_cert("127.0.0.1").configure_cert(context)
    return context


def _post(url: str) -> httpx.Response:
    """A request to the gateway itself, which no proxy stands in front of."""
    return httpx.post(f"{url}/v1/stream", content=json.dumps(request()).encode(),
                      headers=HEADERS, timeout=20, trust_env=False)


def _with_credentials(proxy_url: str) -> str:
    return proxy_url.replace("http://", "http://gate%40way:pa%3Ass@")


def test_an_http_upstream_is_reached_in_absolute_form_through_http_proxy(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    proxy = LoopbackProxy(credentials=("gate@way", "pa:ss"))
    upstream = ReplayServer(lambda _: Reply(chunks=_recorded()))
    with proxy.running() as proxy_url, upstream.running() as upstream_url:
        monkeypatch.setenv("HTTP_PROXY", _with_credentials(proxy_url))
        with serving_upstream(_gateway(upstream_url)) as url:
            for _ in range(2):
                assert aggregate(checked(_post(url).content, tmp_path)).output_text == (
                    "You said: Hello there")
    assert proxy.heads and all(head.startswith(f"POST {upstream_url}/v1/stream HTTP/1.1\r\n")
                               for head in proxy.heads)
    assert "proxy-authorization" not in upstream.received[0].headers


def test_an_https_upstream_is_reached_through_a_tunnel_with_tls_inside(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
        upstream_tls: ssl.SSLContext) -> None:
    proxy = LoopbackProxy(credentials=("gate@way", "pa:ss"))
    upstream = ReplayServer(lambda _: Reply(chunks=_recorded()))
    with proxy.running() as proxy_url, upstream.running(tls=upstream_tls) as upstream_url:
        monkeypatch.setenv("https_proxy", _with_credentials(proxy_url))
        with serving_upstream(_gateway(upstream_url)) as url:
            for _ in range(2):
                assert aggregate(checked(_post(url).content, tmp_path)).output_text == (
                    "You said: Hello there")
    authority = upstream_url.removeprefix("https://")
    assert proxy.heads and all(head.startswith(f"CONNECT {authority} HTTP/1.1\r\n")
                               for head in proxy.heads)
    assert upstream.received[0].path == "/v1/stream"


def test_all_proxy_serves_when_no_scheme_has_its_own(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    proxy = LoopbackProxy()
    upstream = ReplayServer(lambda _: Reply(chunks=_recorded()))
    with proxy.running() as proxy_url, upstream.running() as upstream_url:
        monkeypatch.setenv("ALL_PROXY", proxy_url.removeprefix("http://"))  # no scheme: http
        with serving_upstream(_gateway(upstream_url)) as url:
            assert checked(_post(url).content, tmp_path)[-1]["type"] == "stream.end"
    assert len(proxy.heads) == 1


def test_no_proxy_exempts_a_host(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    proxy = LoopbackProxy()
    upstream = ReplayServer(lambda _: Reply(chunks=_recorded()))
    with proxy.running() as proxy_url, upstream.running() as upstream_url:
        monkeypatch.setenv("HTTP_PROXY", proxy_url)
        monkeypatch.setenv("no_proxy", "example.com,127.0.0.1")
        with serving_upstream(_gateway(upstream_url)) as url:
            assert checked(_post(url).content, tmp_path)[-1]["type"] == "stream.end"
    assert proxy.heads == [] and len(upstream.received) == 1


@pytest.mark.parametrize("tls", [False, True], ids=["http", "https"])
@pytest.mark.parametrize("refusal", [407, 502])
def test_a_proxy_that_refuses_is_a_502_naming_the_proxy(
        tls: bool, refusal: int, monkeypatch: pytest.MonkeyPatch,
        request: pytest.FixtureRequest) -> None:
    proxy = LoopbackProxy(refuse=refusal)
    upstream = ReplayServer(lambda _: Reply(chunks=_recorded()))
    upstream_tls = request.getfixturevalue("upstream_tls") if tls else None
    with proxy.running() as proxy_url, upstream.running(tls=upstream_tls) as upstream_url:
        monkeypatch.setenv("HTTPS_PROXY" if tls else "HTTP_PROXY", proxy_url)
        with serving_upstream(_gateway(upstream_url)) as url:
            response = _post(url)
    assert response.status_code == 502
    message = response.json()["error"]["message"]
    assert "proxy" in message and str(refusal) in message, message
    assert upstream.received == []


def test_a_proxy_of_another_kind_is_refused_at_start(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("HTTPS_PROXY", "socks5://127.0.0.1:1080")
    with pytest.raises(ValueError, match="not an http:// proxy"):
        _gateway("https://127.0.0.1:1")


def test_serve_refuses_a_proxy_of_another_kind_without_showing_its_credentials() -> None:
    command = Path(sys.executable).with_name("llm-stream")
    environment = {**os.environ, "HTTPS_PROXY": "socks5://user:hush-hush@127.0.0.1:1080"}
    result = subprocess.run([str(command), "serve", "--upstream", "llm-stream",
                             "--upstream-url", "https://127.0.0.1:1/v1/stream"],
                            capture_output=True, text=True, check=False, timeout=60,
                            env=environment)
    assert result.returncode == 2
    assert "not an http:// proxy" in result.stderr
    assert "hush-hush" not in result.stderr and "Traceback" not in result.stderr


def test_serve_help_names_the_variables_it_reads() -> None:
    command = Path(sys.executable).with_name("llm-stream")
    result = subprocess.run([str(command), "serve", "--help"], capture_output=True, text=True,
                            check=True, timeout=60)
    text = " ".join(result.stdout.split())
    for name in ("SSL_CERT_FILE", "HTTPS_PROXY", "HTTP_PROXY", "ALL_PROXY", "NO_PROXY"):
        assert name in text
