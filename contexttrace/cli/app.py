"""The command-line interface: parse options, call the library, echo what the renderers return.

Only this module imports typer. It holds no logic of its own: every figure comes from `runner.analyze`,
every character of a table or JSON from `render`. What it decides is where output goes (tables and JSON
on stdout; diagnostics and notes on stderr) and whether it is coloured (`color_enabled`).
"""

from __future__ import annotations

import os
import re
import shutil
import sys
from decimal import Decimal
from functools import partial
from pathlib import Path
from typing import Annotated, Any, TextIO

import typer

from contexttrace import __version__
from contexttrace.analysis import window as context_window
from contexttrace.discover.local import default_roots
from contexttrace.errors import ExitCode
from contexttrace.render.checks import render_check
from contexttrace.render.compare import CompareFormat, render_compare, render_compare_notes
from contexttrace.render.diagnostics import render_diagnostics
from contexttrace.render.explain import render_explain
from contexttrace.render.history import render_history
from contexttrace.render.views import columns_to_drop, render_view, render_view_notes
from contexttrace.reports.compare import (
    ConditionError,
    build_run,
    compare,
    parse_conditions,
    parse_metrics,
    pick_baseline,
)
from contexttrace.reports.schemas import SCHEMA_NAMES, schema_text
from contexttrace.reports.trace import RunResult
from contexttrace.reports.usage import build_usage
from contexttrace.run.engine import EngineError, EngineName, open_engine
from contexttrace.run.runner import analyze
from contexttrace.select.filters import GROUP_BY, Selection, is_scan, parse_timezone, parse_when, sort_keys
from contexttrace.select.thresholds import METRICS, Threshold, ThresholdError, parse_threshold
from contexttrace.select.views import (
    Format,
    View,
    ViewOptions,
    build_report_with_cost,
    exit_code,
    make_view,
    needs_cost,
    selected_run,
)

#: `-h` works as `--help` on every command (click passes the setting down to subcommands).
CONTEXT_SETTINGS: dict[str, Any] = {"help_option_names": ["-h", "--help"]}

app = typer.Typer(
    help="Show what an AI coding agent held in its context window, from recorded Claude Code traces.",
    no_args_is_help=True,
    add_completion=False,
    rich_markup_mode=None,  # plain help: flags show no "<bool>" placeholder
    context_settings=CONTEXT_SETTINGS,
)
context_app = typer.Typer(
    help="Context-window figures of recorded traces.",
    no_args_is_help=True,
    rich_markup_mode=None,
    context_settings=CONTEXT_SETTINGS,
)
app.add_typer(context_app, name="context")
cache_app = typer.Typer(
    help="The result store: what was read from each trace file, kept so that a re-run reads only what changed.",
    no_args_is_help=True,
    rich_markup_mode=None,
    context_settings=CONTEXT_SETTINGS,
)
app.add_typer(cache_app, name="cache")

#: The largest `--window` accepted (`window.MAX_WINDOW_TOKENS`, which also bounds a window a trace states):
#: ten times the largest window a Claude model offers (1M tokens), so a typo (an extra zero or two) is an
#: error rather than a fill of 0%.
MAX_WINDOW_TOKENS = context_window.MAX_WINDOW_TOKENS
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


def color_enabled(flag: bool | None, stream: TextIO) -> bool:
    """Decide whether to write ANSI colour to `stream`.

    `--color`/`--no-color` (`flag`) decide when given, over everything else (as https://no-color.org asks
    of a command-line flag). Otherwise colour only when `stream` is a terminal, `NO_COLOR` is unset or
    empty, and `TERM` is not ``dumb`` (a terminal that shows escape codes as text).

    Examples
    --------
    >>> import io
    >>> color_enabled(True, io.StringIO()), color_enabled(None, io.StringIO())
    (True, False)
    """
    if flag is not None:
        return flag
    if os.environ.get("NO_COLOR") or os.environ.get("TERM") == "dumb":
        return False
    return stream.isatty()


PathsArg = Annotated[
    list[str] | None,
    # Hidden from the "Arguments" list, where Typer prints "<list[str]>" after the name; each command's
    # epilog describes PATH instead. The usage line still shows "[PATH]...".
    typer.Argument(metavar="PATH", hidden=True, show_default=False),
]
_PATHS_HELP = (
    "PATH: stream-json captures, session transcripts, directories of them, quoted globs, fsspec URLs "
    "(s3://bucket/traces/, gs://..., file://...; docs/dask.md), or - for standard input. "
    "None: the sessions under $CLAUDE_CONFIG_DIR/projects when it is set, else under "
    "~/.config/claude/projects and ~/.claude/projects."
)
CallsOpt = Annotated[
    bool,
    typer.Option("--calls", help="Also print each call's prompt tokens, numbered from 1, with compactions marked."),
]
JsonOpt = Annotated[bool, typer.Option("--json", help="Print a JSON list, one object per trace.")]
ExplainOpt = Annotated[
    bool,
    typer.Option(
        "--explain", help="Under the table, per trace: the health breakdown, the health bar and the weather factors."
    ),
]
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

