"""Inline SVG charts for the HTML report, drawn in Python with no dependencies.

Every chart is one ``<svg>`` string with a visible title, a legend, and axes labelled with their
units; neutral colours (text, axes, grid) come from CSS classes the page styles, with
presentation attributes as the fallback, so a chart also reads on its own. Marks carry a
``<title>`` with their exact value: hovering shows it, no script needed.

Scales: linear (nice 1-2-2.5-5 steps), log10 (decades, with 2 and 5 between when few),
"nines" for percentiles (``-log10(1 - p)``: 90 %, 99 %, 99.9 % ... equally spaced, so a latency
tail is visible) and "percentile", the log-odds ``log10(p / (1 - p))``: the tail's nines as
equally spaced as "nines" gives them, and the body (1 %, 10 %, 50 %) as much room below the median
as 99 % has above it, instead of a sliver at the bottom. Output is deterministic: same data, same
bytes.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from html import escape
from typing import Callable, Dict, List, Optional, Sequence, Tuple

from raidlab.terminal import printable
from raidlab.units import format_probability

#: Chart width in SVG user units; the page scales charts to their column (``width: 100%``).
WIDTH = 600
FONT = 12
TITLE_FONT = 15

#: Observable's 10-colour categorical palette (readable on white, distinct for most viewers).
PALETTE = ("#4269d0", "#efb118", "#ff725c", "#6cc5b0", "#3ca951", "#ff8ab7", "#a463f2",
           "#97bbf5", "#9c6b4e", "#9498a0")
#: Array states and timeline phases.
STATE_COLORS = {"optimal": "#3ca951", "degraded": "#efb118", "rebuilding": "#ff725c",
                "failed": "#9498a0", "lost": "#b91c1c"}
STATE_DASH = {"optimal": None, "degraded": "7 4", "rebuilding": "2 3"}
#: A point marker per array state, so lines that coincide still show which states they are.
STATE_SYMBOL = {"optimal": "circle", "degraded": "square", "rebuilding": "triangle"}
#: Line widths per state: the solid line widest, drawn first, so dashed and dotted lines over it
#: stay visible where they coincide.
STATE_WIDTH = {"optimal": 3.4, "degraded": 2.2, "rebuilding": 2.2}
READ_COLOR = "#4269d0"
WRITE_COLOR = "#a463f2"
#: Risk colour ramp, low to high: blue, amber, red.
RISK_STOPS = ("#2c7bb6", "#fdae61", "#d7191c")
UNKNOWN_COLOR = "#b0b4ba"
#: Text-coloured marks (p50 ticks, the Pareto line, the chosen ring); the page's CSS restyles
#: them with the text colour (class "ink") so they stay visible on a dark background.
INK = "#1f2328"


def esc(value: object) -> str:
    """HTML/XML text: markup escaped, and control characters (which XML forbids and a terminal
    showing the file would obey) shown as their escapes; newlines and tabs stay."""
    return escape(printable(value, keep="\n\t"), quote=True)


def fmt_num(value: float) -> str:
    """A short label: 0, 0.25, 12.5, 950, 15k, 1.2M, 3e-7."""
    if value == 0 or not math.isfinite(value):
        return "0" if value == 0 else str(value)
    size = abs(value)
    if size >= 1e9:
        return _trim(value / 1e9) + "G"
    if size >= 1e6:
        return _trim(value / 1e6) + "M"
    if size >= 1e4:
        return _trim(value / 1e3) + "k"
    if size >= 1e-3:
        return _trim(value)
    mantissa, exponent = f"{value:.1e}".split("e")
    mantissa = mantissa.rstrip("0").rstrip(".")
    return f"{mantissa}e{int(exponent)}"


def _trim(value: float) -> str:
    text = f"{value:.3g}"
    if "e" in text:  # .3g switches to exponents from 1000 on
        text = f"{value:.0f}"
    return text


def fmt_pct(value: float) -> str:
    """A percentile label: 50%, 99%, 99.9%."""
    return f"{value:.6f}".rstrip("0").rstrip(".") + "%"


def finite(value: object) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool) and math.isfinite(value)


# --- scales -----------------------------------------------------------------------------------

def nice_step(span: float, count: int) -> float:
    raw = span / max(count, 1)
    if raw <= 0:
        return 1.0
    power = 10 ** math.floor(math.log10(raw))
    for factor in (1, 2, 2.5, 5, 10):
        if factor * power >= raw * (1 - 1e-9):
            return factor * power
    return 10 * power


@dataclass
class Scale:
    """Maps data to pixels on one axis: ``kind`` is "linear", "log" or "nines" (percent)."""

    kind: str
    lo: float
    hi: float
    start: float
    end: float
    tick_values: List[float] = field(default_factory=list)
    tick_labels: List[str] = field(default_factory=list)

    def transform(self, value: float) -> float:
        if self.kind == "log":
            return math.log10(max(value, 1e-300))
        if self.kind == "nines":
            return -math.log10(max(1 - value / 100, 1e-12))
        if self.kind == "percentile":
            p = min(max(value, 1e-6), 100 - 1e-6)
            return math.log10(p / (100 - p))
        return value

    def __call__(self, value: float) -> float:
        a, b = self.transform(self.lo), self.transform(self.hi)
        if b == a:
            return (self.start + self.end) / 2
        return self.start + (self.transform(value) - a) / (b - a) * (self.end - self.start)

    def contains(self, value: float) -> bool:
        if self.kind == "log" and value <= 0:
            return False
        return True


def make_scale(kind: str, values: Sequence[float], start: float, end: float,
               lo: Optional[float] = None, hi: Optional[float] = None, ticks: int = 5,
               formatter: Optional[Callable[[float], str]] = None) -> Scale:
    """A scale over ``values`` (or the fixed ``lo``/``hi``) with nice tick positions."""
    data = [v for v in values if finite(v) and (kind != "log" or v > 0)]
    label = formatter or fmt_num
    if kind == "log":
        low = lo if lo is not None else (min(data) if data else 1.0)
        high = hi if hi is not None else (max(data) if data else 10.0)
        e_lo, e_hi = math.floor(math.log10(low) + 1e-9), math.ceil(math.log10(high) - 1e-9)
        if e_hi <= e_lo:
            e_lo, e_hi = e_lo - 1, e_lo + 1
        decades = e_hi - e_lo
        every = 1 if decades <= 6 else math.ceil(decades / 6)
        tick_values = [10.0 ** e for e in range(e_lo, e_hi + 1) if (e - e_lo) % every == 0]
        if decades <= 2:
            tick_values = sorted(tick_values + [m * 10.0 ** e for e in range(e_lo, e_hi) for m in (2, 5)])
        scale = Scale("log", 10.0 ** e_lo, 10.0 ** e_hi, start, end)
    elif kind == "nines":
        high = hi if hi is not None else max([99.0] + data)
        nines = min(max(2, math.ceil(-math.log10(max(1 - high / 100, 1e-6)) - 1e-9)), 6)
        tick_values = [50.0, 90.0] + [100 - 10.0 ** -k * 100 for k in range(2, nines + 1)]
        scale = Scale("nines", 0.0, 100 - 10.0 ** -nines * 100, start, end)
        label = formatter or fmt_pct
    elif kind == "percentile":
        high = hi if hi is not None else max([99.0] + data)
        nines = min(max(2, math.ceil(-math.log10(max(1 - high / 100, 1e-6)) - 1e-9)), 6)
        low = lo if lo is not None else min([1.0] + data)
        floor = min(max(math.floor(math.log10(max(low, 1e-4)) + 1e-9), -4), 0)  # 1 %, 0.1 %, ...
        tick_values = ([10.0 ** k for k in range(floor, 2)] + [50.0, 90.0]
                       + [100 - 10.0 ** -k * 100 for k in range(2, nines + 1)])
        scale = Scale("percentile", 10.0 ** floor, 100 - 10.0 ** -nines * 100, start, end)
        label = formatter or fmt_pct
    else:
        low = lo if lo is not None else min(data + [0.0])
        high = hi if hi is not None else max(data + [0.0])
        if high <= low:
            high = low + (abs(low) or 1.0)
        step = nice_step(high - low, ticks)
        n_lo = math.floor(low / step + 1e-9) if lo is None else low / step
        n_hi = math.ceil(high / step - 1e-9) if hi is None else high / step
        low, high = n_lo * step, n_hi * step
        tick_values = []
        k = math.ceil(n_lo - 1e-9)
        while k * step <= high + step * 1e-9:
            tick_values.append(round(k * step, 12))
            k += 1
        scale = Scale("linear", low, high, start, end)
    scale.tick_values = tick_values
    scale.tick_labels = [label(v) for v in tick_values]
    return scale


# --- drawing primitives -----------------------------------------------------------------------

def text_width(text: str, size: float = FONT) -> float:
    """Rough advance width of ``text`` in a sans-serif face (for layout, not exact)."""
    return 0.58 * size * len(text)


def _n(value: float) -> str:
    """A coordinate with at most two decimals."""
    text = f"{value:.2f}".rstrip("0").rstrip(".")
    return "0" if text == "-0" else text


def _tip(text: str) -> str:
    return f"<title>{esc(text)}</title>" if text else ""


@dataclass
class LegendItem:
    label: str
    color: str
    mark: str = "rect"  # rect, line, dot, ring, band
    dash: Optional[str] = None
    symbol: Optional[str] = None  # on a line: the series' point marker (circle, square, triangle)
    width: float = 2.5


def symbol(shape: str, cx: float, cy: float, r: float, color: str, attrs: str = "", inner: str = "") -> str:
    """A point marker centred on (cx, cy): a circle, a square or a triangle of about radius r."""
    if shape == "square":
        s = r * 0.9
        return (f'<rect x="{_n(cx - s)}" y="{_n(cy - s)}" width="{_n(2 * s)}" height="{_n(2 * s)}" '
                f'fill="{color}"{attrs}>{inner}</rect>')
    if shape == "triangle":
        t = r * 1.25
        points = f"{_n(cx)},{_n(cy - t)} {_n(cx + t)},{_n(cy + t * 0.8)} {_n(cx - t)},{_n(cy + t * 0.8)}"
        return f'<polygon points="{points}" fill="{color}"{attrs}>{inner}</polygon>'
    return f'<circle cx="{_n(cx)}" cy="{_n(cy)}" r="{_n(r)}" fill="{color}"{attrs}>{inner}</circle>'


class Chart:
    """One SVG: title, legend rows, then the plot the caller draws into ``parts``."""

    def __init__(self, title: str, legend: Sequence[LegendItem], height: float,
                 note: str = "", width: float = WIDTH) -> None:
        self.title = title
        self.width = width
        self.height = height
        self.parts: List[str] = []
        self.parts.append(f'<text class="chart-title" x="12" y="22" font-size="{TITLE_FONT}" '
                          f'font-weight="600" fill="#1f2328">{esc(title)}</text>')
        y = 30.0
        if note:
            self.parts.append(f'<text class="chart-note" x="12" y="42" font-size="{FONT - 1}" '
                              f'fill="#59636e">{esc(note)}</text>')
            y = 48.0
        self.top = self._legend(legend, y + 6) + 10

    def _legend(self, items: Sequence[LegendItem], y: float) -> float:
        if not items:
            return y
        x, row_h = 12.0, 18.0
        y += 6
        group = ['<g class="legend">']
        for item in items:
            ink = ' class="ink"' if item.color == INK else ""
            w = 22 + text_width(item.label) + 14
            if x + w > self.width - 8 and x > 12:
                x, y = 12.0, y + row_h
            cy = y + 5
            if item.mark == "line":
                dash = f' stroke-dasharray="{item.dash}"' if item.dash else ""
                group.append(f'<line{ink} x1="{_n(x)}" y1="{_n(cy)}" x2="{_n(x + 16)}" y2="{_n(cy)}" '
                             f'stroke="{item.color}" stroke-width="{_n(item.width)}"{dash}/>')
                if item.symbol:
                    fill = ' class="ink-fill"' if item.color == INK else ""
                    group.append(symbol(item.symbol, x + 8, cy, 3.2, item.color, fill))
            elif item.mark == "dot":
                group.append(f'<circle cx="{_n(x + 8)}" cy="{_n(cy)}" r="5" fill="{item.color}" '
                             f'stroke="#1f2328" stroke-width="0.6"/>')
            elif item.mark == "ring":
                group.append(f'<circle{ink} cx="{_n(x + 8)}" cy="{_n(cy)}" r="5.5" fill="none" '
                             f'stroke="{item.color}" stroke-width="2.5"/>')
            elif item.mark == "hollow":
                group.append(f'<circle class="hollow" cx="{_n(x + 8)}" cy="{_n(cy)}" r="4" fill="#ffffff" '
                             f'stroke="{item.color}" stroke-width="1.5"/>')
            elif item.mark == "band":
                group.append(f'<rect x="{_n(x)}" y="{_n(cy - 6)}" width="16" height="12" '
                             f'fill="{item.color}" fill-opacity="0.22" stroke="{item.color}" '
                             f'stroke-opacity="0.5"/>')
            else:
                group.append(f'<rect x="{_n(x)}" y="{_n(cy - 6)}" width="16" height="12" rx="2" '
                             f'fill="{item.color}"/>')
            group.append(f'<text class="legend-label" x="{_n(x + 22)}" y="{_n(cy + 4)}" '
                         f'font-size="{FONT}" fill="#1f2328">{esc(item.label)}</text>')
            x += w
        group.append("</g>")
        self.parts.append("".join(group))
        return y + row_h

    def svg(self) -> str:
        body = "".join(self.parts)
        return (f'<svg class="chart" viewBox="0 0 {_n(self.width)} {_n(self.height)}" '
                f'width="{_n(self.width)}" height="{_n(self.height)}" role="img" '
                f'aria-label="{esc(self.title)}" font-family="system-ui, -apple-system, '
                f'Segoe UI, Roboto, Helvetica, Arial, sans-serif" font-size="{FONT}">'
                f"<title>{esc(self.title)}</title>{body}</svg>")


def y_axis(scale: Scale, x0: float, x1: float, label: str, grid: bool = True) -> str:
    """Ticks, labels and grid lines of a vertical axis at ``x0``, plus its rotated label."""
    out = ['<g class="axis y-axis">']
    for value, text in zip(scale.tick_values, scale.tick_labels):
        y = scale(value)
        if grid:
            out.append(f'<line class="grid" x1="{_n(x0)}" y1="{_n(y)}" x2="{_n(x1)}" y2="{_n(y)}" '
                       f'stroke="#d8dee4" stroke-width="1"/>')
        out.append(f'<text class="tick" x="{_n(x0 - 6)}" y="{_n(y + 4)}" text-anchor="end" '
                   f'font-size="{FONT - 1}" fill="#59636e">{esc(text)}</text>')
    top, bottom = min(scale.start, scale.end), max(scale.start, scale.end)
    out.append(f'<line class="axis-line" x1="{_n(x0)}" y1="{_n(top)}" x2="{_n(x0)}" '
               f'y2="{_n(bottom)}" stroke="#59636e" stroke-width="1"/>')
    mid = (top + bottom) / 2
    out.append(f'<text class="axis-label" transform="translate({_n(x0 - 50)} {_n(mid)}) rotate(-90)" '
               f'text-anchor="middle" font-size="{FONT}" fill="#1f2328">{esc(label)}</text>')
    out.append("</g>")
    return "".join(out)


def x_axis(scale: Scale, y0: float, y1: float, label: Optional[str], grid: bool = True) -> str:
    """Ticks, labels and grid lines of a horizontal axis at ``y0`` (grid up to ``y1``)."""
    out = ['<g class="axis x-axis">']
    for value, text in zip(scale.tick_values, scale.tick_labels):
        x = scale(value)
        if grid:
            out.append(f'<line class="grid" x1="{_n(x)}" y1="{_n(y1)}" x2="{_n(x)}" y2="{_n(y0)}" '
                       f'stroke="#d8dee4" stroke-width="1"/>')
        out.append(f'<text class="tick" x="{_n(x)}" y="{_n(y0 + 16)}" text-anchor="middle" '
                   f'font-size="{FONT - 1}" fill="#59636e">{esc(text)}</text>')
    out.append(f'<line class="axis-line" x1="{_n(min(scale.start, scale.end))}" y1="{_n(y0)}" '
               f'x2="{_n(max(scale.start, scale.end))}" y2="{_n(y0)}" stroke="#59636e" stroke-width="1"/>')
    if label:
        mid = (scale.start + scale.end) / 2
        out.append(f'<text class="axis-label" x="{_n(mid)}" y="{_n(y0 + 36)}" text-anchor="middle" '
                   f'font-size="{FONT}" fill="#1f2328">{esc(label)}</text>')
    out.append("</g>")
    return "".join(out)


def _wrap(text: str, width: float, lines: int = 2) -> List[str]:
    """Splits ``text`` on spaces into at most ``lines`` lines of about ``width`` units."""
    words, out, current = text.split(), [], ""
    for word in words:
        trial = f"{current} {word}".strip()
        if text_width(trial, FONT - 1) <= width or not current:
            current = trial
        else:
            out.append(current)
            current = word
    out.append(current)
    if len(out) > lines:
        out = out[:lines]
        out[-1] = out[-1].rstrip() + "…"
    return out


# --- charts -----------------------------------------------------------------------------------

@dataclass
class Axis:
    """An axis request: the label carries the unit, e.g. ``"latency (ms)"``."""

    label: str
    kind: str = "linear"
    lo: Optional[float] = None
    hi: Optional[float] = None
    formatter: Optional[Callable[[float], str]] = None


@dataclass
class Series:
    """One line: ``points`` are (x, y); ``step`` draws each y flat until the next x."""

    name: str
    color: str
    points: List[Tuple[float, float]]
    dash: Optional[str] = None
    step_until: Optional[float] = None  # with steps: where the last one ends
    markers: bool = True
    unit: str = ""
    x_unit: str = ""
    #: The y value in a point's tip: 3-4 significant figures, or every figure a percentile's
    #: nines need (99.95, not 100).
    exact_y: bool = False
    symbol: str = "circle"  # the point marker: circle, square or triangle
    width: float = 2.2


@dataclass
class Band:
    """A shaded x range (a phase of the run)."""

    start: float
    end: float
    label: str
    color: str


@dataclass
class Panel:
    axis: Axis
    series: List[Series]
    height: float = 150


def bar_chart(title: str, groups: Sequence[str], series: Sequence[Tuple[str, str]],
              values: Dict[Tuple[str, str], float], y: Axis, x_label: str, unit: str = "",
              markers: Optional[Dict[Tuple[str, str], float]] = None, marker_label: str = "",
              tips: Optional[Dict[Tuple[str, str], str]] = None, note: str = "",
              hatched: Sequence[str] = (), width: float = WIDTH) -> str:
    """Grouped bars: one group per entry of ``groups`` (x), one bar per ``series`` (name, colour)
    in each; ``values[(group, series)]`` is the bar height (missing pairs leave a gap).
    ``markers`` draws a short dark line on a bar (e.g. p50 on a p99 bar). Groups in ``hatched``
    are drawn as a label instead of a bar (e.g. a failed member)."""
    legend = [LegendItem(name, color) for name, color in series]
    if markers:
        legend.append(LegendItem(marker_label, "#1f2328", "line"))
    left, right, bottom = 66.0, 14.0, 72.0
    chart = Chart(title, legend, height=0, note=note, width=width)
    plot_h = 210.0
    top = chart.top
    chart.height = top + plot_h + bottom
    data = [v for v in values.values() if finite(v)] + [v for v in (markers or {}).values() if finite(v)]
    scale = make_scale(y.kind, data, top + plot_h, top, lo=0.0 if y.kind == "linear" and y.lo is None else y.lo,
                       hi=y.hi, formatter=y.formatter)
    chart.parts.append(y_axis(scale, left, chart.width - right, y.label))
    span = (chart.width - left - right) / max(len(groups), 1)
    n = max(len(series), 1)
    inner = span * 0.78
    bar_w = min(inner / n, 64.0)
    base = scale(scale.lo) if y.kind != "linear" else scale(max(scale.lo, 0.0))
    bars = ['<g class="bars">']
    for gi, group in enumerate(groups):
        g_x = left + gi * span + (span - bar_w * n) / 2
        for si, (name, color) in enumerate(series):
            value = values.get((group, name))
            if not finite(value):
                continue
            x = g_x + si * bar_w
            y_top = scale(max(value, scale.lo)) if y.kind == "log" else scale(value)
            h = max(base - y_top, 0.0)
            if h < 1.0 and value > 0:
                y_top, h = base - 1.0, 1.0
            tip = (tips or {}).get((group, name)) or f"{group} · {name}: {fmt_num(value)} {unit}".strip()
            if group in hatched:
                bars.append(f'<text class="tick" x="{_n(x + bar_w / 2)}" y="{_n(base - 6)}" text-anchor="middle" '
                            f'font-size="{FONT - 1}" fill="#59636e">failed{_tip(tip)}</text>')
                continue
            bars.append(f'<rect class="bar" x="{_n(x + 1)}" y="{_n(y_top)}" width="{_n(bar_w - 2)}" '
                        f'height="{_n(h)}" rx="1.5" fill="{color}">{_tip(tip)}</rect>')
            if bar_w >= 30 or (n == 1 and span >= 34):
                bars.append(f'<text class="value" x="{_n(x + bar_w / 2)}" y="{_n(y_top - 4)}" '
                            f'text-anchor="middle" font-size="{FONT - 2}" fill="#1f2328">'
                            f"{esc(fmt_num(value))}{'%' if unit == '%' else ''}</text>")
            mark = (markers or {}).get((group, name))
            if finite(mark):
                my = scale(mark)
                bars.append(f'<line class="marker ink" x1="{_n(x + 2)}" y1="{_n(my)}" x2="{_n(x + bar_w - 2)}" '
                            f'y2="{_n(my)}" stroke="#1f2328" stroke-width="2.5">'
                            f"{_tip(f'{group} · {name}: {marker_label} {fmt_num(mark)} {unit}')}</line>")
        lines = _wrap(group, span - 4)
        cx = left + gi * span + span / 2
        label = "".join(f'<tspan x="{_n(cx)}" dy="{0 if i == 0 else FONT + 1}">{esc(line)}</tspan>'
                        for i, line in enumerate(lines))
        bars.append(f'<text class="tick group-label" x="{_n(cx)}" y="{_n(top + plot_h + 16)}" '
                    f'text-anchor="middle" font-size="{FONT - 1}" fill="#1f2328">{label}'
                    f"{_tip(group)}</text>")
    bars.append("</g>")
    chart.parts.append("".join(bars))
    chart.parts.append(f'<line class="axis-line" x1="{_n(left)}" y1="{_n(base)}" x2="{_n(chart.width - right)}" '
                       f'y2="{_n(base)}" stroke="#59636e" stroke-width="1"/>')
    chart.parts.append(f'<text class="axis-label" x="{_n((left + chart.width - right) / 2)}" '
                       f'y="{_n(top + plot_h + 56)}" text-anchor="middle" font-size="{FONT}" '
                       f'fill="#1f2328">{esc(x_label)}</text>')
    return chart.svg()


def _series_path(series: Series, xs: Scale, ys: Scale) -> Tuple[str, List[Tuple[float, float, float, float]]]:
    """The SVG path data of a series and the points it passes through (for markers)."""
    pts = [(x, y) for x, y in series.points if finite(x) and finite(y)
           and xs.contains(x) and ys.contains(y)]
    if not pts:
        return "", []
    commands, shown = [], []
    for i, (x, y) in enumerate(pts):
        px, py = xs(x), ys(y)
        if series.step_until is not None:
            x_next = pts[i + 1][0] if i + 1 < len(pts) else series.step_until
            commands.append(f"{'M' if i == 0 else 'L'}{_n(px)} {_n(py)}")
            commands.append(f"L{_n(xs(x_next))} {_n(py)}")
            shown.append((x, y, (px + xs(x_next)) / 2, py))
        else:
            commands.append(f"{'M' if i == 0 else 'L'}{_n(px)} {_n(py)}")
            shown.append((x, y, px, py))
    return "".join(commands), shown


def line_chart(title: str, x: Axis, panels: Sequence[Panel], bands: Sequence[Band] = (),
               events: Sequence[Tuple[float, str, str]] = (), note: str = "",
               legend_extra: Sequence[LegendItem] = (), width: float = WIDTH,
               legend: Optional[Sequence[LegendItem]] = None) -> str:
    """Lines in one or more stacked panels sharing the x axis (e.g. IOPS, latency, progress
    over time), with shaded ``bands`` behind every panel and vertical ``events`` (x, label,
    colour). The legend names each series, unless ``legend`` gives it (e.g. what colour and
    what line style mean when they encode two things)."""
    seen = set()
    if legend is not None:
        legend, seen = list(legend), {s.name for p in panels for s in p.series}
    else:
        legend = []
    for panel in panels:
        for s in panel.series:
            if s.name not in seen:
                seen.add(s.name)
                legend.append(LegendItem(s.name, s.color, "line", s.dash))
    for band in bands:
        if band.label not in seen:
            seen.add(band.label)
            legend.append(LegendItem(band.label, band.color, "band"))
    legend.extend(legend_extra)
    left, right, gap, bottom = 66.0, 16.0, 16.0, 52.0
    chart = Chart(title, legend, height=0, note=note, width=width)
    top = chart.top + (14 if bands else 0)  # room for the band labels above the first panel
    total = sum(p.height for p in panels) + gap * (len(panels) - 1)
    chart.height = top + total + bottom
    all_x = [px for p in panels for s in p.series for px, _ in s.points]
    all_x += [s.step_until for p in panels for s in p.series if s.step_until is not None]
    all_x += [b.start for b in bands] + [b.end for b in bands] + [e[0] for e in events]
    xs = make_scale(x.kind, all_x, left, chart.width - right, lo=x.lo, hi=x.hi, formatter=x.formatter)
    y_cursor = top
    for index, panel in enumerate(panels):
        p_top, p_bottom = y_cursor, y_cursor + panel.height
        ys = make_scale(panel.axis.kind, [py for s in panel.series for _, py in s.points], p_bottom, p_top,
                        lo=panel.axis.lo if panel.axis.lo is not None else (0.0 if panel.axis.kind == "linear" else None),
                        hi=panel.axis.hi, ticks=4 if panel.height < 180 else 5, formatter=panel.axis.formatter)
        for band in bands:
            x0, x1 = xs(max(band.start, xs.lo)), xs(min(band.end, xs.hi))
            if x1 > x0:
                chart.parts.append(f'<rect class="band" x="{_n(x0)}" y="{_n(p_top)}" width="{_n(x1 - x0)}" '
                                   f'height="{_n(panel.height)}" fill="{band.color}" fill-opacity="0.13">'
                                   f"{_tip(f'{band.label}: {fmt_num(band.start)}–{fmt_num(band.end)} s')}</rect>")
                if index == 0 and x1 - x0 > text_width(band.label, FONT - 2) + 6:
                    chart.parts.append(f'<text class="band-label" x="{_n(x0 + 3)}" y="{_n(p_top - 4)}" '
                                       f'font-size="{FONT - 2}" fill="#59636e">{esc(band.label)}</text>')
        chart.parts.append(y_axis(ys, left, chart.width - right, panel.axis.label))
        last = index == len(panels) - 1
        chart.parts.append(x_axis(xs, p_bottom, p_top, x.label if last else None, grid=True)
                           if last else _x_grid(xs, p_bottom, p_top))
        for when, label, color in events:
            ex = xs(when)
            chart.parts.append(f'<line class="event" x1="{_n(ex)}" y1="{_n(p_top)}" x2="{_n(ex)}" '
                               f'y2="{_n(p_bottom)}" stroke="{color}" stroke-width="2" stroke-dasharray="5 3">'
                               f"{_tip(f'{label} at {fmt_num(when)} s')}</line>")
            if index == 0:
                chart.parts.append(f'<text class="event-label" x="{_n(ex - 4)}" y="{_n(p_top + 24)}" '
                                   f'text-anchor="end" font-size="{FONT - 1}" font-weight="600" '
                                   f'fill="{color}">{esc(label)}</text>')
        for s in panel.series:
            path, shown = _series_path(s, xs, ys)
            if not path:
                continue
            dash = f' stroke-dasharray="{s.dash}"' if s.dash else ""
            chart.parts.append(f'<path class="line" d="{path}" fill="none" stroke="{s.color}" '
                               f'stroke-width="{_n(s.width)}" stroke-linejoin="round" stroke-linecap="round"{dash}>'
                               f"{_tip(s.name)}</path>")
            if s.markers or len(shown) == 1:
                dots = "".join(
                    symbol(s.symbol, cx, cy, 3 if len(shown) > 1 else 4, s.color,
                           ' stroke="#ffffff" stroke-width="1" class="halo"',
                           _tip(f"{s.name}: {_y_value(py, s.exact_y)} {s.unit} at {fmt_num(px)} {s.x_unit}".strip()))
                    for px, py, cx, cy in shown)
                chart.parts.append(f'<g class="points">{dots}</g>')
        y_cursor = p_bottom + gap
    return chart.svg()


def _x_grid(xs: Scale, y0: float, y1: float) -> str:
    lines = "".join(f'<line class="grid" x1="{_n(xs(v))}" y1="{_n(y1)}" x2="{_n(xs(v))}" y2="{_n(y0)}" '
                    f'stroke="#d8dee4" stroke-width="1"/>' for v in xs.tick_values)
    return (f'<g class="axis x-grid">{lines}<line class="axis-line" x1="{_n(xs.start)}" y1="{_n(y0)}" '
            f'x2="{_n(xs.end)}" y2="{_n(y0)}" stroke="#59636e" stroke-width="1"/></g>')


def risk_color(value: Optional[float], lo: float, hi: float) -> str:
    """A colour on the risk ramp for ``value`` between ``lo`` and ``hi`` (log scale)."""
    if not finite(value) or value <= 0:
        return UNKNOWN_COLOR if not finite(value) else RISK_STOPS[0]
    a, b = math.log10(lo), math.log10(hi)
    t = 0.5 if b <= a else min(max((math.log10(value) - a) / (b - a), 0.0), 1.0)
    return _ramp(t)


def _y_value(value: float, exact: bool) -> str:
    """A point's value for its tip: exact ones keep their figures (a percentile's 99.95, not
    3 figures' 100)."""
    return f"{value:.6g}" if exact else fmt_num(value)


