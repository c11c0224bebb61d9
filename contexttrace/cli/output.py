"""Where a command's output goes, and whether it is coloured.

Tables and JSON go to standard output (or to `--output FILE`); notes, dropped columns, breaches and
diagnostics go to standard error, so ``... --json | jq`` never breaks. Colour follows one rule
(`color_enabled`). Every character printed comes from `render`; this module only decides where it goes
and which exit code ends the command (`finish`).
"""

from __future__ import annotations

import codecs
import os
import shutil
import sys
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any, BinaryIO, TextIO

import typer

from contexttrace.discover.local import default_roots
from contexttrace.errors import ExitCode
from contexttrace.render.checks import render_check
from contexttrace.render.diagnostics import group_notes, is_error_line
from contexttrace.render.explain import render_explain
from contexttrace.render.views import columns_to_drop, render_view, render_view_json, render_view_notes
from contexttrace.reports.results import RunResult
from contexttrace.select.views import Format, ReportKind, View, ViewOptions, exit_code, make_view, selected_run


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


def terminal_width() -> int | None:
    """Return the columns of the terminal standard output writes to.

    None when it is not a terminal (a file, a pipe): then every column is printed, whatever the width.
    """
    if not sys.stdout.isatty():
        return None
    return shutil.get_terminal_size().columns


class Notes:
    """The lines a command writes on standard error, as ``-q``/``-v`` and the terminal ask.

    Errors (`diagnostics.is_error_line`: a trace not read, a breach, nothing found) always print; ``-q``
    drops every other note. Off a terminal (a pipe, a file, CI logs) each line prints when it is made, as
    it comes. On a terminal, without ``-v``, the lines wait for the table: `flush` prints the notes grouped
    and counted (`diagnostics.group_notes`), then the errors, so the table stays in view and the errors
    are last. ``-v`` prints every note in full, as it comes.

    Parameters
    ----------
    quiet, verbose
        ``-q/--quiet`` and ``-v/--verbose``.
    terminal
        Whether standard error is a terminal; None: ask it.
    """

    def __init__(self, quiet: bool = False, verbose: bool = False, terminal: bool | None = None) -> None:
        self.quiet = quiet
        self.held = (sys.stderr.isatty() if terminal is None else terminal) and not verbose
        self._notes: list[str] = []
        self._errors: list[str] = []

    def add(self, lines: Iterable[str]) -> None:
        """Print `lines`, or keep them for `flush` on a terminal; under ``-q`` only the errors."""
        for line in lines:
            error = is_error_line(line)
            if self.quiet and not error:
                continue
            if not self.held:
                typer.echo(line, err=True)
            else:
                (self._errors if error else self._notes).append(line)

    def flush(self) -> None:
        """Print what `add` kept: the notes grouped (`group_notes`) to the terminal's width, then the errors."""
        notes, errors = self._notes, self._errors
        self._notes, self._errors = [], []
        grouped = group_notes(notes, shutil.get_terminal_size().columns) if notes else []
        for line in [*grouped, *errors]:
            typer.echo(line, err=True)


@contextmanager
def command_notes(quiet: bool, verbose: bool) -> Iterator[Notes]:
    """A command's `Notes`, flushed when the command ends, however it ends (an exit code, a usage error).

    Raises
    ------
    typer.BadParameter
        ``-q`` with ``-v`` (exit 2).
    """
    if quiet and verbose:
        raise typer.BadParameter("-q keeps only errors and -v shows every note: give one", param_hint="-q/-v")
    notes = Notes(quiet, verbose)
    try:
        yield notes
    finally:
        notes.flush()


