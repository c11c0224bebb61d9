"""Every option and argument of the command line, each declared once, and the parsing they share.

An option is an `Annotated` type (``TraceWindowOpt``, ``FormatOpt``...) that the commands' signatures
name, so a flag that two commands share means the same in both; options that share a flag but say
something else per command (``--window``, ``--sort``, ``--at``, ``--condition``...) are one alias per
meaning, side by side here. `view_options` turns the options of the trace-printing commands (`context
trace`, `context usage`) into one `views.ViewOptions`; a bad value is a `typer.BadParameter` (exit 2).
This module imports no command's own modules.
"""

from __future__ import annotations

import re
from datetime import tzinfo
from decimal import Decimal
from pathlib import Path
from typing import Annotated, Any, TypeGuard

import typer

from contexttrace.analysis import window as window_rules
from contexttrace.reports.schemas import SCHEMA_NAMES
from contexttrace.run.engine import EngineName
from contexttrace.select.filters import GROUP_BY, GroupBy, Selection, is_scan, parse_timezone, parse_when, sort_keys
from contexttrace.select.thresholds import Threshold, ThresholdError, parse_threshold
from contexttrace.select.views import CompareFormat, Format, ReportKind, ViewKind, ViewOptions, metrics_of

# -- --window ----------------------------------------------------------------------------------------

#: The largest `--window` accepted (`window.MAX_WINDOW_TOKENS`, which also bounds a window a trace states):
#: ten times the largest window a Claude model offers (1M tokens), so a typo (an extra zero or two) is an
#: error rather than a fill of 0%.
MAX_WINDOW_TOKENS = window_rules.MAX_WINDOW_TOKENS
_WINDOW_SUFFIXES = {"": 1, "k": 1_000, "m": 1_000_000}
_WINDOW_RE = re.compile(r"(\d+(?:\.\d+)?)([kKmM]?)")


def window_tokens(text: str) -> int:
    """Parse a `--window` value: a whole number of tokens, or a number followed by k/K (thousand) or m/M (million).

    Parameters
    ----------
    text
        The option's value as typed.

    Returns
    -------
    int
        Tokens, 1 to `MAX_WINDOW_TOKENS`.

    Raises
    ------
    typer.BadParameter
        The value is not such a number, is not a whole number of tokens, is 0, or is above the cap; the
        message quotes the value (a usage error: exit 2).

    Examples
    --------
    >>> [window_tokens(v) for v in ("200000", "200k", "200K", "1M", "1m", "1.5M")]
    [200000, 200000, 200000, 1000000, 1000000, 1500000]
    """
    match = _WINDOW_RE.fullmatch(text.strip())
    if match is None:
        raise typer.BadParameter(f"{text!r} is not a number of tokens (examples: 200000, 200k, 1M, 1.5M)")
    tokens = Decimal(match[1]) * _WINDOW_SUFFIXES[match[2].lower()]  # Decimal: 1.5M is exactly 1,500,000
    if tokens != tokens.to_integral_value():
        raise typer.BadParameter(f"{text!r} is not a whole number of tokens")
    if not 1 <= tokens <= MAX_WINDOW_TOKENS:
        raise typer.BadParameter(f"{text!r} is out of range: a window is 1 to {MAX_WINDOW_TOKENS:,} tokens")
    return int(tokens)


def _window_option(help_text: str) -> Any:
    """`--window TOKENS` parsed by `window_tokens`, with a command's own help (what the window is used for)."""
    return typer.Option("--window", metavar="TOKENS", parser=window_tokens, help=help_text, show_default=False)


