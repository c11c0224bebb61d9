"""Fuzz properties: damaged copies of the bundled real samples never take a run down.

Each example copies one sample (a session folder with its subagent files) to a temporary folder and damages
one of its files the ways real captures are damaged (`tests/fuzzing.py`: truncation at any byte; a key deleted
at any depth, a value of another JSON type, a huge or non-finite number, a lone surrogate, 990-deep lists, a
stamp or duration that names no moment, on one line; NUL bytes inside a line, as a line, as a tail block).
Then:

1. no exception escapes `analyze()` (a trace that cannot be read comes back in `.failures`, naming its own
   file) nor the CLI (`context trace --json`, `--explain`, `context usage --json`, `--breakdown`): exit 0 or
   1, no traceback, an `Error:` line for an exit 1, a clean sample named beside the damaged one prints in full
   (its rows cell by cell under their column headers, its other lines verbatim), and the same command run
   again (its traces then served from the result store) prints the same; nor does the firewall catch one (a
   failure or a skipped line naming an exception is a defect it contained: damage is data to skip or mark,
   never a crash);
2. the damage lowers the model calls of all threads (main, subagents, compaction summariser) by at most the
   calls the damaged lines carried (a truncation: every line not kept whole);
3. neutral edits (UTF-8 BOM, CRLF, blank lines, no final newline) change no figure of either command;
4. the notebook frames (`read_trace(...)` then `.calls`, `.tool_uses`, `.tool_results`, `.events`) build,
   each value in its column's dtype (no value nulled by `Trace.frame`'s last guard);
5. no damaged value or line fails a trace (`analyze()` returns no failure): a bad value costs at most its
   field, a bad line at most that line;
6. no damage to a subagent file (a bad value or line, a cut, NUL padding) drops its session or changes one of
   its main-thread calls: a bad subagent file costs at most that file.

`test_fuzz_known_kinds_made_on_the_samples` makes the fuzz finds of CASES.md that one-line damage can make
(`fuzzing.KNOWN_KINDS`) on the samples and checks 1, 2 and 4 on each, whatever the budget.

Budget: by default each property tries `DEFAULT_EXAMPLES` examples, derandomized and without a database, so CI
is fast and repeatable (the whole file runs in well under a minute on two cores). Set the environment
variable ``CONTEXTTRACE_FUZZ_EXAMPLES`` to a number for a long run: that many examples per property, drawn at
random (a different run each time), e.g. ``CONTEXTTRACE_FUZZ_EXAMPLES=2000 pytest tests/test_fuzz.py``. A
failing example prints the damage (kind, sample file, line, what was changed) and, for a crash, its
traceback.
"""

from __future__ import annotations

import os
import tempfile
from pathlib import Path

import orjson
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from contexttrace import analyze
from contexttrace.render.trace import render_json

from . import fuzzing
from .conftest import FUZZ as FINDS
from .conftest import GOOD
from .fuzzing import (
    CAMPAIGN_FINDS,
    COMMANDS,
    FILE_KINDS,
    KINDS,
    KNOWN_KINDS,
    LINE_KINDS,
    Mutation,
    NeutralEdit,
    mutations,
    neutral_edits,
)

DEFAULT_EXAMPLES = 40

_LONG = os.environ.get("CONTEXTTRACE_FUZZ_EXAMPLES", "").strip()
FUZZ = settings(
    max_examples=int(_LONG) if _LONG else DEFAULT_EXAMPLES,
    derandomize=not _LONG,
    database=None,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large, HealthCheck.large_base_example],
)


@pytest.fixture(scope="module", autouse=True)
def _pristine():
    """The untouched copies every property compares against, made once (and removed at exit)."""
    fuzzing.pristine_root()


def _problems_message(m: Mutation | NeutralEdit, problems: list[str]) -> str:
    return f"{m}\n  " + "\n  ".join(problems)


@pytest.mark.parametrize("name", KNOWN_KINDS + CAMPAIGN_FINDS)
def test_fuzz_known_kinds_made_on_the_samples(name: str):
    """Each fuzz find of CASES.md and of the long campaign, made on a real sample: `analyze`, the command that
    showed it and the frames hold up (the random properties below may not meet it within their budget)."""
    m, command = (fuzzing.campaign_finds() if name in CAMPAIGN_FINDS else fuzzing.known_kinds())[name]
    with tempfile.TemporaryDirectory(prefix="ct-fuzz-") as tmp:
        copy = fuzzing.write_mutation(m, Path(tmp))
        problems = fuzzing.analyze_problems(m, copy, folder=False)
        problems += fuzzing.failures_problems(copy, folder=False)
        problems += fuzzing.cli_problems(command, [str(copy)], fuzzing.good_sample(m.target.sample), good_first=False)
        problems += fuzzing.frame_problems(copy)
    assert not problems, _problems_message(m, problems)


