"""The command line: ``python -m mcp_schema gateway --listen HOST:PORT
[--enforce] [--bridge] [--report FILE] [--metrics HOST:PORT] [--allowed-host NAME]...
[--allowed-origin URL]... (--upstream URL [--upstream-host NAME] | -- CMD ARGS...)``
(`add_arguments`, `main`).

With ``--auth-issuer URL --auth-resource URI`` (or their variables) the
gateway is a resource server of its own (`mcp_schema.gateway.auth_options`):
its protected resource metadata served, each client's token checked before
anything is forwarded; ``--trusted-proxy`` names the proxies whose
``X-Forwarded-For`` gives the client's address.

``--allowed-host`` and ``--allowed-origin`` (each repeatable) make the
gateway's `mcp_schema.http.precheck.Precheck`, for both kinds of upstream:
the ``Host`` names it serves (421 for others; by default, on a loopback
address, the loopback names alone) and the origins a browser may call it
from besides the loopback ones (403 for others). ``--upstream-host`` is the
``Host`` sent upstream instead of the client's.

With ``--upstream URL`` it first probes the upstream, once
(`mcp_schema.gateway.probe`: ``server/discover``, then ``initialize`` where
that leaves the handshake era open), and says what it found: what the
validator learns from (the versions served per request, the extensions
declared, the Tasks extension's among them) and, with ``--bridge``, what
the bridges speak. With ``--bridge`` the probe is tried for up to
`PROBE_SECONDS` while the upstream cannot be reached (it may be starting
beside the gateway); an upstream still unreachable then, or whose answers
tell nothing, stops it (exit status 2) before it listens. Without it, an
upstream the probe tells nothing of is said on stderr, and the answers the
gateway forwards teach the validator instead. With ``-- CMD ARGS...`` the app is a `StdioGatewayApp` (``--bridge``: with its
`StdioBridge`, the ``requestState`` sealed under ``MCP_STATE_KEY``): the
command is probed before the socket listens, and one that cannot be started
or does not answer is exit status 2.

The gateway is a `GatewayApp` run by uvicorn: the command needs the
``http`` extra (httptools) and uvicorn installed beside it (``pip install
'mcp-schema[http]' uvicorn``); neither is a dependency of the package. It
binds its socket, starts, and only then listens, saying so on standard
error (``gateway: listening on http://HOST:PORT/mcp``). Reports are
written as the stdio proxy writes them (`mcp_schema.proxy.ReportLog`, by a
thread of their own), to standard error or ``--report FILE``. SIGINT and
SIGTERM stop it (uvicorn's graceful shutdown, at most
`SHUTDOWN_SECONDS`): its reports are written, then it ends as by that
signal, as uvicorn does. Its own failures are exit status 2 (one ``error:``
line). ``--metrics HOST:PORT`` serves its metrics on a listener of its own
(`mcp_schema.telemetry.prometheus`), each finding counted (`CountedReportLog`)."""

from __future__ import annotations

import argparse
import asyncio
import functools
import os
import socket
import time
from typing import TYPE_CHECKING, Any

from mcp_schema.errors import McpError, quote
from mcp_schema.gateway.auth_options import (
    add_auth_arguments,
)
from mcp_schema.gateway.child import ChildError
from mcp_schema.gateway.monitor.exchange import ExchangeValidator
from mcp_schema.gateway.options import (
    LOOPS,
    GatewayError,
    SessionBounds,
    credentials_of,
    loop_runner,
    precheck_of,
    seconds,
    sessions_of,
    share_bound,
    timeouts_of,
    upstreams_of,
)
from mcp_schema.gateway.probe import ProbeError, Served
from mcp_schema.gateway.upstream_oauth import add_upstream_oauth_arguments
from mcp_schema.http.proxies import UVICORN_OPTIONS
from mcp_schema.proxy import _fd
from mcp_schema.proxy.reports import ReportLog

# The stdio proxy's report writer (private to its package): the same thread,
# the same bound on a report output that takes nothing.
from mcp_schema.proxy.validation import _Writer
from mcp_schema.versions import TASKS_EXTENSION

if TYPE_CHECKING:
    from mcp_schema.gateway.http_upstream import Credentials
    from mcp_schema.gateway.monitor.asgi import GatewayApp
    from mcp_schema.gateway.monitor.stdio import StdioGatewayApp

__all__ = ["PROBE_SECONDS", "SHUTDOWN_SECONDS", "GatewayError", "add_arguments", "main"]

PROBE_SECONDS = 10.0
"""How long ``--bridge`` tries to reach an HTTP upstream before it gives up."""

