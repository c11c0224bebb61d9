"""On a terminal the weather's emoji is never alone: where no colour-emoji font is installed it is an empty
box, so the level's word stands beside it (`context trace`'s weather column, `--explain`)."""

from __future__ import annotations

from typer.testing import CliRunner

from contexttrace.cli.app import app

from ..conftest import SAMPLES


def test_trace_table_and_explain_print_the_weather_word_beside_the_emoji():
    path = str(SAMPLES / "b-spotter-compaction")
    env = {"COLUMNS": "200", "NO_COLOR": "1"}
    out = CliRunner().invoke(app, ["context", "trace", "--no-cache", path], env=env, catch_exceptions=False)
    assert out.exit_code == 0 and "🌤️ fair" in out.stdout
    args = ["context", "trace", "--no-cache", "--explain", path]
    out = CliRunner().invoke(app, args, env=env, catch_exceptions=False)
    assert "weather 🌤️ fair" in out.stdout
