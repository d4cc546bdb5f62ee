"""Raw HTTP probe of the Python SDK server's Streamable HTTP transport on 127.0.0.1 (error paths).

    python3 http_probe.py --out CAPTURE.jsonl -- SERVER_CMD... (server must listen on --port)

Stdlib only. Records each POST body (c2s, with request headers) and each JSON-RPC
object in the response (s2c, with status and response headers; SSE `data:` lines are parsed).
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import time
import urllib.error
import urllib.request


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--out", required=True)
    ap.add_argument("--port", type=int, default=38765)
    ap.add_argument("cmd", nargs=argparse.REMAINDER)
    a = ap.parse_args()
    cmd = a.cmd[1:] if a.cmd and a.cmd[0] == "--" else a.cmd
    url = f"http://127.0.0.1:{a.port}/mcp"
    proc = subprocess.Popen(cmd, stderr=subprocess.DEVNULL, stdout=subprocess.DEVNULL)
    rows: list[dict] = []
    version = "2025-11-25"
    try:
        for _ in range(100):
            try:
                urllib.request.urlopen(url.replace("/mcp", "/"), timeout=1)
                break
            except urllib.error.HTTPError:
                break
            except Exception:
                time.sleep(0.1)
        sid = None

        def post(body: str, extra: dict | None = None) -> None:
            nonlocal sid
            h = {
                "Content-Type": "application/json",
                "Accept": "application/json, text/event-stream",
            }
            if sid:
                h["Mcp-Session-Id"] = sid
            h.update(extra or {})
            try:
                msg = json.loads(body)
                rows.append({"dir": "c2s", "version": version, "message": msg, "headers": h})
            except ValueError:
                rows.append({"dir": "c2s", "version": version, "raw": body, "headers": h})
            req = urllib.request.Request(url, data=body.encode(), headers=h, method="POST")
            try:
                resp = urllib.request.urlopen(req, timeout=10)
                status, rh, data = resp.status, dict(resp.headers), resp.read().decode()
            except urllib.error.HTTPError as e:
                status, rh, data = e.code, dict(e.headers), e.read().decode()
            sid = rh.get("mcp-session-id") or rh.get("Mcp-Session-Id") or sid
            keep = {k: v for k, v in rh.items() if k.lower() in ("content-type", "mcp-session-id")}
            keep["status"] = str(status)
            payloads = [
                line_[5:].strip() for line_ in data.splitlines() if line_.startswith("data:")
            ] or ([data] if data.strip() else [])
            for p in payloads:
                if not p:
                    continue
                try:
                    rows.append(
                        {
                            "dir": "s2c",
                            "version": version,
                            "message": json.loads(p),
                            "headers": keep,
                        }
                    )
                except ValueError:
                    rows.append({"dir": "s2c", "version": version, "raw": p, "headers": keep})
            print(status, data[:200].replace("\n", " "), file=sys.stderr)

        post(
            '{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"http-probe","version":"0.0.1"}}}'
        )
        pv = {"MCP-Protocol-Version": version}
        post('{"jsonrpc":"2.0","method":"notifications/initialized"}', pv)
        post('{"jsonrpc":"2.0","id":2,"method":"ping"', pv)  # invalid JSON
        post('{"foo":1}', pv)  # not JSON-RPC
        post('{"jsonrpc":"2.0","id":3,"method":"tools/frobnicate"}', pv)  # unknown method
        post(
            '{"jsonrpc":"2.0","id":4,"method":"tools/call","params":{"name":"echo","arguments":{"text":"hi"}}}',
            pv,
        )
        post(
            '{"jsonrpc":"2.0","id":5,"method":"ping"}', {"MCP-Protocol-Version": "1999-01-01"}
        )  # bad version header
    finally:
        proc.terminate()
        proc.wait()
    with open(a.out, "w", encoding="utf-8") as fh:
        for r in rows:
            fh.write(json.dumps(r, ensure_ascii=False, separators=(",", ":")) + "\n")


if __name__ == "__main__":
    main()
