"""The lines every command prints on stderr about its reading: unreadable traces, skipped lines, warnings.

Returns lines, never prints; each line is safe to write as UTF-8 (`text.safe_text`).
"""

from __future__ import annotations

from typing import Any

from contexttrace.render.text import fmt_int, safe_text
from contexttrace.reports.results import RunResult

#: Most skipped lines named one by one per file on stderr; the rest are counted.
NOTES_SHOWN = 3


def render_diagnostics(run: RunResult) -> list[str]:
    """Lines for stderr: unreadable traces, skipped lines (`path:line: reason`), warnings.

    Parameters
    ----------
    run
        Reports of any command; each has `path`, `trace`, `skipped_lines`, `line_notes`,
        `truncated_last_line`, `oversized_lines`, `warnings`, `fill`.

    Returns
    -------
    list of str
        `Error: <path>[:<line>]: <reason>[ (<exception type>)]` per failure (`TraceFailure.message`); per
        file read (a session file and each of its subagent files apart; all the runs of a stream-json file
        together) at most `NOTES_SHOWN` skipped lines named, then a count naming that file; a quiet note for
        an incomplete last line (a file still being written); each warning; how many files a directory
        scan left out.
    """
    out = [safe_text(f"Error: {f.message}") for f in run.failures]
    out.extend(_skipped_lines(run))
    out.extend(safe_text(f"warning: {w}") for w in getattr(run, "warnings", []))
    for r in run.reports:
        if r.truncated_last_line:
            out.append(safe_text(f"{r.trace}: last line incomplete (file still being written?), skipped"))
        if r.oversized_lines:
            out.append(safe_text(f"{r.trace}: {r.oversized_lines} oversized line(s) with no usage skipped unread"))
        for w in r.warnings:
            out.append(safe_text(f"{r.trace}: warning: {w}"))
        if r.fill is not None and r.fill > 1:
            out.append(safe_text(f"{r.trace}: warning: peak {fmt_int(r.peak)} exceeds the window {fmt_int(r.window)}"))
    if run.left_out:
        out.append(safe_text(left_out_line(run.left_out_files)))
    if run.orphan_agent_files:
        out.append(f"{run.orphan_agent_files} subagent file(s) left out: their session file is not beside them")
    return out


#: At most this many files with no model call are named; the rest are counted.
LEFT_OUT_NAMED = 5


def left_out_line(paths: list[str]) -> str:
    """The note naming the files a directory scan found with no model call: the first `LEFT_OUT_NAMED`, then
    how many more.

    >>> left_out_line(["a.jsonl"]), left_out_line([f"{i}.jsonl" for i in range(7)])[-27:]
    ('1 file(s) with no model call left out: a.jsonl', '3.jsonl, 4.jsonl and 2 more')
    """
    named = ", ".join(paths[:LEFT_OUT_NAMED])
    more = f" and {len(paths) - LEFT_OUT_NAMED} more" if len(paths) > LEFT_OUT_NAMED else ""
    return f"{len(paths)} file(s) with no model call left out: {named}{more}"


def _skipped_lines(run: RunResult) -> list[str]:
    """Per file, the first `NOTES_SHOWN` skipped lines named, then how many more were skipped in it."""
    out = []
    notes_of: dict[str, list[Any]] = {}  # file -> its notes (a file's runs together)
    skipped_in: dict[str, int] = {}  # file -> lines skipped in it
    for r in run.reports:
        for note in r.line_notes:
            notes_of.setdefault(note.path, []).append(note)
        by_file = getattr(r, "skipped_by_file", None) or {r.path: r.skipped_lines - int(r.truncated_last_line)}
        for path, count in by_file.items():
            skipped_in[path] = skipped_in.get(path, 0) + count
    for path in dict.fromkeys([*notes_of, *skipped_in]):
        notes = notes_of.get(path, [])
        for note in notes[:NOTES_SHOWN]:
            out.append(
                safe_text(f"{note.path}:{note.line}: {note.reason}" if note.line else f"{note.path}: {note.reason}")
            )
        counted = skipped_in.get(path, 0)
        named = min(len(notes), NOTES_SHOWN)
        if counted > named:
            out.append(safe_text(f"{path}: {counted - named} more line(s) skipped ({counted} in all)"))
    return out


