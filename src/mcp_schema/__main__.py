"""``python -m mcp_schema``: see `mcp_schema.cli`."""

import sys

from mcp_schema.cli import main

sys.exit(main())