def show_view(
    run: RunResult,
    kind: ReportKind,
    options: ViewOptions,
    *,
    output: Path | None,
    db: Path | None,
    label: str | None,
    wide: bool,
    with_calls: bool = False,
    breakdown: bool = False,
    explain: bool = False,
    color: bool | None = None,
    notes: Notes | None = None,
    format_given: bool = False,
) -> View[Any]:
    """Print a run of `context trace` or `context usage` as `options` ask.

    The view (`views.make_view`) is rendered (`render.render_view`) on stdout or into `output`; notes,
    dropped columns and breaches go to stderr (through `notes`, when given); with `db`, the view's traces
    are recorded in that history file under `label`. On a colour terminal (`color_enabled`) with no
    `--format` (`format_given`) and no `output`, the table is a Rich one (`terminal.rich_table`).

    Returns
    -------
    View
        What was printed, for the exit code (`finish`).

    Raises
    ------
    typer.BadParameter
        `output` cannot be written (exit 2).
    typer.Exit
        The history file cannot be written (exit 1).
    """
    view = make_view(run, kind, options)
    fmt = options.fmt
    width = terminal_width()
    styled = not format_given and output is None and width is not None and color_enabled(color, sys.stdout)
    drop = [] if wide or output else columns_to_drop(view, width, styled=styled)
    raw = binary_stdout() if fmt == Format.JSON and output is None else None
    if raw is not None:  # the bytes `typer.echo` would write, without decoding and encoding them again
        write_bytes(raw, render_view_json(view, newline=True))
    else:
        text = render_view(view, with_calls=with_calls, breakdown=breakdown,
                           explain=explain and fmt == Format.MARKDOWN, drop=drop,
                           styled=(10_000 if wide else width) if styled else None)  # fmt: skip
        paint = styled
        if explain and fmt == Format.TABLE and view.records:
            paint = paint or (output is None and color_enabled(color, sys.stdout))
            text += "\n\n" + render_explain(selected_run(run, view), color=paint)
        if output is not None:
            try:
                output.write_text(text + "\n" if text else "", encoding="utf-8")
            except OSError as exc:
                reason = f"cannot write {output}: {exc.strerror or exc}"
                raise typer.BadParameter(reason, param_hint="--output") from None
        elif text or fmt == Format.JSON:
            # color= tells click too: it strips ANSI codes from a stream that is not a terminal unless told
            typer.echo(text, color=paint or None)
    notes = notes or Notes(terminal=False)
    notes.add(_view_notes(view, drop, explain=explain, with_calls=with_calls, by_label=notes.held))
    if db is not None:
        _record(db, kind, view, label)
    return view


def binary_stdout() -> BinaryIO | None:
    """The byte stream under `sys.stdout` when text written there reaches it unchanged (UTF-8, no newline
    translation: not Windows), else None (write text through `typer.echo`).

    The JSON of a run over many traces is large (8 MB for 851 traces): written as the bytes orjson makes,
    it is not decoded, copied with its newline and encoded again (0.11 s of a 2.5 s run, measured).
    """
    stream = sys.stdout
    raw = getattr(stream, "buffer", None)
    encoding = getattr(stream, "encoding", None)
    if raw is None or not encoding or os.linesep != "\n":
        return None
    try:
        utf8 = codecs.lookup(encoding).name == "utf-8"
    except LookupError:
        return None
    return raw if utf8 else None


def write_bytes(raw: BinaryIO, data: bytes) -> None:
    """Write `data` to `raw`, the byte stream under `sys.stdout` (`binary_stdout`), after what was written
    as text before it; flushed, as `typer.echo` flushes. Raises OSError as the stream's write does."""
    sys.stdout.flush()
    raw.write(data)
    raw.flush()


