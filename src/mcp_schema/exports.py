"""What a generated version package exports, imported when first asked for.

A version package lists where each of its names lives; the module-level
``__getattr__`` and ``__dir__`` made here import that module on first use
(PEP 562), so importing the package itself creates no class. Type checkers
never see them: they read the package's ``TYPE_CHECKING`` imports, so a
misspelt name is still an error.
"""

from __future__ import annotations

import importlib
import importlib.util
from collections.abc import Callable, Iterable, Mapping
from typing import Any

from mcp_schema._args import check, strings


def lazy_exports(
    package: str, namespace: dict[str, Any], homes: Mapping[str, str], exported: Iterable[str]
) -> tuple[Callable[[str], Any], Callable[[], list[str]]]:
    """``__getattr__`` and ``__dir__`` for ``package``: a name in ``homes`` is read
    from the module it maps to, any other public name may be a module of the
    package; what is found is kept in ``namespace`` (the package's globals)."""
    check(package, str, "package")
    check(namespace, dict, "namespace")
    check(homes, Mapping, "homes")
    listed = frozenset(strings(exported, "exported") or ())

    def __getattr__(name: str) -> Any:
        home = homes.get(name)
        if home is not None:
            value = getattr(importlib.import_module(f".{home}", package), name)
        elif not name.startswith("_") and importlib.util.find_spec(f"{package}.{name}"):
            value = importlib.import_module(f".{name}", package)
        else:
            raise AttributeError(f"module {package!r} has no attribute {name!r}")
        namespace[name] = value
        return value

    def __dir__() -> list[str]:
        return sorted({*namespace, *listed})

    return __getattr__, __dir__