TraceWindowOpt = Annotated[
    int | None,
    _window_option(
        "Context window in tokens: 200000, 200k, 1M, 1.5M. Fill (peak / window), health and weather are "
        "measured against it. Default: what the trace states (the result line's modelUsage, a model id "
        "ending in [1m], a Codex or Gemini window), else 200k (1M when the peak is above it)."
    ),
]
UsageWindowOpt = Annotated[
    int | None,
    _window_option(
        "Context window in tokens: 200000, 200k, 1M, 1.5M. The --breakdown readings (context of the "
        "window, turns until autocompact, band) are measured against it. Default: what the trace states "
        "(the result line's modelUsage, a model id ending in [1m]), else 200k (1M when the peak is above it)."
    ),
]
#: `--window` of the commands whose readings do not use it (tools, sources, files).
ReadingsWindowOpt = Annotated[
    int | None,
    _window_option("Context window in tokens (200000, 200k, 1M); read for the diagnostics only: these "
                   "readings do not depend on it."),
]  # fmt: skip
CompareWindowOpt = Annotated[
    int | None,
    _window_option("Context window in tokens (200000, 200k, 1M) the health score is measured against. Default: "
                   "what each trace states, else 200k (1M when the peak is above it)."),
]  # fmt: skip

# -- what to read --------------------------------------------------------------------------------------

#: Whether Typer writes an argument's usage as `[NAME]...` itself (0.29 and later, which pyproject.toml's pin
#: excludes: they build a pydantic adapter per option at run time); earlier releases print a metavar that
#: starts with "[" as it is written. Either way the usage line reads `[PATH]...`.
_TYPER_BRACKETS = hasattr(typer.core.TyperArgument, "_usage_display_name")


def _many(name: str) -> str:
    """The metavar of an argument that takes any number of values (`[NAME]...` on the usage line)."""
    return name if _TYPER_BRACKETS else f"[{name}]..."


PathsArg = Annotated[
    list[str] | None,
    # Hidden from the "Arguments" list, where Typer prints "<list[str]>" after the name; each command's
    # epilog describes PATH instead. The usage line still shows "[PATH]...".
    typer.Argument(metavar=_many("PATH"), hidden=True, show_default=False),
]
#: The epilog of every command that takes PATHs.
PATHS_HELP = (
    "PATH: stream-json captures, session transcripts, directories of them, quoted globs, fsspec URLs "
    "(s3://bucket/traces/, gs://..., file://...; docs/dask.md), or - for standard input. "
    "None: the sessions under $CLAUDE_CONFIG_DIR/projects when it is set, else under "
    "~/.config/claude/projects and ~/.claude/projects."
)
DirsArg = Annotated[list[str] | None, typer.Argument(metavar=_many("DIR"), hidden=True, show_default=False)]
#: The epilog of `context compare` (its DIR arguments).
COMPARE_HELP = (
    "DIR: one directory per condition, named by its folder (runs/free/ is the condition free). "
    "With --condition NAME=PATH, PATH is a file (a multi-run stream-json file counts each run), a "
    "directory or a quoted glob ('runs/loaded/*.jsonl'); repeat a NAME to add paths to it. docs/compare.md "
    "says how to run each condition cleanly and how to read the output."
)

# -- how to read: every command that reads traces (docs/dask.md) --------------------------------------

ColorOpt = Annotated[
    bool | None,
    typer.Option(
        "--color/--no-color",
        help="Colour on or off. Default: on only when writing to a terminal, NO_COLOR unset and TERM not dumb.",
        show_default=False,
    ),
]
NoCacheOpt = Annotated[
    bool,
    typer.Option(
        "--no-cache",
        help="Read every file, neither using nor filling the result store (see 'contexttrace cache info'). "
        "The output is the same either way.",
    ),
]
EngineOpt = Annotated[
    EngineName,
    typer.Option(
        "--engine",
        help="Where the traces are read: local (this machine's processes) or dask (a Dask cluster: --scheduler, "
        "else a LocalCluster here; pip install 'contexttrace[dask]'). The output is the same.",
    ),
]
SchedulerOpt = Annotated[
    str | None,
    typer.Option("--scheduler", metavar="ADDRESS", show_default=False,
                 help="With --engine dask: a running dask scheduler (tcp://host:8786)."),
]  # fmt: skip

# -- output --------------------------------------------------------------------------------------------