def _view_notes(view: View[Any], drop: list[str], *, explain: bool, with_calls: bool, by_label: bool) -> list[str]:
    """The lines for stderr under a view: options its format ignores, its notes (traces named by their
    table label with `by_label`), dropped columns, breaches."""
    fmt = view.options.fmt
    lines = []
    if explain and fmt in (Format.JSON, Format.CSV):
        where = "the JSON holds health and weather" if fmt == Format.JSON else "the CSV holds grades and levels"
        lines.append(f"note: --explain prints under the table; {where}")
    if with_calls and fmt == Format.CSV:
        lines.append("note: --calls: the per-call series is in the table, markdown and JSON, not in CSV")
    # Notes are not table rows: on stderr, so the table pastes as markdown and pipes as data (markdown
    # holds them as a list under its table).
    notes = render_view_notes(view, by_label=by_label) if fmt != Format.MARKDOWN else []
    if drop:
        width = terminal_width()
        notes.append(f"note: {len(drop)} column(s) left out to fit a {width}-column terminal: {', '.join(drop)} "
                     "(--wide shows them)")  # fmt: skip
    return [*lines, *notes, *render_check(view.check)]


def _record(db: Path, kind: ReportKind, view: View[Any], label: str | None) -> None:
    """Append the view's traces to the history file `db` (`--db`); exit 1 when it cannot be written."""
    from contexttrace.storage.history import HistoryError, git_commit, record_run

    try:
        record_run(db, kind, view.traces, label=label, commit=git_commit(), cwd=os.getcwd(),
                   breaches=len(view.check.breaches))  # fmt: skip
    except HistoryError as exc:
        typer.echo(f"Error: {exc}", err=True)
        raise typer.Exit(ExitCode.TRACE_ERROR) from None


def print_reading(
    run: RunResult, text: str, json: bool, paths: list[str], notes: Notes | None = None, allow_empty: bool = False
) -> None:
    """Print a reading command's output (tools, sources, files), then end as `finish` says.

    The JSON is printed always (an empty list too), a table only when it has something.
    """
    if text or json:
        typer.echo(text)
    finish(run, paths, notes=notes, allow_empty=allow_empty)


def finish(
    run: RunResult,
    paths: list[str],
    view: View[Any] | None = None,
    notes: Notes | None = None,
    allow_empty: bool = False,
) -> None:
    """End a command: say where a run that found no trace looked, then exit with the run's code.

    Raises
    ------
    typer.Exit
        1 if any trace failed or no trace was found at all (unless `allow_empty`: ``--allow-empty``), else
        3 if a `--fail-on` threshold was breached (`views.exit_code`); nothing is raised for 0. A selection
        (``--since``, ``--project``...) that keeps none of the traces found is not "nothing found": exit 0.
    """
    if not run.reports:
        (notes or Notes(terminal=False)).add(nothing_found(paths, run.ok))
    code = exit_code(run, view)
    if code == ExitCode.OK and not run.reports and not allow_empty:
        code = ExitCode.TRACE_ERROR
    if code != ExitCode.OK:
        raise typer.Exit(code)


def nothing_found(paths: list[str], ok: bool) -> list[str]:
    """Return the lines for stderr when a run reported no trace.

    Where the run looked (only when nothing failed: a failure says it already), and a hint when a
    `CLAUDE_CONFIG_DIR` entry names a projects folder itself.
    """
    configured = os.environ.get("CLAUDE_CONFIG_DIR", "").strip() if not paths else ""
    lines = []
    if ok and paths:
        lines.append(f"no traces found in {', '.join(paths)}")
    elif ok:
        roots = default_roots()
        if roots:
            where = ", ".join(str(r) for r in roots)
            lines.append(f"no traces found under {where}" + (" (from CLAUDE_CONFIG_DIR)" if configured else ""))
        else:  # default_roots() keeps only the folders that exist
            lines.append(
                "no traces found: none of ~/.config/claude/projects, ~/.claude/projects, ~/.codex/sessions "
                "and ~/.gemini/tmp exists"
            )
    for entry in (e.strip() for e in configured.split(",")):
        if entry and Path(entry).expanduser().name == "projects":
            lines.append(
                f"hint: CLAUDE_CONFIG_DIR={entry} ends in 'projects'; point it at Claude Code's config folder "
                "(such as ~/.claude), the one that holds projects/, not at projects/ itself"
            )
    return lines
