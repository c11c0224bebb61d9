"""The thresholds of `--fail-on` in words: each breach and what could not be checked (stderr), or the list
items under a markdown table.

Returns lines, never prints. A value is written as `text.fmt_metric` writes its metric's kind; ``≥`` before
a value that is a lower bound (a cost).
"""

from __future__ import annotations

from typing import Any

from contexttrace.render.text import LOWER_BOUND_MARK, fmt_metric, fmt_usd, safe_text


def _unchecked_text(u: Any) -> str:
    """Why a record was not checked against a threshold: nothing graded, no value, or a lower bound."""
    t = u.threshold
    if u.reason == "not_graded":
        what = "health not graded" if t.metric.kind == "grade" else "no weather"
        return f"{u.trace}: {what} (nothing measured: no main-thread model call), not a breach of {t.text}"
    if u.reason == "no_value":
        return f"{u.trace}: no {t.metric.name}, not checked against {t.text}"
    if t.metric.kind == "usd":
        shown = fmt_usd(u.value, lower_bound=True)
    else:
        shown = LOWER_BOUND_MARK + fmt_metric(t.metric.kind, u.value)
    return f"{u.trace}: {t.metric.name} {shown} is a lower bound; the true figure may breach {t.text}"


def _breach_value(b: Any) -> str:
    """A breach's value as `fmt_metric` writes it, ``≥`` when it is a lower bound (a cost)."""
    value = fmt_metric(b.threshold.metric.kind, b.value)
    return LOWER_BOUND_MARK + value.lstrip("≈") if b.lower_bound else value


def render_check(check: Any) -> list[str]:
    """Lines for stderr: each breach (trace, metric, value, threshold), then what could not be checked.

    Returns
    -------
    list of str
        ``breach: <trace>: <metric> <value> <op> <threshold> (--fail-on <expr>)`` per breach, then
        ``note: …`` per record a threshold could not decide (`thresholds.Unchecked`), then a summary line
        when anything breached (the command exits 3).
    """
    out = []
    for b in check.breaches:
        t = b.threshold
        out.append(f"breach: {b.trace}: {t.metric.name} {_breach_value(b)} {t.op} {t.shown} (--fail-on {t.text})")
    out.extend(f"note: {_unchecked_text(u)}" for u in check.unchecked)
    if check.breaches:
        n = len(check.breaches)
        out.append(f"{n} threshold breach{'es' if n > 1 else ''}: exit 3")
    return [safe_text(x) for x in out]


def render_check_markdown(check: Any, thresholds: Any) -> list[str]:
    """List items for the markdown output: a line per breach, or that every threshold held; nothing
    without thresholds."""
    if not thresholds:
        return []
    names = ", ".join(f"`{t.text}`" for t in thresholds)
    if check.ok:
        return [f"✅ thresholds held: {names}"]
    out = [f"❌ {len(check.breaches)} threshold breach{'es' if len(check.breaches) > 1 else ''} ({names})"]
    for b in check.breaches:
        t = b.threshold
        out.append(f"❌ {b.label or b.trace}: {t.metric.name} {_breach_value(b)} {t.op} {t.shown}")
    return out
