"""`mcp_schema.http.pool.HttpClient` against a well-behaved upstream on
loopback: both body framings and a body read until the close, connections
kept and reused, streamed events as they come, no redirects followed, the
pool's bound and its wait, the idle timeout, connect failures, https with
the certificate verified, and requests that would split the wire refused."""

from __future__ import annotations

import asyncio
import datetime
import ipaddress
import socket
import ssl
from collections.abc import AsyncIterator
from pathlib import Path

import pytest
from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.x509.oid import NameOID

from mcp_schema.http.h1 import Target, UpstreamTimeout, UpstreamUnreachable
from mcp_schema.http.pool import HttpClient, Limits, Timeouts
from tests.http.upstream import OK, Reader, Writer, answering, request_of, upstream

QUICK = Timeouts(connect=1.0, read=1.0, idle=5.0, pool=0.2)


def test_content_length_chunked_and_until_close_bodies() -> None:
    chunked = b"HTTP/1.1 200 OK\r\ntransfer-encoding: chunked\r\n\r\n2\r\nab\r\n1\r\nc\r\n0\r\n\r\n"
    closing = b"HTTP/1.1 200 OK\r\n\r\nuntil the end"

    async def run() -> list[bytes]:
        bodies = []
        for answer in (OK, chunked, closing):
            async with upstream(answering(answer, then_close=True)) as served:
                client = HttpClient(timeouts=QUICK)
                bodies.append((await client.request("GET", served.url)).body)
                await client.aclose()
        return bodies

    assert asyncio.run(run()) == [b"{}", b"abc", b"until the end"]


def test_a_kept_connection_is_reused_and_informational_answers_skipped() -> None:
    early = b"HTTP/1.1 103 Early Hints\r\nlink: </x>\r\n\r\n" + OK

    async def run() -> tuple[list[int], int, int]:
        async with upstream(answering(early)) as served:
            client = HttpClient(timeouts=QUICK)
            async with client.stream("POST", served.url, [], b"{}") as response:
                assert await response.receive() == b"{}" and response.complete
            statuses = [response.status]
            for _ in range(3):
                statuses.append((await client.request("POST", served.url, [], b"{}")).status)
            kept = client.open_connections
            await client.aclose()
            return statuses, served.accepted, kept

    assert asyncio.run(run()) == ([200] * 4, 1, 1)


def test_an_event_stream_comes_chunk_by_chunk_before_its_end() -> None:
    gate = asyncio.Event()

    async def script(reader: Reader, writer: Writer) -> None:
        await request_of(reader)
        writer.write(b"HTTP/1.1 200 OK\r\ncontent-type: text/event-stream\r\n")
        writer.write(b"transfer-encoding: chunked\r\n\r\n9\r\ndata: 1\n\n\r\n")
        await writer.drain()
        await gate.wait()  # the second event only once the first was read
        writer.write(b"9\r\ndata: 2\n\n\r\n0\r\n\r\n")
        await writer.drain()

    async def run() -> list[bytes]:
        async with upstream(script) as served:
            client = HttpClient(timeouts=Timeouts(read=None))
            async with client.stream("POST", served.url, [], b"{}") as response:
                assert response.status == 200
                seen = [await response.receive()]
                gate.set()
                seen += [chunk async for chunk in response]
            await client.aclose()
            return seen

    assert asyncio.run(run()) == [b"data: 1\n\n", b"data: 2\n\n"]


def test_a_redirect_is_an_answer_not_followed() -> None:
    moved = (
        b"HTTP/1.1 302 Found\r\nlocation: http://127.0.0.1:1/elsewhere\r\ncontent-length: 0\r\n\r\n"
    )

    async def run() -> tuple[int, str | None, int]:
        async with upstream(answering(moved)) as served:
            client = HttpClient(timeouts=QUICK)
            response = await client.request("GET", served.url)
            await client.aclose()
            return response.status, response.header("Location"), served.accepted

    assert asyncio.run(run()) == (302, "http://127.0.0.1:1/elsewhere", 1)