QuietOpt = Annotated[
    bool,
    typer.Option("--quiet", "-q", help="On stderr only the errors: traces not read, breaches, nothing found."),
]
VerboseOpt = Annotated[
    bool,
    typer.Option("--verbose", "-v", help="Every note on stderr in full, as it comes. Default on a terminal: the "
                 "notes after the table, grouped, shortened and counted."),
]  # fmt: skip
AllowEmptyOpt = Annotated[
    bool,
    typer.Option("--allow-empty", help="Exit 0 when no trace is found (default: exit 1, so a CI job pointed at "
                 "the wrong folder fails)."),
]  # fmt: skip

JsonOpt = Annotated[bool, typer.Option("--json", help="Print a JSON list, one object per trace.")]
CompareJsonOpt = Annotated[bool, typer.Option("--json", help="Print one JSON object (as --format json).")]
FormatOpt = Annotated[
    Format | None,
    typer.Option(
        "--format",
        help="table (default), markdown (a GitHub table and its notes as a list: a CI job summary), csv (raw "
        "numbers, one row per trace) or json (as --json).",
        show_default=False,
    ),
]
CompareFormatOpt = Annotated[
    CompareFormat,
    typer.Option("--format", help="table (a pipe table, the readings under it), markdown (the same, titles as "
                 "headings), csv (the rows; readings on stderr) or json. Default: table.", show_default=False),
]  # fmt: skip
OutputOpt = Annotated[
    Path | None,
    typer.Option(
        "--output", "-o", metavar="FILE", dir_okay=False, show_default=False,
        help="Write the output to FILE instead of standard output (notes and breaches stay on stderr). "
        "Without --format or --json, its extension chooses the format: .json, .csv, .md; else a table.",
    ),
]  # fmt: skip
ReportOutputOpt = Annotated[
    str,
    typer.Option(
        "--output", "-o", metavar="FILE", help="Where to write the page; - for standard output.", show_default=True
    ),
]

# -- context trace and context usage: the options every command that prints traces shares ---------------

CallsOpt = Annotated[
    bool,
    typer.Option("--calls", help="Also print each call's prompt tokens, numbered from 1, with compactions marked."),
]
ExplainOpt = Annotated[
    bool,
    typer.Option(
        "--explain", help="Under the table, per trace: the health breakdown, the health bar and the weather factors."
    ),
]
BreakdownOpt = Annotated[
    bool,
    typer.Option("--breakdown", help="Also print per-model, per-thread and per-agent rows and the turn readings."),
]
GroupByOpt = Annotated[
    str | None,
    typer.Option("--group-by", metavar="day|week|month|project|model", show_default=False,
                 help="One row per day, ISO week, month (of each trace's start), project or model instead of per "
                 "trace; --fail-on then checks each row."),
]  # fmt: skip
FailOnOpt = Annotated[
    list[str] | None,
    typer.Option(
        "--fail-on", metavar="EXPR", show_default=False,
        help="Exit 3 when a trace breaks EXPR, <metric><op><value>: peak>150000, fill>=0.8, compact>0, "
        "health<B (A best), cost>2.5, repeat>3, weather>=cloudy (sunny < fair < cloudy < rainy < stormy). "
        "Repeatable. Every trace still prints; stderr names each breach. An unknown metric lists the valid ones.",
    ),
]  # fmt: skip
SinceOpt = Annotated[
    str | None,
    typer.Option(
        "--since", metavar="WHEN", show_default=False,
        help="Only traces that started at or after WHEN: 2026-02-12, 20260212, 2026-02-12T16:00, today, "
        "yesterday, 7d, 12h (local time unless --timezone or an offset says otherwise).",
    ),
]  # fmt: skip
UntilOpt = Annotated[
    str | None,
    typer.Option(
        "--until", metavar="WHEN", show_default=False,
        help="Only traces that started before the end of WHEN (a date counts whole; a time is included).",
    ),
]  # fmt: skip
TimezoneOpt = Annotated[
    str | None,
    typer.Option(
        "--timezone", metavar="ZONE", show_default=False,
        help="Time zone of --since/--until, the start column and day/week/month groups: UTC, Europe/Paris, "
        "local (default).",
    ),
]  # fmt: skip
ProjectOpt = Annotated[
    list[str] | None,
    typer.Option(
        "--project", metavar="NAME", show_default=False,
        help="Only traces of this project (the last folder of the directory Claude Code ran in, that "
        "directory, or the projects/ folder name; * and ? match any). Repeatable.",
    ),
]  # fmt: skip
SessionOpt = Annotated[
    list[str] | None,
    typer.Option("--session", metavar="ID", show_default=False,
                 help="Only sessions whose id starts with ID. Repeatable."),
]  # fmt: skip
SortOpt = Annotated[
    str | None,
    typer.Option(
        "--sort", metavar="KEY", show_default=False,
        help="Order rows by KEY: a metric (peak, fill, calls, cost, health, weather, ...), trace, project, "
        "start, session or path. Default: the order the traces were read in.",
    ),
]  # fmt: skip
DescOpt = Annotated[
    bool, typer.Option("--desc/--asc", help="With --sort: largest (or latest) first, or smallest first (default).")
]
TotalsOpt = Annotated[
    bool,
    typer.Option("--totals/--no-totals", help="Table and markdown: a totals row of the columns that add up."),
]
WideOpt = Annotated[
    bool,
    typer.Option("--wide", help="Show every column even when the terminal is too narrow for the table."),
]
DbOpt = Annotated[
    Path | None,
    typer.Option(
        "--db", metavar="FILE", dir_okay=False, show_default=False,
        help="Append each trace's JSON record to the SQLite history FILE (with --label, the time and the git "
        "commit); read it back with 'context history'.",
    ),
]  # fmt: skip
LabelOpt = Annotated[
    str | None,
    typer.Option("--label", metavar="LABEL", show_default=False,
                 help="With --db: the run's label (default: default); history compares runs of a label."),
]  # fmt: skip

