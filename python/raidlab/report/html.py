"""The HTML report: one self-contained file with every chart drawn as inline SVG.

Nothing is fetched when the file is opened (no scripts, fonts or styles from elsewhere), so it
can be mailed, attached to a ticket or opened on an air-gapped host. The output is
deterministic (no timestamps): the same documents give byte-identical HTML.

Inputs are the plain dicts other parts of raidlab produce:

- ``runs``: fio-shaped documents (:meth:`raidlab.sim.SimResult.to_dict`);
- ``comparison``: ``[{"design", "state", "document"}]`` from ``raidlab compare``;
- ``pareto``: the planner's candidates ``[{"label", "cost", "iops", "p99_ms", "risk", "pareto",
  "chosen"}]``;
- ``reliability``: ``{"mttdl_years", "mttdl_years_approx", "p_array_loss", "p_sector_loss",
  "expected_bytes_lost_per_year", "curve": [{"years", "p_loss"}]}``.

The report never re-computes what the simulator measured; it only draws it: the headline
figures come from the document (:mod:`raidlab.report.headline`), the job and phase tables from
its rows (:mod:`raidlab.report.rows`), and the one derived number, a latency CDF over several
jobs of one run, from :func:`raidlab.report.latency.cdf_points` (labelled as such where it
appears).
"""

from __future__ import annotations

import json
import math
from typing import Any, Dict, Iterable, List, Optional, Sequence, Tuple

from raidlab.report import headline, setup_script, svg
from raidlab.report.describe import raidlab_block as _block
from raidlab.report.describe import config_of as _config
from raidlab.report.describe import describe_run, is_measured, run_label  # noqa: F401 (run_label: commands.sim)
from raidlab.report.latency import cdf_points
from raidlab.report.rows import job_rows, phase_rows
from raidlab.report.table import page_cache_numbers
from raidlab.report.svg import Axis, Band, LegendItem, Panel, Series, esc, finite, fmt_num
from raidlab.units import decimal_bytes, format_probability, human_bytes, money, with_ci, years_text

DIRECTIONS = ("read", "write")
STATE_ORDER = ("optimal", "degraded", "rebuilding")
#: SVG width of charts that span the page (ordinary ones are svg.WIDTH).
WIDE = 1000


# --- reading the documents ----------------------------------------------------------------------

def _iops(document: Dict[str, Any], direction: Optional[str] = None) -> float:
    """The run's headline IOPS (all jobs, or one direction): the figures every output shows."""
    figures = headline.of(document)
    return figures["iops"] if direction is None else figures[direction]["iops"]


def _mib_s(document: Dict[str, Any]) -> float:
    return headline.of(document)["mib_s"]


def _headline_ms(document: Dict[str, Any], direction: str, percent: int) -> Optional[float]:
    """The run's headline latency percentile (ms) of a direction, over the headline's basis."""
    return headline.of(document)[direction][f"p{percent}_ms"]


def _basis(document: Dict[str, Any]) -> str:
    """What the headline figures cover: ``whole run`` or ``steady state from A s to B s``."""
    return headline.of(document)["basis"]


def _failed_members(document: Dict[str, Any]) -> List[int]:
    config = _config(document)
    failed = set(config.get("failed") or [])
    failed.update(e.get("member") for e in config.get("timeline") or [] if e.get("action") == "fail")
    replaced = {e.get("member") for e in config.get("timeline") or [] if e.get("action") == "replace"}
    rebuild = document.get("rebuild") or {}
    if rebuild:
        replaced.add(rebuild.get("member"))
    return sorted(m for m in failed if m not in replaced and isinstance(m, int))


# --- formatting ---------------------------------------------------------------------------------

def _num(value: Optional[float], digits: int = 0) -> str:
    if not finite(value):
        return "–"
    return f"{value:,.{digits}f}"


def _ms(value: Optional[float]) -> str:
    if not finite(value):
        return "–"
    if value >= 100:
        return f"{value:,.0f}"
    if value >= 1:
        return f"{value:.2f}"
    return f"{value:.3g}"


def _seconds(value: Optional[float]) -> str:
    if not finite(value):
        return "–"
    if value >= 7200:
        return f"{value / 3600:.1f} h"
    if value >= 120:
        return f"{value / 60:.1f} min"
    return f"{value:.1f} s"


def _prob(value: Optional[float]) -> str:
    """A probability, written as every raidlab table writes it (units.format_probability)."""
    return format_probability(value, missing="–")


def _table(headers: Sequence[str], rows: Iterable[Sequence[Any]], numeric_from: int = 1,
           caption: str = "", table_class: str = "") -> str:
    head = "".join(f'<th scope="col"{" class=num" if i >= numeric_from else ""}>{esc(h)}</th>'
                   for i, h in enumerate(headers))
    body = []
    for row in rows:
        cells = []
        for i, cell in enumerate(row):
            cls = ' class="num"' if i >= numeric_from else ""
            tag = "th scope=\"row\"" if i == 0 else "td"
            end = "th" if i == 0 else "td"
            content = cell if isinstance(cell, _Raw) else esc(cell)
            cells.append(f"<{tag}{cls}>{content}</{end}>")
        body.append(f"<tr>{''.join(cells)}</tr>")
    cap = f"<caption>{esc(caption)}</caption>" if caption else ""
    klass = f' class="{esc(table_class)}"' if table_class else ""
    return (f'<div class="table-wrap"><table{klass}>{cap}<thead><tr>{head}</tr></thead>'
            f"<tbody>{''.join(body)}</tbody></table></div>")


class _Raw(str):
    """Markup that goes into a table cell as is."""


def _figure(chart: str, caption: str = "", wide: bool = False) -> str:
    cls = "figure wide" if wide else "figure"
    cap = f"<figcaption>{esc(caption)}</figcaption>" if caption else ""
    return f'<figure class="{cls}">{chart}{cap}</figure>'


# --- charts -------------------------------------------------------------------------------------

def _state_color(state: str, index: int) -> str:
    return svg.STATE_COLORS.get(state, svg.PALETTE[index % len(svg.PALETTE)])


def utilisation_chart(document: Dict[str, Any], title: str = "Member utilisation") -> str:
    """Per-member busy time (% of the run) as bars; failed members drawn as outlines."""
    util = document.get("disk_util") or []
    failed = set(_failed_members(document))
    groups, values, tips = [], {}, {}
    hatched = []
    rebuild = document.get("rebuild") or {}
    for index, disk in enumerate(util):
        name = disk.get("name", f"member{index}")
        if index in failed:
            name += " (failed)"
            hatched.append(name)
        elif rebuild and rebuild.get("member") == index:
            name += " (rebuilt)"
        groups.append(name)
        values[(name, "utilisation")] = disk.get("util", 0.0)
        tips[(name, "utilisation")] = (
            f"{name}: {disk.get('util', 0):.1f} % busy, {disk.get('read_ios', 0):,} reads, "
            f"{disk.get('write_ios', 0):,} writes, mean queue depth {disk.get('queue_depth_mean', 0):.2f}")
    x_label = "device (as fio's disk_util reports it)" if is_measured(document) else "array member (device)"
    return svg.bar_chart(title, groups, [("utilisation", "#4269d0")], values,
                         Axis("busy time (% of run)", lo=0.0, hi=100.0), x_label, unit="%", tips=tips,
                         hatched=hatched)


