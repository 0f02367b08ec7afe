"""The HTML report (`raidlab sim --html`, :func:`raidlab.report.html.render_html`): built from real
simulations, checked for structure and self-containment, then rendered in headless Chromium
(Debian's chromium package, installed by `make deps`) to check that the charts drew.

The screenshot and the report are kept as test artifacts in target/test-artifacts/ (or in
$RAIDLAB_TEST_ARTIFACTS).
"""

from __future__ import annotations

import json
import os
import re
import shutil
import struct
import subprocess
import zlib
from html.parser import HTMLParser
from pathlib import Path
from typing import Dict, List, Optional

import numpy as np
import pytest

from conftest import REPO_ROOT, run_cli
from raidlab.report.html import render_html

ARTIFACTS = Path(os.environ.get("RAIDLAB_TEST_ARTIFACTS", REPO_ROOT / "target" / "test-artifacts"))

PARETO = [
    {"label": "raid5 ×4", "cost": 1200, "iops": 9000, "p99_ms": 9.5, "risk": 2e-3, "pareto": True, "chosen": False},
    {"label": "raid10 ×4", "cost": 1400, "iops": 14000, "p99_ms": 4.0, "risk": 5e-4, "pareto": True, "chosen": True},
    {"label": "raid6 ×6", "cost": 2100, "iops": 12000, "p99_ms": 8.0, "risk": 1e-5, "pareto": True, "chosen": False},
    {"label": "raid5 ×6", "cost": 1800, "iops": 11000, "p99_ms": 9.0, "risk": 4e-3, "pareto": False, "chosen": False},
    {"label": "raid0 ×4", "cost": 1000, "iops": 16000, "p99_ms": 2.0, "risk": None, "pareto": False, "chosen": False},
]
RELIABILITY = {
    "mttdl_years": 48213.2, "mttdl_years_approx": 51000.0, "p_array_loss": 2.1e-4, "p_sector_loss": 0.031,
    "expected_bytes_lost_per_year": 1.3e6,
    "curve": [{"years": y, "p_loss": 1 - 2.718281828 ** (-y / 48213.2)} for y in range(11)],
}


def sim(args: List[str]) -> dict:
    run = run_cli(["sim", *args, "--json"])
    assert run.status == 0, run.stderr
    return run.json()


#: A DiskSim validation replay as raidlab.disksim.replay returns it (made-up service times).
REPLAY = {
    "name": "DRIVE_validate", "requests": 400, "warnings": ["a parameter <not> modelled"],
    "measured_ms": [0.5 + (i * 37 % 400) / 40 for i in range(400)],
    "simulated_ms": [0.6 + (i * 53 % 400) / 41 for i in range(400)],
    "mean_measured_ms": 5.49, "mean_simulated_ms": 5.47, "demerit_ms": 0.121, "demerit_pct": 2.2,
    "published_demerit_ms": 0.107,
}


@pytest.fixture(scope="module")
def small_ssd(tmp_path_factory) -> str:
    """An X25-E shrunk to 1 GB so a rebuild makes visible progress in a second."""
    path = tmp_path_factory.mktemp("drives") / "x25e-1g.toml"
    path.write_text('preset = "x25e-slc"\ncapacity_bytes = 1000000000\n')
    return str(path)


@pytest.fixture(scope="module")
def comparison(small_ssd) -> List[dict]:
    """RAID5 vs RAID10 on four SSDs, each optimal, degraded and rebuilding (1 s each)."""
    entries = []
    for design, level in (("RAID5 ×4", "5"), ("RAID10 ×4", "10")):
        base = ["--level", level, "--devices", "4", "--chunk-kib", "64", "--drive", small_ssd,
                "--preset", "oltp-postgres", "--runtime-s", "1"]
        for state, extra in (("optimal", []), ("degraded", ["--failed", "0"]),
                             ("rebuilding", ["--failed", "0", "--spare"])):
            entries.append({"design": design, "state": state, "document": sim(base + extra)})
    return entries