# -- context tools, sources, files -----------------------------------------------------------------------

ToolsSortOpt = Annotated[
    str,
    typer.Option("--sort", metavar="calls|errors|tokens|p95",
                 help="Order the rows by calls, errors, tokens (→ context) or p95 duration, largest first."),
]  # fmt: skip
ByToolOpt = Annotated[
    bool, typer.Option("--by-tool", help="Under each mcp:<server> row, a row per MCP tool of that server.")
]
SourcesAtOpt = Annotated[
    str,
    typer.Option("--at", metavar="last|peak|N",
                 help="The call whose window is split: the last call, the peak one, or call N (1-based, as --calls)."),
]  # fmt: skip
SourcesViewOpt = Annotated[
    str,
    typer.Option("--view", metavar="rows|claude",
                 help="rows: every source row (default); claude: the rows in Claude Code's /context categories, with "
                      "free space and the autocompact buffer."),
]  # fmt: skip
StepsOpt = Annotated[
    bool, typer.Option("--steps", help="Also a table of every call × source (the JSON always has it).")
]
ThreadOpt = Annotated[
    str,
    typer.Option("--thread", metavar="AGENT_ID",
                 help="Read a subagent's own window instead of the main thread's: its agent id (as its agent file "
                      "and context usage --breakdown name it) or the Task / Agent tool_use id that started it."),
]  # fmt: skip
FilesAtOpt = Annotated[
    str,
    typer.Option("--at", metavar="last|TIME|N",
                 help="The moment to read the files at: last (the trace's last line), an ISO 8601 time (UTC when "
                      "no zone is given) or N, the main thread's call N (what its prompt held)."),
]  # fmt: skip

# -- context history -------------------------------------------------------------------------------------

