"""The report page's charts: Vega-Lite specs built with altair, and the Vega JavaScript that draws them.

Each spec is a **template**: it names its data (`{"data": {"name": "calls"}}`) and holds none; the page's
script copies it and fills `datasets` with one trace's data (`growth.growth_datasets`), so a page of
200 sessions carries four growth specs, not 200, and altair validates each spec once per run (not per
trace: ≈ 0.15 s for all of them). No string from a trace ever enters a spec: labels, paths and tool names
are data fields, shown by Vega's text marks and tooltips (which escape them), never expressions.

The JavaScript is Vega, Vega-Lite and Vega-Embed (with vega-tooltip) as bundled by `vl-convert-python`
(`vl_convert.javascript_bundle`), inlined in the page: no CDN, no network. Bundling takes 3–5 s, so the
bundle is kept in a cache file named by vl-convert's version (`bundle_cache_path`).

Imports altair and vl_convert only inside functions: `context report` checks the `[html]` extra first
(`missing_extras`) and says what to install.
"""

from __future__ import annotations

import functools
import hashlib
import importlib.util
import os
import tempfile
from pathlib import Path
from typing import Any, Literal

#: The `[html]` extra: import name → distribution name, checked by `missing_extras`.
HTML_EXTRAS = {"jinja2": "jinja2", "altair": "altair", "vl_convert": "vl-convert-python"}
INSTALL_HINT = "pip install 'contexttrace[html]'"

#: Page palette (Catppuccin Mocha, whose pastels spec 000's grade colours are).
TEXT, SUBTEXT, SURFACE, OVERLAY = "#cdd6f4", "#a6adc8", "#313244", "#6c7086"
MAIN_COLOR = "#89b4fa"  # main-thread calls
SUBAGENT_COLOR = "#cba6f7"  # subagent calls: mauve diamonds, apart from the main thread's blue dots
WINDOW_COLOR = "#f38ba8"
AUTOCOMPACT_COLOR = "#fab387"
COMPACTION_COLOR = "#f38ba8"  # spec 000: compaction lines #f38ba8 at 40 % opacity on the health bar
REREAD_COLOR = "#f9e2af"  # spec 000: the re-read icon in warning yellow
FIRST_COLOR, PEAK_COLOR = "#94e2d5", "#89b4fa"

GROWTH_WIDTH, GROWTH_HEIGHT, HEALTH_HEIGHT = 900, 280, 46
#: Pixels per trace in the index chart (two bars each) below which it stops fitting its card's width and
#: scrolls inside the card instead (report.js sets the width: `indexWidth`).
INDEX_STEP = 26

#: Whether altair checks each spec against the Vega-Lite schema. Off in a report run: the check takes
#: ≈ 0.6 s per growth spec (3 s for all), and the specs do not depend on the traces; the tests build every
#: spec with it on (`tests/render/test_html_report.py`), so a spec that altair would refuse cannot ship.
VALIDATE = False

#: Names of the views whose marks tests and the page look for (Vega names their SVG groups
#: `<name>_<n>_marks`, e.g. `ct_calls_0_marks`).
MARK_NAMES = ("ct_calls", "ct_subagents", "ct_compactions", "ct_limits", "ct_health", "ct_health_compactions",
              "ct_rereads", "ct_index")  # fmt: skip


def missing_extras() -> list[str]:
    """The distributions of the `[html]` extra that are not installed (without importing them).

    >>> isinstance(missing_extras(), list)
    True
    """
    return [dist for module, dist in HTML_EXTRAS.items() if importlib.util.find_spec(module) is None]


def _config() -> dict[str, Any]:
    axis = {
        "labelColor": SUBTEXT,
        "titleColor": SUBTEXT,
        "gridColor": SURFACE,
        "domainColor": OVERLAY,
        "tickColor": OVERLAY,
        "labelFont": "system-ui, sans-serif",
        "titleFont": "system-ui, sans-serif",
        "titleFontWeight": "normal",
    }
    return {
        "background": "#181825",  # the trace card's own colour (Mocha mantle)
        "view": {"stroke": None},
        "axis": axis,
        # a fixed left axis width, so the growth chart and the health bar under it start at the same x
        "axisY": {"minExtent": 56, "maxExtent": 56},
        "legend": {"labelColor": SUBTEXT, "titleColor": SUBTEXT, "orient": "top"},
        "text": {"color": TEXT, "font": "system-ui, sans-serif"},
    }


