"""`context history`: the runs recorded with `--db`, each metric against the label's previous run."""

from __future__ import annotations

import typer

from contexttrace.cli.options import (
    HistoryCommandOpt,
    HistoryDbOpt,
    HistoryFormatOpt,
    HistoryJsonOpt,
    HistoryLabelOpt,
    HistoryMetricOpt,
    HistoryOutputOpt,
    HistoryTimezoneOpt,
    chosen_format,
    timezone_of,
)
from contexttrace.errors import ExitCode
from contexttrace.select.views import Format


def history_command(
    db: HistoryDbOpt,
    label: HistoryLabelOpt = None,
    metric: HistoryMetricOpt = None,
    command: HistoryCommandOpt = "trace",
    fmt: HistoryFormatOpt = None,
    json: HistoryJsonOpt = False,
    output: HistoryOutputOpt = None,
    timezone: HistoryTimezoneOpt = None,
) -> None:
    """Each recorded run (context trace/usage --db FILE --label L) per label, in the order recorded: time, git
    commit, traces, and each metric with its change against the label's previous run."""
    from contexttrace.render.history import render_history

    if command not in ("trace", "usage"):
        raise typer.BadParameter(f"{command!r}: trace or usage", param_hint="--command")
    chosen = chosen_format(fmt, json, output)
    tz = timezone_of(timezone)
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
    text = render_history(rows, shown, chosen.value, tz)
    if output is not None:
        output.write_text(text + "\n" if text else "", encoding="utf-8")
    elif text or chosen == Format.JSON:
        typer.echo(text)
    if not rows:
        labels = f" with label {', '.join(label)}" if label else ""
        typer.echo(f"no {command} runs recorded in {db}{labels}", err=True)
