"""The JSON contract: each JSON output's `schema_version` and its JSON Schema (draft 2020-12).

Every JSON object a command prints carries `schema_version`, an integer per output (`SCHEMA_VERSIONS`):
``trace`` (each object of `context trace --json`), ``usage`` (`context usage --json`), ``usage-group``
(`context usage --group-by … --json`), ``history`` (`context history --json`), ``compare`` (the one object
of `context compare --json`; `compare.SCHEMA_VERSION` owns its version and a test keeps the two equal),
``tools`` (each object of `context tools --json`; `tools.SCHEMA_VERSION`, kept equal the same way),
``sources`` (each object of `context sources --json`; `sources.SCHEMA_VERSION`, kept equal too),
``files`` (each object of `context files --json`; `files.SCHEMA_VERSION`, kept equal the same way).
A change that adds, removes, renames or retypes a key bumps that output's version; `tests/reports/test_schemas.py`
holds a fingerprint of each schema's keys per version, so a change without a bump fails. Adding a value
to an open set (a new warning text, a new tool name) is not a change of the contract.

The schemas live beside the price table (`data/schema-<name>.json`) so they ship with the package and
`contexttrace schema NAME` prints them as they are. This module imports nothing of the package: the
reports import `SCHEMA_VERSIONS` from it.
"""

from __future__ import annotations

import json
from functools import cache
from importlib import resources
from typing import Any

#: The version of each JSON output; bump one whenever its keys or their types change.
SCHEMA_VERSIONS: dict[str, int] = {
    "trace": 3,
    "usage": 3,
    "usage-group": 2,
    "history": 1,
    "compare": 3,
    "tools": 3,
    "sources": 3,
    "files": 3,
}

#: Output names `contexttrace schema` accepts, in the order its help lists them.
SCHEMA_NAMES: tuple[str, ...] = tuple(SCHEMA_VERSIONS)

#: The draft every schema declares (`$schema`).
DRAFT = "https://json-schema.org/draft/2020-12/schema"


@cache
def _text(name: str) -> str:
    return resources.files("contexttrace").joinpath("data", f"schema-{name}.json").read_text(encoding="utf-8")


def schema_text(name: str) -> str:
    """The JSON Schema of one output, as shipped (indented JSON text).

    Raises
    ------
    KeyError
        `name` is not one of `SCHEMA_NAMES`.
    """
    if name not in SCHEMA_VERSIONS:
        raise KeyError(f"{name!r} is not a JSON output; one of {', '.join(SCHEMA_NAMES)}")
    return _text(name)


def schema_of(name: str) -> dict[str, Any]:
    """The JSON Schema of one output as a dict (draft 2020-12), describing one object of the output.

    Each output is a JSON list of such objects (`context trace`, `context usage`, the groups, the
    history rows), except `compare`: one object. `schema_version` is a `const` of the version in
    `SCHEMA_VERSIONS`.

    Examples
    --------
    >>> s = schema_of("trace")
    >>> s["$schema"] == DRAFT, s["properties"]["schema_version"]["const"] == SCHEMA_VERSIONS["trace"]
    (True, True)
    """
    data: dict[str, Any] = json.loads(schema_text(name))
    return data