#: The x field of each axis in every dataset (`growth.growth_datasets`), and the health slices' end.
X_FIELDS = {"time": ("xt", "x2t", "t"), "calls": ("xc", "x2c", "c")}


def _x(alt: Any, axis: str, field: str, bottom: bool = True) -> Any:
    """The x encoding shared by the growth chart and the health bar: UTC time, or the call number."""
    if axis == "time":
        return alt.X(
            f"{field}:T",
            title="time (UTC)" if bottom else None,
            scale=alt.Scale(type="utc"),
            axis=alt.Axis(labels=bottom, ticks=bottom, labelOverlap=True),
        )
    return alt.X(
        f"{field}:Q",
        title="main-thread call" if bottom else None,
        scale=alt.Scale(zero=False, nice=False),
        axis=alt.Axis(labels=bottom, ticks=bottom, tickMinStep=1, format="d"),
    )


_LABEL_SIDES: tuple[tuple[Literal["left", "right"], int], ...] = (("left", 4), ("right", -4))


def growth_spec(axis: str, with_subagents: bool) -> dict[str, Any]:
    """The growth chart over the health bar, for one x axis (``"time"`` or ``"calls"``).

    Top: prompt tokens of each main-thread call (line and one point per call, hover text: call, tokens,
    tools, time), the window and the autocompact threshold as horizontal rules, each compaction as a
    dashed vertical rule labelled with its trigger and pre → post tokens, and (with `with_subagents`) the
    subagent calls as mauve diamonds on their own right-hand axis. Bottom: spec 000's health bar (slices
    coloured by grade), the compactions again (dashed, #f38ba8 at 40 %, "compaction" in 9 px monospace)
    and a ↻ over each re-read. The x scale is shared, so both line up.

    Data (named): `calls`, `subagents`, `compactions`, `limits`, `health`, `rereads` (see
    `growth.growth_datasets`).
    """
    import altair as alt

    xf, x2f, side = X_FIELDS[axis]
    x_top, x_bottom = _x(alt, axis, xf, bottom=False), _x(alt, axis, xf)
    when = (
        [alt.Tooltip("xt:T", title="time (UTC)", format="%Y-%m-%d %H:%M:%S", formatType="utc")]
        if axis == "time"
        else []
    )
    main = alt.layer(*_call_layers(alt, x_top, when), *_limit_layers(alt), *_compaction_layers(alt, x_top, side))
    top = alt.layer(main, _subagent_layer(alt, x_top, when)).resolve_scale(y="independent") if with_subagents else main
    top = top.properties(width=GROWTH_WIDTH, height=GROWTH_HEIGHT)
    health = _health_strip(alt, x_bottom, x2f).properties(width=GROWTH_WIDTH, height=HEALTH_HEIGHT)
    chart = alt.vconcat(top, health, spacing=4).resolve_scale(x="shared").configure(**_config())
    return _clean(chart.to_dict(validate=VALIDATE))


def _call_layers(alt: Any, x: Any, when: list[Any]) -> list[Any]:
    """The main thread's prompt tokens: a line, and a point per call with its hover text."""
    y = alt.Y("tokens:Q", title="prompt tokens (main thread)", axis=alt.Axis(format="~s"))
    calls = alt.Chart(alt.NamedData("calls"))
    line = calls.mark_line(color=MAIN_COLOR, strokeWidth=1.5, interpolate="linear").encode(x=x, y=y)
    points = (
        calls.mark_point(filled=True, size=30, color=MAIN_COLOR, opacity=1)
        .encode(
            x=x,
            y=y,
            tooltip=[
                alt.Tooltip("call:Q", title="call"),
                alt.Tooltip("tokens:Q", title="prompt tokens", format=","),
                alt.Tooltip("tools:N", title="tools"),
                *when,
            ],
        )
        .properties(name="ct_calls")
    )
    return [line, points]