# --engine and --scheduler: every command that reads traces (issue 17, docs/dask.md)
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


def _window_option(help_text: str) -> Any:
    return typer.Option("--window", metavar="TOKENS", parser=window_tokens, help=help_text, show_default=False)


TraceWindowOpt = Annotated[
    int | None,
    _window_option(
        "Context window in tokens: 200000, 200k, 1M, 1.5M. Adds the fill column (peak / window); health "
        "and weather are measured against it. Default for those: what the trace states (the result "
        "line's modelUsage, a model id ending in [1m]), else 200k (1M when the peak is above it)."
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


# -- Options every command that prints traces shares (issue 15) ------------------------------------------
# `context trace`, `context usage` and the commands to come declare these same types, so each flag means
# the same everywhere; `_view_options` parses them into one `views.ViewOptions`, `_show` prints a view.

FormatOpt = Annotated[
    Format | None,
    typer.Option(
        "--format",
        help="table (default), markdown (a GitHub table and its notes as a list: a CI job summary), csv (raw "
        "numbers, one row per trace) or json (as --json).",
        show_default=False,
    ),
]
OutputOpt = Annotated[
    Path | None,
    typer.Option(
        "--output", "-o", metavar="FILE", dir_okay=False, show_default=False,
        help="Write the output to FILE instead of standard output (notes and breaches stay on stderr).",
    ),
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


def terminal_width() -> int | None:
    """Columns of the terminal standard output writes to; None when it is not a terminal (a file, a pipe:
    then every column is printed, whatever the width)."""
    if not sys.stdout.isatty():
        return None
    return shutil.get_terminal_size().columns


def _thresholds(kind: str, expressions: list[str] | None, no_window: bool) -> tuple[Threshold, ...]:
    try:
        parsed = tuple(parse_threshold(e, METRICS[kind]) for e in expressions or [])
    except ThresholdError as exc:
        raise typer.BadParameter(str(exc), param_hint="--fail-on") from None
    if no_window and any(t.metric.name == "fill" for t in parsed):
        raise typer.BadParameter("fill is peak / --window: give --window with a fill threshold", param_hint="--fail-on")
    return parsed


def _view_options(
    kind: str,
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
    window: int | None = None,
) -> ViewOptions:
    """Parse the shared options into `views.ViewOptions`; a bad value is a usage error (exit 2)."""
    if json and fmt not in (None, Format.JSON):
        raise typer.BadParameter(f"--json and --format {fmt.value} ask for two formats; give one", param_hint="--json")
    if group_by is not None and group_by not in GROUP_BY:
        raise typer.BadParameter(f"{group_by!r}: one of {', '.join(GROUP_BY)}", param_hint="--group-by")
    try:
        tz = parse_timezone(timezone)
    except ValueError as exc:
        raise typer.BadParameter(str(exc), param_hint="--timezone") from None
    try:
        since_ms = parse_when(since, tz) if since else None
        until_ms = parse_when(until, tz, end=True) if until else None
    except ValueError as exc:
        raise typer.BadParameter(str(exc), param_hint="--since/--until") from None
    shown = "usage-group" if group_by else kind
    if sort and sort.strip().lower().replace("-", "_") not in sort_keys(shown):
        raise typer.BadParameter(f"{sort!r}: valid keys: {', '.join(sort_keys(shown))}", param_hint="--sort")
    return ViewOptions(
        fmt=Format.JSON if json else fmt or Format.TABLE,
        thresholds=_thresholds(shown, fail_on, no_window=window is None),
        selection=Selection(since_ms, until_ms, tuple(project or ()), tuple(session or ())),
        sort=sort,
        descending=desc,
        totals=totals,
        tz=tz,
        group_by=group_by,
        scan=is_scan(paths),
        with_calls=with_calls,
    )


def _show(
    run: RunResult,
    kind: str,
    options: ViewOptions,
    *,
    output: Path | None,
    db: Path | None,
    label: str | None,
    wide: bool,
    with_window: bool = False,
    with_calls: bool = False,
    breakdown: bool = False,
    explain: bool = False,
    color: bool | None = None,
) -> View:
    """Print a run as `options` ask (`views.make_view`, `render.render_view`): the output on stdout or in
    `output`, notes, dropped columns and breaches on stderr; record it in the history file `db`."""
    view = make_view(run, kind, options)
    fmt = options.fmt
    drop = [] if wide or output else columns_to_drop(view, terminal_width(), with_window)
    text = render_view(view, with_window=with_window, with_calls=with_calls, breakdown=breakdown,
                       explain=explain and fmt == Format.MARKDOWN, drop=drop)  # fmt: skip
    if explain and fmt == Format.TABLE and view.records:
        paint = output is None and color_enabled(color, sys.stdout)
        text += "\n\n" + render_explain(selected_run(run, view), color=paint)
    else:
        paint = False
    if output is not None:
        try:
            output.write_text(text + "\n" if text else "", encoding="utf-8")
        except OSError as exc:
            raise typer.BadParameter(f"cannot write {output}: {exc.strerror or exc}", param_hint="--output") from None
    elif text or fmt == Format.JSON:
        # color= tells click too: it strips ANSI codes from a stream that is not a terminal unless told
        typer.echo(text, color=paint or None)
    if explain and fmt in (Format.JSON, Format.CSV):
        where = "the JSON holds health and weather" if fmt == Format.JSON else "the CSV holds grades and levels"
        typer.echo(f"note: --explain prints under the table; {where}", err=True)
    if with_calls and fmt == Format.CSV:
        typer.echo("note: --calls: the per-call series is in the table, markdown and JSON, not in CSV", err=True)
    # Notes are not table rows: on stderr, so the table pastes as markdown and pipes as data (markdown
    # holds them as a list under its table).
    notes = render_view_notes(view) if fmt != Format.MARKDOWN else []
    if drop:
        width = terminal_width()
        notes.append(f"note: {len(drop)} column(s) left out to fit a {width}-column terminal: {', '.join(drop)} "
                     "(--wide shows them)")  # fmt: skip
    for line in [*notes, *render_check(view.check)]:
        typer.echo(line, err=True)
    if db is not None:
        from contexttrace.storage.history import HistoryError, git_commit, record_run

        try:
            record_run(db, kind, view.traces, label=label, commit=git_commit(), cwd=os.getcwd(),
                       breaches=len(view.check.breaches))  # fmt: skip
        except HistoryError as exc:
            typer.echo(f"Error: {exc}", err=True)
            raise typer.Exit(ExitCode.TRACE_ERROR) from None
    return view


def _version(value: bool) -> None:
    if value:
        typer.echo(f"contexttrace {__version__}")
        raise typer.Exit()


@app.callback()
def _main(
    version: Annotated[
        bool, typer.Option("--version", callback=_version, is_eager=True, help="Print the version and exit.")
    ] = False,
) -> None:
    """contexttrace: context-window figures from Claude Code traces."""


class _StderrProgress:
    """A progress bar on stderr for long runs; silent when stderr is not a terminal."""

    def __init__(self, color: bool | None = None) -> None:
        self._color = color  # --color/--no-color, or None: `color_enabled` decides for stderr, as for stdout
        self._bar: Any = None  # a rich Progress, made on first use (rich is imported only then)
        self._task: Any = None

    def __call__(self, done: int, total: int) -> None:
        if total < 8 or not sys.stderr.isatty():
            return
        if self._bar is None:
            from rich.console import Console
            from rich.progress import Progress

            # the CLI's one colour rule (`color_enabled`: the flag, else NO_COLOR, TERM=dumb, a terminal);
            # rich's own `no_color=False` would override NO_COLOR
            console = Console(stderr=True, no_color=not color_enabled(self._color, sys.stderr))
            self._bar = Progress(console=console, transient=True)
            self._bar.start()
            self._task = self._bar.add_task("reading traces", total=total)
        self._bar.update(self._task, completed=done)

    def close(self) -> None:
        if self._bar is not None:
            self._bar.stop()


def _analyze(
    paths: list[str],
    window: int | None,
    color: bool | None,
    cache: bool = True,
    engine: EngineName = EngineName.LOCAL,
    scheduler: str | None = None,
    **build: Any,
) -> RunResult:
    """Run `analyze` with a progress bar (through the result store unless `cache` is False: `--no-cache`), on
    the `--engine` asked for (an engine that cannot run is a usage error), and echo its diagnostics on stderr."""
    progress = _StderrProgress(color)
    try:
        with open_engine(engine, scheduler, paths=paths) as reader:
            run = analyze(paths, window=window, progress=progress, cache=cache, engine=reader, **build)
            notices = list(getattr(reader, "notices", ()))  # the scheduler lost mid-run (docs/dask.md)
    except EngineError as exc:
        typer.echo(f"Error: {exc}", err=True)
        raise typer.Exit(ExitCode.USAGE) from None
    finally:
        progress.close()
    for line in [*notices, *render_diagnostics(run)]:
        typer.echo(line, err=True)
    return run


def _print_reading(run: RunResult, text: str, json: bool, paths: list[str]) -> None:
    """Print a reading command's output (tools, sources, files): the JSON always (an empty list too), a
    table only when it has something; then exit as `_finish` says."""
    if text or json:
        typer.echo(text)
    _finish(run, paths)


def _finish(run: RunResult, paths: list[str], view: View | None = None) -> None:
    """Say where a run that found no trace looked, then exit 1 if any trace failed, else 3 if a `--fail-on`
    threshold was breached (`views.exit_code`), else 0."""
    if not run.reports:
        for line in _nothing_found(paths, run.ok):
            typer.echo(line, err=True)
    code = exit_code(run, view)
    if code != ExitCode.OK:
        raise typer.Exit(code)


def _nothing_found(paths: list[str], ok: bool) -> list[str]:
    """Lines for stderr when no trace was reported: where the run looked (when nothing failed: a failure
    says it already), and a hint when a `CLAUDE_CONFIG_DIR` entry names a projects folder itself."""
    configured = os.environ.get("CLAUDE_CONFIG_DIR", "").strip() if not paths else ""
    lines = []
    if ok and paths:
        lines.append(f"no traces found in {', '.join(paths)}")
    elif ok:
        roots = default_roots()
        if roots:
            where = ", ".join(str(r) for r in roots)
            lines.append(f"no traces found under {where}" + (" (from CLAUDE_CONFIG_DIR)" if configured else ""))
        else:  # default_roots() keeps only these two that exist
            lines.append("no traces found: neither ~/.config/claude/projects nor ~/.claude/projects exists")
    for entry in (e.strip() for e in configured.split(",")):
        if entry and Path(entry).expanduser().name == "projects":
            lines.append(
                f"hint: CLAUDE_CONFIG_DIR={entry} ends in 'projects'; point it at Claude Code's config folder "
                "(such as ~/.claude), the one that holds projects/, not at projects/ itself"
            )
    return lines


@context_app.command("trace", epilog=_PATHS_HELP)
def trace_command(
    paths: PathsArg = None,
    window: TraceWindowOpt = None,
    calls: CallsOpt = False,
    json: JsonOpt = False,
    explain: ExplainOpt = False,
    color: ColorOpt = None,
    no_cache: NoCacheOpt = False,
    fmt: FormatOpt = None,
    output: OutputOpt = None,
    fail_on: FailOnOpt = None,
    since: SinceOpt = None,
    until: UntilOpt = None,
    timezone: TimezoneOpt = None,
    project: ProjectOpt = None,
    session: SessionOpt = None,
    sort: SortOpt = None,
    desc: DescOpt = False,
    totals: TotalsOpt = True,
    wide: WideOpt = False,
    db: DbOpt = None,
    label: LabelOpt = None,
    engine: EngineOpt = EngineName.LOCAL,
    scheduler: SchedulerOpt = None,
) -> None:
    """Per trace: model calls, first/peak prompt, fill, growth, compactions, tools, failed (and denied),
    repeats, result chars, health grade and weather. The largest tool results are noted on stderr."""
    options = _view_options("trace", paths or [], fmt=fmt, json=json, fail_on=fail_on, since=since, until=until,
                            timezone=timezone, project=project, session=session, sort=sort, desc=desc,
                            totals=totals, with_calls=calls, window=window)  # fmt: skip
    _label_needs_db(label, db)
    build = build_report_with_cost if needs_cost(options) else None  # priced only when a threshold or sort asks
    run = _analyze(paths or [], window, color, not no_cache, engine, scheduler, **({"build": build} if build else {}))
    view = _show(run, "trace", options, output=output, db=db, label=label, wide=wide, with_window=window is not None,
                 with_calls=calls, explain=explain, color=color)  # fmt: skip
    _finish(run, paths or [], view)


GroupByOpt = Annotated[
    str | None,
    typer.Option("--group-by", metavar="day|week|month|project|model", show_default=False,
                 help="One row per day, ISO week, month (of each trace's start), project or model instead of per "
                 "trace; --fail-on then checks each row."),
]  # fmt: skip


@context_app.command("usage", epilog=_PATHS_HELP)
def usage_command(
    paths: PathsArg = None,
    window: UsageWindowOpt = None,
    breakdown: Annotated[
        bool,
        typer.Option("--breakdown", help="Also print per-model, per-thread and per-agent rows and the turn readings."),
    ] = False,
    json: JsonOpt = False,
    color: ColorOpt = None,
    no_cache: NoCacheOpt = False,
    group_by: GroupByOpt = None,
    fmt: FormatOpt = None,
    output: OutputOpt = None,
    fail_on: FailOnOpt = None,
    since: SinceOpt = None,
    until: UntilOpt = None,
    timezone: TimezoneOpt = None,
    project: ProjectOpt = None,
    session: SessionOpt = None,
    sort: SortOpt = None,
    desc: DescOpt = False,
    totals: TotalsOpt = True,
    wide: WideOpt = False,
    db: DbOpt = None,
    label: LabelOpt = None,
    engine: EngineOpt = EngineName.LOCAL,
    scheduler: SchedulerOpt = None,
) -> None:
    """Per trace (all its threads), and a "↳ subagents" row under it: calls, turns, fresh input, cache write,
    cache read, output, hit (cache hit ratio) and cost USD."""
    options = _view_options("usage", paths or [], fmt=fmt, json=json, fail_on=fail_on, since=since, until=until,
                            timezone=timezone, project=project, session=session, sort=sort, desc=desc,
                            totals=totals, group_by=group_by)  # fmt: skip
    _label_needs_db(label, db)
    run = _analyze(paths or [], window, color, not no_cache, engine, scheduler, build=build_usage)
    view = _show(run, "usage", options, output=output, db=db, label=label, wide=wide, breakdown=breakdown)
    _finish(run, paths or [], view)


ToolsSortOpt = Annotated[
    str,
    typer.Option("--sort", metavar="calls|errors|tokens|p95",
                 help="Order the rows by calls, errors, tokens (→ context) or p95 duration, largest first."),
]  # fmt: skip
ByToolOpt = Annotated[
    bool, typer.Option("--by-tool", help="Under each mcp:<server> row, a row per MCP tool of that server.")
]
#: `--window` of the commands whose readings do not use it (tools, sources, files).
ReadingsWindowOpt = Annotated[
    int | None,
    _window_option("Context window in tokens (200000, 200k, 1M); read for the diagnostics only: these "
                   "readings do not depend on it."),
]  # fmt: skip


@context_app.command("tools", epilog=_PATHS_HELP)
def tools_command(
    paths: PathsArg = None,
    json: JsonOpt = False,
    sort: ToolsSortOpt = "calls",
    by_tool: ByToolOpt = False,
    window: ReadingsWindowOpt = None,
    color: ColorOpt = None,
    no_cache: NoCacheOpt = False,
    engine: EngineOpt = EngineName.LOCAL,
    scheduler: SchedulerOpt = None,
) -> None:
    """Per tool (MCP tools as mcp:<server>), main thread and subagents apart: calls, errors, denials, error
    classes, p50/p95 duration, tokens and input into the context and the re-read tax; then the largest
    single results (docs/tools.md)."""
    from contexttrace.render.tools import render_tools_json, render_tools_table
    from contexttrace.reports.tools import SORT_KEYS, build_tools

    if sort not in SORT_KEYS:
        raise typer.BadParameter(f"{sort!r}: one of {', '.join(SORT_KEYS)}", param_hint="--sort")
    run = _analyze(paths or [], window, color, not no_cache, engine, scheduler, build=build_tools)
    text = (render_tools_json if json else render_tools_table)(run, sort=sort, by_tool=by_tool)
    _print_reading(run, text, json, paths or [])


SourcesAtOpt = Annotated[
    str,
    typer.Option("--at", metavar="last|peak|N",
                 help="The call whose window is split: the last call, the peak one, or call N (1-based, as --calls)."),
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


@context_app.command("sources", epilog=_PATHS_HELP)
def sources_command(
    paths: PathsArg = None,
    json: JsonOpt = False,
    at: SourcesAtOpt = "last",
    steps: StepsOpt = False,
    thread: ThreadOpt = "main",
    window: ReadingsWindowOpt = None,
    color: ColorOpt = None,
    no_cache: NoCacheOpt = False,
    engine: EngineOpt = EngineName.LOCAL,
    scheduler: SchedulerOpt = None,
) -> None:
    """What filled the window at one call: prefix, files, bash output, mcp results, agent returns, web, other
    results, prompts, harness, thinking, tool inputs, prose, summary, other, with the context reference and
    the estimator's line (docs/sources.md)."""
    from contexttrace.render.sources import render_sources_json, render_sources_table
    from contexttrace.reports.sources import build_sources, is_at_choice, unknown_thread

    if not is_at_choice(at):
        raise typer.BadParameter(f"{at!r}: last, peak or a call number from 1", param_hint="--at")
    build = partial(build_sources, at=at, thread=thread)
    run = _analyze(paths or [], window, color, not no_cache, engine, scheduler, build=build)
    unknown = unknown_thread(run.reports, thread)
    if unknown:
        raise typer.BadParameter(unknown, param_hint="--thread")
    text = render_sources_json(run) if json else render_sources_table(run, steps=steps)
    _print_reading(run, text, json, paths or [])


def _label_needs_db(label: str | None, db: Path | None) -> None:
    if label is not None and db is None:
        raise typer.BadParameter("--label names a run of the history file: give --db FILE too", param_hint="--label")


FilesAtOpt = Annotated[
    str,
    typer.Option("--at", metavar="last|TIME|N",
                 help="The moment to read the files at: last (the trace's last line), an ISO 8601 time (UTC when "
                      "no zone is given) or N, the main thread's call N (what its prompt held)."),
]  # fmt: skip


@context_app.command("files", epilog=_PATHS_HELP)
def files_command(
    paths: PathsArg = None,
    json: JsonOpt = False,
    at: FilesAtOpt = "last",
    window: ReadingsWindowOpt = None,
    color: ColorOpt = None,
    no_cache: NoCacheOpt = False,
    engine: EngineOpt = EngineName.LOCAL,
    scheduler: SchedulerOpt = None,
) -> None:
    """Per file the main thread touched: touches, reads, writes, re-reads, tokens read and written, references,
    last seen, spec 003's relevance and level (DROPPED when its content left the window), whether it is in
    the window; then the drop events (docs/files.md)."""
    from contexttrace.render.files import render_files_json, render_files_table
    from contexttrace.reports.files import At, build_files, parse_at

    try:
        moment: At = parse_at(at)
    except ValueError as exc:
        raise typer.BadParameter(str(exc), param_hint="--at") from None
    run = _analyze(paths or [], window, color, not no_cache, engine, scheduler, build=partial(build_files, at=moment))
    text = (render_files_json if json else render_files_table)(run)
    _print_reading(run, text, json, paths or [])


HistoryMetricOpt = Annotated[
    list[str] | None,
    typer.Option("--metric", "-m", metavar="NAMES", show_default=False,
                 help="Metrics to show, comma-separated or repeated (peak, fill, calls, compact, repeat, health, "
                 "weather, cost; for --command usage: cost, calls, output, hit, ...). Default: those recorded."),
]  # fmt: skip


@context_app.command("history")
def history_command(
    db: Annotated[Path, typer.Option("--db", metavar="FILE", dir_okay=False, help="The SQLite history file.")],
    label: Annotated[
        list[str] | None,
        typer.Option("--label", metavar="LABEL", show_default=False, help="Only runs of this label. Repeatable."),
    ] = None,
    metric: HistoryMetricOpt = None,
    command: Annotated[
        str, typer.Option("--command", metavar="trace|usage", help="Runs recorded by context trace or context usage.")
    ] = "trace",
    fmt: FormatOpt = None,
    json: JsonOpt = False,
    output: OutputOpt = None,
    timezone: TimezoneOpt = None,
) -> None:
    """Each recorded run (context trace/usage --db FILE --label L) per label, in the order recorded: time, git
    commit, traces, and each metric with its change against the label's previous run."""
    if command not in ("trace", "usage"):
        raise typer.BadParameter(f"{command!r}: trace or usage", param_hint="--command")
    if json and fmt not in (None, Format.JSON):
        raise typer.BadParameter(f"--json and --format {fmt.value} ask for two formats; give one", param_hint="--json")
    try:
        tz = parse_timezone(timezone)
    except ValueError as exc:
        raise typer.BadParameter(str(exc), param_hint="--timezone") from None
    from contexttrace.storage.history import HistoryError, history_rows, load_runs

    names = [n for m in metric or [] for n in m.split(",") if n.strip()]
    try:
        runs = load_runs(db, command, label or [])
        rows, shown = history_rows(runs, names)
    except ValueError as exc:
        raise typer.BadParameter(str(exc), param_hint="--metric") from None
    except HistoryError as exc:
        typer.echo(f"Error: {exc}", err=True)
        raise typer.Exit(ExitCode.TRACE_ERROR) from None
    text = render_history(rows, shown, (Format.JSON if json else fmt or Format.TABLE).value, tz)
    if output is not None:
        output.write_text(text + "\n" if text else "", encoding="utf-8")
    elif text or json or fmt == Format.JSON:
        typer.echo(text)
    if not rows:
        labels = f" with label {', '.join(label)}" if label else ""
        typer.echo(f"no {command} runs recorded in {db}{labels}", err=True)


@app.command("schema")
def schema_command(
    name: Annotated[str, typer.Argument(metavar="NAME", help=f"One of: {', '.join(SCHEMA_NAMES)}.")],
) -> None:
    """Print the JSON Schema (draft 2020-12) of one object of a JSON output: trace (context trace --json), usage,
    usage-group (context usage --group-by --json), history (context history --json), compare (context compare
    --json). Each object carries its schema_version."""
    if name not in SCHEMA_NAMES:
        raise typer.BadParameter(f"{name!r}: one of {', '.join(SCHEMA_NAMES)}", param_hint="NAME")
    typer.echo(schema_text(name).rstrip("\n"))


_COMPARE_HELP = (
    "DIR: one directory per condition, named by its folder (runs/free/ is the condition free). "
    "With --condition NAME=PATH, PATH is a file (a multi-run stream-json file counts each run), a "
    "directory or a quoted glob ('runs/loaded/*.jsonl'); repeat a NAME to add paths to it. docs/compare.md "
    "says how to run each condition cleanly and how to read the output."
)
DirsArg = Annotated[list[str] | None, typer.Argument(metavar="DIR", hidden=True, show_default=False)]
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
CompareJsonOpt = Annotated[bool, typer.Option("--json", help="Print one JSON object (as --format json).")]
CompareFormatOpt = Annotated[
    CompareFormat,
    typer.Option("--format", help="table (a pipe table, the readings under it), markdown (the same, titles as "
                 "headings), csv (the rows; readings on stderr) or json. Default: table.", show_default=False),
]  # fmt: skip
CompareWindowOpt = Annotated[
    int | None,
    _window_option("Context window in tokens (200000, 200k, 1M) the health score is measured against. Default: "
                   "what each trace states, else 200k (1M when the peak is above it)."),
]  # fmt: skip


@context_app.command("compare", epilog=_COMPARE_HELP)
def compare_command(
    directories: DirsArg = None,
    condition: ConditionOpt = None,
    baseline: BaselineOpt = None,
    metric: MetricOpt = None,
    window: CompareWindowOpt = None,
    json: CompareJsonOpt = False,
    fmt: CompareFormatOpt = CompareFormat.TABLE,
    color: ColorOpt = None,
    no_cache: NoCacheOpt = False,
    engine: EngineOpt = EngineName.LOCAL,
    scheduler: SchedulerOpt = None,
) -> None:
    """Per condition and metric: the median and range over its runs, the difference to the baseline
    (absolute and %), whether it is within the runs' own noise, and with 5 runs a side a Mann-Whitney p and
    a bootstrap CI; then spec 004's readings and what the conditions' start-up surfaces differ in."""
    if json and fmt not in (CompareFormat.TABLE, CompareFormat.JSON):
        raise typer.BadParameter(f"--json and --format {fmt.value} ask for two formats; give one")
    fmt = CompareFormat.JSON if json else fmt
    try:
        conditions = parse_conditions(condition or [], directories or [])
        pick_baseline(conditions, baseline)
        metrics = parse_metrics(metric)
    except ConditionError as exc:
        raise typer.BadParameter(str(exc)) from None
    results = [
        _analyze(list(c.paths), window, color, not no_cache, engine, scheduler, build=build_run) for c in conditions
    ]
    comparison = compare(conditions, results, baseline=baseline, metrics=metrics)
    typer.echo(render_compare(comparison, fmt))
    for line in render_compare_notes(comparison, fmt):
        typer.echo(line, err=True)
    if not comparison.ok:
        raise typer.Exit(ExitCode.TRACE_ERROR)


@cache_app.command("info")
def cache_info_command() -> None:
    """Print the result store's path, its entries (one per trace file with its subagents), its size on disk
    and the reader version its entries must have. Set CONTEXTTRACE_CACHE_DIR to keep it elsewhere."""
    from contexttrace.storage.store import ResultStore

    info = ResultStore.for_path().info()
    typer.echo(f"path: {info.path}")
    if info.state:
        typer.echo(f"state: {info.state}")
    typer.echo(f"entries: {info.entries:,}")
    if info.other_versions:
        typer.echo(f"entries of another reader version: {info.other_versions:,} (deleted by the next run)")
    typer.echo(f"size: {info.bytes / 2**20:,.1f} MiB ({info.bytes:,} bytes)")
    typer.echo(f"reader version: {info.reader_version}")


@cache_app.command("clear")
def cache_clear_command() -> None:
    """Delete the result store: the next run reads every trace file again (and keeps what it reads)."""
    from contexttrace.storage.store import ResultStore

    store = ResultStore.for_path()
    try:
        freed = store.clear()
    except OSError as exc:  # not deleted: say why, exit 1
        typer.echo(f"Error: {store.path}: cannot delete ({exc.strerror or exc})", err=True)
        raise typer.Exit(ExitCode.TRACE_ERROR) from None
    typer.echo(f"cleared {store.path} ({freed / 2**20:,.1f} MiB)")


ReportOutputOpt = Annotated[
    str,
    typer.Option(
        "--output", "-o", metavar="FILE", help="Where to write the page; - for standard output.", show_default=True
    ),
]


@context_app.command("report", epilog=_PATHS_HELP)
def report_command(
    paths: PathsArg = None,
    window: TraceWindowOpt = None,
    output: ReportOutputOpt = "contexttrace-report.html",
    open_page: Annotated[bool, typer.Option("--open", help="Open the page in a web browser once written.")] = False,
    condition: Annotated[
        list[str] | None,
        typer.Option(
            "--condition",
            "-c",
            metavar="NAME=PATH",
            show_default=False,
            help="Compare conditions as context compare does (repeatable); PATHs are then condition folders.",
        ),
    ] = None,
    baseline: Annotated[
        str | None,
        typer.Option("--baseline", metavar="NAME", show_default=False, help="With --condition: the baseline."),
    ] = None,
    color: ColorOpt = None,
    no_cache: NoCacheOpt = False,
    engine: EngineOpt = EngineName.LOCAL,
    scheduler: SchedulerOpt = None,
) -> None:
    """One self-contained HTML page (no network: styles, script, data and charts inline): an index of the
    traces, then per trace its header, context gauges, growth chart, health bar and breakdown, weather and
    largest tool results; with --condition, a comparison first. Needs the html extra: pip install
    'contexttrace[html]'."""  # fmt: skip
    from contexttrace.render.html.charts import (  # light: finds the extra without importing it
        INSTALL_HINT,
        missing_extras,
    )

    missing = missing_extras()
    if missing:
        typer.echo(f"Error: context report needs {', '.join(missing)}; install them with: {INSTALL_HINT}", err=True)
        raise typer.Exit(ExitCode.USAGE)
    from contexttrace.render.html.compare_view import compare_view
    from contexttrace.render.html.data import build_page
    from contexttrace.render.html.page import render_page
    from contexttrace.render.html.section import build_section

    comparison = None
    if condition:
        from contexttrace.reports.compare import ConditionError, parse_conditions, pick_baseline

        try:
            conditions = parse_conditions(condition, paths or [])
            pick_baseline(conditions, baseline)
        except ConditionError as exc:
            raise typer.BadParameter(str(exc)) from None
        results = [
            _analyze(list(c.paths), window, color, not no_cache, engine, scheduler, build=build_section)
            for c in conditions
        ]
        run = RunResult(
            reports=[s for r in results for s in r.reports], failures=[f for r in results for f in r.failures]
        )
        comparison = compare_view(conditions, results, baseline)
    else:
        run = _analyze(paths or [], window, color, not no_cache, engine, scheduler, build=build_section)
    if run.reports or run.failures:
        html = render_page(build_page(run, window=window, paths=paths or condition or [], compare=comparison))
        if output == "-":
            typer.echo(html, nl=False)
        else:
            try:
                Path(output).write_text(html, encoding="utf-8")
            except OSError as exc:
                typer.echo(f"Error: {output}: cannot write the report ({exc.strerror or exc})", err=True)
                raise typer.Exit(ExitCode.USAGE) from None
            size = len(html.encode("utf-8"))
            typer.echo(f"wrote {output}: {len(run.reports)} trace(s), {size / 1e6:.1f} MB", err=True)
            if open_page:
                import webbrowser

                webbrowser.open(Path(output).resolve().as_uri())
    _finish(run, paths or [])


def main() -> None:
    """Run the command-line interface (the `contexttrace` console script)."""
    app()