@pytest.fixture(scope="module")
def failure_run(small_ssd) -> dict:
    """A member fails 1 s in and a hot spare takes over: optimal, then rebuilding (3 windows)."""
    return sim(["--level", "5", "--devices", "4", "--drive", small_ssd, "--preset", "oltp-postgres",
                "--runtime-s", "3", "--fail", "1@1s", "--spare"])


@pytest.fixture(scope="module")
def full_report(comparison, failure_run) -> str:
    return render_html("RAID5 vs RAID10 <on> x25e-slc", [failure_run], comparison=comparison,
                       pareto=PARETO, reliability=RELIABILITY, replays=[REPLAY])


# --- reading the HTML ---------------------------------------------------------------------------

class Svgs(HTMLParser):
    """Every <svg>: its title, visible texts (by class) and data marks."""

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.charts: List[Dict] = []
        self.stack: List[tuple] = []
        self.attrs: List[Dict[str, str]] = []  # every element's attributes, page-wide
        self.tags: List[str] = []
        self.text_class: Optional[str] = None
        self.in_title = False
        self.style = ""
        self.in_style = False

    def handle_starttag(self, tag, attrs):
        attrs = {k: v or "" for k, v in attrs}
        self.attrs.append(attrs)
        self.tags.append(tag)
        self.in_style = tag == "style"
        if tag == "svg":
            self.charts.append({"title": "", "texts": {}, "marks": [], "legend": 0})
        in_svg = any(t == "svg" for t, _ in self.stack) or tag == "svg"
        if in_svg:
            chart, cls = self.charts[-1], attrs.get("class", "")
            if tag == "title" and self.stack[-1][0] == "svg":
                self.in_title = True
            if tag == "text":
                self.text_class = cls.split()[0] if cls else "text"
            if tag == "g" and "legend" in cls.split():
                chart["legend"] += 1
            kind = cls.split()[0] if cls else ""
            if tag in ("rect", "path", "circle", "line") and kind in ("bar", "line", "point", "band", "marker"):
                chart["marks"].append((tag, kind, attrs))
        self.stack.append((tag, attrs))

    def handle_endtag(self, tag):
        self.in_style = False
        if tag == "text":
            self.text_class = None
        if tag == "title":
            self.in_title = False
        while self.stack:
            if self.stack.pop()[0] == tag:
                break

    def handle_data(self, data):
        if self.in_style:
            self.style += data
        if not any(t == "svg" for t, _ in self.stack):
            return
        chart = self.charts[-1]
        if self.in_title:
            chart["title"] = chart["title"] or data
        elif self.text_class and self.stack[-1][0] != "title":
            chart["texts"].setdefault(self.text_class, []).append(data)


def parse(html: str) -> Svgs:
    parser = Svgs()
    parser.feed(html)
    return parser


def mark_has_data(tag: str, attrs: Dict[str, str]) -> bool:
    if tag == "rect":
        return float(attrs["width"]) > 0 and float(attrs["height"]) > 0
    if tag == "path":
        return len(re.findall(r"[ML]", attrs.get("d", ""))) >= 2
    if tag == "circle":
        return float(attrs["r"]) > 0
    return attrs.get("x1") != attrs.get("x2") or attrs.get("y1") != attrs.get("y2")


def chart(parsed: Svgs, title_start: str) -> Dict:
    found = [c for c in parsed.charts if c["title"].startswith(title_start)]
    assert found, f"no chart titled {title_start!r}; have {[c['title'] for c in parsed.charts]}"
    return found[0]


# --- structure ----------------------------------------------------------------------------------