def _limit_layers(alt: Any) -> list[Any]:
    """The window and the autocompact threshold: dashed horizontal rules, each labelled at the left."""
    limits = alt.Chart(alt.NamedData("limits"))
    limit_rules = (
        limits.mark_rule(strokeDash=[6, 4], strokeWidth=1.5)
        .encode(
            y=alt.Y("tokens:Q"),
            color=alt.Color(
                "kind:N", scale=alt.Scale(domain=["window", "autocompact"], range=[WINDOW_COLOR, AUTOCOMPACT_COLOR]),
                legend=None,
            ),
            tooltip=[alt.Tooltip("label:N", title="line")],
        )
        .properties(name="ct_limits")
    )  # fmt: skip
    limit_labels = limits.mark_text(align="left", baseline="bottom", dy=-3, fontSize=11).encode(
        x=alt.value(4),
        y=alt.Y("tokens:Q"),
        text="label:N",
        color=alt.Color("kind:N", scale=alt.Scale(domain=["window", "autocompact"],
                                                  range=[WINDOW_COLOR, AUTOCOMPACT_COLOR]), legend=None),
    )  # fmt: skip
    return [limit_rules, limit_labels]


def _compaction_layers(alt: Any, x: Any, side: str) -> list[Any]:
    """Each compaction: a dashed vertical rule, its label on the side that keeps it inside the chart."""
    comps = alt.Chart(alt.NamedData("compactions"))
    comp_rules = (
        comps.mark_rule(color=COMPACTION_COLOR, strokeDash=[4, 3], strokeWidth=2, opacity=0.8)
        .encode(x=x, tooltip=[alt.Tooltip("detail:N", title="compaction")])
        .properties(name="ct_compactions")
    )
    # Each label on the side of its line that keeps it inside the chart (`label_left_*` / `label_right_*`:
    # `growth.growth_datasets` decides; the other is ""). Two layers of the same rows, never an empty one.
    comp_labels = [
        comps.mark_text(align=where, baseline="top", dx=dx, fontSize=11, font="ui-monospace, monospace",
                        color=COMPACTION_COLOR)
        .encode(x=x, y=alt.value(22), text=f"label_{where}_{side}:N",
                tooltip=[alt.Tooltip("detail:N", title="compaction")])
        for where, dx in _LABEL_SIDES
    ]  # fmt: skip
    return [comp_rules, *comp_labels]


def _subagent_layer(alt: Any, x: Any, when: list[Any]) -> Any:
    """The subagent calls: diamonds on their own right-hand axis, opaque and outlined so they stand out on
    the dark card beside the main thread's dots (faint points were nearly invisible there)."""
    return (
        alt.Chart(alt.NamedData("subagents"))
        .mark_point(
            shape="diamond", filled=True, size=46, opacity=0.9, color=SUBAGENT_COLOR, stroke="#11111b", strokeWidth=0.8
        )
        .encode(
            x=x,
            y=alt.Y(
                "tokens:Q",
                title="subagent prompt tokens",
                axis=alt.Axis(orient="right", format="~s", titleColor=SUBAGENT_COLOR, grid=False),
            ),
            tooltip=[
                alt.Tooltip("agent:N", title="subagent"),
                alt.Tooltip("tokens:Q", title="prompt tokens", format=","),
                *when,
            ],
        )
        .properties(name="ct_subagents")
    )


def _health_strip(alt: Any, x: Any, x2_field: str) -> Any:
    """Spec 000's health bar: the grade-coloured slices, the compactions again, a ↻ over each re-read."""
    slices = (
        alt.Chart(alt.NamedData("health"))
        .mark_rect()
        .encode(
            x=x,
            x2=alt.X2(x2_field),
            y=alt.value(26),
            y2=alt.value(38),
            color=alt.Color("color:N", scale=None),
            stroke=alt.Color("color:N", scale=None),  # no seam between slices of one colour
            tooltip=[alt.Tooltip("label:N", title="health")],
        )
        .properties(name="ct_health")
    )
    hcomps = alt.Chart(alt.NamedData("compactions"))
    hrules = (
        hcomps.mark_rule(color=COMPACTION_COLOR, strokeDash=[3, 2], strokeWidth=2, opacity=0.4)
        .encode(x=x, tooltip=[alt.Tooltip("detail:N", title="compaction")])
        .properties(name="ct_health_compactions")
    )
    hlabels = hcomps.mark_text(
        align="left", baseline="top", dx=3, fontSize=9, font="ui-monospace, monospace", color=COMPACTION_COLOR
    ).encode(x=x, y=alt.value(0), text=alt.value("compaction"))
    rereads = (
        alt.Chart(alt.NamedData("rereads"))
        .mark_text(text="↻", fontSize=12, color=REREAD_COLOR, baseline="middle")
        .encode(x=x, y=alt.value(17), tooltip=[alt.Tooltip("label:N", title="file re-read")])
        .properties(name="ct_rereads")
    )
    return alt.layer(slices, hrules, hlabels, rereads)


