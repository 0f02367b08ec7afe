"""The report's charts drawn alone (no browser): the percentile axis of latency CDFs, where the
planner's chosen label goes, and the PNG Pareto chart's P(loss) colour scale."""

from __future__ import annotations

import re

import matplotlib.figure
import pytest

from raidlab.report import png, svg

POINTS = [
    {"label": "raid5 left-symmetric x5 64K cheetah-10k7", "cost": 750, "iops": 576, "p99_ms": 206, "risk": 4.1e-6, "pareto": True, "chosen": True},
    {"label": "raid5 left-symmetric x6 64K cheetah-10k7", "cost": 900, "iops": 700, "p99_ms": 88, "risk": 6.2e-6, "pareto": True, "chosen": False},
    {"label": "raid10 n2 x7 64K cheetah-10k7", "cost": 1050, "iops": 1332, "p99_ms": 73, "risk": 2.9e-6, "pareto": True,
     "chosen": False},
    {"label": "raid10 n2 x8 64K cheetah-10k7", "cost": 1200, "iops": 1432, "p99_ms": 67, "risk": 1.6e-6, "pareto": True, "chosen": False},
]


def test_percentile_axis_gives_the_body_as_much_room_as_the_tail():
    scale = svg.make_scale("percentile", [1.0, 50.0, 99.99], 400.0, 0.0)
    assert scale.tick_labels == ["1%", "10%", "50%", "90%", "99%", "99.9%", "99.99%"]
    # 1 % to 50 % spans as much of the axis as 50 % to 99 %, and 99 % -> 99.9 % as 99.9 % -> 99.99 %.
    assert scale(1.0) - scale(50.0) == pytest.approx(scale(50.0) - scale(99.0))
    assert scale(99.0) - scale(99.9) == pytest.approx(scale(99.9) - scale(99.99), rel=0.01)
    assert scale(1.0) == pytest.approx(400.0) and scale(99.99) == pytest.approx(0.0)


def test_the_chosen_designs_label_covers_no_other_dot():
    # The plan's page draws it 1000 units wide; the label to the right of the chosen dot
    # covered the next design's dot.
    chart = svg.scatter_pareto("plan", POINTS, "cost ($)", "IOPS", width=1000)
    label = re.search(r'<text class="chosen-label" x="([\d.]+)" y="([\d.]+)" text-anchor="(\w+)"[^>]*>([^<]*)<',
                      chart)
    x, y, anchor, text = float(label.group(1)), float(label.group(2)), label.group(3), label.group(4)
    width = svg.text_width(text)
    x0 = x if anchor == "start" else x - width
    dots = [(float(cx), float(cy)) for cx, cy in re.findall(r'<circle class="point[^"]*" cx="([\d.]+)" cy="([\d.]+)"',
                                                              chart)]
    assert len(dots) == 4
    covered = [(cx, cy) for cx, cy in dots if x0 <= cx <= x0 + width and y - svg.FONT <= cy <= y + 2]
    assert covered == []


def test_png_pareto_colour_scale_is_p_loss_in_percent(tmp_path, monkeypatch):
    seen = {}
    original = matplotlib.figure.Figure.colorbar

    def colorbar(self, mappable, *args, **kwargs):
        seen["label"] = kwargs.get("label")
        seen["values"] = [float(v) for v in mappable.get_array()]
        return original(self, mappable, *args, **kwargs)

    monkeypatch.setattr(matplotlib.figure.Figure, "colorbar", colorbar)
    png.write_pareto_png(str(tmp_path / "charts"), POINTS)
    assert seen["label"] == "P(loss) over the mission (%)"
    assert seen["values"] == pytest.approx([p["risk"] * 100 for p in POINTS])
    assert (tmp_path / "charts" / "pareto.png").stat().st_size > 1000


def test_png_latency_cdf_legend_says_colour_is_the_design_and_line_style_the_state(tmp_path, monkeypatch):
    from conftest import run_cli

    documents = {}
    for level in ("5", "10"):
        for state, extra in (("optimal", []), ("degraded", ["--failed", "0"])):
            run = run_cli(["sim", "--level", level, "--devices", "4", "--preset", "oltp-postgres",
                           "--runtime-s", "0.5", "--json", *extra])
            assert run.status == 0, run.stderr
            documents[(f"RAID{level}", state)] = run.json()
    entries = [{"design": d, "state": s, "document": doc} for (d, s), doc in documents.items()]
    seen = {}
    original = matplotlib.figure.Figure.savefig

    def savefig(self, *args, **kwargs):
        axes = self.axes[0]
        if axes.get_title().startswith("Latency CDF"):
            seen["legend"] = [t.get_text() for t in axes.get_legend().get_texts()]
            seen["yscale"] = axes.get_yscale()
            seen["lines"] = {(line.get_color(), line.get_linestyle(), line.get_marker()) for line in axes.get_lines()}
            seen["count"] = len(axes.get_lines())
        return original(self, *args, **kwargs)

    monkeypatch.setattr(matplotlib.figure.Figure, "savefig", savefig)
    png.write_pngs(str(tmp_path / "charts"), entries)
    assert seen["legend"] == ["RAID5", "RAID10", "optimal", "degraded", "read", "write"]
    assert seen["yscale"] == "logit"
    assert seen["count"] == 8 and len(seen["lines"]) == 8  # no two lines drawn alike