def test_sim_html_option_writes_a_report_and_still_prints_the_table(tmp_path, small_ssd):
    out = tmp_path / "report.html"
    run = run_cli(["sim", "--level", "5", "--devices", "4", "--drive", small_ssd, "--preset", "oltp-postgres",
                   "--runtime-s", "1", "--failed", "1", "--spare", "--seed", "7", "--html", str(out)])
    assert run.status == 0, run.stderr
    assert "rebuild of member1" in run.stdout  # the terminal table is unchanged
    html = out.read_text(encoding="utf-8")
    parsed = parse(html)
    titles = [c["title"] for c in parsed.charts]
    assert any(t.startswith("Member utilisation") for t in titles)
    assert any(t.startswith("Latency CDF") for t in titles)
    timeline = chart(parsed, "Rebuild timeline")
    lines = [attrs for tag, cls, attrs in timeline["marks"] if cls == "line"]
    assert len(lines) >= 5  # read/write IOPS, p50/p99 latency, rebuild progress
    assert "rebuild done (%)" in timeline["texts"]["axis-label"]
    # The run's seed, version and resolved configuration, collapsed.
    assert "<details>" in html and '&quot;seed&quot;: 7' in html
    assert '<span class="chip-key">seed</span> 7' in html
    assert "raidlab-" in html and "&quot;spare&quot;: true" in html


def test_sim_html_to_an_unwritable_path_is_one_line_and_exit_2(tmp_path, small_ssd):
    run = run_cli(["sim", "--level", "5", "--devices", "4", "--drive", small_ssd, "--preset", "oltp-postgres",
                   "--runtime-s", "0.2", "--html", str(tmp_path / "missing" / "report.html")])
    assert run.status == 2
    assert run.stderr.startswith("raidlab: error: cannot write") and len(run.stderr_lines) == 1


def test_every_chart_has_a_title_axes_with_units_a_legend_and_data(full_report):
    parsed = parse(full_report)
    expected = ["IOPS by design and state", "Read latency by design and state",
                "Write latency by design and state", "Read latency CDF by design and state",
                "Write latency CDF by design and state", "Planner: cost vs IOPS",
                "Probability of data loss over the mission", "Member utilisation", "Latency CDF",
                "Rebuild timeline", "DRIVE_validate: service-time CDFs",
                "DRIVE_validate: horizontal distance between the CDFs"]
    for title in expected:
        chart(parsed, title)
    assert len(parsed.charts) >= 20  # plus one utilisation and CDF chart per design and state
    for svg in parsed.charts:
        assert svg["title"], "a chart without a title"
        assert svg["texts"].get("chart-title") == [svg["title"]]
        assert svg["legend"] >= 1, f"{svg['title']}: no legend"
        labels = svg["texts"].get("axis-label", [])
        assert len(labels) >= 2, f"{svg['title']}: axis labels {labels}"
        assert all(re.search(r"\(.+\)", label) for label in labels), f"{svg['title']}: units missing in {labels}"
        assert len(svg["texts"].get("tick", [])) >= 4, f"{svg['title']}: too few ticks"
        drawn = [m for m in svg["marks"] if mark_has_data(m[0], m[2])]
        assert drawn, f"{svg['title']}: no data drawn"
    bars = chart(parsed, "IOPS by design and state")
    assert len([m for m in bars["marks"] if m[1] == "bar"]) == 6  # 2 designs × 3 states
    pareto = chart(parsed, "Planner: cost vs IOPS")
    assert len([m for m in pareto["marks"] if m[1] == "point"]) == len(PARETO)
    assert "chosen: raid10 ×4" in pareto["texts"]["chosen-label"]
    timeline = chart(parsed, "Rebuild timeline")
    assert {"optimal", "rebuilding"} <= set(timeline["texts"]["band-label"])


def test_the_report_names_every_run_with_its_seed_version_and_configuration(full_report, comparison):
    parsed = parse(full_report)
    assert full_report.count("<details>") + full_report.count("<details open>") >= len(comparison) + 1
    for entry in comparison:
        assert f'id="design-{comparison.index(entry) + 1}"' in full_report
    assert full_report.count('<span class="chip-key">seed</span> 1') == len(comparison) + 1
    # The title is escaped, never markup.
    assert "RAID5 vs RAID10 &lt;on&gt; x25e-slc" in full_report and "<on>" not in full_report
    assert not [a for a in parsed.attrs if any(k.startswith("on") for k in a)]