SHUTDOWN_SECONDS = 5
"""How long open answers (event streams) get when the gateway is stopped."""


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """The ``gateway`` subcommand's arguments, on ``parser`` (`main` reads them)."""
    parser.usage = (
        "%(prog)s [-h] --listen HOST:PORT [--enforce] [--bridge] [--report FILE] "
        "[--allowed-host NAME]... [--allowed-origin URL]... "
        "[--auth-issuer URL --auth-resource URI [--auth-*]...] [--trusted-proxy ADDR]... "
        "[--share-sessions PER:TOTAL] [--share-upstreams PER:TOTAL] [--loop LOOP] "
        "(--upstream URL [--upstream-host NAME] [--upstream-token-env NAME | "
        "--upstream-token-file PATH | --upstream-client-id ID [--upstream-client-*]... | "
        "--pass-authorization] [--upstream-read-timeout SECONDS] "
        "| -- CMD ...)"
    )
    parser.description = (
        "Serve /mcp on HOST:PORT, forwarding every request to the Streamable HTTP "
        "server at URL (or to the stdio server CMD starts) and checking every "
        "message both ways. Monitor mode (the "
        "default) passes the bytes unchanged and reports what is invalid, one JSON "
        "line each; --enforce answers an invalid request itself and turns an "
        "invalid answer into 502. Needs the http extra (httptools) and uvicorn."
    )
    parser.add_argument("--listen", required=True, metavar="HOST:PORT", help="where to serve /mcp")
    parser.add_argument("--upstream", metavar="URL", help="the server's MCP endpoint")
    parser.add_argument(
        "--enforce", action="store_true", help="refuse what is invalid instead of reporting it"
    )
    parser.add_argument(
        "--report",
        metavar="FILE",
        help="append one JSON line per invalid message to FILE, created 0600 "
        "(default: standard error)",
    )
    parser.add_argument(
        "--metrics",
        metavar="HOST:PORT",
        help="serve Prometheus metrics at http://HOST:PORT/metrics, a listener of its own "
        "(loopback when HOST is left out; the prometheus extra)",
    )
    parser.add_argument(
        "--loop",
        choices=LOOPS,
        default="auto",
        help="the event loop, as uvicorn's --loop (default auto: uvloop where installed)",
    )
    parser.add_argument(
        "--tasks",
        action="store_true",
        help=f"read every exchange with the {TASKS_EXTENSION} extension (by default, where"
        " the client and the upstream declare it)",
    )
    parser.add_argument(
        "--bridge",
        action="store_true",
        help="serve clients of both eras whatever the server speaks",
    )
    parser.add_argument(
        "--allowed-host",
        action="append",
        metavar="NAME",
        help="a Host name clients may use (repeatable; any port; by default on a loopback "
        "address: the loopback names only; other names get 421)",
    )
    parser.add_argument(
        "--allowed-origin",
        action="append",
        default=[],
        metavar="URL",
        help="an origin browsers may call from, as https://app.example (repeatable; "
        "besides the loopback ones; other origins get 403)",
    )
    _share_arguments(parser)
    _upstream_arguments(parser)
    parser.add_argument(
        "child", nargs=argparse.REMAINDER, metavar="-- CMD ...", help="a stdio server to start"
    )


def _share_arguments(parser: argparse.ArgumentParser) -> None:
    """The bounds of the tables clients fill (`mcp_schema.shares`), per caller and in all."""
    parser.add_argument(
        "--share-sessions",
        type=share_bound,
        metavar="PER:TOTAL",
        help="handshake-era sessions: at most PER per caller (principal, else address), "
        "TOTAL in all; the sessions followed and bridged (default 1000:10000), or the stdio "
        "server's children (default 4:32); past either, initialize gets 429",
    )
    parser.add_argument(
        "--share-upstreams",
        type=share_bound,
        metavar="PER:TOTAL",
        help="with --bridge, the bridge's upstream sessions (a stdio server's children): "
        "at most PER per caller, TOTAL in all (default 4:32); past either, 429",
    )


def _upstream_arguments(parser: argparse.ArgumentParser) -> None:
    """The options of an ``--upstream`` URL: its ``Host``, credentials and timeout."""
    parser.add_argument(
        "--upstream-host",
        metavar="NAME",
        help="the Host sent upstream (default: the client's, unchanged)",
    )
    add_auth_arguments(parser)
    parser.add_argument(
        "--upstream-token-env",
        metavar="NAME",
        help="send the upstream the bearer token in the environment variable NAME",
    )
    parser.add_argument(
        "--upstream-token-file",
        metavar="PATH",
        help="send the upstream the bearer token in the file PATH (read again after a 401)",
    )
    add_upstream_oauth_arguments(parser)
    parser.add_argument(
        "--upstream-read-timeout",
        type=seconds,
        metavar="SECONDS",
        help="how long an answer's head, or a silence on its event stream, may take "
        "(default 300; then 504, or the stream ends)",
    )
    parser.add_argument(
        "--pass-authorization",
        action="store_true",
        help="forward the client's own Authorization and Proxy-Authorization upstream (by "
        "default never: a token is for the server it was issued to)",
    )