#: On a terminal, at most this many traces' "largest tool results" lines are shown; the rest are counted.
LARGEST_RESULTS_SHOWN = 3
#: The words that mark a trace's "largest tool results" note (`trace.largest_results_line`).
LARGEST_RESULTS_MARK = ": largest tool results (chars): "
#: On a terminal, a note longer than this many lines of the terminal (and than `NOTE_CHARS`) is cut.
NOTE_LINES = 2
#: The fewest characters a note keeps on a narrow terminal: the dropped-columns note and one trace's
#: largest tool results stay whole at 60 columns.
NOTE_CHARS = 200
#: The words after which a trace's warning names what is wrong (`render_diagnostics`: ``<trace>: warning: …``).
WARNING_MARK = ": warning: "


def is_error_line(line: str) -> bool:
    """Whether a stderr line says why a command fails, and so stays under ``-q``: a trace not read
    (``Error:``), a threshold breached, no trace found, and the hint that goes with it.

    >>> [is_error_line(x) for x in ("Error: a.jsonl: not JSON", "breach: a: peak 9 > 1 (--fail-on peak>1)",
    ...                             "2 threshold breaches: exit 3", "a.jsonl:3: not JSON")]
    [True, True, True, False]
    """
    if line.startswith(("Error:", "breach:", "no traces found", "hint:")):
        return True
    head, _, rest = line.partition(" ")
    return head.isdigit() and rest.startswith("threshold breach")


def group_notes(lines: list[str], width: int) -> list[str]:
    """Notes for a terminal: grouped, shortened to one line each, and counted, so they stay short under a table.

    Parameters
    ----------
    lines
        The notes in the order they were made (no error lines: `is_error_line`).
    width
        The terminal's columns: a note longer than two lines of it (`NOTE_LINES`) and than `NOTE_CHARS` is
        cut, ending in ``…``.

    Returns
    -------
    list of str
        The same warning in several traces (``<trace>: warning: <text>``) once, with how many traces and
        the first of them; the "largest tool results" lines of the first `LARGEST_RESULTS_SHOWN` traces and
        a count of the others; every other note as it is; each cut to two lines. Then, when anything was
        grouped, left out or cut, one line saying how many notes there were and that ``-v`` shows each.
    """
    limit = max(NOTE_LINES * width, NOTE_CHARS)
    out: list[str] = []
    warned: dict[str, list[str]] = {}  # warning text -> traces, in order
    largest = 0
    for line in lines:
        trace, mark, text = line.partition(WARNING_MARK)
        if mark and trace:
            if text not in warned:
                out.append(WARNING_MARK + text)  # a placeholder: rewritten once every trace is known
            warned.setdefault(text, []).append(trace)
        elif LARGEST_RESULTS_MARK in line:
            largest += 1
            if largest <= LARGEST_RESULTS_SHOWN:
                out.append(line)
        else:
            out.append(line)
    for i, line in enumerate(out):
        if line.startswith(WARNING_MARK):
            traces = warned[line[len(WARNING_MARK) :]]
            where = traces[0] if len(traces) == 1 else f"{fmt_int(len(traces))} traces ({traces[0]}, ...)"
            out[i] = f"{where}{line}"
    hidden = len(lines) - len(out)
    if largest > LARGEST_RESULTS_SHOWN:
        out.append(f"largest tool results of {fmt_int(largest - LARGEST_RESULTS_SHOWN)} more trace(s) not shown")
    shortened = [x if len(x) <= limit else x[: limit - 1] + "…" for x in out]
    cut = sum(a != b for a, b in zip(out, shortened, strict=True))
    if hidden > 0 or cut:
        shortened.append(f"{fmt_int(len(lines))} note(s): {fmt_int(cut)} shortened, {fmt_int(hidden)} grouped "
                         "or left out (-v shows every note, -q none)")  # fmt: skip
    return [safe_text(x) for x in shortened]
