"""The command-line interface: parse options, call the library, echo what the renderers return.

Only this module imports typer. It holds no logic of its own: every figure comes from `runner.analyze`,
every character of a table or JSON from `render`. What it decides is where output goes (tables and JSON
on stdout; diagnostics and notes on stderr) and whether it is coloured (`color_enabled`).
"""

from __future__ import annotations

import os
import re
import sys
from decimal import Decimal
from pathlib import Path
from typing import Annotated, Any, TextIO

import typer

from . import __version__
from .compare import ConditionError, build_run, compare, parse_conditions, parse_metrics, pick_baseline
from .errors import ExitCode
from .render import (
    render_diagnostics,
    render_explain,
    render_json,
    render_table,
    render_table_notes,
    render_usage_notes,
    render_usage_table,
)
from .render_compare import CompareFormat, render_compare, render_compare_notes
from .report import RunResult
from .runner import analyze
from .sources import default_roots
from .usage import build_usage

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

#: The largest `--window` accepted: ten times the largest window a Claude model offers (1M tokens), so a
#: typo (an extra zero or two) is an error rather than a fill of 0%.
MAX_WINDOW_TOKENS = 10_000_000
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
    "PATH: stream-json captures, session transcripts, directories of them, or - for standard input. "
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
        self._color = color  # --color/--no-color; None leaves it to rich (which honours NO_COLOR, TERM=dumb)
        self._bar: Any = None  # a rich Progress, made on first use (rich is imported only then)
        self._task: Any = None

    def __call__(self, done: int, total: int) -> None:
        if total < 8 or not sys.stderr.isatty():
            return
        if self._bar is None:
            from rich.console import Console
            from rich.progress import Progress

            console = Console(stderr=True, no_color=self._color is False)
            self._bar = Progress(console=console, transient=True)
            self._bar.start()
            self._task = self._bar.add_task("reading traces", total=total)
        self._bar.update(self._task, completed=done)

    def close(self) -> None:
        if self._bar is not None:
            self._bar.stop()


def _analyze(paths: list[str], window: int | None, color: bool | None, cache: bool = True, **build: Any) -> RunResult:
    """Run `analyze` with a progress bar (through the result store unless `cache` is False: `--no-cache`),
    and echo its diagnostics on stderr."""
    progress = _StderrProgress(color)
    try:
        run = analyze(paths, window=window, progress=progress, cache=cache, **build)
    finally:
        progress.close()
    for line in render_diagnostics(run):
        typer.echo(line, err=True)
    return run


def _finish(run: RunResult, paths: list[str]) -> None:
    """Say where a run that found no trace looked, then exit 1 if any trace failed (else 0)."""
    if not run.reports:
        for line in _nothing_found(paths, run.ok):
            typer.echo(line, err=True)
    if not run.ok:
        raise typer.Exit(ExitCode.TRACE_ERROR)


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
) -> None:
    """Per trace: model calls, first/peak prompt, fill, growth, compactions, tools, failed (and denied),
    repeats, result chars, health grade and weather. The largest tool results are noted on stderr."""
    run = _analyze(paths or [], window, color, cache=not no_cache)
    if json:
        if explain:
            typer.echo("note: --explain prints under the table; the JSON holds health and weather", err=True)
        typer.echo(render_json(run, with_calls=calls))
    elif run.reports:
        typer.echo(render_table(run, with_window=window is not None, with_calls=calls))
        # Notes are not table rows: on stderr, so the table pastes as markdown and pipes as data.
        for line in render_table_notes(run):
            typer.echo(line, err=True)
        if explain:
            paint = color_enabled(color, sys.stdout)
            # color= tells click too: it strips ANSI codes from a stream that is not a terminal unless told
            typer.echo("\n" + render_explain(run, color=paint), color=paint)
    _finish(run, paths or [])


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
) -> None:
    """Per trace (all its threads), and a "↳ subagents" row under it: calls, turns, fresh input, cache write,
    cache read, output, hit (cache hit ratio) and cost USD."""
    run = _analyze(paths or [], window, color, cache=not no_cache, build=build_usage)
    if json:
        typer.echo(render_json(run))
    elif run.reports:
        typer.echo(render_usage_table(run, breakdown=breakdown, notes=False))
        # Notes are not table rows: on stderr, as `context trace` prints its own.
        for line in render_usage_notes(run):
            typer.echo(line, err=True)
    _finish(run, paths or [])


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
    results = [_analyze(list(c.paths), window, color, cache=not no_cache, build=build_run) for c in conditions]
    comparison = compare(conditions, results, baseline=baseline, metrics=metrics)
    typer.echo(render_compare(comparison, fmt))
    for line in render_compare_notes(comparison, fmt):
        typer.echo(line, err=True)
    if not comparison.ok:
        raise typer.Exit(ExitCode.TRACE_ERROR)


ReportOutputOpt = Annotated[
    str,
    typer.Option(
        "--output", "-o", metavar="FILE", help="Where to write the page; - for standard output.", show_default=True
    ),
]


@cache_app.command("info")
def cache_info_command() -> None:
    """Print the result store's path, its entries (one per trace file with its subagents), its size on disk
    and the reader version its entries must have. Set CONTEXTTRACE_CACHE_DIR to keep it elsewhere."""
    from .store import ResultStore

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
    from .store import ResultStore

    store = ResultStore.for_path()
    try:
        freed = store.clear()
    except OSError as exc:  # not deleted: say why, exit 1
        typer.echo(f"Error: {store.path}: cannot delete ({exc.strerror or exc})", err=True)
        raise typer.Exit(ExitCode.TRACE_ERROR) from None
    typer.echo(f"cleared {store.path} ({freed / 2**20:,.1f} MiB)")


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
) -> None:
    """One self-contained HTML page (no network: styles, script, data and charts inline): an index of the
    traces, then per trace its header, context gauges, growth chart, health bar and breakdown, weather and
    largest tool results; with --condition, a comparison first. Needs the html extra: pip install
    'contexttrace[html]'."""  # fmt: skip
    from .html_charts import INSTALL_HINT, missing_extras  # light: finds the extra without importing it

    missing = missing_extras()
    if missing:
        typer.echo(f"Error: context report needs {', '.join(missing)}; install them with: {INSTALL_HINT}", err=True)
        raise typer.Exit(ExitCode.USAGE)
    from .html_page import render_page
    from .html_report import build_page, build_section, compare_view

    comparison = None
    if condition:
        from .compare import ConditionError, parse_conditions, pick_baseline

        try:
            conditions = parse_conditions(condition, paths or [])
            pick_baseline(conditions, baseline)
        except ConditionError as exc:
            raise typer.BadParameter(str(exc)) from None
        results = [_analyze(list(c.paths), window, color, cache=not no_cache, build=build_section) for c in conditions]
        run = RunResult(
            reports=[s for r in results for s in r.reports], failures=[f for r in results for f in r.failures]
        )
        comparison = compare_view(conditions, results, baseline)
    else:
        run = _analyze(paths or [], window, color, cache=not no_cache, build=build_section)
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