def test_the_report_is_self_contained(full_report):
    parsed = parse(full_report)
    external = re.compile(r"^\s*(https?:)?//", re.I)
    for tag, attrs in zip(parsed.tags, parsed.attrs):
        assert tag not in ("script", "link", "iframe", "img", "object", "embed"), tag
        for key in ("src", "href", "xlink:href", "action", "data"):
            assert not external.match(attrs.get(key, "")), (tag, attrs)
    assert "@import" not in parsed.style and "url(" not in parsed.style
    assert not re.search(r"""(src|href)\s*=\s*["']?\s*(https?:)?//""", full_report, re.I)


def test_the_report_is_deterministic(comparison, failure_run):
    first = render_html("same", [failure_run], comparison=comparison, pareto=PARETO, reliability=RELIABILITY)
    second = render_html("same", [failure_run], comparison=comparison, pareto=PARETO, reliability=RELIABILITY)
    assert first == second


def test_odd_inputs_still_draw(small_ssd):
    # A null drive: every latency the same, so the CDF is a vertical line on a padded log axis.
    null = sim(["--level", "0", "--devices", "2", "--drive", "null", "--preset", "oltp-postgres",
                "--runtime-s", "0.01"])
    # No workload at all: only the rebuild runs.
    idle = sim(["--level", "1", "--devices", "2", "--drive", small_ssd, "--failed", "1", "--spare",
                "--runtime-s", "1"])
    html = render_html("odd", [null, idle],
                       pareto=[{"label": "only", "cost": 10, "iops": 5, "p99_ms": 1, "risk": None,
                                "pareto": True, "chosen": True}],
                       reliability={"mttdl_years": None, "p_array_loss": 0.5})
    parsed = parse(html)
    for svg in parsed.charts:
        assert [m for m in svg["marks"] if mark_has_data(m[0], m[2])], svg["title"]
    assert "No foreground I/O in this run." in html
    assert "Rebuild timeline" in " ".join(c["title"] for c in parsed.charts)
    assert render_html("nothing", []).count("<svg") == 0


# --- in a real browser --------------------------------------------------------------------------

#: Added to a copy of the report only: records, after layout, how many marks of each chart have
#: a non-empty box, plus any script error and whether the page overflows sideways.
PROBE = """<script>
window.__errors = [];
window.addEventListener('error', e => window.__errors.push(String(e.message)));
window.addEventListener('load', () => {
  const charts = [...document.querySelectorAll('svg.chart')].map(svg => {
    const marks = [...svg.querySelectorAll('.bar, .line, .point, .band, .marker')];
    const drawn = marks.filter(m => { const b = m.getBBox(); return b.width > 0 || b.height > 0; }).length;
    const box = svg.getBoundingClientRect();
    return {title: svg.querySelector('title').textContent, marks: marks.length, drawn: drawn,
            width: box.width, height: box.height};
  });
  const out = document.createElement('pre');
  out.id = 'probe';
  out.textContent = JSON.stringify({charts: charts, errors: window.__errors,
    overflow: document.documentElement.scrollWidth - document.documentElement.clientWidth});
  document.body.appendChild(out);
});
</script>"""


def chromium_binary() -> str:
    """Chromium from Debian; installed through `make deps` when missing (skip only if that fails)."""
    found = shutil.which("chromium") or shutil.which("chromium-browser")
    if found:
        return found
    if os.environ.get("RAIDLAB_NO_INSTALL"):
        pytest.skip("chromium is not installed and RAIDLAB_NO_INSTALL is set (run `make deps`)")
    try:
        done = subprocess.run(["make", "-C", str(REPO_ROOT), "deps"], capture_output=True, text=True, timeout=900)
    except (OSError, subprocess.TimeoutExpired) as error:
        pytest.skip(f"chromium is not installed and `make deps` could not run: {error}")
    found = shutil.which("chromium") or shutil.which("chromium-browser")
    if not found:
        tail = (done.stderr or done.stdout).strip().splitlines()[-1:] or ["no output"]
        pytest.skip(f"chromium could not be installed by `make deps`: {tail[0]}")
    return found


