#!/usr/bin/env bash
# Re-generate every capture in tests/data/captures/. See README.md for setup.
set -euo pipefail
cd "$(dirname "$0")"
PY=${PEERS_PY:-/tmp/peers/venv/bin/python}
OUT=../data/captures
mkdir -p "$OUT/older"
"$PY" py_client.py --mode legacy --out $OUT/python-2025-11-25.jsonl -- "$PY" py_server.py
"$PY" py_client.py --mode auto   --out $OUT/python-2026-07-28.jsonl -- "$PY" py_server.py
node ts_client.mjs --out $OUT/typescript-2025-11-25.jsonl -- node ts_server.mjs
node ts_client.mjs --out $OUT/cross-tsclient-pyserver-2025-11-25.jsonl -- "$PY" py_server.py
"$PY" py_client.py --mode auto --out $OUT/cross-pyclient-tsserver-2025-11-25.jsonl -- node ts_server.mjs
# Older sessions: the relay rewrites the client's initialize protocolVersion.
for V in 2024-11-05 2025-03-26 2025-06-18; do
    "$PY" py_client.py --mode legacy --offer-version $V --out $OUT/older/python-$V.jsonl -- "$PY" py_server.py
    node ts_client.mjs --offer-version $V --out $OUT/older/typescript-$V.jsonl -- node ts_server.mjs
done
python3 raw_probe.py --out $OUT/raw-python-server-2025-11-25.jsonl -- "$PY" py_server.py
python3 raw_probe.py --out $OUT/raw-typescript-server-2025-11-25.jsonl -- node ts_server.mjs
python3 http_probe.py --port 38765 --out $OUT/raw-python-server-http-2025-11-25.jsonl -- "$PY" py_server.py http 38765
wc -l $OUT/*.jsonl $OUT/older/*.jsonl
