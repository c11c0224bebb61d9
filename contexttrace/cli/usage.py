"""`context usage`: tokens and cost of each trace (all its threads), or of each day, week, project, model."""

from __future__ import annotations

from contexttrace.cli.options import (
    AllowEmptyOpt,
    BreakdownOpt,
    ColorOpt,
    DbOpt,
    DescOpt,
    EngineOpt,
    FailOnOpt,
    FormatOpt,
    GroupByOpt,
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
    UntilOpt,
    UsageWindowOpt,
    VerboseOpt,
    WideOpt,
    label_needs_db,
    view_options,
)
from contexttrace.run.engine import EngineName


def usage_command(
    paths: PathsArg = None,
    window: UsageWindowOpt = None,
    breakdown: BreakdownOpt = False,
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
    quiet: QuietOpt = False,
    verbose: VerboseOpt = False,
    allow_empty: AllowEmptyOpt = False,
) -> None:
    """Per trace (all its threads), and a "↳ subagents" row under it: calls, turns, fresh input, cache write,
    cache read, output, hit (cache hit ratio) and cost USD."""
    from contexttrace.cli.analyze import analyze_paths
    from contexttrace.cli.output import command_notes, finish, show_view
    from contexttrace.reports.builds import USAGE_BUILD  # named: a run served from the store imports no builder

    options = view_options("usage", paths or [], fmt=fmt, json=json, fail_on=fail_on, since=since, until=until,
                           timezone=timezone, project=project, session=session, sort=sort, desc=desc,
                           totals=totals, group_by=group_by, output=output)  # fmt: skip
    label_needs_db(label, db)
    with command_notes(quiet, verbose) as notes:
        run = analyze_paths(paths or [], window, color, not no_cache, engine, scheduler, build=USAGE_BUILD, notes=notes)
        view = show_view(run, "usage", options, output=output, db=db, label=label, wide=wide, breakdown=breakdown,
                         notes=notes, format_given=fmt is not None or json)  # fmt: skip
        finish(run, paths or [], view, notes=notes, allow_empty=allow_empty)