def cdf_chart(title: str, lines: Sequence[Tuple[Any, ...]], note: str = "",
              legend_extra: Sequence[LegendItem] = (), legend: Optional[Sequence[LegendItem]] = None) -> str:
    """Latency CDFs: (name, colour, dash, [(latency ms, percent)][, marker symbol, width]) per
    line, drawn in the order given; latency on a log axis and the percentile on a log-odds axis
    (svg's "percentile" scale), so both the body (1 %-50 %) and the tail (99 %, 99.9 %,
    99.99 %) have room. ``legend`` replaces the one item per line (see comparison_section)."""
    series = []
    for name, color, dash, pts, *style in lines:
        shape, width = (list(style) + ["circle", 2.2][len(style):])[:2]
        series.append(Series(name, color, [(x, y) for x, y in pts if x > 0], dash=dash, unit="%", x_unit="ms",
                             markers=len(pts) <= 20, exact_y=True, symbol=shape, width=width))
    return svg.line_chart(
        title, Axis("completion latency (ms, log scale)", kind="log"),
        [Panel(Axis("I/Os completed (percentile)", kind="percentile"), series, height=260)],
        note=note, legend_extra=legend_extra, legend=legend)


def timeline_chart(document: Dict[str, Any], title: str) -> Optional[str]:
    """IOPS, latency p50/p99 and rebuild progress per 1 s window, with the run's phases shaded."""
    points = document.get("timeline") or []
    if not points or (len(points) < 2 and not document.get("rebuild")):
        return None  # one window says nothing the tables do not
    starts = [p["t_s"] for p in points]
    widths = [b - a for a, b in zip(starts, starts[1:]) if b > a]
    width = min(widths) if widths else 1.0
    end = starts[-1] + width
    read = [(p["t_s"], p.get("read_iops", 0) / width) for p in points]
    write = [(p["t_s"], p.get("write_iops", 0) / width) for p in points]
    p50 = [(p["t_s"], p.get("latency_ms_p50")) for p in points if (p.get("latency_ms_p50") or 0) > 0]
    p99 = [(p["t_s"], p.get("latency_ms_p99")) for p in points if (p.get("latency_ms_p99") or 0) > 0]
    panels = []
    if any(v for _, v in read + write):  # an idle array (a rebuild alone) has no foreground panels
        panels.append(Panel(Axis("IOPS (I/O per s)"), [
            Series("read IOPS", svg.READ_COLOR, read, step_until=end, markers=False, unit="IOPS", x_unit="s"),
            Series("write IOPS", svg.WRITE_COLOR, write, step_until=end, markers=False, unit="IOPS", x_unit="s"),
        ], height=150))
    if p99 or p50:
        latency_kind = "log" if p99 and p50 and max(v for _, v in p99) > 30 * min(v for _, v in p50) else "linear"
        panels.append(Panel(Axis("latency (ms)", kind=latency_kind), [
            Series("latency p50", "#6b7280", p50, step_until=end, markers=False, unit="ms", x_unit="s",
                   dash="5 3"),
            Series("latency p99", "#d6336c", p99, step_until=end, markers=False, unit="ms", x_unit="s"),
        ], height=130))
    rebuild = document.get("rebuild")
    if rebuild or any(p.get("rebuild_pct") for p in points):
        # Progress is stamped when each window closes, so it belongs at the window's end.
        progress = [(rebuild["start_s"], 0.0)] if rebuild and rebuild.get("start_s") is not None else []
        progress += [(p["t_s"] + width, p.get("rebuild_pct", 0.0)) for p in points
                     if not progress or p["t_s"] + width > progress[0][0]]
        panels.append(Panel(Axis("rebuild done (%)", lo=0.0, hi=100.0), [
            Series("rebuild progress", "#0f766e", progress, unit="%", x_unit="s"),
        ], height=100 if panels else 180))
    if not panels:
        return None
    bands = [Band(ph["start_s"], ph["end_s"], ph["name"], _state_color(ph["name"], i))
             for i, ph in enumerate(document.get("phases") or []) if ph.get("end_s", 0) > ph.get("start_s", 0)]
    events = [(e["at_s"], f"member{e['member']} {e['event']}", EVENT_COLORS[e["event"]])
              for e in document.get("drive_events") or []
              if e.get("event") in EVENT_COLORS and finite(e.get("at_s"))]
    loss = document.get("data_loss")
    if loss and finite(loss.get("at_s")):
        events.append((loss["at_s"], "data loss", "#b91c1c"))
    note = f"1 s windows; phases shaded; {len(points)} window{'s' if len(points) != 1 else ''}"
    if rebuild and rebuild.get("extrapolated"):
        note += f"; rebuild {rebuild.get('progress_pct', 0):.0f} % done {_rebuild_stop(rebuild)}"
    return svg.line_chart(title, Axis("simulated time (s)", lo=0.0), panels, bands=bands, events=events, note=note,
                          width=WIDE)


#: Drive events marked on the timeline (the others are in the run's drive-event table): a member
#: md dropped, and a read the drive gave up on.
EVENT_COLORS = {"timeout-dropped": "#b45309", "read-error": "#a16207"}
#: Rows of the drive-event table before the rest are summarised.
MAX_EVENT_ROWS = 40


# --- sections -----------------------------------------------------------------------------------

def _job_table(document: Dict[str, Any]) -> str:
    rows = [[row["job"], row["direction"], _num(row["iops"]), f"{row['mib_s']:,.1f}",
             _ms((row["latency_ns_mean"] or 0) / 1e6), _ms(_ns_ms(row["latency_ns_p50"])),
             _ms(_ns_ms(row["latency_ns_p99"])), _ms(_ns_ms(row["latency_ns_p99_9"])),
             _ms((row["latency_ns_max"] or 0) / 1e6)] for row in job_rows(document)]
    if not rows:
        return '<p class="muted">No foreground I/O in this run.</p>'
    # fio's jobs[] cover the whole run, whatever the headline's basis (the summary's).
    return _table(["job", "direction", "IOPS", "MiB/s", "mean ms", "p50 ms", "p99 ms", "p99.9 ms", "max ms"],
                  rows, numeric_from=2, caption=f"Per job, {headline.WHOLE_RUN}")


def _ns_ms(nanos: Any) -> Optional[float]:
    """A latency of a row (ns) in ms; None stays None."""
    return None if nanos is None else float(nanos) / 1e6


def _phase_table(document: Dict[str, Any]) -> str:
    phases = document.get("phases") or []
    if len(phases) <= 1 and (not phases or phases[0].get("name") == "optimal"):
        return ""
    rows = [[row["phase"], f"{row['start_s'] or 0:.1f}–{row['end_s'] or 0:.1f}", row["direction"],
             _num(row["iops"]), _ms(_ns_ms(row["latency_ns_p50"])), _ms(_ns_ms(row["latency_ns_p99"]))]
            for row in phase_rows(document)]
    if not rows:
        return ""
    return _table(["phase", "seconds", "direction", "IOPS", "p50 ms", "p99 ms"], rows, numeric_from=3,
                  caption="Per phase")


def _rebuild_stop(rebuild: Dict[str, Any]) -> str:
    """Why an unfinished rebuild stopped: the run ended, or its replacement failed."""
    aborted = rebuild.get("aborted_s")
    return f"when it was aborted at {_seconds(aborted)} (the replacement failed)" if finite(aborted) \
        else "when the run ended"


