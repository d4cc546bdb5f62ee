"""``python -m mcp_schema.proxy ...`` is ``python -m mcp_schema proxy ...``;
``--validator CONFIG`` starts the validator process (the proxy does)."""

import argparse
import json
import sys

from mcp_schema.proxy.command import add_arguments, main
from mcp_schema.proxy.validation import serve

if sys.argv[1:2] == ["--validator"]:  # started by the proxy itself
    sys.exit(serve(json.loads(sys.argv[2])))
parser = argparse.ArgumentParser(prog="python -m mcp_schema.proxy")
add_arguments(parser)
sys.exit(main(parser.parse_args()))
