"""The report's interactive page: one self-contained HTML file that works offline.

Plotly draws the profiles; its JavaScript is embedded once in the page (no CDN, no other file), and a
small script of our own (:mod:`odrp.bench.page_script`) sorts the tables, applies the filters and
shows one instance at a time. The page has:

- **navigation** by kind, then study: kinds in the toolkit's own order (the registry's: the papers'
  kinds odrp, throughput, pathmap, latency, then the knapsack family kp, mkp, gap, mdkp, qkp, qmkp,
  qm3dkp; a kind the registry does not know comes last), studies in the grid's order;
- **answers** per kind: for each method, the study and parameter value where its mean gap to the
  optimum is largest, its runs with a solution, and its runs by status (how often it found no
  solution) (:func:`answers`);
- per study: the instance counts by tier, the tables (:mod:`odrp.bench.tables`), one per parameter
  with more than one value, the head-to-head comparison of every two methods on the same instances
  (:func:`head_to_head`: the numbers of ``pairs.csv`` and the paper tables, with one convention for
  runs without a solution), the runtime profile, gap ECDF and, with bounded instances, the certified
  gap ECDF (:mod:`odrp.bench.pictures`) and links to the pictures for papers;
- **runs**: every run, filtered by kind, study, method, status and parameter value, sortable;
- **instance**: one instance's runs (objective, gap, certified gaps, time, status of each method and
  repeat), its optimum and how it was proven (:func:`proof`), its tier, best known and best bound
  (:func:`certificate`);
- **errors**: every error row with its message;
- **about**: when the dataset was written, the grid (its file name and text), the toolkit's and
  solvers' versions, the Spark master, hosts and cores of each run. The dataset's path is not shown.

Every table sorts by a click on its header; the filter bar at the top applies to every table.
"""

from __future__ import annotations

import html
import json
import math
import time
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from odrp.bench import tables
from odrp.bench.compare import PAIR_HEADERS, method_pairs, pair_rows
from odrp.bench.page_script import SCRIPT
from odrp.bench.pictures import Picture, Profile, line_style
from odrp.bench.tables import labelled, method_order

PLOTLY_SYMBOLS = {"o": "circle", "s": "square", "^": "triangle-up", "D": "diamond", "v": "triangle-down"}
PLOTLY_SYMBOLS |= {"P": "cross", "X": "x", "*": "star", "<": "triangle-left", ">": "triangle-right"}
PLOTLY_DASHES = {"-": "solid", "--": "dash", "-.": "dashdot", ":": "dot"}


@dataclass
class StudySection:
    """What the page shows of one study (built by :mod:`odrp.bench.report`)."""

    problem: str
    study: str
    counts: dict[str, int]  # instances by tier or status (:func:`odrp.bench.tables.optimum_counts`)
    table: pd.DataFrame  # the study's table (:func:`odrp.bench.tables.summary_table`)
    by_param: dict[str, list[tuple[Any, pd.DataFrame]]] = field(default_factory=dict)  # name: (value, table)
    pairs: pd.DataFrame | None = None  # :func:`head_to_head`
    profiles: list[Profile] = field(default_factory=list)
    pictures: list[Picture] = field(default_factory=list)

    @property
    def anchor(self) -> str:
        return "study-" + "".join(c if c.isalnum() or c in "-_" else "_" for c in f"{self.problem}-{self.study}")


def kind_order(problems: Iterable[str]) -> list[str]:
    """The registry's order of kinds (the papers' first, then the knapsack family); unknown kinds last."""
    from odrp.registry import KINDS

    known = list(KINDS)
    found = set(problems)
    return [k for k in known if k in found] + sorted(found - set(known))


def study_order(problem: str, studies: Iterable[str], manifest: dict[str, Any] | None) -> list[str]:
    """The grid's order of a kind's studies; studies the grid does not list (an earlier grid's) after them."""
    spec = ((manifest or {}).get("grid") or {}).get("spec") or {}
    listed = [s.get("name") for s in spec.get("studies", []) if s.get("problem") == problem]
    found = set(studies)
    return [s for s in listed if s in found] + sorted(found - set(listed))


# ----------------------------------------------------------------------------- computed views


def head_to_head(rows: pd.DataFrame) -> pd.DataFrame:
    """Every two methods of one study on the instances with a proven optimum where both ran: the same
    numbers as ``pairs.csv`` and the paper tables (:func:`odrp.bench.compare.method_pairs`, whose
    docstring states how a run without a solution counts), without the group columns."""
    pairs = method_pairs(rows)
    return pairs.drop(columns=[c for c in tables.GROUP if c in pairs.columns]).reset_index(drop=True)


