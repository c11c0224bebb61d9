"""The list `contexttrace schema` prints when no output is named: each JSON output and what it holds."""

from __future__ import annotations

from contexttrace.reports.schemas import SCHEMA_NAMES, SCHEMA_VERSIONS, schema_of


def render_schema_names() -> str:
    """Name every JSON output `contexttrace schema NAME` can print, with the command that prints it.

    Returns
    -------
    str
        A first line saying how to print one, then one line per name in `SCHEMA_NAMES` order: the name,
        the schema's title less its ``contexttrace`` prefix, and its version.

    Examples
    --------
    >>> render_schema_names().splitlines()[1].split()[:4]
    ['trace', 'context', 'trace', '--json:']
    """
    width = max(len(n) for n in SCHEMA_NAMES)
    lines = ["JSON outputs (contexttrace schema NAME prints the JSON Schema of one):"]
    for name in SCHEMA_NAMES:
        title = str(schema_of(name).get("title", "")).removeprefix("contexttrace ")
        lines.append(f"  {name:<{width}}  {title} (schema_version {SCHEMA_VERSIONS[name]})")
    return "\n".join(lines)