def _address(listen: str) -> tuple[str, int]:
    host, colon, port = listen.rpartition(":")
    if not colon or not port.isdigit() or not host or int(port) > 65535:
        raise GatewayError(f"--listen must be HOST:PORT, not {quote(listen)}")
    return host.strip("[]"), int(port)


def bound_socket(host: str, port: int) -> socket.socket:
    """A TCP socket bound to ``host`` and ``port``, not listening yet."""
    # IPPROTO_TCP named: asyncio sets TCP_NODELAY only on the connections of a
    # socket that says so, and without it each answer waits out the client's
    # delayed ACK (some 40 ms).
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    sock = socket.socket(family, socket.SOCK_STREAM, socket.IPPROTO_TCP)
    try:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        sock.bind((host, port))
    except BaseException:
        sock.close()
        raise
    return sock


def _probed(
    upstream: str, required: bool, credentials: Credentials, host: str | None = None
) -> Served | None:
    """What the upstream serves (`probe_upstream`, with ``credentials``), said
    on stderr: tried for `PROBE_SECONDS` when ``required`` (``--bridge``),
    else once (None when it told nothing: the answers the gateway forwards
    teach it instead); ``host``: the ``Host`` it is sent with (``--upstream-host``)."""
    if not upstream.startswith(("http://", "https://")):
        raise GatewayError(f"--upstream must be an http(s) URL, not {quote(upstream)}")
    from mcp_schema.gateway.http_upstream import upstream_client
    from mcp_schema.gateway.probe import probe_upstream

    async def probing() -> Served:
        deadline = time.monotonic() + PROBE_SECONDS
        http = upstream_client()
        try:
            while True:
                try:
                    headers = None if host is None else {"host": host}
                    return await probe_upstream(
                        upstream, http, headers=headers, credentials=credentials
                    )
                except ProbeError:
                    if not required or time.monotonic() >= deadline:
                        raise
                await asyncio.sleep(0.2)
        finally:
            await http.aclose()

    try:
        served = asyncio.run(probing())
    except ProbeError as exc:
        if not required:
            _fd.say(f"gateway: the upstream's probe told nothing ({exc}); its answers will")
            return None
        raise GatewayError(f"{exc} (tried for {PROBE_SECONDS:g} s)") from None
    eras = [*served.stateless, *(["initialize sessions"] if served.serves(None) else [])]
    bridged = ""
    if required and not (served.handshake and served.stateless):
        bridged = ": 2026-07-28" if served.handshake else ": handshake-era"
        bridged += " clients are bridged"
    _fd.say(f"gateway: the upstream serves {', '.join(eras) or 'nothing known'}{bridged}")
    return served


def main(args: argparse.Namespace) -> int:
    """The ``gateway`` subcommand, with the arguments of `add_arguments`: the exit status."""
    try:
        return _run(args)
    except GatewayError as problem:
        _fd.say(f"error: {problem}")
        return 2


def app_of(args: argparse.Namespace, log: ReportLog) -> GatewayApp | StdioGatewayApp:
    """The app the arguments name (`GatewayApp`, or `StdioGatewayApp` for ``-- CMD``),
    reporting to ``log``; ``--bridge --upstream`` probes the upstream first."""
    from mcp_schema.gateway.bridge.links import StdioBridge
    from mcp_schema.gateway.bridge.stateless import sealer_from_env
    from mcp_schema.gateway.monitor.asgi import GatewayApp
    from mcp_schema.gateway.monitor.carried import Upward
    from mcp_schema.gateway.monitor.stdio import StdioGatewayApp

    child = list(args.child[1:] if args.child[:1] == ["--"] else args.child)
    if args.upstream is not None and child:
        raise GatewayError("give --upstream URL or -- CMD ..., not both")
    if args.upstream is None and not child:
        raise GatewayError("give the server: --upstream URL or -- CMD ...")
    if child and args.upstream_host is not None:
        raise GatewayError("--upstream-host is for an --upstream URL")
    credentials = credentials_of(args, child)
    sessions, upstreams = sessions_of(args.share_sessions), upstreams_of(args.share_upstreams)
    if upstreams and not args.bridge:
        raise GatewayError("--share-upstreams bounds the bridge's: give --bridge")
    extensions = (TASKS_EXTENSION,) if args.tasks else ()
    followed: SessionBounds = {} if child else sessions  # a stdio server's are its children
    validator = ExchangeValidator(extensions=extensions, **followed)
    precheck = precheck_of(args)
    try:
        if child:
            bridge = None
            if args.bridge:  # the state key is read now: a bad one stops the gateway at once
                bridge = functools.partial(StdioBridge, sealer=sealer_from_env(), **upstreams)
            app = StdioGatewayApp(
                child,
                enforce=args.enforce,
                reports=log,
                validator=validator,
                bridge=bridge,
                precheck=precheck,
                **sessions,
            )
            from mcp_schema.telemetry import telemetry_for

            app.share.observe(telemetry_for(None))  # its children's share, as the findings count
            return app
        upstream = str(args.upstream)
        Upward(args.upstream_host)  # a bad one stops the gateway before the probe
        served = _probed(upstream, args.bridge, credentials, args.upstream_host)
        return GatewayApp(
            upstream,
            enforce=args.enforce,
            reports=log,
            validator=validator,
            served=served,
            bridge=args.bridge,
            sealer=sealer_from_env() if args.bridge else None,
            precheck=precheck,
            upstream_host=args.upstream_host,
            credentials=credentials.source,
            pass_authorization=credentials.pass_authorization,
            timeouts=timeouts_of(args),
            **sessions,
            **upstreams,
        )
    except ValueError as exc:
        raise GatewayError(str(exc)) from None