def index_spec() -> dict[str, Any]:
    """The index chart: first and peak prompt tokens of each trace, side by side, linking to its section.

    Data (named): `traces` (`data.index_datasets`).
    """
    import altair as alt

    chart = (
        alt.Chart(alt.NamedData("traces"))
        .mark_bar()
        .encode(
            x=alt.X("label:N", sort=None, title="trace", axis=alt.Axis(labelAngle=0, labelOverlap=True)),
            xOffset=alt.XOffset("figure:N", sort=["first", "peak"]),
            y=alt.Y("tokens:Q", title="prompt tokens", axis=alt.Axis(format="~s")),
            color=alt.Color(
                "figure:N",
                title=None,
                scale=alt.Scale(domain=["first", "peak"], range=[FIRST_COLOR, PEAK_COLOR]),
            ),
            href="href:N",
            tooltip=[
                alt.Tooltip("label:N", title="#"),
                alt.Tooltip("trace:N", title="trace"),
                alt.Tooltip("figure:N", title="figure"),
                alt.Tooltip("tokens:Q", title="prompt tokens", format=","),
            ],
        )
        .properties(name="ct_index", width=alt.Step(INDEX_STEP), height=200)
        .configure(**_config())
    )
    return _clean(chart.to_dict(validate=VALIDATE))


def compare_spec() -> dict[str, Any]:
    """The comparison: one row of the chart per metric (its own x scale), one line per condition, each run a
    point (linking to its section) and the median a tick.

    Data (named): `runs` (`compare_view.compare_view`: `metric`, `condition`, `value`, `trace`, `href`,
    `kind` "run" or "median").
    """
    import altair as alt

    from contexttrace.render.compare import label
    from contexttrace.reports.compare import METRICS

    order = [label(key) for key in METRICS]  # the metrics in `context compare`'s order
    base = alt.Chart(alt.NamedData("runs")).encode(
        y=alt.Y("condition:N", sort=None, title=None),
        x=alt.X("value:Q", title=None, scale=alt.Scale(zero=False, nice=True)),
    )
    runs = (
        base.transform_filter(alt.FieldEqualPredicate(field="kind", equal="run"))
        .mark_circle(size=60, opacity=0.75, color=MAIN_COLOR)
        .encode(
            href="href:N",
            tooltip=[
                alt.Tooltip("condition:N"),
                alt.Tooltip("trace:N", title="run"),
                alt.Tooltip("value:Q", title="value", format=",.4~f"),
            ],
        )
        .properties(name="ct_compare_runs")
    )
    medians = (
        base.transform_filter(alt.FieldEqualPredicate(field="kind", equal="median"))
        .mark_tick(color=AUTOCOMPACT_COLOR, thickness=3, size=22)
        .encode(tooltip=[alt.Tooltip("condition:N"), alt.Tooltip("value:Q", title="median", format=",.4~f")])
        .properties(name="ct_compare_medians")
    )
    chart = (
        alt.layer(runs, medians)
        .properties(width=GROWTH_WIDTH - 120, height=alt.Step(26))
        .facet(row=alt.Row("metric:N", sort=order, title=None, header=alt.Header(labelColor=TEXT, labelAngle=0,
                                                                                 labelAlign="left")))
        .resolve_scale(x="independent")
        .configure(**_config())
    )  # fmt: skip
    return _clean(chart.to_dict(validate=VALIDATE))


def _clean(spec: dict[str, Any]) -> dict[str, Any]:
    # No "$schema" URL in the page: it is never fetched, but a page that names no outside address is
    # easier to check.
    spec.pop("$schema", None)
    spec.pop("datasets", None)
    return spec


SPEC_NAMES = (*(f"growth_{axis}_{sub}" for axis in ("time", "calls") for sub in ("sub", "nosub")), "index", "compare")


def _build_spec(name: str) -> dict[str, Any]:
    if name == "index":
        return index_spec()
    if name == "compare":
        return compare_spec()
    _, axis, sub = name.split("_")
    return growth_spec(axis, sub == "sub")


