"""`context trace`: the context-window figures of each trace, one row per trace."""

from __future__ import annotations

from contexttrace.cli.options import (
    AllowEmptyOpt,
    CallsOpt,
    ColorOpt,
    DbOpt,
    DescOpt,
    EngineOpt,
    ExplainOpt,
    FailOnOpt,
    FormatOpt,
    JsonOpt,
    LabelOpt,
    NoCacheOpt,
    OutputOpt,
    PathsArg,
    ProjectOpt,
    QuietOpt,
    SchedulerOpt,
    SessionOpt,
    SinceOpt,
    SortOpt,
    TimezoneOpt,
    TotalsOpt,
    TraceWindowOpt,
    UntilOpt,
    VerboseOpt,
    WideOpt,
    label_needs_db,
    view_options,
)
from contexttrace.run.engine import EngineName


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
    quiet: QuietOpt = False,
    verbose: VerboseOpt = False,
    allow_empty: AllowEmptyOpt = False,
) -> None:
    """Per trace: model calls, first/peak prompt, fill (peak ÷ the window, given, stated or inferred), growth,
    compactions, tools, failed (and denied), repeated calls, result chars, health grade and weather. The
    largest tool results are noted on stderr. Rows per day, week, month, project or model instead of per
    trace: context usage --group-by."""
    from contexttrace.cli.analyze import analyze_paths
    from contexttrace.cli.output import command_notes, finish, show_view
    from contexttrace.select.views import build_report_with_cost, needs_cost

    options = view_options("trace", paths or [], fmt=fmt, json=json, fail_on=fail_on, since=since, until=until,
                           timezone=timezone, project=project, session=session, sort=sort, desc=desc,
                           totals=totals, with_calls=calls, output=output)  # fmt: skip
    label_needs_db(label, db)
    build = build_report_with_cost if needs_cost(options) else None  # priced only when a threshold or sort asks
    with command_notes(quiet, verbose) as notes:
        run = analyze_paths(paths or [], window, color, not no_cache, engine, scheduler, build=build, notes=notes)
        view = show_view(run, "trace", options, output=output, db=db, label=label, wide=wide,
                         with_calls=calls, explain=explain, color=color,
                         notes=notes, format_given=fmt is not None or json)  # fmt: skip
        finish(run, paths or [], view, notes=notes, allow_empty=allow_empty)
