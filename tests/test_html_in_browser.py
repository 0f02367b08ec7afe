"""Each command's HTML report, opened in headless Chromium, shows what its terminal output and
JSON document say: compare's usable capacity and per-design verdict lines, plan's degraded IOPS,
rebuild hours, setup commands and a P(loss) colour scale in %, reliability's inputs and which
model each P(loss) comes from, and "measured" (not "simulated") for an imported fio run. Latency
CDFs have a legend that says what colour and line style mean, one chart per workload, a
percentile axis that gives the body of the curve room, and no two lines drawn alike.

The checks read the page as Chromium laid it out (``innerText``: visible text only, so a figure in
a collapsed block does not count), through a probe script added to a copy of each report.
Skipped when Chromium is not installed (CI installs it with `make deps`).
"""

from __future__ import annotations

import json
import re
import shutil
import subprocess
from pathlib import Path
from typing import Dict, List

import pytest

from conftest import run_cli
from raidlab.report import setup_script as plan_setup
from raidlab.units import format_probability

#: The plan search of tests/test_plan.py: one drive model, two levels, one chunk, 0.5 s runs.
PLAN_ARGS = ["--capacity-tb", "1", "--drive", "cheetah-10k7:150", "--levels", "5,10", "--chunks-kib", "64",
             "--raid10-layouts", "n2", "--max-drives", "8", "--sim-seconds", "0.5", "--preset", "oltp-innodb",
             "--jobs", "1"]
STATES = ("optimal", "degraded", "rebuilding")

PROBE = """<script>
window.addEventListener('load', () => {
  const text = el => (el ? el.textContent.trim() : '');
  const tables = [...document.querySelectorAll('table')].map(t =>
    [...t.rows].map(r => [...r.cells].map(c => c.innerText.trim())));
  const cdfs = [...document.querySelectorAll('svg.chart')]
    .filter(svg => /latency CDF/i.test(text(svg.querySelector('title'))))
    .map(svg => {
      const fig = svg.closest('figure');
      return {
        title: text(svg.querySelector('title')),
        shown: !svg.closest('details:not([open])') && svg.getBoundingClientRect().width > 0,
        legend: [...svg.querySelectorAll('.legend .legend-label')].map(text),
        lines: [...svg.querySelectorAll('path.line')].map(p =>
          [p.getAttribute('stroke'), p.getAttribute('stroke-dasharray') || '']),
        yticks: [...svg.querySelectorAll('.y-axis .tick')].map(t =>
          [text(t), parseFloat(t.getAttribute('y'))]),
        caption: fig ? text(fig.querySelector('figcaption')) : ''};
    });
  const ramp = [...document.querySelectorAll('.colour-ramp text')].map(text);
  const out = document.createElement('pre');
  out.id = 'probe';
  out.textContent = JSON.stringify({text: document.body.innerText, tables: tables, cdfs: cdfs,
                                    ramp: ramp});
  document.body.appendChild(out);
});
</script>"""


def chromium_or_skip() -> str:
    found = shutil.which("chromium") or shutil.which("chromium-browser")
    if not found:
        pytest.skip("chromium is not installed (make deps installs it)")
    return found