ANSWER_HEADERS = (
    "method",
    "largest mean gap",
    "where",
    "runs",
    "with solution",
    "no solution",
    "infeasible",
    "time limit",
    "error",
    "with gap",
    "at optimum",
)


def answers(sections: Sequence[StudySection]) -> dict[str, list[list[str]]]:
    """Per kind, one row per method: its largest mean gap over the kind's tables (each study, and each
    value of a parameter the study varies) and where, and its runs by status summed over the studies."""
    out: dict[str, list[list[str]]] = {}
    for problem in kind_order(s.problem for s in sections):
        mine = [s for s in sections if s.problem == problem]
        groups = []  # (where, table)
        for s in mine:
            groups.append((s.study, s.table))
            groups.extend((f"{s.study} / {name}={_plain(v)}", t) for name, g in s.by_param.items() for v, t in g)
        totals = pd.concat([s.table for s in mine], ignore_index=True)
        rows = []
        for method in method_order(totals.assign(label=totals["method"])):
            worst, where = math.nan, "-"
            for place, table in groups:
                gap = table.loc[table["method"] == method, "gap_mean"]
                if len(gap) and not math.isnan(gap.iloc[0]) and (math.isnan(worst) or gap.iloc[0] > worst):
                    worst, where = float(gap.iloc[0]), place
            sums = totals[totals["method"] == method].sum(numeric_only=True)
            runs = int(sums["runs"])
            rows.append(
                [
                    method,
                    tables.percent(worst),
                    where,
                    str(runs),
                    f"{int(sums['with_solution'])}/{runs}",
                    *(str(int(sums[status])) for status in ("no_solution", "infeasible", "time_limit", "error")),
                    f"{int(sums['with_gap'])}/{runs}",
                    f"{int(sums['at_optimum'])}/{int(sums['comparable'])}",
                ]
            )
        out[problem] = rows
    return out


def proof(runs: pd.DataFrame) -> str:
    """How one instance's optimum was proven (or why it was not), from its labelled rows."""
    exact = runs[runs["method"] == "exact"]
    status = _optimum_status(runs)
    proofs = exact[(exact["status"] == "optimal") & exact["verified"].astype(bool)]
    named = ", ".join(f"{r.label} ({r.runtime_s:.3g} s)" for r in proofs.itertuples())
    others = ", ".join(f"{r.label}: {r.status}" for r in exact.itertuples() if r.Index not in proofs.index)
    if status == "proven":
        agree = "; their objectives agree" if len(proofs) > 1 else ""
        return f"proven optimal by {named}{agree}" + (f" ({others})" if others else "")
    if status == "disagree":
        notes = sorted({str(m) for m in runs["message"].dropna() if "disagree" in str(m) or "claims" in str(m)})
        return "the exact solvers disagree: " + ("; ".join(notes) or named)
    if status == "infeasible":
        who = ", ".join(r.label for r in exact.itertuples() if r.status == "infeasible")
        return f"proven infeasible by {who}"
    if exact.empty:
        return "no proof: the study has no exact solver"
    return f"no proof ({others})"


def certificate(runs: pd.DataFrame) -> str:
    """One instance's tier, best known solution and best bound (:mod:`odrp.bench.optimum`), in words."""
    first = runs.iloc[0]
    tier = next((t for t in runs.get("tier", pd.Series(dtype=object)).dropna()), None)
    words = {
        "proven": "proven by two solvers",
        "proven_once": "proven by one solver",
        "bounded": "bounded: best known within the study's certify gap of the best bound",
        "open": "open: nothing certified",
    }
    parts = [words.get(str(tier), f"no tier ({_optimum_status(runs)})")]
    if not _missing(first.get("best_known")):
        parts.append(f"best known {float(first['best_known']):.10g} ({first.get('best_known_method')})")
    if not _missing(first.get("best_bound")):
        parts.append(f"best bound {float(first['best_bound']):.10g}")
    return "; ".join(parts)


def _optimum_status(runs: pd.DataFrame) -> str:
    found = set(runs["optimum_status"].dropna())
    for status in ("disagree", "proven", "infeasible"):
        if status in found:
            return status
    return "none"


