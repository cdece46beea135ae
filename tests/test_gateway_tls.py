"""The gateway's client over TLS, against a real HTTPS upstream on loopback whose certificate
is made by the test: trusted through `SSL_CERT_FILE` as OpenSSL and httpx read it, refused with
a 502 and a JSON error when nobody trusts it."""

from __future__ import annotations

import json
import logging
import ssl
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest
import trustme
from servers import serving_upstream
from test_serve import HEADERS, _gateway, _recorded, checked, request

from llm_stream import aggregate
from llm_stream_server.replay import ReplayServer, Reply


@pytest.fixture(scope="module")
def authority() -> trustme.CA:
    return trustme.CA()


@pytest.fixture
def upstream_tls(authority: trustme.CA) -> ssl.SSLContext:
    context = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
    authority.issue_cert("127.0.0.1", "localhost").configure_cert(context)
    return context


@pytest.fixture
def trusted(authority: trustme.CA, tmp_path: Path,
            monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    bundle = tmp_path / "ca.pem"
    authority.cert_pem.write_to_path(str(bundle))
    monkeypatch.setenv("SSL_CERT_FILE", str(bundle))
    yield


def _post(url: str) -> httpx.Response:
    return httpx.post(f"{url}/v1/stream", content=json.dumps(request()).encode(),
                      headers=HEADERS, timeout=20)


@pytest.mark.usefixtures("trusted")
def test_an_https_upstream_trusted_through_ssl_cert_file_is_relayed(
        tmp_path: Path, upstream_tls: ssl.SSLContext) -> None:
    upstream = ReplayServer(lambda _: Reply(chunks=_recorded()))
    with upstream.running(tls=upstream_tls) as upstream_url, \
            serving_upstream(_gateway(upstream_url)) as url:
        assert upstream_url.startswith("https://")
        for _ in range(2):
            response = _post(url)
            assert aggregate(checked(response.content, tmp_path)).output_text == (
                "You said: Hello there")
    assert len(upstream.received) == 2


def test_an_untrusted_certificate_is_refused_before_the_stream_starts(
        upstream_tls: ssl.SSLContext, caplog: pytest.LogCaptureFixture) -> None:
    upstream = ReplayServer(lambda _: Reply(chunks=_recorded()))
    with caplog.at_level(logging.INFO), upstream.running(tls=upstream_tls) as upstream_url, \
            serving_upstream(_gateway(upstream_url)) as url:
        response = _post(url)
    assert response.status_code == 502
    assert response.headers["content-type"].startswith("application/json")
    error = response.json()["error"]
    assert "certificate" in error["message"] and "not trusted" in error["message"]
    assert upstream.received == []
    assert "Traceback" not in caplog.text
    [line] = [r.getMessage() for r in caplog.records if r.name == "llm_stream_server.access"]
    assert json.loads(line)["status"] == 502