def chart_specs(names: tuple[str, ...] = SPEC_NAMES) -> dict[str, dict[str, Any]]:
    """The specs named (`SPEC_NAMES`; `data.growth_spec_name`), from the cache file when there.

    Building them with altair costs ≈ 0.8 s per growth spec (its layers deep-copy their parts) and 1 s to
    import altair, for specs that never depend on the traces; so they are kept in a cache file beside
    the Vega bundle, named by a hash of this module's source and altair's version (`spec_cache_path`):
    a change to either builds them again.
    """
    cached = _spec_cache()
    missing = [n for n in names if n not in cached]
    if missing:
        for name in missing:
            cached[name] = _build_spec(name)
        cached[VL_VERSION_KEY] = _vl_version()  # type: ignore[assignment]  # the one key that is not a spec
        _write_cache(spec_cache_path(), orjson_dumps(cached))
    return {n: cached[n] for n in names}


#: The key of the spec cache that holds the Vega-Lite version the specs were written for ("6.4").
VL_VERSION_KEY = "__vegalite__"


def specs_vegalite_version() -> str:
    """The Vega-Lite version of the cached specs (altair's, as vl-convert names it), for `vega_bundle`."""
    return str(_spec_cache().get(VL_VERSION_KEY) or _vl_version())


@functools.cache
def _spec_cache() -> dict[str, dict[str, Any]]:
    try:
        import orjson

        loaded = orjson.loads(spec_cache_path().read_bytes())
    except (OSError, ValueError):
        return {}
    return loaded if isinstance(loaded, dict) else {}


def orjson_dumps(value: Any) -> str:
    """`value` as compact JSON text (orjson, imported here: this module stays light to import)."""
    import orjson

    return orjson.dumps(value).decode()


def cache_dir() -> Path:
    """The folder of the report's caches: `$CONTEXTTRACE_CACHE_DIR`, else `$XDG_CACHE_HOME/contexttrace`, else
    `~/.cache/contexttrace` (the result store's folder, `store.cache_dir`, on Linux)."""
    chosen = os.environ.get("CONTEXTTRACE_CACHE_DIR", "").strip()
    if chosen:
        return Path(chosen).expanduser()
    return Path(os.environ.get("XDG_CACHE_HOME") or os.path.expanduser("~/.cache")) / "contexttrace"


def spec_cache_path() -> Path:
    """The chart specs' cache file: named by a hash of this module's source, altair's version and `VALIDATE`."""
    from importlib.metadata import version

    digest = hashlib.sha256(Path(__file__).read_bytes())
    digest.update(f"{version('altair')} {VALIDATE}".encode())
    return cache_dir() / f"report-specs-{digest.hexdigest()[:16]}.json"


def _write_cache(path: Path, text: str) -> None:
    """Write a cache file atomically (a concurrent run reads the old file or the whole new one); a folder
    that cannot be written only means building it again next time."""
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        with tempfile.NamedTemporaryFile("w", encoding="utf-8", dir=path.parent, delete=False) as tmp:
            tmp.write(text)
        os.replace(tmp.name, path)
    except OSError:
        pass


def bundle_cache_path(vl_version: str) -> Path:
    """Where the bundled Vega JavaScript is cached (`cache_dir`), named by vl-convert's and Vega-Lite's versions."""
    from importlib.metadata import version

    return cache_dir() / f"vega-bundle-{version('vl-convert-python')}-vl{vl_version}.js"


def _vl_version() -> str:
    """The Vega-Lite version altair writes specs for, as vl-convert names it ("6.4"), if it bundles it."""
    import altair as alt
    import vl_convert

    wanted = ".".join(alt.VEGALITE_VERSION.split(".")[:2])
    return wanted if wanted in vl_convert.get_vegalite_versions() else vl_convert.get_vegalite_versions()[-1]


@functools.cache
def vega_bundle(vl_version: str) -> str:
    """Vega, Vega-Lite `vl_version` and Vega-Embed as one script (`vl_convert.javascript_bundle`), from the
    cache if there.

    The text is safe inside a `<script>` element: any ``</script`` is written ``<\\/script`` (the same
    JavaScript in a string, a regular expression or a comment; the bundle holds none today).
    """
    path = bundle_cache_path(vl_version)
    try:
        text = path.read_text(encoding="utf-8")
    except OSError:
        text = ""
    if "vegaEmbed" not in text:  # absent, or a partial file: bundle again
        import vl_convert

        text = vl_convert.javascript_bundle(None, vl_version=vl_version)  # type: ignore[arg-type]  # None: the default
        _write_cache(path, text)
    return text.replace("</script", "<\\/script").replace("</SCRIPT", "<\\/SCRIPT")