def test_the_pool_is_bounded_and_a_request_waits_for_a_free_connection_in_bound() -> None:
    release = asyncio.Event()

    async def script(reader: Reader, writer: Writer) -> None:
        while await request_of(reader):
            await release.wait()
            writer.write(OK)
            await writer.drain()

    async def run() -> tuple[int, bool]:
        async with upstream(script) as served:
            client = HttpClient(timeouts=QUICK, limits=Limits(max_connections=1))
            first = asyncio.ensure_future(client.request("POST", served.url, [], b"{}"))
            await asyncio.sleep(0.05)
            with pytest.raises(UpstreamTimeout):  # the one connection is busy
                await client.request("POST", served.url, [], b"{}")
            waiting = asyncio.ensure_future(client.request("POST", served.url, [], b"{}"))
            await asyncio.sleep(0.05)
            release.set()
            assert (await first).status == 200 and (await waiting).status == 200
            await client.aclose()
            return served.accepted, client.open_connections == 0

    assert asyncio.run(run()) == (1, True)


def test_a_connection_idle_past_its_timeout_is_not_reused() -> None:
    async def run() -> int:
        async with upstream(answering(OK)) as served:
            client = HttpClient(timeouts=Timeouts(idle=0.05))
            await client.request("GET", served.url)
            await asyncio.sleep(0.15)
            await client.request("GET", served.url)
            await client.aclose()
            return served.accepted

    assert asyncio.run(run()) == 2


def test_a_refused_connection_is_unreachable() -> None:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]  # bound, not listening: refused

    async def run() -> None:
        await HttpClient(timeouts=QUICK).request("GET", f"http://127.0.0.1:{port}/")

    with pytest.raises(UpstreamUnreachable):
        asyncio.run(run())


def test_a_connect_that_hangs_times_out_in_bound() -> None:
    async def run() -> None:
        # Linux drops a SYN once a listen queue is full: the connect hangs.
        with socket.socket() as full:
            full.bind(("127.0.0.1", 0))
            full.listen(0)
            url = f"http://127.0.0.1:{full.getsockname()[1]}/"
            held = []
            for _ in range(4):
                sock = socket.socket()
                sock.setblocking(False)
                try:
                    sock.connect(full.getsockname())
                except BlockingIOError:
                    pass
                held.append(sock)
            try:
                client = HttpClient(timeouts=Timeouts(connect=0.2))
                await asyncio.wait_for(client.request("GET", url), 2)
            finally:
                for sock in held:
                    sock.close()

    with pytest.raises(UpstreamTimeout):
        asyncio.run(run())


@pytest.mark.parametrize(
    ("fields", "url"),
    [
        ([(b"x-a", b"1\r\nx-b: 2")], "http://127.0.0.1:1/"),
        ([(b"x-a\r\nx-b", b"2")], "http://127.0.0.1:1/"),
        ([], "http://user:pw@127.0.0.1:1/"),
        ([], "ftp://127.0.0.1/"),
        ([], "http://127.0.0.1:1/a b"),
    ],
)
def test_a_request_that_would_split_the_wire_is_refused_before_it_is_sent(
    fields: list[tuple[bytes, bytes]], url: str
) -> None:
    with pytest.raises(ValueError):
        asyncio.run(HttpClient().request("GET", url, fields))


def test_the_clients_framing_fields_are_its_own_and_a_streamed_body_goes_chunked() -> None:
    seen: list[bytes] = []

    async def script(reader: Reader, writer: Writer) -> None:
        head = await reader.readuntil(b"\r\n\r\n")
        seen.append(head)
        seen.append(await reader.readuntil(b"0\r\n\r\n"))
        writer.write(OK)
        await writer.drain()

    async def body() -> AsyncIterator[bytes]:
        yield b'{"a":'
        yield b"1}"

    async def run() -> int:
        async with upstream(script) as served:
            client = HttpClient(timeouts=QUICK)
            smuggled = [(b"Content-Length", b"5"), (b"Transfer-Encoding", b"identity")]
            response = await client.request("POST", served.url, smuggled, body())
            await client.aclose()
            return response.status

    assert asyncio.run(run()) == 200
    head = seen[0].lower()
    assert b"transfer-encoding: chunked" in head and b"content-length" not in head
    assert b"identity" not in head and b"host: 127.0.0.1:" in head
    assert seen[1] == b'5\r\n{"a":\r\n2\r\n1}\r\n0\r\n\r\n'