# ------------------------------------------------------------------------------------- the page


def render(
    frame: pd.DataFrame,
    sections: list[StudySection],
    manifest: dict[str, Any] | None,
    dataset_name: str,
) -> str:
    """The whole page as one HTML string (Plotly's JavaScript included)."""
    from plotly.offline import get_plotlyjs

    esc = html.escape
    problems = kind_order(s.problem for s in sections)
    body: list[str] = []
    nav = ["<nav id='nav'><b>odrp report</b><ul>", "<li><a href='#answers'>Answers</a></li>"]
    for problem in problems:
        mine = [s for s in sections if s.problem == problem]
        nav.append(f"<li class='kind'>{esc(problem)}<ul>")
        nav.extend(f"<li><a href='#{s.anchor}'>{esc(s.study)}</a></li>" for s in mine)
        nav.append("</ul></li>")
    nav.append(
        "<li><a href='#runs'>Runs</a></li><li><a href='#instance'>Instance</a></li>"
        "<li><a href='#errors'>Errors</a></li><li><a href='#about'>About</a></li></ul></nav>"
    )

    body.append(_filters(frame))
    body.append("<section id='answers'><h2>Answers</h2>")
    body.append(
        "<p>Per kind and method: the largest of its mean gaps to the proven optimum over the kind's "
        "studies and, where a study varies a parameter, over its values (<i>where</i>: the study, and the "
        "value); then how many of its runs ended with each status other than optimal and feasible "
        "(<code>no_solution</code>: the method found none; <code>infeasible</code>; <code>time_limit</code>, "
        "with or without an incumbent; <code>error</code>), how many have a solution, how many have a gap and "
        "how many reached the optimum. Whether it beats another method on the same instances: each study's "
        "<i>head to head</i> table.</p>"
    )
    for problem, rows in answers(sections).items():
        body.append(f"<h3>{esc(problem)}</h3>" + table_html(ANSWER_HEADERS, rows, method_column=0, css="answers"))
    body.append("</section>")

    figures: list[str] = []
    for problem in problems:
        body.append(f"<h2 class='kind'>{esc(problem)}</h2>")
        for section in (s for s in sections if s.problem == problem):
            body.append(_study_html(section, figures))
    body.append(_runs_html())
    body.append(_instance_html())
    body.append(_errors_html(frame))
    body.append(_about_html(manifest, dataset_name))

    data = page_data(frame)
    head = (
        "<!doctype html><html lang='en'><head><meta charset='utf-8'>"
        "<meta name='viewport' content='width=device-width, initial-scale=1'>"
        f"<title>odrp benchmark report: {esc(dataset_name)}</title><style>{CSS}</style></head><body>"
    )
    return "\n".join(
        [
            head,
            *nav,
            "<main>",
            f"<h1>Benchmark report: {esc(dataset_name)}</h1>",
            *body,
            "</main>",
            _json_script("odrp-data", data),
            *(_json_script(f"figure-{k}", f) for k, f in enumerate(figures)),
            f"<script>{get_plotlyjs()}</script>",
            f"<script>{SCRIPT}</script>",
            "</body></html>",
        ]
    )


def _json_script(element_id: str, value: Any) -> str:
    """JSON in a script element that the browser does not run; ``</`` escaped so it cannot end the element."""
    text = value if isinstance(value, str) else json.dumps(value, allow_nan=False, separators=(",", ":"))
    text = text.replace("</", "<\\/")
    return f"<script type='application/json' id='{element_id}'>{text}</script>"


def table_html(
    headers: Sequence[str],
    rows: list[list[str]],
    *,
    method_column: int | None = None,
    param: str | None = None,
    css: str = "",
) -> str:
    """A sortable table; rows carry ``data-method`` (and ``data-param``) for the filters."""
    esc = html.escape
    marks = f" data-param-table='{esc(param)}'" if param is not None else ""
    out = [f"<div class='scroll'><table class='sortable {css}'{marks}><thead><tr>"]
    out.extend(f"<th>{esc(h)}</th>" for h in headers)
    out.append("</tr></thead><tbody>")
    for row in rows:
        attrs = ""
        if method_column is not None:
            attrs += f" data-method='{esc(row[method_column])}'"
        if param is not None:
            attrs += f" data-param='{esc(param)}={esc(row[0])}'"
        out.append(f"<tr{attrs}>" + "".join(f"<td>{esc(str(c))}</td>" for c in row) + "</tr>")
    out.append("</tbody></table></div>")
    return "".join(out)


