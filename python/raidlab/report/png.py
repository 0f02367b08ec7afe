"""The report's charts as PNG files (matplotlib, Agg backend): for slides and tickets.

Same data as the HTML report: IOPS and p99 latency per design and state, latency CDFs,
per-member utilisation, the rebuild timeline, and the planner's Pareto front.
"""

from __future__ import annotations

import contextlib
import logging
import warnings
from pathlib import Path
from typing import Any, Dict, Iterator, List, Optional, Sequence, Tuple

from raidlab import notes, outputs
from raidlab.report import headline
from raidlab.report.latency import FIO_PERCENTILES, percentile_key, points_ms
from raidlab.errors import ConfigError

#: The keys of fio's percentile table, in order ("1.000000" ... "99.990000").
PERCENTILE_KEYS = tuple(percentile_key(p) for p in FIO_PERCENTILES)
STATE_COLOURS = {"optimal": "#3a9d4a", "degraded": "#e8a317", "rebuilding": "#e8604c"}


def _pyplot():
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        raise ConfigError("--png needs matplotlib: pip install matplotlib") from None
    return plt


class _Collect(logging.Handler):
    """Keeps matplotlib's log records (e.g. ``findfont``) instead of printing them."""

    def __init__(self) -> None:
        super().__init__(logging.WARNING)
        self.messages: List[str] = []

    def emit(self, record: logging.LogRecord) -> None:
        self.messages.append(record.getMessage())


@contextlib.contextmanager
def _warnings_as_notes() -> Iterator[None]:
    """Whatever matplotlib warns about while the charts are drawn (Python warnings print the
    source line too; its log records go to stderr as they are) becomes one
    ``raidlab: note: --png: ...`` line per distinct message, after the drawing."""
    logger = logging.getLogger("matplotlib")
    handler, propagate = _Collect(), logger.propagate
    logger.addHandler(handler)
    logger.propagate = False
    try:
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            yield
    finally:
        logger.removeHandler(handler)
        logger.propagate = propagate
    said = [str(w.message) for w in caught] + handler.messages
    notes.emit([" ".join(m.split()) for m in dict.fromkeys(said)], "--png")


def _legend(axes, **options) -> None:
    """A legend when something is labelled (matplotlib warns on an empty one: an idle run)."""
    if axes.get_legend_handles_labels()[0]:
        axes.legend(**options)


def _totals(document: Dict[str, Any]) -> Dict[str, float]:
    """The bars' figures: the run's headline IOPS and the larger of its read and write p99
    (:mod:`raidlab.report.headline`, over its basis), as the HTML report's bars show them."""
    figures = headline.of(document)
    p99s = [figures[d]["p99_ms"] for d in headline.DIRECTIONS if figures[d]["p99_ms"] is not None]
    return {"iops": figures["iops"], "p99_ms": max(p99s, default=0.0)}


def _save(figure, directory: Path, name: str, written: List[Tuple[Path, bytes]]) -> None:
    """Renders the chart; :func:`raidlab.outputs.write_files` writes every chart at the end."""
    figure.tight_layout()
    written.append((directory / name, outputs.figure_png(figure, dpi=110)))


def _bars(plt, entries: Sequence[Dict[str, Any]], metric: str, label: str, directory: Path, name: str, written):
    designs = list(dict.fromkeys(e["design"] for e in entries))
    states = list(dict.fromkeys(e["state"] for e in entries))
    figure, axes = plt.subplots(figsize=(max(6, 1.6 * len(designs)), 4))
    width = 0.8 / max(len(states), 1)
    for s_index, state in enumerate(states):
        values = [next((_totals(e["document"])[metric] for e in entries if e["design"] == d and e["state"] == state), 0)
                  for d in designs]
        positions = [d + (s_index - (len(states) - 1) / 2) * width for d in range(len(designs))]
        axes.bar(positions, values, width, label=state, color=STATE_COLOURS.get(state))
    axes.set_xticks(range(len(designs)), designs, rotation=20, ha="right")
    axes.set_ylabel(label)
    axes.set_title(f"{label} by design and state")
    _legend(axes)
    _save(figure, directory, name, written)
    plt.close(figure)