@FUZZ
@given(m=mutations(LINE_KINDS), folder=st.booleans())
def test_fuzz_line_damage_costs_at_most_its_calls(m: Mutation, folder: bool):
    """One damaged line never raises from `analyze()` and costs at most the calls it carried."""
    with tempfile.TemporaryDirectory(prefix="ct-fuzz-") as tmp:
        copy = fuzzing.write_mutation(m, Path(tmp))
        problems = fuzzing.analyze_problems(m, copy, folder)
    assert not problems, _problems_message(m, problems)


@FUZZ
@given(m=mutations(LINE_KINDS), folder=st.booleans())
def test_fuzz_no_damaged_value_fails_a_whole_trace(m: Mutation, folder: bool):
    """One damaged value (or line) of any file never fails a trace: it costs its field, or its line."""
    with tempfile.TemporaryDirectory(prefix="ct-fuzz-") as tmp:
        copy = fuzzing.write_mutation(m, Path(tmp))
        problems = fuzzing.failures_problems(copy, folder)
    assert not problems, _problems_message(m, problems)


@FUZZ
@given(m=mutations(KINDS, fuzzing.subagent_files()), folder=st.booleans())
def test_fuzz_damage_in_a_subagent_file_never_drops_the_session(m: Mutation, folder: bool):
    """Any damage to a subagent file (a bad value, a bad line, a cut, NUL padding) costs that file's lines
    only: its session is reported, with every main-thread call of the undamaged session."""
    with tempfile.TemporaryDirectory(prefix="ct-fuzz-") as tmp:
        copy = fuzzing.write_mutation(m, Path(tmp))
        problems = fuzzing.subagent_problems(m, copy, folder)
    assert not problems, _problems_message(m, problems)


@FUZZ
@given(m=mutations(FILE_KINDS), folder=st.booleans())
def test_fuzz_cut_or_nul_padded_file_keeps_the_calls_before(m: Mutation, folder: bool):
    """A file cut at any byte keeps the calls of the lines before the cut; NUL lines and tails cost none."""
    with tempfile.TemporaryDirectory(prefix="ct-fuzz-") as tmp:
        copy = fuzzing.write_mutation(m, Path(tmp))
        problems = fuzzing.analyze_problems(m, copy, folder)
    assert not problems, _problems_message(m, problems)


@FUZZ
@given(m=mutations(), folder=st.booleans(), command=st.sampled_from(COMMANDS), good_first=st.booleans())
def test_fuzz_cli_survives_and_prints_the_clean_trace(
    m: Mutation, folder: bool, command: tuple[str, ...], good_first: bool
):
    """Every command exits 0 or 1 without a traceback on a damaged copy, and a clean sample beside it prints."""
    good = fuzzing.good_sample(m.target.sample)
    with tempfile.TemporaryDirectory(prefix="ct-fuzz-") as tmp:
        copy = fuzzing.write_mutation(m, Path(tmp))
        problems = fuzzing.cli_problems(command, fuzzing.named_paths(copy, folder), good, good_first)
    assert not problems, _problems_message(m, problems)


@FUZZ
@given(edit=neutral_edits(), folder=st.booleans())
def test_fuzz_neutral_edits_change_no_figure(edit: NeutralEdit, folder: bool):
    """A BOM, CRLF line ends, blank lines or a missing final newline change no figure of either command."""
    with tempfile.TemporaryDirectory(prefix="ct-fuzz-") as tmp:
        problems = fuzzing.neutral_problems(edit, Path(tmp), folder)
    assert not problems, _problems_message(edit, problems)


@FUZZ
@given(m=mutations())
def test_fuzz_notebook_frames_build(m: Mutation):
    """`read_trace` of a damaged file (alone, and with its subagent files) gives frames that build."""
    with tempfile.TemporaryDirectory(prefix="ct-fuzz-") as tmp:
        copy = fuzzing.write_mutation(m, Path(tmp))
        problems = fuzzing.frame_problems(copy)
    assert not problems, _problems_message(m, problems)


FUZZ_FILES = sorted(p.name for p in FINDS.iterdir())


@pytest.mark.parametrize("name", FUZZ_FILES)
def test_fuzz_find_never_raises_and_good_trace_prints(name):
    """Every fuzz find: `analyze` returns (no exception), the good trace beside it is reported in full, the
    frames build with the contract's columns and dtypes, and the JSON renders."""
    run = analyze([str(FINDS / name), GOOD])
    assert GOOD in [r.trace for r in run.reports]
    assert orjson.loads(render_json(run))
    assert fuzzing.frame_problems(FINDS / name) == []  # a folder: each file, and the session with its agents