def _ramp(t: float) -> str:
    stops = [tuple(int(c[i:i + 2], 16) for i in (1, 3, 5)) for c in RISK_STOPS]
    pos = t * (len(stops) - 1)
    i = min(int(pos), len(stops) - 2)
    f = pos - i
    rgb = [round(stops[i][k] + (stops[i + 1][k] - stops[i][k]) * f) for k in range(3)]
    return "#" + "".join(f"{c:02x}" for c in rgb)


def _label_place(text: str, cx: float, cy: float, others: Sequence[Tuple[float, float]], x_min: float,
                 x_max: float, y_min: float) -> Tuple[str, float, float]:
    """Where the chosen design's label goes: (anchor, x, y) of the first of above-right,
    above-left, below-right, below-left that fits the plot and covers no other dot."""
    width = text_width(text)
    for dy in (-14, 26):
        for anchor, tx in (("start", cx + 16), ("end", cx - 16)):
            x0 = tx if anchor == "start" else tx - width
            ty = cy + dy
            fits = x0 >= x_min and x0 + width <= x_max and ty - FONT >= y_min
            clear = not any(x0 - 8 <= ox <= x0 + width + 8 and ty - FONT - 8 <= oy <= ty + 8 for ox, oy in others)
            if fits and clear:
                return anchor, tx, ty
    return ("end", cx - 16, cy - 14) if cx + 16 + width > x_max else ("start", cx + 16, cy - 14)