def chromium(binary: str, profile: Path, *args: str) -> subprocess.Popen:
    """Starts headless Chromium (its own profile, so runs can overlap); see :func:`finish`."""
    return subprocess.Popen(
        [binary, "--headless", "--no-sandbox", "--disable-gpu", "--hide-scrollbars", "--no-first-run",
         "--disable-dev-shm-usage", "--disable-extensions", f"--user-data-dir={profile}", *args],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)


def finish(process: subprocess.Popen) -> str:
    try:
        out, err = process.communicate(timeout=120)
    except subprocess.TimeoutExpired:
        process.kill()
        out, err = process.communicate()
    assert process.returncode == 0, err[-2000:]
    return out


def read_png(path: Path) -> np.ndarray:
    """Decodes an 8-bit RGB/RGBA, non-interlaced PNG (what Chromium writes) into an HxWxC array."""
    data = path.read_bytes()
    assert data[:8] == b"\x89PNG\r\n\x1a\n", "not a PNG"
    pos, idat = 8, []
    while pos < len(data):
        length, kind = struct.unpack(">I4s", data[pos:pos + 8])
        body = data[pos + 8:pos + 8 + length]
        pos += 12 + length
        if kind == b"IHDR":
            width, height, depth, colour, _, _, interlace = struct.unpack(">IIBBBBB", body)
            assert depth == 8 and colour in (2, 6) and interlace == 0, (depth, colour, interlace)
            bpp = 3 if colour == 2 else 4
        elif kind == b"IDAT":
            idat.append(body)
        elif kind == b"IEND":
            break
    raw = np.frombuffer(zlib.decompress(b"".join(idat)), dtype=np.uint8).reshape(height, 1 + width * bpp)
    out = np.zeros((height, width * bpp), dtype=np.uint8)
    prev = np.zeros(width * bpp, dtype=np.int32)
    for y in range(height):
        kind, line = raw[y, 0], raw[y, 1:].astype(np.int32)
        if kind == 1:  # Sub: a running sum per channel
            line = np.cumsum(line.reshape(width, bpp), axis=0).reshape(-1) & 255
        elif kind == 2:  # Up
            line = (line + prev) & 255
        elif kind in (3, 4):  # Average, Paeth: pixel by pixel
            row = line.tolist()
            up = prev.tolist()
            for x in range(len(row)):
                a = row[x - bpp] if x >= bpp else 0
                b = up[x]
                if kind == 3:
                    row[x] = (row[x] + (a + b) // 2) & 255
                else:
                    c = up[x - bpp] if x >= bpp else 0
                    p = a + b - c
                    pa, pb, pc = abs(p - a), abs(p - b), abs(p - c)
                    row[x] = (row[x] + (a if pa <= pb and pa <= pc else b if pb <= pc else c)) & 255
            line = np.array(row, dtype=np.int32)
        out[y] = line
        prev = line
    return out.reshape(height, width, bpp)[:, :, :3]


def hex_rgb(colour: str) -> tuple:
    return tuple(int(colour[i:i + 2], 16) for i in (1, 3, 5))


def test_the_charts_draw_in_headless_chromium(full_report, tmp_path):
    binary = chromium_binary()
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    page = ARTIFACTS / "html-report.html"
    page.write_text(full_report, encoding="utf-8")
    shot = ARTIFACTS / "html-report.png"
    if shot.exists():
        shot.unlink()
    # After layout, every chart must have a size and every mark a box, with no script error: a
    # probe added to a copy of the page records that, on a desktop and on a phone.
    probed = tmp_path / "probed.html"
    probed.write_text(full_report.replace("</body>", PROBE + "</body>"), encoding="utf-8")
    dumps = {width: chromium(binary, tmp_path / f"profile-{width}", "--dump-dom", "--virtual-time-budget=5000",
                             f"--window-size={width},2000", probed.as_uri())
             for width in (1200, 390)}
    finish(chromium(binary, tmp_path / "profile-shot", f"--screenshot={shot}", "--window-size=1200,2000",
                    page.as_uri()))

    pixels = read_png(shot)
    assert pixels.shape[:2] == (2000, 1200)
    flat = pixels.reshape(-1, 3)
    colours = np.unique(flat[:, 0].astype(np.int64) << 16 | flat[:, 1].astype(np.int64) << 8 | flat[:, 2])
    assert len(colours) > 200, f"only {len(colours)} distinct colours: the page looks blank"
    # The state colours of the bars at the top of the page fill real areas of the screenshot.
    for state, colour in (("optimal", "#3ca951"), ("degraded", "#efb118"), ("rebuilding", "#ff725c")):
        count = int(np.all(flat == hex_rgb(colour), axis=1).sum())
        assert count > 2000, f"{state} bars: {count} pixels of {colour}"

    for width, process in dumps.items():
        dom = finish(process)
        match = re.search(r'<pre id="probe">(.*?)</pre>', dom, re.S)
        assert match, "the probe did not run"
        probe = json.loads(match.group(1).replace("&quot;", '"').replace("&lt;", "<").replace("&gt;", ">")
                           .replace("&amp;", "&"))
        assert probe["errors"] == []
        assert probe["overflow"] <= 0, f"the page scrolls sideways at {width} px"
        assert len(probe["charts"]) == full_report.count("<svg")
        # Charts in a collapsed <details> are not laid out; all others must be.
        shown = [c for c in probe["charts"] if c["width"] > 0]
        assert len(shown) >= 10
        for c in shown:
            assert c["height"] > 100, c
            assert c["marks"] > 0 and c["drawn"] == c["marks"], c


def test_latency_cdf_tips_keep_the_nines():
    """The CDF's 99.95 and 99.99 % points keep their nines (they were labelled '100 % at ...')."""
    from raidlab.report.svg import _y_value

    from raidlab.report.html import cdf_chart

    assert _y_value(99.95, True) == "99.95" and _y_value(99.99, True) == "99.99" and _y_value(50.0, True) == "50"
    assert _y_value(1234.5678, False) == "1235" and _y_value(99.95, False) == "100"  # other series
    chart = cdf_chart("latency", [("read", "#000", None, [(1.0, 50.0), (2.0, 99.95), (3.0, 99.99)])])
    assert "read: 99.95 % at 2 ms" in chart and "read: 99.99 % at 3 ms" in chart


def test_summary_rates_of_jobs_run_one_after_another_are_not_added(tmp_path):
    """The HTML summary does not add the rates of stonewalled jobs, as if they ran at
    once (it did): the whole run's rate is its I/O over the time its jobs were measured."""
    from raidlab.report.html import _iops, _mib_s

    job = tmp_path / "j.fio"
    job.write_text("[a]\nrw=randread\nbs=4k\niodepth=8\ndirect=1\nioengine=libaio\nruntime=2\ntime_based\n"
                   "[b]\nstonewall\nrw=randread\nbs=4k\niodepth=8\ndirect=1\nioengine=libaio\nruntime=2\n"
                   "time_based\n")
    out = tmp_path / "j.json"
    assert run_cli(["sim", "--level", "0", "--devices", "2", "--fio", str(job), "--json", str(out)]).status == 0
    doc = json.loads(out.read_text())
    a, b = (j["read"] for j in doc["jobs"])
    assert _iops(doc, "read") == pytest.approx((a["total_ios"] + b["total_ios"]) / 4)
    assert _iops(doc, "read") == pytest.approx((a["iops"] + b["iops"]) / 2, rel=1e-3)
    assert _mib_s(doc) == pytest.approx((a["io_bytes"] + b["io_bytes"]) / 4 / 2**20)


def test_the_reliability_report_names_the_drive_and_only_the_models_it_ran(tmp_path):
    # The footer said "Markov chain and Monte Carlo" with --trials 0; the inputs never named the drive.
    path = tmp_path / "r.html"
    run = run_cli(["reliability", "--level", "6", "--devices", "6", "--drive", "nearline-7200", "--trials", "0",
                   "--html", str(path)])
    assert run.status == 0, run.stderr
    page = path.read_text()
    assert "from the reliability model (Markov chain):" in page and "Monte Carlo)" not in page
    assert "× 6 nearline-7200 drives of" in page