HistoryDbOpt = Annotated[Path, typer.Option("--db", metavar="FILE", dir_okay=False, help="The SQLite history file.")]
HistoryLabelOpt = Annotated[
    list[str] | None,
    typer.Option("--label", metavar="LABEL", show_default=False, help="Only runs of this label. Repeatable."),
]
HistoryMetricOpt = Annotated[
    list[str] | None,
    typer.Option("--metric", "-m", metavar="NAMES", show_default=False,
                 help="Metrics to show, comma-separated or repeated (peak, fill, calls, compact, repeat, health, "
                 "weather, cost; for --command usage: cost, calls, output, hit, ...). Default: those recorded."),
]  # fmt: skip
HistoryFormatOpt = Annotated[
    Format | None,
    typer.Option("--format", show_default=False,
                 help="table (default), markdown (a GitHub table), csv (one row per recorded run, raw numbers) or "
                 "json (as --json)."),
]  # fmt: skip
HistoryJsonOpt = Annotated[bool, typer.Option("--json", help="Print a JSON list, one object per recorded run.")]
HistoryOutputOpt = Annotated[
    Path | None,
    typer.Option("--output", "-o", metavar="FILE", dir_okay=False, show_default=False,
                 help="Write the output to FILE instead of standard output; without --format, its extension "
                 "(.json, .csv, .md) chooses the format."),
]  # fmt: skip
HistoryTimezoneOpt = Annotated[
    str | None,
    typer.Option("--timezone", metavar="ZONE", show_default=False,
                 help="Time zone of the recorded column: UTC, Europe/Paris, local (default)."),
]  # fmt: skip
HistoryCommandOpt = Annotated[
    str, typer.Option("--command", metavar="trace|usage", help="Runs recorded by context trace or context usage.")
]

# -- context compare and context report ------------------------------------------------------------------

ConditionOpt = Annotated[
    list[str] | None,
    typer.Option("--condition", "-c", metavar="NAME=PATH", help="A condition and its runs (repeatable).",
                 show_default=False),
]  # fmt: skip
BaselineOpt = Annotated[
    str | None,
    typer.Option("--baseline", metavar="NAME", help="The condition the others are measured against. Default: "
                 "the first.", show_default=False),
]  # fmt: skip
MetricOpt = Annotated[
    list[str] | None,
    typer.Option("--metric", "-m", metavar="NAMES", help="Metrics to compare, comma-separated: calls, first, "
                 "peak, growth, compact, tools, failed, repeat, result_chars, cost, health. Default: all.",
                 show_default=False),
]  # fmt: skip
ReportConditionOpt = Annotated[
    list[str] | None,
    typer.Option(
        "--condition",
        "-c",
        metavar="NAME=PATH",
        show_default=False,
        help="Compare conditions as context compare does (repeatable); PATHs are then condition folders.",
    ),
]
ReportBaselineOpt = Annotated[
    str | None,
    typer.Option("--baseline", metavar="NAME", show_default=False, help="With --condition: the baseline."),
]
OpenOpt = Annotated[bool, typer.Option("--open", help="Open the page in a web browser once written.")]

# -- schema ----------------------------------------------------------------------------------------------

SchemaNameArg = Annotated[
    str | None,
    typer.Argument(metavar="NAME", show_default=False,
                   help=f"One of: {', '.join(SCHEMA_NAMES)}. Without it, the names are listed."),
]  # fmt: skip

# -- parsing what the options share ----------------------------------------------------------------------


#: The format an `--output` file's extension asks for when `--format` and `--json` are absent.
FORMAT_OF_EXTENSION: dict[str, Format] = {
    ".json": Format.JSON,
    ".csv": Format.CSV,
    ".md": Format.MARKDOWN,
    ".markdown": Format.MARKDOWN,
}


def chosen_format(fmt: Format | None, json: bool, output: Path | None = None) -> Format:
    """Return the output format `--format` and `--json` ask for; without either, the one `output`'s
    extension names (`FORMAT_OF_EXTENSION`: ``-o out.json`` writes JSON); else a table.

    Raises
    ------
    typer.BadParameter
        `--json` with a `--format` other than json (two formats asked for); an `output` ending in ``.html``
        or ``.htm`` without `--format` (the HTML page is `context report`'s).

    Examples
    --------
    >>> [chosen_format(None, False, Path(n)).value for n in ("a.json", "a.CSV", "a.md", "a.txt")]
    ['json', 'csv', 'markdown', 'table']
    >>> chosen_format(Format.TABLE, False, Path("a.json")).value
    'table'
    """
    if json and fmt not in (None, Format.JSON):
        raise typer.BadParameter(f"--json and --format {fmt.value} ask for two formats; give one", param_hint="--json")
    if json or fmt is not None or output is None:
        return Format.JSON if json else fmt or Format.TABLE
    suffix = output.suffix.lower()
    if suffix in (".html", ".htm"):
        raise typer.BadParameter(f"{output}: an HTML page is context report's (context report PATH -o {output}); "
                                 "this command writes table, markdown, csv or json", param_hint="--output")  # fmt: skip
    return FORMAT_OF_EXTENSION.get(suffix, Format.TABLE)


