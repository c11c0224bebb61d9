"""Public names a package loads on first use (PEP 562), so that importing the package costs nothing more.

`contexttrace` and `contexttrace.reading` export names whose modules are heavy (the readers, Polars, the
report builders); a command that does not use them never imports them.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable, Mapping
from typing import Any


def lazy_getattr(package: str, names: Mapping[str, str], namespace: dict[str, Any]) -> Callable[[str], Any]:
    """A module-level `__getattr__` for `package` that imports each of `names` from its module when first
    asked for, and keeps it in `namespace` (the package's `globals()`) so the next lookup is a plain one.

    Parameters
    ----------
    package
        The package's dotted name, for the error message.
    names
        Public name -> the dotted module that defines it.
    namespace
        The package's `globals()`.

    Returns
    -------
    callable
        ``__getattr__(name) -> object``; raises AttributeError (naming `package` and `name`) for a name not
        in `names`, and whatever importing its module raises.

    >>> get = lazy_getattr("p", {"sqrt": "math"}, {})
    >>> get("sqrt")(9.0)
    3.0
    """

    def __getattr__(name: str) -> Any:
        module = names.get(name)
        if module is None:
            raise AttributeError(f"module {package!r} has no attribute {name!r}")
        value = getattr(importlib.import_module(module), name)
        namespace[name] = value
        return value

    return __getattr__