def rendered(html_path: Path, tmp: Path) -> dict:
    """What Chromium shows of the report at ``html_path``: its visible text, tables (rows of cell
    texts), latency CDF charts and the colour ramp's labels."""
    binary = chromium_or_skip()
    probed = tmp / (html_path.stem + "-probed.html")
    probed.write_text(html_path.read_text(encoding="utf-8").replace("</body>", PROBE + "</body>"),
                      encoding="utf-8")
    command = [binary, "--headless", "--no-sandbox", "--disable-gpu", "--no-first-run",
               "--disable-dev-shm-usage", "--disable-extensions", f"--user-data-dir={tmp / 'profile'}",
               "--dump-dom", "--virtual-time-budget=5000", "--window-size=1400,2000", probed.as_uri()]
    done = subprocess.run(command, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr[-2000:]
    match = re.search(r'<pre id="probe">(.*?)</pre>', done.stdout, re.S)
    assert match, "the probe did not run"
    raw = match.group(1)
    for entity, char in (("&quot;", '"'), ("&lt;", "<"), ("&gt;", ">"), ("&nbsp;", "\u00a0"), ("&amp;", "&")):
        raw = raw.replace(entity, char)
    return json.loads(raw)


def flat(text: str) -> str:
    """Text with every run of whitespace as one space (innerText keeps tabs and line breaks)."""
    return " ".join(text.split())


def table_with(page: dict, header: str) -> List[Dict[str, str]]:
    """The rows (header -> cell) of the first table on the page that has the column ``header``."""
    for rows in page["tables"]:
        if rows and header in rows[0]:
            return [dict(zip(rows[0], row)) for row in rows[1:]]
    raise AssertionError(f"no table with a {header!r} column; tables: {[r[0] for r in page['tables'] if r]}")


# --- compare --------------------------------------------------------------------------------------

@pytest.fixture(scope="module")
def compare_page(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("compare")
    out = tmp / "compare.html"
    run = run_cli(["compare", "--runtime-s", "2", "--jobs", "1", "--html", str(out)])
    assert run.status == 0, run.stderr
    return run.stdout, rendered(out, tmp)


def test_compare_html_shows_the_verdict_lines_the_terminal_prints(compare_page):
    stdout, page = compare_page
    verdicts = [line for line in stdout.splitlines() if re.match(r"^RAID(5|10): usable ", line)]
    assert len(verdicts) == 2, stdout
    text = flat(page["text"])
    for line in verdicts:
        assert flat(line) in text, line
    assert "keeps rndrd" in text and "rebuild under load ~" in text


def test_compare_html_shows_each_designs_usable_capacity_as_the_terminal_does(compare_page):
    stdout, page = compare_page
    lines = stdout.splitlines()
    header = next(line for line in lines if line.startswith("design ") and "usable GB" in line)
    end = header.index("usable GB") + len("usable GB")  # the table's numbers are right-aligned
    terminal = {}
    for line in lines:
        cells = line.split()
        if cells and cells[0] in ("RAID5", "RAID10") and len(line) >= end:
            terminal[cells[0]] = line[:end].split()[-1]
    assert terminal == {"RAID5": "1500", "RAID10": "900"}
    rows = table_with(page, "usable GB")
    shown = {row["design"].split(" · ")[0]: row["usable GB"] for row in rows}
    assert shown == terminal


def test_compare_latency_cdfs_say_colour_is_the_design_and_line_style_the_state(compare_page):
    _, page = compare_page
    cdfs = [c for c in page["cdfs"] if c["shown"]]
    # rndrd reads, rndwr writes, rndrw both: one chart per workload and direction.
    assert len(cdfs) == 4, [c["title"] for c in cdfs]
    for chart in cdfs:
        assert re.search(r"rnd(rd|wr|rw)", chart["title"]), chart["title"]
        designs = [label for label in chart["legend"] if label in ("RAID5", "RAID10")]
        states = [label for label in chart["legend"] if label.split()[0] in STATES]
        assert designs == ["RAID5", "RAID10"], chart["legend"]
        assert [s.split()[0] for s in states] == list(STATES), chart["legend"]
        assert len(chart["legend"]) == len(designs) + len(states), chart["legend"]
        caption = chart["caption"].lower()
        assert "colour is the design" in caption and "line style is the array state" in caption, caption
        # No two lines are drawn alike, so none can pass for another.
        assert len(chart["lines"]) == 6
        assert len({tuple(line) for line in chart["lines"]}) == len(chart["lines"]), chart["lines"]


def test_latency_cdfs_give_the_body_of_the_curve_room_not_only_the_tail(compare_page, tmp_path):
    _, page = compare_page
    sim_html = tmp_path / "sim.html"
    run = run_cli(["sim", "--level", "5", "--devices", "4", "--preset", "oltp-postgres", "--runtime-s", "1",
                   "--html", str(sim_html)])
    assert run.status == 0, run.stderr
    charts = [c for c in page["cdfs"] if c["shown"]] + rendered(sim_html, tmp_path)["cdfs"]
    assert len(charts) == 5
    for chart in charts:
        ticks = dict(chart["yticks"])
        assert {"1%", "10%", "50%", "90%", "99%"} <= set(ticks), chart["yticks"]
        top = min(y for _, y in chart["yticks"])
        # From 1 % to the median is at least a quarter of the axis (it was a sliver at the bottom).
        assert ticks["1%"] - ticks["50%"] >= 0.25 * (ticks["1%"] - top), chart["yticks"]


# --- plan -----------------------------------------------------------------------------------------

@pytest.fixture(scope="module")
def plan_page(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("plan")
    out, document = tmp / "plan.html", tmp / "plan.json"
    run = run_cli(["plan", *PLAN_ARGS, "--html", str(out), "--json", str(document)])
    assert run.status == 0, run.stderr
    return json.loads(document.read_text()), rendered(out, tmp)


def test_plan_html_shows_every_designs_degraded_iops_and_rebuild_hours(plan_page):
    document, page = plan_page
    rows = {row["design"].lstrip("* "): row for row in table_with(page, "degraded IOPS")}
    assert len(document["designs"]) >= 2
    for design in document["designs"]:
        row = rows[design["name"]]
        assert row["degraded IOPS"] == f"{design['degraded']['iops']:,.0f}", row
        assert row["rebuild h"] == f"{design['rebuild']['hours']:.1f}", row
        if design.get("repair"):  # the idle rebuild P(loss) takes as its repair time
            assert row["idle h"] == f"{design['repair']['hours']:.1f}", row


def test_plan_html_shows_the_setup_commands_of_the_winner(plan_page):
    document, page = plan_page
    text = page["text"]
    assert f"Setup for {document['winner']}" in text
    commands = [entry["command"] for entry in document["setup"]["commands"]]
    assert any(c.startswith("mdadm --create") for c in commands)
    for line in plan_setup.render(document["setup"]):
        assert line in text, line
    for line in document["explanation"]:
        assert flat(line) in flat(text), line


def test_plan_html_colour_scale_of_p_loss_is_in_percent_as_its_table(plan_page):
    document, page = plan_page
    risks = [p["risk"] for p in document["points"] if p.get("risk")]
    low, high = format_probability(min(risks)), format_probability(max(risks))
    assert low.endswith("%") and high.endswith("%")
    assert any(f"{low} → {high}" in label for label in page["ramp"]), page["ramp"]
    table = {row["design"].lstrip("* "): row["P(loss)"] for row in table_with(page, "P(loss)")}
    assert table[document["winner"]] == format_probability(
        next(p["risk"] for p in document["points"] if p["chosen"]))


# --- reliability ----------------------------------------------------------------------------------

@pytest.fixture(scope="module")
def reliability_page(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("reliability")
    out = tmp / "reliability.html"
    run = run_cli(["reliability", "--level", "6", "--devices", "4", "--capacity-tb", "16", "--trials", "2000",
                   "--json", "--html", str(out)])
    assert run.status == 0, run.stderr
    return run.json(), rendered(out, tmp)


def test_reliability_html_shows_its_inputs(reliability_page):
    document, page = reliability_page
    inputs = document["inputs"]
    rows = {row[""]: row["value"] for row in table_with(page, "value")}
    assert f"{inputs['afr_pct']:g} %/y" in rows["AFR"]
    assert f"{inputs['mttf_hours']:,.0f} h" in rows["AFR"]
    repair = inputs["repair"]
    assert rows["MTTR (repair time)"].startswith(f"{repair['total_hours']:g} h"), rows
    assert f"rebuild {repair['rebuild_hours']:g} h" in rows["MTTR (repair time)"]
    assert rows["URE rate (UBER)"].startswith(f"{inputs['uber']:g} per bit read"), rows
    assert f"{inputs['mission_years']:g} years" in rows["mission"]


def test_reliability_html_says_which_model_gives_each_p_loss(reliability_page):
    document, page = reliability_page
    results = {row[""]: row for row in table_with(page, "exact Markov chain (exponential)")}
    mission = f"{document['mission_years']:g}"
    row = results[f"P(array loss in {mission} y)"]
    assert row["exact Markov chain (exponential)"] == format_probability(document["p_array_loss"])
    monte_carlo = document["monte_carlo"]["p_array_loss"]
    assert row["Monte Carlo (Weibull), 95 % CI"].startswith(format_probability(monte_carlo["mean"]))
    text = flat(page["text"])
    assert f"{document['monte_carlo']['trials']:,} trials" in text
    # The headline tile and the curve say they are the chain's.
    assert "P(array loss) " + format_probability(document["p_array_loss"]) + " over 5 years, exact Markov chain" in text
    assert "exact Markov chain" in next(c for c in re.split(r"\n+", page["text"]) if "each year of service" in c)


# --- measured and simulated runs -------------------------------------------------------------------

MEASURED = {
    "fio version": "fio-3.33", "global options": {"rw": "randread", "bs": "4k"},
    "jobs": [{"jobname": "randread", "job options": {"iodepth": "4"},
              "read": {"total_ios": 1000, "iops": 500.0, "bw_bytes": 2048000, "io_bytes": 4096000, "runtime": 2000,
                       "clat_ns": {"mean": 80000.0, "max": 3000000, "min": 900,
                                   "percentile": {"1.000000": 1000, "50.000000": 50000, "99.000000": 900000,
                                                  "99.900000": 2000000}}},
              "write": {"total_ios": 0, "iops": 0.0, "bw_bytes": 0, "io_bytes": 0, "runtime": 0,
                        "clat_ns": {"mean": 0.0, "max": 0, "min": 0}}}],
}


def test_an_imported_fio_runs_report_says_measured_not_simulated(tmp_path):
    source = tmp_path / "fio.json"
    source.write_text(json.dumps(MEASURED))
    out = tmp_path / "import.html"
    run = run_cli(["import", str(source), "--html", str(out)])
    assert run.status == 0, run.stderr
    text = flat(rendered(out, tmp_path)["text"])
    assert "simulated runs" not in text and "from simulated" not in text
    assert "Generated by raidlab from 1 measured run (fio-3.33)" in text
    assert "measured with fio-3.33 (not simulated)" in text


def test_a_simulated_runs_report_says_simulated(tmp_path):
    out = tmp_path / "sim.html"
    run = run_cli(["sim", "--level", "5", "--devices", "4", "--preset", "wal", "--runtime-s", "1",
                   "--html", str(out)])
    assert run.status == 0, run.stderr
    page = rendered(out, tmp_path)
    text = flat(page["text"])
    assert "Generated by raidlab from 1 simulated run" in text and "measured" not in text
    (chart,) = page["cdfs"]
    assert chart["legend"] == ["write"] and "colour is the direction" in chart["caption"].lower()