def _rebuild_text(document: Dict[str, Any]) -> str:
    rebuild = document.get("rebuild")
    out = []
    if rebuild:
        rate = f"{(rebuild.get('rate_kib_s') or 0) / 1024:.1f} MiB/s per device"
        if rebuild.get("extrapolated"):
            how = ("over the zones at their rates" if rebuild.get("extrapolated_by") == "zone rates"
                   else "at this rate")
            state = (f"{rebuild.get('progress_pct', 0):.1f} % done {_rebuild_stop(rebuild)}; the whole "
                     f"{human_bytes(int(rebuild.get('member_bytes') or 0))} member would take "
                     f"{_seconds(rebuild.get('duration_s'))} (extrapolated {how})")
        else:
            state = f"finished at {_seconds(rebuild.get('end_s'))}, took {_seconds(rebuild.get('duration_s'))}"
        out.append(f'<p class="callout"><strong>Rebuild</strong> of member{esc(rebuild.get("member", "?"))}: '
                   f"started at {esc(_seconds(rebuild.get('start_s')))}, {esc(rate)}; {esc(state)}.</p>")
    loss = document.get("data_loss")
    if loss:
        members = ", ".join(f"member{m}" for m in loss.get("failed_members") or [])
        why = f" {esc(loss['why'])}." if isinstance(loss.get("why"), str) else ""
        out.append(f'<p class="callout danger"><strong>Data loss</strong> at {esc(_seconds(loss.get("at_s")))}: '
                   f"{esc(members)} failed.{why}</p>")
    truncated = _block(document).get("truncated")
    if truncated:
        out.append(f'<p class="callout warn"><strong>Truncated:</strong> {esc(truncated)}</p>')
    return "".join(out)


def _drive_events_text(document: Dict[str, Any]) -> str:
    """What misbehaving members did (latent errors, read errors, md's retries and
    rewrites, drops at the command timeout), in time order."""
    events = document.get("drive_events") or []
    if not events:
        return ""
    rows = [[f"{e['at_s']:.3f} s" if finite(e.get("at_s")) else "-", f"member{e.get('member', '?')}", e.get("event", "?")]
            for e in events[:MAX_EVENT_ROWS]]
    caption = "Drive events"
    if len(events) > MAX_EVENT_ROWS:
        caption += f" (first {MAX_EVENT_ROWS} of {len(events)}; all are in the JSON's drive_events)"
    return _table(["at", "member", "event"], rows, numeric_from=3, caption=caption)


def _page_cache_text(document: Dict[str, Any]) -> str:
    """The host page cache of a buffered run, as a table."""
    cache = page_cache_numbers(document)
    if not cache:
        return ""
    rows = [[human_bytes(int(cache["ram_bytes"])), f"{cache['hit_ratio']:.3f}",
             human_bytes(int(cache["read_from_array_bytes"])), human_bytes(int(cache["written_back_bytes"])),
             _seconds(cache["throttled_ns"] / 1e9), human_bytes(int(cache["peak_dirty_bytes"]))]]
    return ("<h4>Page cache</h4>" + _table(["RAM", "read hit ratio", "read from array", "written back",
                                            "writers throttled", "peak dirty"], rows))


def _chips(document: Dict[str, Any], extra: Sequence[Tuple[str, str]] = ()) -> str:
    block = _block(document)
    if is_measured(document):
        chips = [("measured", str(block.get("tool_version") or document.get("fio version") or "fio"))]
        chips += [("raidlab", str(block["version"]))] if block.get("version") else []
    else:
        chips = [("seed", str(block.get("seed", "?"))), ("raidlab", str(block.get("version", "?")))]
    if finite(block.get("simulated_ns")):
        chips.append(("simulated", f"{block['simulated_ns'] / 1e9:.3f} s"))
    if finite(block.get("events")):
        chips.append(("events", f"{block['events']:,}"))
    chips.extend(extra)
    out = "".join(f'<span class="chip"><span class="chip-key">{esc(k)}</span> {esc(v)}</span>' for k, v in chips)
    if document.get("data_loss"):
        out += '<span class="chip danger">data loss</span>'
    return f'<p class="chips">{out}</p>'


def run_card(document: Dict[str, Any], heading: str, anchor: str) -> str:
    """One run: its numbers, charts, and (collapsed) the configuration it resolved to."""
    lines = [(name, color, None, cdf_points(document, d))
             for d, name, color in (("read", "read", svg.READ_COLOR), ("write", "write", svg.WRITE_COLOR))]
    lines = [line for line in lines if line[3]]
    figures = [_figure(utilisation_chart(document, f"{'Device' if is_measured(document) else 'Member'} "
                                                   f"utilisation — {heading}"),
                       "Share of the run each member was busy; hover a bar for reads, writes and queue depth.")]
    if lines:
        figures.append(_figure(cdf_chart(f"Latency CDF — {heading}", lines,
                                         note="whole run: fio percentile points 1 %–99.99 %"),
                               "Colour is the direction (read, write). Read right to see the slow tail: "
                               "where a line reaches 99 % is the whole run's p99 latency (fio's jobs[]; "
                               "the headline figures cover their stated basis)."))
    timeline = timeline_chart(document, f"{'Rebuild timeline' if document.get('rebuild') else 'Timeline'} — {heading}")
    if timeline:
        figures.append(_figure(timeline, "Per 1 s window: IOPS, latency p50/p99 and rebuild progress; "
                                         "background colour is the array state.", wide=True))
    block = _block(document)
    described = describe_run(document)
    resolved = json.dumps(block, indent=2, sort_keys=False, default=str)
    fio_version = document.get("fio version", "")
    return (
        f'<article class="run" id="{esc(anchor)}">'
        f"<h3>{esc(heading)}</h3>"
        f"{_chips(document)}"
        f'<p class="desc">{esc(described[0])}<br><span class="muted">workload:</span> '
        f"{esc(described[1])}</p>"
        f"{_job_table(document)}{_page_cache_text(document)}{_rebuild_text(document)}{_drive_events_text(document)}"
        f"{_phase_table(document)}"
        f'<div class="grid">{"".join(figures)}</div>'
        f"<details><summary>Resolved configuration, seed and version "
        f'<span class="muted">({esc(fio_version)})</span></summary>'
        f"<pre><code>{esc(resolved)}</code></pre></details>"
        f"</article>"
    )


def _summary_rows(entries: Sequence[Tuple[str, str, Dict[str, Any]]]) -> List[List[Any]]:
    rows = []
    for label, anchor, doc in entries:
        rebuild = doc.get("rebuild")
        if rebuild:
            rebuild_text = _seconds(rebuild.get("duration_s")) + (" (est.)" if rebuild.get("extrapolated") else "")
        else:
            rebuild_text = "–"
        block = _block(doc)
        rows.append([_Raw(f'<a href="#{esc(anchor)}">{esc(label)}</a>'),
                     _num(_iops(doc, "read")), _num(_iops(doc, "write")), f"{_mib_s(doc):,.1f}",
                     _ms(_headline_ms(doc, "read", 99)), _ms(_headline_ms(doc, "write", 99)),
                     rebuild_text, "yes" if doc.get("data_loss") else "no",
                     "measured" if is_measured(doc) else str(block.get("seed", "?")),
                     str(block.get("version") or "–"), _basis(doc)])
    return rows


_SUMMARY_HEADERS = ["run", "read IOPS", "write IOPS", "MiB/s", "read p99 ms", "write p99 ms",
                    "rebuild time", "data loss", "seed", "raidlab", "basis"]