def _study_html(section: StudySection, figures: list[str]) -> str:
    esc = html.escape
    parts = [f"<section class='study' id='{section.anchor}'><h3>{esc(section.problem)} / {esc(section.study)}</h3>"]
    parts.append(f"<p>{esc(tables.counts_line(section.counts))}</p>")
    parts.append(table_html(tables.HEADERS, tables.formatted(section.table), method_column=0, css="summary"))
    for name, groups in section.by_param.items():
        parts.append(f"<h4>by {esc(name)}</h4>")
        rows = [[_plain(value), *row] for value, table in groups for row in tables.formatted(table)]
        parts.append(table_html([name, *tables.HEADERS], rows, method_column=1, param=name))
    if section.pairs is not None and len(section.pairs):
        parts.append(
            "<h4>head to head</h4><p>Two methods on the instances with a proven optimum where both ran. On "
            "each instance the method with fewer runs without a solution is better; with as many, the one "
            "with the smaller mean gap over its runs with one; a tie otherwise (so with one run each, a run "
            "without a solution loses to one with a solution and ties with another without). The sign test "
            "p-value tests those wins against the losses. Beside them: each method's runs with a solution, "
            "then the gaps on the instances where both have a solution (gap pairs): their means and the "
            "two-sided Wilcoxon signed-rank test (fewer than 6 pairs that differ: too few for p &lt; 0.05; no "
            "pair that differs: -). The paper tables and <code>pairs.csv</code> hold the same numbers.</p>"
        )
        parts.append(table_html(*pairs_rows(section.pairs), css="pairs"))
    if section.profiles:
        parts.append("<div class='figures'>")
        for profile in section.profiles:
            figures.append(plotly_figure(profile))
            parts.append(
                f"<figure><div class='plot' data-figure='figure-{len(figures) - 1}'></div>"
                f"<figcaption>{esc(profile.note)}</figcaption></figure>"
            )
        parts.append("</div>")
    if section.pictures:
        links = []
        for picture in section.pictures:
            files_ = " ".join(f"<a href='{esc(p.name)}'>{esc(p.suffix[1:])}</a>" for p in picture.files)
            links.append(f"<li>{esc(picture.name)}: {files_} <span class='note'>({esc(picture.note)})</span></li>")
        parts.append("<details><summary>pictures for papers</summary><ul>" + "".join(links) + "</ul></details>")
    parts.append("</section>")
    return "".join(parts)


def pairs_rows(pairs: pd.DataFrame) -> tuple[list[str], list[list[str]]]:
    """The head to head table's headers and rows: those of the paper tables' pairs."""
    return list(PAIR_HEADERS), pair_rows(pairs)


def plotly_figure(profile: Profile) -> str:
    """The profile as Plotly figure JSON: the same curves as the PNG, with hover values."""
    import plotly.graph_objects as go

    fig = go.Figure()
    for k, curve in enumerate(profile.curves):
        line = line_style(curve, k)
        fig.add_trace(
            go.Scatter(
                x=[*curve.taus, profile.right],
                y=[*curve.shares, curve.shares[-1]],
                name=curve.name,
                mode="lines+markers",
                line={"shape": "hv", "color": line["color"], "dash": PLOTLY_DASHES[line["linestyle"]]},
                marker={"symbol": PLOTLY_SYMBOLS[line["marker"]] + "-open", "size": 8},
            )
        )
    if profile.xscale == "log2":
        xaxis = {"type": "log", "dtick": math.log10(2), "range": [0, math.log10(profile.right)]}
        xtitle = profile.xlabel
    else:
        xaxis = {"type": "linear", "rangemode": "tozero"}
        xtitle = profile.xlabel.replace("(symlog)", "(linear: zoom in to small gaps)")
    fig.update_layout(
        template="none",
        # the section names the study; a short title leaves room for Plotly's tool bar on the right
        title={"text": profile.title.rsplit(": ", 1)[-1], "font": {"size": 14}, "x": 0.02, "xanchor": "left"},
        xaxis={**xaxis, "title": {"text": xtitle}, "gridcolor": "#e5e5e5"},
        yaxis={"title": {"text": profile.ylabel}, "range": [-0.02, 1.02], "gridcolor": "#e5e5e5"},
        legend={"x": 1, "xanchor": "right", "y": 0, "yanchor": "bottom", "bgcolor": "rgba(255,255,255,0.8)"},
        margin={"l": 60, "r": 20, "t": 40, "b": 50},
        height=380,
    )
    return fig.to_json()