def timezone_of(timezone: str | None) -> tzinfo | None:
    """Return the zone `--timezone` names (`filters.parse_timezone`; None: the local zone).

    Raises
    ------
    typer.BadParameter
        An unknown zone.
    """
    try:
        return parse_timezone(timezone)
    except ValueError as exc:
        raise typer.BadParameter(str(exc), param_hint="--timezone") from None


def thresholds_of(kind: ViewKind, expressions: list[str] | None) -> tuple[Threshold, ...]:
    """Parse the `--fail-on` expressions against the metrics of a record kind (`thresholds.parse_threshold`).

    Raises
    ------
    typer.BadParameter
        An expression that cannot be checked.
    """
    try:
        parsed = tuple(parse_threshold(e, metrics_of(kind)) for e in expressions or [])
    except ThresholdError as exc:
        raise typer.BadParameter(str(exc), param_hint="--fail-on") from None
    return parsed


def _is_group_by(value: str) -> TypeGuard[GroupBy]:
    return value in GROUP_BY


def view_options(
    kind: ReportKind,
    paths: list[str],
    *,
    fmt: Format | None,
    json: bool,
    fail_on: list[str] | None,
    since: str | None,
    until: str | None,
    timezone: str | None,
    project: list[str] | None,
    session: list[str] | None,
    sort: str | None,
    desc: bool,
    totals: bool,
    group_by: str | None = None,
    with_calls: bool = False,
    output: Path | None = None,
) -> ViewOptions:
    """Parse the options `context trace` and `context usage` share into one `views.ViewOptions`.

    Raises
    ------
    typer.BadParameter
        A bad value (a usage error, exit 2): two formats (or an ``.html`` `output`), an unknown `--group-by`,
        `--timezone` or `--sort` key, a `--since`/`--until` that is no moment, a `--fail-on` that cannot be checked.
    """
    chosen = chosen_format(fmt, json, output)
    if group_by is not None and not _is_group_by(group_by):
        raise typer.BadParameter(f"{group_by!r}: one of {', '.join(GROUP_BY)}", param_hint="--group-by")
    tz = timezone_of(timezone)
    try:
        since_ms = parse_when(since, tz) if since else None
        until_ms = parse_when(until, tz, end=True) if until else None
    except ValueError as exc:
        raise typer.BadParameter(str(exc), param_hint="--since/--until") from None
    shown: ViewKind = "usage-group" if group_by else kind
    if sort and sort.strip().lower().replace("-", "_") not in sort_keys(shown):
        raise typer.BadParameter(f"{sort!r}: valid keys: {', '.join(sort_keys(shown))}", param_hint="--sort")
    return ViewOptions(
        fmt=chosen,
        thresholds=thresholds_of(shown, fail_on),
        selection=Selection(since_ms, until_ms, tuple(project or ()), tuple(session or ())),
        sort=sort,
        descending=desc,
        totals=totals,
        tz=tz,
        group_by=group_by,
        scan=is_scan(paths),
        with_calls=with_calls,
    )


def label_needs_db(label: str | None, db: Path | None) -> None:
    """Check that `--label` comes with `--db` (it names a run of the history file).

    Raises
    ------
    typer.BadParameter
        `--label` without `--db`.
    """
    if label is not None and db is None:
        raise typer.BadParameter("--label names a run of the history file: give --db FILE too", param_hint="--label")