def _missing(exc: ImportError) -> GatewayError:
    return GatewayError(
        f"the gateway needs {exc.name or 'httptools'}: pip install 'mcp-schema[http]' uvicorn"
    )


def _run(args: argparse.Namespace) -> int:
    host, port = _address(args.listen)
    try:
        import uvicorn

        from mcp_schema.gateway.coalesced import CoalescedHttp
        from mcp_schema.gateway.monitor.stdio import StdioGatewayApp
    except ImportError as exc:
        raise _missing(exc) from None
    report_fd = 2
    if args.report is not None:
        try:
            # 0600: a report holds excerpts of what peers sent
            report_fd = os.open(args.report, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o600)
        except OSError as exc:
            raise GatewayError(
                f"cannot write the report {quote(args.report)}: {exc.strerror or exc}"
            ) from None
    try:
        sock = bound_socket(host, port)
    except (OSError, OverflowError) as exc:
        raise GatewayError(f"cannot listen on {quote(args.listen)}: {exc}") from None
    metrics = _metrics(args.metrics) if args.metrics else None
    log = _report_log()
    writer = _Writer(log, report_fd)
    writer.start()
    try:
        app = app_of(args, log)
    except ImportError as exc:  # httptools, the http extra
        sock.close()
        raise _missing(exc) from None
    except GatewayError:
        sock.close()
        raise
    bound_host, bound_port = sock.getsockname()[:2]
    shown = f"[{bound_host}]" if ":" in bound_host else bound_host

    def finish() -> None:
        log.finish()
        writer.wait()

    class Server(uvicorn.Server):
        async def startup(self, sockets: Any = None) -> None:
            await super().startup(sockets)
            if self.started:  # listening from now on
                _fd.say(f"gateway: listening on http://{shown}:{bound_port}/mcp")

        async def shutdown(self, sockets: Any = None) -> None:
            await super().shutdown(sockets)
            finish()  # before uvicorn raises the signal that stopped it again

    config = uvicorn.Config(
        app,
        http=CoalescedHttp,  # httptools', an answer's head and body in one send
        log_level="warning",
        access_log=False,
        lifespan="on",
        timeout_graceful_shutdown=SHUTDOWN_SECONDS,
        **UVICORN_OPTIONS,
    )
    server = Server(config)

    async def serve() -> None:
        if isinstance(app, StdioGatewayApp):
            await app.start()  # the stdio server answered: only now does the gateway listen
        await server.serve(sockets=[sock])

    try:
        loop_runner(args.loop)(serve())
    except (McpError, ProbeError, ChildError) as exc:
        raise GatewayError(f"the stdio server cannot be served: {exc}") from None
    finally:
        sock.close()
        finish()
        if metrics is not None:
            metrics.close()
    return 2 if writer.failed else 0


def _metrics(address: str) -> Any:
    """The ``--metrics`` listener (`serve_metrics`): its meter provider the
    global one, which the gateway's telemetry records to."""
    try:
        from mcp_schema.telemetry.prometheus import serve_metrics

        listener = serve_metrics(address)
    except ImportError as exc:
        raise GatewayError(
            f"--metrics needs the prometheus extra ({exc.name}): "
            "pip install 'mcp-schema[prometheus]'"
        ) from None
    except (ValueError, OSError) as exc:
        raise GatewayError(f"--metrics {quote(address)}: {exc}") from None
    _fd.say(f"gateway: metrics on http://{listener.host}:{listener.port}/metrics")
    return listener


def _report_log() -> ReportLog:
    """The findings' log, counting each where telemetry is on (`CountedReportLog`)."""
    from mcp_schema.telemetry import telemetry_for

    telemetry = telemetry_for(None)
    if telemetry is None:
        return ReportLog()
    from mcp_schema.telemetry.findings import CountedReportLog

    return CountedReportLog(telemetry)