#: Line style per array state, as the HTML report draws them (solid, dashed, dotted).
STATE_STYLES = {"optimal": "-", "degraded": "--", "rebuilding": ":"}
#: Point marker per direction.
DIRECTION_MARKERS = {"read": "o", "write": "x"}


def _cdf(plt, entries, directory: Path, written) -> None:
    """One latency CDF chart: colour is the design, line style the state, marker the direction,
    each said once in the legend; the percentile on a logit axis, so 1 %-50 % and the tail both
    have room."""
    from matplotlib.lines import Line2D

    figure, axes = plt.subplots(figsize=(8, 5))
    designs = list(dict.fromkeys(e["design"] for e in entries))
    colours = {d: f"C{i % 10}" for i, d in enumerate(designs)}
    states = list(dict.fromkeys(e["state"] for e in entries))
    directions = []
    for entry in entries:
        for job in entry["document"]["jobs"]:
            for direction in ("read", "write"):
                stats = job[direction]
                if not stats["total_ios"]:
                    continue
                points = points_ms(stats)
                xs = [ms for _, ms in points]
                ys = [percent / 100 for percent, _ in points]
                axes.plot(xs, ys, color=colours[entry["design"]], linestyle=STATE_STYLES.get(entry["state"], "-"),
                          marker=DIRECTION_MARKERS[direction], markersize=3, linewidth=1.4)
                directions += [direction] if direction not in directions else []
    handles = [Line2D([], [], color=colours[d], label=d) for d in designs]
    handles += [Line2D([], [], color="#333333", linestyle=STATE_STYLES.get(s, "-"), label=s) for s in states]
    handles += [Line2D([], [], color="#333333", linestyle="none", marker=DIRECTION_MARKERS[d], label=d)
                for d in directions]
    axes.set_xscale("log")
    axes.set_yscale("logit")
    axes.set_ylim(0.01, 0.9999)
    ticks = (0.01, 0.1, 0.5, 0.9, 0.99, 0.999, 0.9999)
    axes.set_yticks(ticks, [f"{t * 100:g}%" for t in ticks])
    axes.yaxis.set_minor_formatter(plt.NullFormatter())
    axes.set_xlabel("completion latency (ms, log scale)")
    axes.set_ylabel("I/Os completed (percentile, logit scale)")
    axes.set_title("Latency CDF: colour is the design, line style the state, marker the direction")
    if handles:
        axes.legend(handles=handles, fontsize=7)
    _save(figure, directory, "latency_cdf.png", written)
    plt.close(figure)


def _members(plt, entries, directory: Path, written) -> None:
    figure, axes = plt.subplots(figsize=(7, 4))
    for index, entry in enumerate(entries):
        utils = [d["util"] for d in entry["document"]["disk_util"]]
        axes.plot(range(len(utils)), utils, marker="o", label=f"{entry['design']} {entry['state']}")
    axes.set_xlabel("member")
    axes.set_ylabel("utilisation (%)")
    axes.set_ylim(0, 105)
    axes.set_title("Per-member utilisation")
    _legend(axes, fontsize=7)
    _save(figure, directory, "member_utilisation.png", written)
    plt.close(figure)


