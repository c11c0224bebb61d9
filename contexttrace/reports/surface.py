"""What start-up offered a run, and how the runs of a comparison differ there (spec 004: "two runs that
differ there are not the same condition").

A run's surface is read from its `context trace` report: the `system/init` line's tools, skills, agents,
slash commands, MCP servers, plugins, model and permission mode, and the CLI version. Pure functions over
reports already built; nothing here prints. Also which agents the runs come from (`mixed_agents`): their
tokenizers and windows differ, which a comparison must say.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from contexttrace.reading.api import FORMATS
from contexttrace.reports.results import DiagnosticsOfReport, TraceReport

#: What start-up offered, compared between runs (spec 004: "two runs that differ there are not the same
#: condition"): key -> kind. `count`: how many the `system/init` line lists; `names`: the names it lists;
#: `value`: one string. Transcripts record no init line: only `model` and `cli_version` are known there.
SURFACE_FIELDS: dict[str, str] = {
    "tools": "count",
    "skills": "count",
    "agents": "count",
    "slash_commands": "count",
    "mcp_servers": "names",
    "plugins": "names",
    "model": "value",
    "cli_version": "value",
    "permission_mode": "value",
}


def run_surface(report: TraceReport) -> dict[str, Any]:
    """The surface of one run: `SURFACE_FIELDS` from its `system/init` line (names sorted), the model
    (the init line's, else the first model called) and the CLI version; None for what it does not record.

    >>> from types import SimpleNamespace as R
    >>> run_surface(R(surface=None, models=["claude-opus-4-5"], cli_version="2.1.3"))["model"]
    'claude-opus-4-5'
    """
    init = report.surface or {}
    out: dict[str, Any] = {}
    for key, kind in SURFACE_FIELDS.items():
        value = init.get(key)
        out[key] = sorted(value) if kind == "names" and isinstance(value, list) else value
    out["model"] = init.get("model") or (report.models[0] if report.models else None)
    out["cli_version"] = report.cli_version
    return out


def _key(value: Any) -> Any:
    return tuple(value) if isinstance(value, list) else value


def surface_groups(runs: Sequence[DiagnosticsOfReport], key: str) -> list[dict[str, Any]]:
    """Group runs by their value of one surface field (`run_surface` of each run's `report`).

    Returns
    -------
    list of dict
        One per value: `value` and `runs` (the trace ids having it, in run order), the largest group first
        (ties: the value seen first).
    """
    groups: dict[Any, dict[str, Any]] = {}
    for run in runs:
        value = run_surface(run.report)[key]
        groups.setdefault(_key(value), {"value": value, "runs": []})["runs"].append(run.trace)
    return sorted(groups.values(), key=lambda g: -len(g["runs"]))  # stable: first seen wins a tie


def typical_surface(runs: Sequence[DiagnosticsOfReport]) -> dict[str, Any] | None:
    """A condition's surface: per `SURFACE_FIELDS` field, the value most of its runs have (`surface_groups`;
    ties: the value seen first); None without runs."""
    if not runs:
        return None
    return {key: surface_groups(runs, key)[0]["value"] for key in SURFACE_FIELDS}


def surface_within(condition: str, runs: Sequence[DiagnosticsOfReport]) -> list[dict[str, Any]]:
    """Where a condition's runs differ among themselves: one entry per field with more than one value.

    Returns
    -------
    list of dict
        `condition`, `field`, `values` (`surface_groups`: each value with the trace ids of its runs).
    """
    out = []
    for key in SURFACE_FIELDS:
        groups = surface_groups(runs, key)
        if len(groups) > 1:
            out.append({"condition": condition, "field": key, "values": groups})
    return out


def offers(surface: dict[str, Any] | None) -> dict[str, list[str]]:
    """The MCP servers and plugins a surface lists: what a free workspace's start-up does not offer.

    >>> offers({"mcp_servers": ["github"], "plugins": None}), offers(None)
    ({'mcp_servers': ['github'], 'plugins': []}, {'mcp_servers': [], 'plugins': []})
    """
    surface = surface or {}
    return {"mcp_servers": surface.get("mcp_servers") or [], "plugins": surface.get("plugins") or []}


def surface_between(baseline: dict[str, Any] | None, other: dict[str, Any] | None) -> list[dict[str, Any]]:
    """What a condition's surface differs in from the baseline's: per field that differs, `field`,
    `baseline` (its value there) and `value` (this condition's); for names also `added` and `removed`.

    >>> for d in surface_between({"skills": 0, "mcp_servers": ["a"]}, {"skills": 1, "mcp_servers": ["a", "b"]}):
    ...     print(d)
    {'field': 'skills', 'baseline': 0, 'value': 1}
    {'field': 'mcp_servers', 'baseline': ['a'], 'value': ['a', 'b'], 'added': ['b'], 'removed': []}
    """
    if baseline is None or other is None:
        return []
    out = []
    for key, kind in SURFACE_FIELDS.items():
        if key not in baseline and key not in other:
            continue
        base, value = baseline.get(key), other.get(key)
        if _key(base) == _key(value):
            continue
        entry: dict[str, Any] = {"field": key, "baseline": base, "value": value}
        if kind == "names" and isinstance(base, list) and isinstance(value, list):
            entry["added"] = sorted(set(value) - set(base))
            entry["removed"] = sorted(set(base) - set(value))
        out.append(entry)
    return out


def agent_of(fmt: str) -> str:
    """The agent a trace format is written by, as a person names it (``codex`` → ``Codex CLI``).

    >>> agent_of("stream-json"), agent_of("gemini")
    ('Claude Code', 'Gemini CLI')
    """
    return next((f.agent for f in FORMATS if fmt in f.formats), fmt)


def mixed_agents(conditions: Sequence[Any]) -> dict[str, Any] | None:
    """The ``mixed_agents`` warning of a comparison (`compare.ConditionResult`s: `name`, `runs`) whose runs
    come from more than one agent: `agents` (per condition its agents, sorted) and `windows` (the distinct
    effective windows of the runs in tokens, `health.window`, smallest first); None with one agent."""
    agents = {c.name: sorted({agent_of(r.report.format) for r in c.runs}) for c in conditions}
    if len({a for names in agents.values() for a in names}) < 2:
        return None
    windows = {(r.report.extra.get("health") or {}).get("window") for c in conditions for r in c.runs}
    return {"kind": "mixed_agents", "agents": agents, "windows": sorted(w for w in windows if w)}