def _filters(frame: pd.DataFrame) -> str:
    esc = html.escape
    labels = method_order(labelled(frame)) if len(frame) else []
    statuses = sorted(set(frame["status"].dropna())) if len(frame) else []
    params = []
    for column in sorted(c for c in frame.columns if c.startswith("param_")):
        values = frame[column].dropna().unique()
        params.extend(f"{column[len('param_') :]}={_plain(v)}" for v in sorted(values, key=_sort_key))

    def select(name: str, options: list[str]) -> str:
        items = "".join(f"<option value='{esc(o)}'>{esc(o)}</option>" for o in options)
        return f"<label>{name} <select id='filter-{name}'><option value=''>all</option>{items}</select></label>"

    return (
        "<div id='filters'>"
        + select("method", labels)
        + select("status", statuses)
        + select("parameter", params)
        + "<span id='filter-note'></span></div>"
    )


def _sort_key(value: Any) -> tuple[int, Any]:
    return (0, value) if isinstance(value, int | float | np.number) else (1, str(value))


def _plain(value: Any) -> str:
    if isinstance(value, float | np.floating) and float(value).is_integer():
        return str(int(value))
    return str(value.item() if isinstance(value, np.generic) else value)


def page_data(frame: pd.DataFrame) -> dict[str, Any]:
    """The runs and instances the page's script shows (runs filtered and sorted in the browser)."""
    rows = labelled(frame) if len(frame) else frame.assign(label=[])
    params = sorted(c for c in rows.columns if c.startswith("param_"))
    runs = []
    for r in rows.itertuples(index=False):
        p = {c[len("param_") :]: _plain(getattr(r, c)) for c in params if not _missing(getattr(r, c))}
        runs.append(
            {
                "kind": r.problem,
                "study": r.study,
                "instance": r.instance_id,
                "method": r.label,
                "repeat": int(r.repeat),
                "status": r.status,
                "objective": _number(r.objective),
                "gap": _number(r.gap),
                "gap_known": _number(getattr(r, "gap_known", None)),
                "gap_bound": _number(getattr(r, "gap_bound", None)),
                "time": _number(r.runtime_s),
                "verified": False if _missing(r.verified) else bool(r.verified),
                "params": p,
                "message": "" if _missing(r.message) else str(r.message)[:1000],
            }
        )
    instances = {}
    for instance_id, mine in rows.groupby("instance_id", sort=True):
        first = mine.iloc[0]
        optimum = mine["optimum"].dropna()
        instances[instance_id] = {
            "kind": first["problem"],
            "study": first["study"],
            "name": None if _missing(first["instance_name"]) else str(first["instance_name"]),
            "size": None if _missing(first["size"]) else f"{_plain(first['size'])} {first['size_label'] or ''}",
            "params": None if _missing(first["params"]) else str(first["params"]),
            "optimum": _number(optimum.iloc[0]) if len(optimum) else None,
            "optimum_status": _optimum_status(mine),
            "proof": proof(mine),
            "certificate": certificate(mine),
        }
    return {"runs": runs, "instances": instances}


def _missing(value: Any) -> bool:
    return value is None or (isinstance(value, float) and math.isnan(value)) or value is pd.NA


def _number(value: Any) -> float | str | None:
    """A JSON number; +-inf as the strings "inf"/"-inf" (JSON has no infinity); NaN and null as null."""
    if _missing(value):
        return None
    value = float(value)
    return ("inf" if value > 0 else "-inf") if math.isinf(value) else value


def _runs_html() -> str:
    return (
        "<section id='runs'><h2>Runs</h2><p>Every run, filtered by the bar at the top and by kind and study "
        "here; click a header to sort, an instance to see it whole.</p>"
        "<label>kind / study <select id='runs-study'><option value=''>all</option></select></label> "
        "<span id='runs-count'></span>"
        "<table class='sortable' id='runs-table'><thead><tr><th>kind</th><th>study</th><th>instance</th>"
        "<th>parameters</th><th>method</th><th>repeat</th><th>status</th><th>objective</th><th>gap</th>"
        "<th>certified gap [known, bound]</th><th>time s</th></tr></thead><tbody></tbody></table></section>"
    )