def _timeline(plt, entry, directory: Path, written) -> None:
    series = entry["document"].get("timeline") or []
    if not series:
        return
    t = [p["t_s"] for p in series]
    figure, (top, middle, bottom) = plt.subplots(3, 1, figsize=(8, 6.5), sharex=True)
    top.plot(t, [p["read_iops"] + p["write_iops"] for p in series], color="#2f6db5")
    top.set_ylabel("IOPS")
    middle.plot(t, [p["latency_ms_p99"] for p in series], color="#e8604c", label="p99")
    middle.plot(t, [p["latency_ms_p50"] for p in series], color="#555555", label="p50")
    middle.set_ylabel("latency (ms)")
    _legend(middle, fontsize=7)
    bottom.plot(t, [p["rebuild_pct"] for p in series], color="#3a9d4a")
    bottom.set_ylabel("rebuild (%)")
    bottom.set_xlabel("simulated time (s)")
    for phase in entry["document"].get("phases", []):
        for axes in (top, middle, bottom):
            axes.axvspan(phase["start_s"], phase["end_s"], alpha=0.08,
                         color=STATE_COLOURS.get(phase["name"], "#999999"))
    for axes in (top, middle, bottom):
        axes.ticklabel_format(axis="y", useOffset=False, style="plain")
    top.set_title(f"Timeline: {entry['design']} {entry['state']} (each point is a 1 s window from its start)")
    safe = "".join(c if c.isalnum() else "_" for c in f"{entry['design']}_{entry['state']}")
    _save(figure, directory, f"timeline_{safe}.png", written)
    plt.close(figure)


def _pareto(plt, points, directory: Path, written) -> None:
    figure, axes = plt.subplots(figsize=(7, 4.5))
    xs = [p["cost"] for p in points]
    ys = [p["iops"] for p in points]
    # P(loss) in %, as the plan's table and the HTML report write it (the points carry fractions).
    risks = [(p.get("risk") or 0) * 100 for p in points]
    scatter = axes.scatter(xs, ys, c=risks, cmap="viridis_r", s=30)
    front = sorted((p for p in points if p.get("pareto")), key=lambda p: p["cost"])
    if front:
        axes.plot([p["cost"] for p in front], [p["iops"] for p in front], "--", color="#333333", label="Pareto front")
    for p in points:
        if p.get("chosen"):
            axes.scatter([p["cost"]], [p["iops"]], s=160, facecolors="none", edgecolors="#e8604c", linewidths=2,
                         label=f"chosen: {p['label']}")
    axes.set_xlabel("cost")
    axes.set_ylabel("IOPS")
    axes.set_title("Planner: cost vs performance (colour: risk)")
    figure.colorbar(scatter, ax=axes, label="P(loss) over the mission (%)")
    _legend(axes, fontsize=7)
    _save(figure, directory, "pareto.png", written)
    plt.close(figure)


def _output_dir(directory: str) -> Path:
    """The charts' directory, created if missing (a bad path is the user's: ConfigError)."""
    return outputs.make_directory(directory, "--png")


def write_pngs(directory: str, comparison: Sequence[Dict[str, Any]],
               pareto: Optional[Sequence[Dict[str, Any]]] = None) -> List[Path]:
    """Writes the charts for ``comparison`` entries ({design, state, document}) into directory."""
    written: List[Tuple[Path, bytes]] = []
    with _warnings_as_notes():
        plt = _pyplot()  # before the directory is made: no matplotlib, no directory
        target = _output_dir(directory)
        _bars(plt, comparison, "iops", "IOPS (read + write)", target, "iops.png", written)
        _bars(plt, comparison, "p99_ms", "p99 latency (ms)", target, "latency_p99.png", written)
        _cdf(plt, comparison, target, written)
        _members(plt, comparison, target, written)
        for entry in comparison:
            _timeline(plt, entry, target, written)
        if pareto:
            _pareto(plt, pareto, target, written)
    return outputs.write_files(written, "--png")


def write_pareto_png(directory: str, points: Sequence[Dict[str, Any]]) -> List[Path]:
    """The planner's Pareto front alone (``raidlab plan --png DIR``)."""
    written: List[Tuple[Path, bytes]] = []
    with _warnings_as_notes():
        plt = _pyplot()
        _pareto(plt, points, _output_dir(directory), written)
    return outputs.write_files(written, "--png")
