#!/usr/bin/env python3
"""Stdio relay that records MCP JSON-RPC traffic between a client and a server.

Usage (as the "server command" a client launches):

    python relay.py --out FILE.jsonl [--offer-version V] -- SERVER_CMD [ARGS...]

The client talks to this process over stdin/stdout exactly as it would to the
server; the relay spawns SERVER_CMD, forwards every newline-delimited message
unchanged (byte for byte) in both directions, and records each one as

    {"dir": "c2s"|"s2c", "version": "<negotiated>", "message": {...}}

A line that is not valid JSON is recorded as {"dir", "version", "raw": "<text>"}
(no "message" key). The negotiated version is the `protocolVersion` of the
successful `initialize` result if there is one, else the
`io.modelcontextprotocol/protocolVersion` envelope value of the first request
that got a successful (non-error) response (2026-07-28 era, no handshake).
All lines of a session carry that one session-level version.

With ``--offer-version V`` the relay rewrites one thing: the
``params.protocolVersion`` of the client's ``initialize`` request, to V, so
that a server answers in an older version than the client would offer. The
rewritten line is what the server receives and what is recorded; every other
line (and everything the SDKs send after the handshake) is forwarded as is.

Stdlib only; no timestamps, so reruns are deterministic up to SDK behaviour.
"""

from __future__ import annotations

import argparse
import json
import signal
import subprocess
import sys
import threading

PV_KEY = "io.modelcontextprotocol/protocolVersion"


def offer(line: bytes, version: str) -> bytes:
    """``line`` with an ``initialize`` request's protocolVersion set to ``version``."""
    try:
        msg = json.loads(line)
    except ValueError:
        return line
    if not (isinstance(msg, dict) and msg.get("method") == "initialize"):
        return line
    params = msg.get("params")
    if not isinstance(params, dict):
        return line
    params["protocolVersion"] = version
    return json.dumps(msg, ensure_ascii=False, separators=(",", ":")).encode() + b"\n"


class Recorder:
    def __init__(self, out: str) -> None:
        self.out = out
        self.records: list[dict] = []
        self.lock = threading.Lock()
        self.init_ids: set = set()
        self.pending_env: dict = {}  # request id (c2s) -> envelope version
        self.init_version: str | None = None
        self.env_version: str | None = None
        self.done = False

    def add(self, direction: str, line: bytes) -> None:
        if not line.strip():
            return
        text = line.decode("utf-8", errors="replace").rstrip("\r\n")
        if not text.strip():
            return
        with self.lock:
            try:
                msg = json.loads(text)
            except ValueError:
                self.records.append({"dir": direction, "raw": text})
                return
            self.records.append({"dir": direction, "message": msg})
            if not isinstance(msg, dict):
                return
            if direction == "c2s" and "method" in msg and "id" in msg:
                if msg["method"] == "initialize":
                    self.init_ids.add(json.dumps(msg["id"]))
                params = msg.get("params")
                meta = params.get("_meta") if isinstance(params, dict) else None
                if isinstance(meta, dict) and PV_KEY in meta and msg["method"] != "initialize":
                    self.pending_env[json.dumps(msg["id"])] = meta[PV_KEY]
            elif direction == "s2c" and "id" in msg and ("result" in msg or "error" in msg):
                key = json.dumps(msg["id"])
                if key in self.init_ids and "result" in msg:
                    pv = msg["result"].get("protocolVersion")
                    if pv and self.init_version is None:
                        self.init_version = pv
                env = self.pending_env.pop(key, None)
                if env and "result" in msg and self.env_version is None:
                    self.env_version = env

    def finish(self) -> None:
        with self.lock:
            if self.done:
                return
            self.done = True
            version = self.init_version or self.env_version or "unknown"
            with open(self.out, "w", encoding="utf-8") as fh:
                for rec in self.records:
                    row = {"dir": rec["dir"], "version": version}
                    if "message" in rec:
                        row["message"] = rec["message"]
                    else:
                        row["raw"] = rec["raw"]
                    fh.write(json.dumps(row, ensure_ascii=False, separators=(",", ":")) + "\n")


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--out", required=True)
    ap.add_argument("--offer-version", help="rewrite the client's initialize protocolVersion")
    ap.add_argument("cmd", nargs=argparse.REMAINDER)
    args = ap.parse_args()
    cmd = args.cmd[1:] if args.cmd and args.cmd[0] == "--" else args.cmd
    rec = Recorder(args.out)
    proc = subprocess.Popen(cmd, stdin=subprocess.PIPE, stdout=subprocess.PIPE, bufsize=0)

    def on_signal(signum, _frame):
        try:
            proc.terminate()
        except Exception:
            pass
        rec.finish()
        sys.exit(0)

    signal.signal(signal.SIGTERM, on_signal)
    signal.signal(signal.SIGINT, on_signal)

    def pump_in() -> None:
        stdin = sys.stdin.buffer
        while True:
            line = stdin.readline()
            if not line:
                break
            if args.offer_version:
                line = offer(line, args.offer_version)
            rec.add("c2s", line)
            try:
                proc.stdin.write(line)
                proc.stdin.flush()
            except (BrokenPipeError, OSError):
                break
        try:
            proc.stdin.close()
        except OSError:
            pass

    t = threading.Thread(target=pump_in, daemon=True)
    t.start()
    out = sys.stdout.buffer
    while True:
        line = proc.stdout.readline()
        if not line:
            break
        rec.add("s2c", line)
        try:
            out.write(line)
            out.flush()
        except (BrokenPipeError, OSError):
            break
    proc.wait()
    rec.finish()
    return 0


if __name__ == "__main__":
    sys.exit(main())