def test_a_target_keeps_its_path_and_query() -> None:
    target = Target.of("https://[::1]:8443/mcp?x=1")
    assert (target.host, target.port, target.path) == ("::1", 8443, "/mcp?x=1")
    assert target.authority == b"[::1]:8443"
    assert target.with_query(b"y=2").path == "/mcp?y=2"


# -- https ------------------------------------------------------------------------------


def certificate(tmp: Path, *, ip: bool = True) -> tuple[Path, Path]:
    """A self-signed certificate for localhost (and 127.0.0.1 when ``ip``), and its key."""
    key = ec.generate_private_key(ec.SECP256R1())
    name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, "test upstream")])
    now = datetime.datetime.now(datetime.timezone.utc)
    names: list[x509.GeneralName] = [x509.DNSName("localhost")]
    if ip:
        names.append(x509.IPAddress(ipaddress.ip_address("127.0.0.1")))
    cert = (
        x509.CertificateBuilder()
        .subject_name(name)
        .issuer_name(name)
        .public_key(key.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(now - datetime.timedelta(minutes=1))
        .not_valid_after(now + datetime.timedelta(hours=1))
        .add_extension(x509.SubjectAlternativeName(names), critical=False)
        .add_extension(x509.BasicConstraints(ca=True, path_length=None), critical=True)
        .sign(key, hashes.SHA256())
    )
    cert_path, key_path = tmp / f"cert{ip}.pem", tmp / f"key{ip}.pem"
    cert_path.write_bytes(cert.public_bytes(serialization.Encoding.PEM))
    key_path.write_bytes(
        key.private_bytes(
            serialization.Encoding.PEM,
            serialization.PrivateFormat.PKCS8,
            serialization.NoEncryption(),
        )
    )
    return cert_path, key_path


def test_https_verifies_the_certificate_and_the_host_name(tmp_path: Path) -> None:
    cert, key = certificate(tmp_path)
    serving = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
    serving.load_cert_chain(cert, key)
    trusting = ssl.create_default_context(cafile=str(cert))
    other_cert, other_key = certificate(tmp_path, ip=False)  # localhost alone
    misnamed = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
    misnamed.load_cert_chain(other_cert, other_key)
    trusting_other = ssl.create_default_context(cafile=str(other_cert))

    async def tried(client: HttpClient, url: str) -> object:
        try:
            return (await client.request("GET", url)).status
        except UpstreamUnreachable as exc:
            return exc.message
        finally:
            await client.aclose()

    async def run() -> list[object]:
        async with upstream(answering(OK), ssl=serving) as served:
            url = f"https://127.0.0.1:{served.port}/mcp"
            found = [await tried(HttpClient(timeouts=QUICK), url)]
            found.append(await tried(HttpClient(ssl_context=trusting), url))
        async with upstream(answering(OK), ssl=misnamed) as served:
            url = f"https://127.0.0.1:{served.port}/mcp"
            found.append(await tried(HttpClient(ssl_context=trusting_other), url))
        return found

    untrusted, trusted, wrong_name = asyncio.run(run())
    assert isinstance(untrusted, str) and "CERTIFICATE_VERIFY_FAILED" in untrusted
    assert trusted == 200
    assert isinstance(wrong_name, str) and "127.0.0.1" in wrong_name


def test_a_waiter_cancelled_once_woken_passes_its_turn_on() -> None:
    async def run() -> None:
        client = HttpClient(limits=Limits(max_connections=1))
        client._open = 1  # the one connection is taken
        first = asyncio.ensure_future(client._wait_free(5))
        second = asyncio.ensure_future(client._wait_free(5))
        await asyncio.sleep(0)
        client._wake_one()  # a connection came back: the first waiter's turn...
        first.cancel()  # ...but it is cancelled before it runs
        await asyncio.wait_for(second, 1)  # the second gets the turn, not the timeout

    asyncio.run(run())
