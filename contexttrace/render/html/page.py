"""Render `context report`'s page: the template (Jinja2, autoescaped), the charts' specs and the Vega script.

`render_page` takes what `data.build_page` built and returns one HTML document that needs no
network: the style, the script, the data and the chart library are inline, and a Content-Security-Policy
meta tag (`csp`) forbids every load — no request leaves the page, and only the page's own two scripts
(named by their SHA-256) run. Nothing is evaluated from a string: the page draws with Vega-Embed's
``ast: true``, so Vega's expressions are parsed and interpreted (Vega-Embed's bundled vega-interpreter),
never compiled with `Function`, and the policy has no `'unsafe-eval'`. No string from a trace ever reaches a
Vega expression either (see `charts`).

Needs the `[html]` extra (jinja2, altair, vl-convert-python), imported here only when a page is rendered.
"""

from __future__ import annotations

import base64
import hashlib
from pathlib import Path
from typing import Any

import orjson

from contexttrace.render.html.charts import chart_specs, specs_vegalite_version, vega_bundle

TEMPLATES = Path(__file__).resolve().parent / "templates"

#: Characters written as \\uXXXX in the page's JSON: `<` so no `</script>` or `<!--` can end or change the
#: script element the JSON sits in; `>` and `&` for good measure; U+2028/9 for older parsers.
_JSON_ESCAPES = {"<": "\\u003c", ">": "\\u003e", "&": "\\u0026", "\u2028": "\\u2028", "\u2029": "\\u2029"}


def script_json(value: Any) -> str:
    """JSON text safe inside `<script type="application/json">`: no ``<``, ``>`` or ``&`` left bare.

    >>> script_json({"a": "</script><img src=x onerror=alert(1)>"})
    '{"a":"\\\\u003c/script\\\\u003e\\\\u003cimg src=x onerror=alert(1)\\\\u003e"}'
    """
    try:
        text = orjson.dumps(value).decode()
    except TypeError:  # a lone surrogate in a string (orjson refuses them): replace it, as the reader does
        text = orjson.dumps(_replace_surrogates(value)).decode()
    for char, escaped in _JSON_ESCAPES.items():
        text = text.replace(char, escaped)
    return text


def _replace_surrogates(value: Any) -> Any:
    if isinstance(value, str):
        return value.encode("utf-8", "replace").decode("utf-8")
    if isinstance(value, dict):
        return {_replace_surrogates(k): _replace_surrogates(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [_replace_surrogates(v) for v in value]
    return value


def script_hash(text: str) -> str:
    """The CSP source that lets one inline script run: ``'sha256-<base64 of its UTF-8 bytes' digest>'``."""
    return "'sha256-" + base64.b64encode(hashlib.sha256(text.encode("utf-8")).digest()).decode() + "'"


def csp(scripts: list[str]) -> str:
    """The page's Content-Security-Policy: nothing loads from anywhere; only `scripts` run (by hash).

    >>> csp(["x"]).split("; ")[0]
    "default-src 'none'"
    """
    hashes = " ".join(script_hash(s) for s in scripts)
    return "; ".join(
        [
            "default-src 'none'",
            f"script-src {hashes}",  # no 'unsafe-eval': Vega interprets its expressions (report.js: ast)
            "style-src 'unsafe-inline'",  # the page's <style>, and the styles Vega-Embed adds
            "img-src data:",
            "font-src 'none'",
            "connect-src 'none'",
            "base-uri 'none'",
            "form-action 'none'",
        ]
    )


def render_page(page: dict[str, Any]) -> str:
    """Render the page `data.build_page` built into one self-contained HTML document.

    Parameters
    ----------
    page
        From `build_page`.

    Returns
    -------
    str
        The HTML. Every value from a trace is escaped by the template (autoescape) or written in the JSON
        island with `script_json`; the two scripts (the Vega bundle and `templates/report.js`) are ours.
    """
    import jinja2

    env = jinja2.Environment(
        loader=jinja2.FileSystemLoader(TEMPLATES),
        autoescape=True,
        undefined=jinja2.StrictUndefined,
        trim_blocks=False,
        lstrip_blocks=False,
    )
    data = dict(page["data"])
    used = {name for t in data["traces"] if t["datasets"] is not None for name in t["specs"].values()}
    if data.get("index"):
        used.add("index")
    data["specs"] = chart_specs(tuple(sorted(used)))
    if page.get("compare"):
        data["specs"].update(chart_specs(("compare",)))
    data["index_sort"] = [r["sort"] for r in page["index"]["rows"]] if page.get("index") else None
    data["panels"] = [s["panels"] for s in page["sections"]]
    bundle = vega_bundle(specs_vegalite_version())
    app = (TEMPLATES / "report.js").read_text(encoding="utf-8")
    return env.get_template("report.html.j2").render(
        page=page,
        css=_markup((TEMPLATES / "report.css").read_text(encoding="utf-8")),
        csp=csp([bundle, app]),
        data_json=_markup(script_json(data)),
        bundle=_markup(bundle),
        app=_markup(app),
    )


def _markup(text: str) -> Any:
    from markupsafe import Markup

    return Markup(text)