def scatter_pareto(title: str, points: Sequence[Dict], x_label: str, y_label: str,
                   y_key: str = "iops", note: str = "", width: float = WIDTH) -> str:
    """The planner's candidates: cost (x) against performance (y). Colour is risk (P(loss), log
    ramp, grey when unknown); Pareto-front designs are large filled dots joined by a dashed
    line, dominated ones small hollow dots; the chosen design has a thick ring and a label."""
    risks = [p.get("risk") for p in points if finite(p.get("risk")) and p.get("risk") > 0]
    r_lo, r_hi = (min(risks), max(risks)) if risks else (1.0, 1.0)
    legend = [LegendItem("Pareto front", "#1f2328", "line", "6 4"),
              LegendItem("dominated", "#59636e", "hollow"),
              LegendItem("chosen", "#1f2328", "ring")]
    if any(not finite(p.get("risk")) for p in points):
        legend.append(LegendItem("risk unknown", UNKNOWN_COLOR, "dot"))
    left, right, bottom = 66.0, 16.0, 52.0
    chart = Chart(title, legend, height=0, note=note, width=width)
    ramp_y = chart.top
    top = chart.top + (30 if risks else 0)
    plot_h = 280.0
    chart.height = top + plot_h + bottom
    if risks:
        # The colour ramp as a legend of its own: low risk on the left.
        x0, w = 12.0, 180.0
        cells = "".join(f'<rect x="{_n(x0 + 54 + i * w / 24)}" y="{_n(ramp_y)}" width="{_n(w / 24 + 0.4)}" '
                        f'height="10" fill="{_ramp(i / 23)}"/>' for i in range(24))
        chart.parts.append(
            f'<g class="legend colour-ramp"><text x="{_n(x0)}" y="{_n(ramp_y + 9)}" font-size="{FONT}" '
            f'fill="#1f2328">P(loss)</text>{cells}'
            f'<text x="{_n(x0 + 54 + w + 6)}" y="{_n(ramp_y + 9)}" font-size="{FONT - 1}" fill="#59636e">'
            f"{esc(format_probability(r_lo))} → {esc(format_probability(r_hi))} (log scale)</text></g>")
    xs_all = [p.get("cost") for p in points]
    ys_all = [p.get(y_key) for p in points]
    # Pad the data so no dot sits on the frame.
    x_data, y_data = [v for v in xs_all if finite(v)], [v for v in ys_all if finite(v)]
    x_pad = 0.06 * ((max(x_data) - min(x_data)) or abs(max(x_data, default=1.0)) or 1.0) if x_data else 0.0
    y_pad = 0.08 * (max(y_data, default=1.0) or 1.0)
    xs = make_scale("linear", x_data + ([max(x_data) + x_pad] if x_data else []), left, chart.width - right)
    ys = make_scale("linear", y_data + ([max(y_data) + y_pad] if y_data else []), top + plot_h, top, lo=0.0)
    chart.parts.append(y_axis(ys, left, chart.width - right, y_label))
    chart.parts.append(x_axis(xs, top + plot_h, top, x_label))
    front = sorted((p for p in points if p.get("pareto") and finite(p.get("cost")) and finite(p.get(y_key))),
                   key=lambda p: (p["cost"], p[y_key]))
    if len(front) > 1:
        d = "".join(f"{'M' if i == 0 else 'L'}{_n(xs(p['cost']))} {_n(ys(p[y_key]))}" for i, p in enumerate(front))
        chart.parts.append(f'<path class="line front ink" d="{d}" fill="none" stroke="#1f2328" stroke-width="1.5" '
                           f'stroke-dasharray="6 4"><title>Pareto front</title></path>')
    ordered = sorted(points, key=lambda p: (bool(p.get("pareto")), bool(p.get("chosen"))))
    dots = ['<g class="points">']
    chosen_labels = []
    for p in ordered:
        cost, perf = p.get("cost"), p.get(y_key)
        if not (finite(cost) and finite(perf)):
            continue
        cx, cy = xs(cost), ys(perf)
        color = risk_color(p.get("risk"), r_lo, r_hi)
        risk = p.get("risk")
        tip = (f"{p.get('label', '')}: cost {fmt_num(cost)}, {fmt_num(p.get('iops', 0) or 0)} IOPS, "
               f"p99 {fmt_num(p.get('p99_ms', 0) or 0)} ms, P(loss) "
               f"{format_probability(risk, missing='unknown')}"
               f"{', Pareto front' if p.get('pareto') else ''}{', chosen' if p.get('chosen') else ''}")
        if p.get("pareto") or p.get("chosen"):
            dots.append(f'<circle class="point" cx="{_n(cx)}" cy="{_n(cy)}" r="7" fill="{color}" '
                        f'stroke="#1f2328" stroke-width="0.8">{_tip(tip)}</circle>')
        else:
            dots.append(f'<circle class="point hollow" cx="{_n(cx)}" cy="{_n(cy)}" r="4.5" fill="#ffffff" '
                        f'stroke="{color}" stroke-width="2">{_tip(tip)}</circle>')
        if p.get("chosen"):
            dots.append(f'<circle class="chosen ink" cx="{_n(cx)}" cy="{_n(cy)}" r="12" fill="none" '
                        f'stroke="#1f2328" stroke-width="2.5"/>')
            chosen_labels.append((cx, cy, str(p.get("label", "chosen"))))
    others = [(xs(p["cost"]), ys(p[y_key])) for p in points if not p.get("chosen")
              and finite(p.get("cost")) and finite(p.get(y_key))]
    for cx, cy, label in chosen_labels:
        text = f"chosen: {label}"
        anchor, tx, ty = _label_place(text, cx, cy, others, left, chart.width - right, top)
        dots.append(f'<text class="chosen-label" x="{_n(tx)}" y="{_n(ty)}" text-anchor="{anchor}" '
                    f'font-size="{FONT}" font-weight="600" fill="#1f2328" paint-order="stroke" '
                    f'stroke="#ffffff" stroke-width="3">{esc(text)}</text>')
    dots.append("</g>")
    chart.parts.append("".join(dots))
    return chart.svg()