def runs_overview(runs: Sequence[Tuple[str, str, Dict[str, Any]]]) -> str:
    """Across several runs: IOPS bars (read, write) and latency CDFs per direction."""
    labels = [label for label, _, _ in runs]
    values = {}
    for label, _, doc in runs:
        values[(label, "read")] = _iops(doc, "read")
        values[(label, "write")] = _iops(doc, "write")
    figures = [_figure(svg.bar_chart("IOPS per run", labels, [("read", svg.READ_COLOR), ("write", svg.WRITE_COLOR)],
                                     values, Axis("IOPS (I/O per s)"), "run (array and workload)", unit="IOPS"))]
    for direction in DIRECTIONS:
        lines = [(label, *_run_style(i), cdf_points(doc, direction)) for i, (label, _, doc) in enumerate(runs)]
        lines = [line for line in lines if line[3]]
        if lines:
            figures.append(_figure(cdf_chart(f"{direction.capitalize()} latency CDF per run", lines),
                                   "Colour (and, past ten runs, line style) is the run."))
    return f'<div class="grid">{"".join(figures)}</div>'


#: Line styles beyond the palette's ten colours (runs side by side): dashed, then dotted.
_RUN_DASHES = (None, "7 4", "2 3")


def _run_style(index: int) -> Tuple[str, Optional[str]]:
    """The colour and dash of the ``index``-th run's line: no two of 30 runs are drawn alike."""
    n = len(svg.PALETTE)
    return svg.PALETTE[index % n], _RUN_DASHES[(index // n) % len(_RUN_DASHES)]


#: How each state's line is drawn, in words (the legend and the caption).
_STATE_STYLE = {"optimal": "solid", "degraded": "dashed", "rebuilding": "dotted"}


def _comparison_cdfs(entries: Sequence[Dict[str, Any]], states: Sequence[str]) -> List[str]:
    """Latency CDFs of a comparison: one chart per workload and direction (small multiples),
    colour the design and line style (dash, point marker) the state, each explained in the
    legend. Solid optimal lines are drawn first and widest, so lines over them stay visible."""
    workloads = list(dict.fromkeys(e.get("workload") for e in entries))
    designs = list(dict.fromkeys(e["design"] for e in entries))
    colour = {d: svg.PALETTE[i % len(svg.PALETTE)] for i, d in enumerate(designs)}
    by_key = {(e.get("workload"), e["design"], e["state"]): e["document"] for e in entries}
    figures = []
    for workload in workloads:
        for direction in DIRECTIONS:
            lines = []
            for state in states:
                for design in designs:
                    doc = by_key.get((workload, design, state))
                    pts = cdf_points(doc, direction) if doc is not None else []
                    if pts:
                        lines.append((f"{design} · {state}", colour[design], svg.STATE_DASH.get(state), pts,
                                      svg.STATE_SYMBOL.get(state, "circle"), svg.STATE_WIDTH.get(state, 2.2)))
            if not lines:
                continue
            shown_designs = [d for d in designs if any(line[0].startswith(f"{d} · ") for line in lines)]
            shown_states = [s for s in states if any(line[0].endswith(f" · {s}") for line in lines)]
            legend = [LegendItem(d, colour[d], "line") for d in shown_designs]
            legend += [LegendItem(f"{s} ({_STATE_STYLE.get(s, 'line')})", svg.INK, "line", svg.STATE_DASH.get(s),
                                  svg.STATE_SYMBOL.get(s, "circle"), svg.STATE_WIDTH.get(s, 2.2)) for s in shown_states]
            title = f"{direction.capitalize()} latency CDF" + (f" — {workload}" if workload else " by design and state")
            styles = ", ".join(f"{_STATE_STYLE.get(s, 'line')} {s}" for s in shown_states)
            caption = (f"Colour is the design ({', '.join(shown_designs)}); line style is the array state "
                       f"({styles}).")
            if len(workloads) > 1:
                caption += " One chart per workload."
            caption += (" The curves cover the whole run (fio's jobs[]); the tables' and bars' figures "
                        "cover each run's basis (a steady state leaves out a cache fill).")
            figures.append(_figure(cdf_chart(title, lines, note="whole run: fio percentile points 1 %–99.99 %",
                                             legend=legend), caption))
    return figures


def _verdicts_html(verdicts: Sequence[str]) -> str:
    """The per-design verdict lines, as ``raidlab compare`` prints them under its table."""
    if not verdicts:
        return ""
    items = "".join(f"<li>{esc(line)}</li>" for line in verdicts)
    return (f'<div class="callout verdicts"><strong>Verdict per design</strong> '
            f'<span class="muted">(as raidlab compare prints it)</span><ul>{items}</ul></div>')


def _label(entry: Dict[str, Any], several: bool) -> str:
    """A comparison entry's bar-chart group: its design, and its workload when there are several."""
    return f"{entry['design']} · {entry['workload']}" if several and entry.get("workload") else entry["design"]


def _comparison_table(entries: Sequence[Dict[str, Any]], anchors: List[str], several: bool) -> str:
    """One row per design, workload and state; usable capacity as the terminal prints it (GB)."""
    rows = []
    for entry, anchor in zip(entries, anchors):
        doc = entry["document"]
        rebuild = doc.get("rebuild")
        rebuild_text = (_seconds(rebuild.get("duration_s")) + (" (est.)" if rebuild.get("extrapolated") else "")
                        if rebuild else "–")
        capacity = entry.get("capacity_bytes")
        rows.append([_Raw(f'<a href="#{esc(anchor)}">{esc(entry["design"])}</a>'),
                     *([entry.get("workload") or "–"] if several else []), entry["state"],
                     f"{capacity / 1e9:.0f}" if finite(capacity) else "–",
                     _num(_iops(doc)), f"{_mib_s(doc):,.1f}",
                     _ms(_headline_ms(doc, "read", 50)), _ms(_headline_ms(doc, "read", 99)),
                     _ms(_headline_ms(doc, "write", 50)), _ms(_headline_ms(doc, "write", 99)),
                     rebuild_text, "yes" if doc.get("data_loss") else "no", _basis(doc)])
    first = 3 if several else 2
    return _table(["design", *(["workload"] if several else []), "state", "usable GB", "IOPS", "MiB/s",
                   "read p50 ms", "read p99 ms", "write p50 ms", "write p99 ms", "rebuild time", "data loss",
                   "basis"], rows, numeric_from=first)


def comparison_section(entries: Sequence[Dict[str, Any]], anchors: List[str],
                       verdicts: Sequence[str] = ()) -> str:
    """The verdict lines, IOPS and latency per design and state (grouped bars), latency CDFs per
    workload, and a table. Entries are ``{"design", "state", "document"}`` with optionally
    ``"workload"`` (the CDFs get one chart per workload) and ``"capacity_bytes"``."""
    several = len({e.get("workload") for e in entries}) > 1
    designs: List[str] = []
    states: List[str] = []
    for entry in entries:
        if _label(entry, several) not in designs:
            designs.append(_label(entry, several))
        if entry["state"] not in states:
            states.append(entry["state"])
    first_seen = list(states)
    states.sort(key=lambda s: (STATE_ORDER.index(s) if s in STATE_ORDER else len(STATE_ORDER), first_seen.index(s)))
    series = [(state, _state_color(state, i)) for i, state in enumerate(states)]
    by_key = {(_label(e, several), e["state"]): e["document"] for e in entries}
    iops = {k: _iops(doc) for k, doc in by_key.items()}
    tips = {k: f"{k[0]} · {k[1]}: {fmt_num(_iops(doc))} IOPS (read {fmt_num(_iops(doc, 'read'))}, "
               f"write {fmt_num(_iops(doc, 'write'))})" for k, doc in by_key.items()}
    figures = [_figure(svg.bar_chart("IOPS by design and state", designs, series, iops,
                                     Axis("IOPS (read + write, I/O per s)"), "design (array state per bar)",
                                     unit="IOPS", tips=tips),
                       "Higher is better. Hover a bar for the read/write split.")]
    for direction in DIRECTIONS:
        p99 = {k: _headline_ms(doc, direction, 99) for k, doc in by_key.items()}
        p50 = {k: _headline_ms(doc, direction, 50) for k, doc in by_key.items()}
        if not any(finite(v) for v in p99.values()):
            continue
        figures.append(_figure(svg.bar_chart(
            f"{direction.capitalize()} latency by design and state", designs, series,
            {k: v for k, v in p99.items() if finite(v)}, Axis(f"{direction} latency p99 (ms)"),
            "design (array state per bar)", unit="ms",
            markers={k: v for k, v in p50.items() if finite(v)}, marker_label="p50"),
            "Bars are p99, the dark tick is p50. Lower is better."))
    figures += _comparison_cdfs(entries, states)
    return (f'{_verdicts_html(verdicts)}<div class="grid">{"".join(figures)}</div>'
            f"{_comparison_table(entries, anchors, several)}")


def _hours(value: Any) -> str:
    """Rebuild hours as plan's table prints them: one decimal, "never" for a rebuild that does
    not finish (None in its JSON)."""
    return "never" if value is None or value == math.inf else f"{value:.1f}"


def _plan_rows(points: Sequence[Dict[str, Any]], designs: Dict[str, Dict[str, Any]],
               cost: Any) -> Tuple[List[str], List[List[Any]]]:
    """The candidates' table: with the plan's designs (its JSON's ``designs``), the columns of
    ``raidlab plan``'s own table (TB, degraded IOPS, rebuild hours under load and idle, P(loss)
    or failures survived). ``cost`` writes a cost."""
    ordered = sorted(points, key=lambda p: (not p.get("chosen"), not p.get("pareto"),
                                            p.get("cost") if finite(p.get("cost")) else math.inf))
    risk_known = any(p.get("risk") is not None for p in points if p.get("chosen")) or not designs
    idle = any(d.get("repair") for d in designs.values())
    headers = ["design", "cost", "IOPS", "p99 ms"]
    if designs:
        headers[2:2] = ["TB"]
        headers += ["degraded IOPS", "rebuild h"] + (["idle h"] if idle else [])
    headers += ["P(loss)" if risk_known else "survives"] + (["basis"] if designs else []) + ["Pareto", ""]
    rows = []
    for point in ordered:
        design = designs.get(point.get("label"), {})
        row = [point.get("label", "?"), cost(point.get("cost")), _num(point.get("iops")), _ms(point.get("p99_ms"))]
        if designs:
            capacity = design.get("capacity_bytes")
            row[2:2] = [f"{capacity / 1e12:.2f}" if finite(capacity) else "–"]
            degraded, rebuild = design.get("degraded") or {}, design.get("rebuild")
            row += [_num(degraded.get("iops")), _hours(rebuild.get("hours")) if rebuild else "–"]
            if idle:
                row.append(_hours((design.get("repair") or {}).get("hours")) if design.get("repair") else "–")
        row.append(_prob(point.get("risk")) if risk_known else str(design.get("survives_failures", "–")))
        if designs:
            row.append((design.get("optimal") or {}).get("basis", "–"))
        missed = ", ".join(design.get("failed_targets") or [])
        row += ["yes" if point.get("pareto") else "",
                "chosen" if point.get("chosen") else (f"misses {missed}" if missed else "")]
        rows.append(row)
    return headers, rows


def _plan_text(plan: Dict[str, Any]) -> Tuple[str, str]:
    """The plan's reasoning lines and its setup script, as ``raidlab plan`` prints them."""
    why = "".join(f"<li>{esc(line)}</li>" for line in plan.get("explanation") or [])
    why_html = f'<h3>Why</h3><ul class="why">{why}</ul>' if why else ""
    setup = plan.get("setup")
    if not setup:
        return why_html, ""
    # Comment lines (the why of each command) muted, so the commands stand out.
    script = "\n".join(f'<span class="muted">{esc(line)}</span>' if line.startswith("#") else esc(line)
                       for line in setup_script.render(setup))
    return why_html, (f'<h3>Setup for {esc(plan.get("winner", "the chosen design"))}</h3>'
                      f'<pre class="script"><code>{script}</code></pre>')


def pareto_section(points: Sequence[Dict[str, Any]], plan: Optional[Dict[str, Any]] = None) -> str:
    """The planner's candidates (chart and table); with its whole JSON document (``plan``) also
    why the winner wins, each design's degraded IOPS and rebuild hours, and the setup script."""
    plan = plan or {}
    currency = next((p.get("currency") for p in points if p.get("currency")), None)
    unit = (plan.get("request") or {}).get("cost_unit")
    if unit in ("drives", "price"):  # the plan's table writes "5 drives" or "$750"
        cost_label = "cost (drives)" if unit == "drives" else "cost ($)"
    else:
        cost_label = f"cost ({currency})" if currency else "cost (price units)"
    chosen = next((p for p in points if p.get("chosen")), None)
    note = f"{sum(1 for p in points if p.get('pareto'))} of {len(points)} candidates on the front"
    figures = [_figure(svg.scatter_pareto("Planner: cost vs IOPS, risk as colour", points, cost_label,
                                          "IOPS (I/O per s)", note=note, width=WIDE),
                       "Up and left is better. Designs on the front are not beaten on cost, IOPS and "
                       "latency at once; hover a dot for its numbers. Colour is P(loss) over the "
                       "mission, in %, as in the table.", wide=True)]
    designs = {d.get("name"): d for d in plan.get("designs") or [] if isinstance(d, dict)}
    if designs:  # the plan's own costs: "$750" or "5 drives", as its table prints them
        priced = (plan.get("request") or {}).get("cost_unit") != "drives"
        headers, rows = _plan_rows(points, designs, lambda c: money(c, priced) if finite(c) else "–")
    else:
        headers, rows = _plan_rows(points, designs, lambda c: _num(c, 0 if (c or 0) >= 100 else 2))
        headers[1] = cost_label
    table = _table(headers, rows)
    lead = (f'<p class="lead">Chosen: <strong>{esc(chosen.get("label", "?"))}</strong>.</p>'
            if chosen else "")
    why, setup = _plan_text(plan)
    return f'{lead}{why}<div class="grid">{"".join(figures)}</div>{table}{setup}'


def _g(value: Any, suffix: str = "") -> str:
    """A number the user gave, as ``raidlab reliability`` echoes it (``:g``), or "–"."""
    return f"{value:g}{suffix}" if finite(value) else "–"


def _reliability_inputs(inputs: Dict[str, Any], layout: Dict[str, Any]) -> str:
    """What the reliability model was given (its JSON's ``inputs``): drives' AFR/MTTF, the repair
    time (MTTR) and where it came from, the URE rate, latent errors and scrubs, the mission."""
    if not inputs:
        return ""
    repair = inputs.get("repair") or {}
    afr = (f"{_g(inputs.get('afr_pct'))} %/y (MTTF {_num(inputs.get('mttf_hours'))} h)"
           if finite(inputs.get("afr_pct")) else f"from the MTTF given, {_num(inputs.get('mttf_hours'))} h")
    mttr = (f"{_g(repair.get('total_hours'))} h: rebuild {_g(repair.get('rebuild_hours'))} h "
            f"(from {repair.get('rebuild_source', '?')}), detect {_g(repair.get('detect_hours'))} h, "
            f"replace {_g(repair.get('replace_hours'))} h; {inputs.get('repair_policy', '?')} repair policy, "
            f"{inputs.get('repair_distribution', '?')} repair times in the Monte Carlo")
    lse = inputs.get("lse_per_disk_year")
    latent = (f"{_g(lse)} per disk-year, scrub every "
              + (f"{_g(inputs.get('scrub_days'))} days" if inputs.get("scrub_days") else "never")
              if lse else "off")
    level = f"raid{layout.get('level', inputs.get('level', '?'))}"
    drive = f" {inputs['drive']}" if isinstance(inputs.get("drive"), str) else ""
    rows = [
        ["array", f"{level} {layout.get('layout') or ''} × {layout.get('devices', inputs.get('devices', '?'))}"
                  f"{drive} drives of {_g(inputs.get('capacity_tb'))} TB".replace("  ", " ")],
        ["AFR", afr],
        ["Weibull shape", f"{_g(inputs.get('weibull_shape'))} (Monte Carlo lifetimes)"],
        ["MTTR (repair time)", mttr],
        ["URE rate (UBER)", f"{_g(inputs.get('uber'))} per bit read"
                            + ("; a URE in a rebuild loses the array" if inputs.get("ure_fails_array") else "")],
        ["latent sector errors", latent],
        ["mission", f"{_g(inputs.get('mission_years'))} years"],
    ]
    return _table(["", "value"], rows, numeric_from=2, caption="Inputs", table_class="prose")


def _reliability_results(data: Dict[str, Any]) -> str:
    """The results as ``raidlab reliability`` prints them: the exact chain's column beside the
    Monte Carlo's, so each P(loss) says which model it comes from."""
    mc = data.get("monte_carlo") or {}
    mission = _g(data.get("mission_years"))

    def carlo(key: str, fmt) -> str:
        return with_ci(mc.get(key), fmt) if mc else "off"

    rows = [["MTTDL", years_text(data.get("mttdl_years")), "–"],
            ["MTTDL, textbook approximation (drive failures only)", years_text(data.get("mttdl_years_approx")), "–"],
            [f"P(array loss in {mission} y)", _prob(data.get("p_array_loss")), carlo("p_array_loss", _prob)],
            [f"P(any sector lost in {mission} y)", _prob(data.get("p_sector_loss")), carlo("p_sector_loss", _prob)],
            ["expected bytes lost per year", decimal_bytes(data.get("expected_bytes_lost_per_year")),
             carlo("expected_bytes_lost_per_year", decimal_bytes)]]
    exact = (data.get("exact_model") or {}).get("kind", "continuous-time Markov chain, exponential lifetimes")
    how = f"Exact Markov chain: {exact}."
    if mc:
        how += f" Monte Carlo: {mc.get('model', 'simulated lifetimes')}; {mc.get('trials', 0):,} trials, seed {mc.get('seed', '?')}."
    return (_table(["", "exact Markov chain (exponential)", "Monte Carlo (Weibull), 95 % CI"], rows, caption="Results")
            + f'<p class="muted">{esc(how)}</p>')


def _reliability_curve(data: Dict[str, Any]) -> str:
    """The exact chain's P(array loss) by year of the mission, in % (log scale when it spans
    more than two decades)."""
    curve = [(c.get("years"), c.get("p_loss") * 100) for c in data.get("curve") or []
             if finite(c.get("years")) and finite(c.get("p_loss"))]
    if not curve:
        return ""
    positive = [p for _, p in curve if p > 0]
    if positive and max(positive) / min(positive) > 100:
        points, axis = [(y, p) for y, p in curve if p > 0], Axis("P(data loss) (%, log scale)", kind="log")
    else:
        points, axis = curve, Axis("P(data loss) (%)")
    chart = svg.line_chart("Probability of data loss over the mission (exact Markov chain)",
                           Axis("mission time (years)", lo=0.0),
                           [Panel(axis, [Series("P(array loss), exact Markov chain", "#d6336c", points, unit="%",
                                                x_unit="years", markers=len(points) <= 40)], height=240)],
                           width=WIDE)
    caption = "Chance the array has lost data by each year of service (exact Markov chain, exponential lifetimes)."
    return f'<div class="grid">{_figure(chart, caption, wide=True)}</div>'


def reliability_section(data: Dict[str, Any]) -> str:
    """Headline tiles (each saying which model it comes from), the inputs, the chain's and the
    Monte Carlo's results side by side, and the loss curve."""
    def years(key: str) -> Optional[str]:  # as the results table (and the terminal) write it
        return years_text(data[key]) if finite(data.get(key)) else None

    mission = f"over {fmt_num(data['mission_years'])} years" if finite(data.get("mission_years")) else "over the mission time"
    lost = data.get("expected_bytes_lost_per_year")
    carlo = ((data.get("monte_carlo") or {}).get("p_array_loss") or {}).get("mean")
    tiles = [(key, value, note) for key, value, note in (
        ("MTTDL", years("mttdl_years"), "mean time to data loss, exact Markov chain"),
        ("MTTDL (approx.)", years("mttdl_years_approx"), "closed-form approximation"),
        ("P(array loss)", _prob(data["p_array_loss"]) if finite(data.get("p_array_loss")) else None,
         f"{mission}, exact Markov chain"),
        ("P(array loss)", _prob(carlo) if finite(carlo) else None, f"{mission}, Monte Carlo (Weibull)"),
        ("P(sector loss)", _prob(data["p_sector_loss"]) if finite(data.get("p_sector_loss")) else None,
         "an unreadable sector during a rebuild, exact Markov chain"),
        ("Expected loss", f"{decimal_bytes(lost)}/year" if finite(lost) else None,
         "bytes lost per year, expected, exact Markov chain"),
    ) if value is not None]
    html = '<div class="tiles">' + "".join(
        f'<div class="tile"><div class="tile-key">{esc(k)}</div><div class="tile-value">{esc(v)}</div>'
        f'<div class="tile-note">{esc(n)}</div></div>' for k, v, n in tiles) + "</div>"
    html += _reliability_inputs(data.get("inputs") or {}, data.get("layout") or {})
    if data.get("inputs") or data.get("monte_carlo"):
        html += _reliability_results(data)
    return html + _reliability_curve(data)


def _quantiles(values: Sequence[float], count: int) -> List[float]:
    """``values`` at the evenly spaced probabilities (i + ½)/count, as the demerit samples them."""
    ordered = sorted(values)
    n = len(ordered)
    return [ordered[min(int((i + 0.5) / count * n), n - 1)] for i in range(count)] if n else []


def replay_section(replays: Sequence[Dict[str, Any]], quantiles: int = 200) -> str:
    """DiskSim validation replays (:func:`raidlab.disksim.replay` results): the demerit table,
    then per drive both service-time CDFs and, below them, the horizontal distance between the
    CDFs at each quantile (the demerit is the RMS of that distance over 10 000 quantiles)."""
    rows = []
    for r in replays:
        published = r.get("published_demerit_ms")
        ratio = r["demerit_ms"] / published if finite(published) and published > 0 else None
        rows.append([r.get("name", "drive"), f"{r['requests']:,}", _num(r["mean_measured_ms"], 3),
                     _num(r["mean_simulated_ms"], 3), _num(r["demerit_ms"], 3), f"{_num(r['demerit_pct'], 2)} %",
                     _num(published, 3) if finite(published) else "–", f"{ratio:.2f}×" if ratio else "–"])
    html = _table(["drive", "requests", "measured mean (ms)", "raidlab mean (ms)", "demerit (ms)",
                   "demerit (%)", "DiskSim's (ms)", "ratio"], rows,
                  caption="Demerit: RMS horizontal distance between the measured and simulated "
                          "service-time CDFs (Ruemmler & Wilkes 1994); ratio: raidlab's over DiskSim's.")
    figures = []
    for r in replays:
        measured, simulated = _quantiles(r["measured_ms"], quantiles), _quantiles(r["simulated_ms"], quantiles)
        percent = [(i + 0.5) / quantiles * 100 for i in range(quantiles)]
        cdfs = Panel(Axis("requests completed (%)", lo=0.0, hi=100.0), [
            Series("measured on the drive", "#1f2328", list(zip(measured, percent)), unit="%", x_unit="ms",
                   markers=False),
            Series("simulated by raidlab", "#4269d0", list(zip(simulated, percent)), dash="6 3", unit="%",
                   x_unit="ms", markers=False)], height=240)
        chart = svg.line_chart(f"{r.get('name', 'drive')}: service-time CDFs",
                               Axis("service time (ms)", lo=0.0), [cdfs], width=WIDE)
        distance = [(p, s - m) for p, s, m in zip(percent, simulated, measured)]
        low = min([d for _, d in distance] + [0.0])
        gap = Panel(Axis("raidlab − measured (ms)", lo=low), [
            Series("simulated − measured at the same quantile", "#d6336c", distance, unit="ms", x_unit="%",
                   markers=False)], height=150)
        gap_chart = svg.line_chart(f"{r.get('name', 'drive')}: horizontal distance between the CDFs",
                                   Axis("quantile (%)", lo=0.0, hi=100.0), [gap], width=WIDE)
        caption = (f"{r['requests']:,} requests replayed one at a time; demerit {_num(r['demerit_ms'], 3)} ms "
                   f"({_num(r['demerit_pct'], 2)} % of the measured mean).")
        figures.append(_figure(chart, caption, wide=True) + _figure(gap_chart, wide=True))
        warnings = r.get("warnings") or []
        if warnings:
            items = "".join(f"<li>{esc(w)}</li>" for w in warnings)
            figures.append(f"<details><summary>{len(warnings)} DiskSim parameters raidlab does not model "
                           f"(or approximates)</summary><ul>{items}</ul></details>")
    return html + f'<div class="grid">{"".join(figures)}</div>'


# --- the page -----------------------------------------------------------------------------------

CSS = """
:root{--bg:#f6f8fa;--card:#fff;--text:#1f2328;--muted:#59636e;--border:#d1d9e0;--accent:#0969da;
--grid:#d8dee4;--danger:#b91c1c;--warn:#9a6700;--code:#f6f8fa;color-scheme:light dark}
@media (prefers-color-scheme:dark){:root{--bg:#0d1117;--card:#151b23;--text:#e6edf3;--muted:#9198a1;
--border:#3d444d;--accent:#4493f8;--grid:#2a313c;--danger:#f85149;--warn:#d29922;--code:#0d1117}}
*{box-sizing:border-box}
html{-webkit-text-size-adjust:100%}
body{margin:0;background:var(--bg);color:var(--text);font:15px/1.5 system-ui,-apple-system,"Segoe UI",
Roboto,"Helvetica Neue",Arial,sans-serif}
main{max-width:1240px;margin:0 auto;padding:24px 20px 48px}
header.page{margin-bottom:8px}
h1{font-size:1.75rem;line-height:1.25;margin:0 0 4px;letter-spacing:-.01em}
h2{font-size:1.3rem;margin:36px 0 12px;padding-bottom:6px;border-bottom:1px solid var(--border)}
h3{font-size:1.08rem;margin:0 0 6px}
a{color:var(--accent);text-decoration:none}a:hover{text-decoration:underline}
.muted{color:var(--muted)}
.lead{font-size:1.02rem}
nav.toc{display:flex;flex-wrap:wrap;gap:6px 14px;margin:12px 0 4px;font-size:.93rem}
.grid{display:grid;grid-template-columns:repeat(auto-fit,minmax(min(100%,460px),1fr));gap:16px;margin:14px 0}
.figure{margin:0;background:var(--card);border:1px solid var(--border);border-radius:10px;padding:8px 8px 6px;
min-width:0;overflow-x:auto}
.figure.wide{grid-column:1/-1}
.figure figcaption{color:var(--muted);font-size:.85rem;padding:2px 6px 2px}
svg.chart{display:block;width:100%;height:auto;min-width:440px}
.figure.wide svg.chart{min-width:700px}
svg.chart .chart-title,svg.chart .legend-label,svg.chart .axis-label,svg.chart .group-label,
svg.chart .value,svg.chart .chosen-label,svg.chart .colour-ramp text:first-child{fill:var(--text)}
svg.chart .tick,svg.chart .chart-note,svg.chart .band-label{fill:var(--muted)}
svg.chart .grid{stroke:var(--grid)}
svg.chart .axis-line{stroke:var(--muted)}
svg.chart .ink{stroke:var(--text)}
svg.chart .hollow{fill:var(--card)}
svg.chart .halo{stroke:var(--card)}
svg.chart .chosen-label{stroke:var(--card)}
svg.chart .bar:hover,svg.chart .point:hover{opacity:.8}
.run{background:var(--card);border:1px solid var(--border);border-radius:12px;padding:16px 18px;margin:16px 0}
.run .grid .figure{border-color:var(--border);background:transparent}
.desc{margin:6px 0 10px}
.chips{display:flex;flex-wrap:wrap;gap:6px;margin:4px 0 8px;padding:0}
.chip{display:inline-block;border:1px solid var(--border);border-radius:999px;padding:1px 10px;font-size:.82rem;
background:var(--bg);font-variant-numeric:tabular-nums}
.chip-key{color:var(--muted)}
.chip.danger{color:#fff;background:var(--danger);border-color:var(--danger);font-weight:600}
.callout{border-left:4px solid var(--accent);background:var(--bg);padding:8px 12px;border-radius:4px;margin:10px 0}
.callout.danger{border-color:var(--danger)}.callout.warn{border-color:var(--warn)}
.table-wrap{overflow-x:auto;margin:10px 0}
table{border-collapse:collapse;width:100%;font-size:.9rem;font-variant-numeric:tabular-nums;background:var(--card)}
caption{text-align:left;color:var(--muted);font-size:.85rem;padding:4px 0}
th,td{padding:6px 10px;border-bottom:1px solid var(--border);text-align:left;white-space:nowrap}
thead th{font-weight:600;color:var(--muted);border-bottom:2px solid var(--border)}
tbody tr:nth-child(even){background:color-mix(in srgb,var(--bg) 60%,transparent)}
tbody th{font-weight:500;white-space:normal;min-width:10em}
.num{text-align:right}
details{margin-top:12px;border:1px solid var(--border);border-radius:8px;background:var(--bg)}
details>summary{cursor:pointer;padding:8px 12px;font-weight:500}
details[open]>summary{border-bottom:1px solid var(--border)}
pre{margin:0;padding:12px;overflow:auto;max-height:480px;font:12.5px/1.45 ui-monospace,SFMono-Regular,Menlo,
Consolas,monospace;background:var(--code)}
.tiles{display:grid;grid-template-columns:repeat(auto-fit,minmax(190px,1fr));gap:12px;margin:12px 0}
.tile{background:var(--card);border:1px solid var(--border);border-radius:10px;padding:12px 14px}
.tile-key{color:var(--muted);font-size:.85rem}
.tile-value{font-size:1.45rem;font-weight:600;font-variant-numeric:tabular-nums;margin:2px 0}
.tile-note{color:var(--muted);font-size:.8rem}
.verdicts ul{margin:6px 0 0;padding-left:1.3em}
.verdicts li{margin:2px 0}
ul.why{margin:4px 0 12px;padding-left:1.3em}
table.prose td{white-space:normal}
pre.script{max-height:none;white-space:pre-wrap;overflow-wrap:anywhere;border:1px solid var(--border);border-radius:8px}
svg.chart .ink-fill{fill:var(--text)}
footer{margin-top:40px;color:var(--muted);font-size:.85rem;border-top:1px solid var(--border);padding-top:12px}
@media (max-width:600px){main{padding:16px 10px 32px}h1{font-size:1.4rem}.run{padding:12px 10px}}
@media print{body{background:#fff}.figure,.run,.tile{break-inside:avoid}details{display:none}}
"""


def _provenance(docs: Sequence[Dict[str, Any]], planned: bool, reliability: Optional[dict], replays: bool) -> str:
    """Where the report's numbers come from, for its footer: simulated runs, measured runs (and
    by which fio), the planner's simulations, the reliability model, trace replays."""
    measured = [d for d in docs if is_measured(d)]
    simulated = len(docs) - len(measured)
    sources = []
    if planned:
        sources.append("the planner's simulations of each candidate")
    if simulated:
        sources.append(f"{simulated} simulated run{'s' if simulated != 1 else ''}")
    if measured:
        tools = sorted({str(_block(d).get("tool_version") or d.get("fio version") or "fio") for d in measured})
        sources.append(f"{len(measured)} measured run{'s' if len(measured) != 1 else ''} ({', '.join(tools)})")
    if reliability:
        monte_carlo = reliability.get("monte_carlo") if isinstance(reliability, dict) else None
        sources.append("the reliability model (Markov chain" + (" and Monte Carlo)" if monte_carlo else ")"))
    if replays:
        sources.append("DiskSim trace replays")
    said = ", ".join(sources[:-1]) + (" and " if len(sources) > 1 else "") + (sources[-1] if sources else "")
    return (f"Generated by raidlab from {said or 'no runs'}: every number comes from the documents this "
            "report was made from (see each run's resolved configuration)."
            + (" Same inputs and seed, same report." if simulated or planned or reliability else ""))


def render_html(title: str, runs: list, comparison: Optional[list] = None, pareto: Optional[list] = None,
                reliability: Optional[dict] = None, replays: Optional[list] = None,
                verdicts: Sequence[str] = (), plan: Optional[dict] = None) -> str:
    """The whole report as one HTML string (UTF-8, no external resources). ``verdicts`` are
    compare's per-design lines (:func:`raidlab.compare.verdicts`); ``plan`` is the planner's JSON
    document (its points, designs, reasoning and setup), drawn instead of ``pareto`` alone."""
    runs = list(runs or [])
    comparison = list(comparison or [])
    if plan and not pareto:
        pareto = plan.get("points") or []
    run_entries = [(run_label(doc) if len(runs) > 1 or comparison else "this run", f"run-{i + 1}", doc)
                   for i, doc in enumerate(runs)]
    counts: Dict[str, int] = {}
    for label, _, _ in run_entries:
        counts[label] = counts.get(label, 0) + 1
    numbered: Dict[str, int] = {}
    for i, (label, anchor, doc) in enumerate(run_entries):
        if counts[label] > 1:  # the same array twice (e.g. two seeds): number them
            numbered[label] = numbered.get(label, 0) + 1
            run_entries[i] = (f"{label} #{numbered[label]}", anchor, doc)
    comp_anchors = [f"design-{i + 1}" for i in range(len(comparison))]
    several = len({e.get("workload") for e in comparison}) > 1
    comp_entries = [(f"{_label(e, several)} · {e['state']}", a, e["document"]) for e, a in zip(comparison, comp_anchors)]

    docs = [doc for _, _, doc in run_entries + comp_entries]
    versions = sorted({str(_block(d).get("version")) for d in docs if _block(d).get("version")})
    seeds = sorted({str(_block(d).get("seed")) for d in docs if _block(d).get("seed") is not None},
                   key=lambda s: (len(s), s))

    sections: List[Tuple[str, str, str]] = []  # (id, heading, html)
    if run_entries or comp_entries:
        summary = _table(_SUMMARY_HEADERS, _summary_rows(run_entries + comp_entries), numeric_from=1)
        sections.append(("summary", "Summary", summary))
    if comparison:
        sections.append(("comparison", "Designs compared", comparison_section(comparison, comp_anchors, verdicts)))
    if pareto:
        sections.append(("plan", "Planner: Pareto front", pareto_section(pareto, plan)))
    if reliability:
        sections.append(("reliability", "Reliability", reliability_section(reliability)))
    if replays:
        sections.append(("replay", "DiskSim validation replay", replay_section(replays)))
    if len(run_entries) > 1:
        sections.append(("overview", "Runs side by side", runs_overview(run_entries)))
    if run_entries:
        cards = "".join(run_card(doc, label, anchor) for label, anchor, doc in run_entries)
        sections.append(("runs", "Run" if len(run_entries) == 1 else "Runs", cards))
    if comp_entries:
        cards = "".join(run_card(doc, label, anchor) for label, anchor, doc in comp_entries)
        open_attr = " open" if len(comp_entries) <= 6 else ""
        sections.append(("designs", "Each design and state",
                         f"<details{open_attr}><summary>{len(comp_entries)} simulations: utilisation, "
                         f"latency and timelines per design and state</summary>"
                         f'<div class="details-body">{cards}</div></details>'))

    meta = []
    measured = sum(1 for doc in docs if is_measured(doc))
    if len(docs) > measured:
        simulated = len(docs) - measured
        meta.append(f"{simulated} simulation{'s' if simulated != 1 else ''}")
    if measured:
        meta.append(f"{measured} measured run{'s' if measured != 1 else ''}")
    if replays:
        meta.append(f"{len(replays)} trace replay{'s' if len(replays) != 1 else ''}")
    if versions:
        meta.append("raidlab " + ", ".join(versions))
    if seeds:
        meta.append(("seed " if len(seeds) == 1 else "seeds ") + ", ".join(seeds))
    if len(run_entries) == 1 and not comp_entries:
        meta_line = " · ".join(describe_run(run_entries[0][2]))
    else:
        meta_line = ""
    toc = "".join(f'<a href="#{sid}">{esc(heading)}</a>' for sid, heading, _ in sections)
    body = "".join(f'<section id="{sid}"><h2>{esc(heading)}</h2>{content}</section>'
                   for sid, heading, content in sections)
    if not sections:
        body = '<p class="muted">Nothing to report: no runs were given.</p>'
    return (
        "<!DOCTYPE html>\n"
        '<html lang="en"><head><meta charset="utf-8">'
        '<meta name="viewport" content="width=device-width, initial-scale=1">'
        '<meta name="generator" content="raidlab">'
        f"<title>{esc(title)}</title><style>{CSS}</style></head><body><main>"
        f'<header class="page"><h1>{esc(title)}</h1>'
        f'<p class="muted">{esc(" · ".join(meta))}</p>'
        + (f'<p class="desc">{esc(meta_line)}</p>' if meta_line else "")
        + f'<nav class="toc">{toc}</nav></header>{body}'
        f"<footer>{esc(_provenance(docs, bool(pareto), reliability, bool(replays)))}</footer>"
        "</main></body></html>\n"
    )