def _instance_html() -> str:
    return (
        "<section id='instance'><h2>Instance</h2><label>instance <select id='instance-select'></select></label>"
        "<div id='instance-view'></div></section>"
    )


def _errors_html(frame: pd.DataFrame) -> str:
    errors = labelled(frame[frame["status"] == "error"]) if len(frame) else frame
    rows = [
        [r.label, r.problem, r.study, r.instance_id, str(r.repeat), str(r.message)]
        for r in errors.itertuples(index=False)
    ]
    headers = ["method", "kind", "study", "instance", "repeat", "message"]
    table = table_html(headers, rows, method_column=0, css="errors") if rows else "<p>none</p>"
    return f"<section id='errors'><h2>Error rows ({len(rows)})</h2>{table}</section>"


def _about_html(manifest: dict[str, Any] | None, dataset_name: str) -> str:
    esc = html.escape
    made = time.strftime("%Y-%m-%dT%H:%M:%S%z")
    items = [("dataset", dataset_name), ("report made", made)]
    if manifest is None:
        items.append(("manifest", "none: the dataset has no manifest.json"))
        return _about_list(items)
    items.append(("dataset written", f"{manifest.get('updated', '-')} (status {manifest.get('status', '-')})"))
    grid = manifest.get("grid") or {}
    if grid.get("file"):
        items.append(("grid", f"{Path(str(grid['file'])).name} (SHA-256 {str(grid.get('sha256', ''))[:16]}...)"))
    versions = manifest.get("versions") or {}
    for key in ("odrp-toolkit", "python"):
        if key in versions:
            items.append((key, str(versions[key])))
    for k, run in enumerate(manifest.get("runs") or [], 1):
        hosts = ", ".join(run.get("hosts") or []) or "-"
        items.append(
            (
                f"run {k}",
                f"started {run.get('started', '-')}, finished {run.get('finished', '-')}, "
                f"Spark master {run.get('master', '-')}, hosts {hosts}, {run.get('parallelism', '-')} cores "
                f"(default parallelism), {run.get('ran', '-')} instances run, {run.get('skipped', '-')} skipped, "
                f"wall {run.get('wall_s', '-')} s, status {run.get('status', '-')}",
            )
        )
    out = _about_list(items)
    if versions:
        out += "<h3>versions</h3>" + table_html(
            ["package or solver", "version"], [[k, str(v)] for k, v in versions.items()]
        )
    if grid.get("text"):
        out += f"<details><summary>the grid</summary><pre>{esc(str(grid['text']))}</pre></details>"
    return out + "</section>"


def _about_list(items: list[tuple[str, str]]) -> str:
    esc = html.escape
    rows = "".join(f"<tr><th>{esc(k)}</th><td>{esc(v)}</td></tr>" for k, v in items)
    return f"<section id='about'><h2>About this dataset</h2><table class='about'>{rows}</table>"


CSS = """
body{font-family:system-ui,sans-serif;margin:0;display:flex;color:#222}
#nav{position:sticky;top:0;height:100vh;overflow:auto;min-width:13em;padding:1em;background:#f4f4f6;
 border-right:1px solid #ddd;font-size:14px}
#nav ul{list-style:none;padding-left:0.8em;margin:0.2em 0}#nav .kind{font-weight:600;margin-top:0.5em}
#nav .kind li{font-weight:400}main{padding:0 2em 4em 2em;flex:1;min-width:0}
#filters{position:sticky;top:0;background:#fff;padding:0.6em 0;border-bottom:1px solid #ddd;z-index:10}
#filters label{margin-right:1em}#filter-note{color:#666}
table{border-collapse:collapse;margin:0.6em 0;font-size:13px}
td,th{border:1px solid #ccc;padding:3px 7px;text-align:right}td:first-child,th:first-child{text-align:left}
table.sortable th{cursor:pointer;background:#f0f0f0;user-select:none}
th.asc::after{content:" \\25B2"}th.desc::after{content:" \\25BC"}
table.answers td:nth-child(3),table.errors td,table.about td,table.about th{text-align:left}tr.hidden{display:none}
td.message{text-align:left}
.figures{display:flex;flex-wrap:wrap;gap:1em}figure{margin:0;width:min(520px,100%)}
.scroll{overflow-x:auto}
figcaption,.note{color:#555;font-size:12px}a.instance{cursor:pointer;color:#0645ad}
h2.kind{border-bottom:2px solid #888;margin-top:2em}section.study{margin-bottom:2em}
"""
