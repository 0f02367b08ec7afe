"""A run's result is one document, and every output renders it: none recomputes a figure.

For a few kinds of run (md degraded, a RAID controller, fio's group_reporting, buffered jobs
with fsync) every figure the terminal table, the HTML job and phase tables, the DataFrames and
``to_pandas`` show is parsed back and compared with the document's own figure (fio's ``jobs[]``,
``phases`` and ``raidlab.headline``); compare's CSV rows are compared with the headlines of its
JSON documents; a group_reporting entry's percentiles are the core's over the group's merged
histogram. Static checks keep the rendering modules from growing their own percentile maths
or their own copy of fio's percentile list.
"""

from __future__ import annotations

import ast
import csv
import html.parser
import json
import re
from pathlib import Path
from typing import Any, Dict, List, Optional

import pytest

import raidlab
from raidlab import _core, frames
from raidlab.report import headline, table
from raidlab.report import html as html_report
from raidlab.report.latency import FIO_PERCENTILES
from conftest import REPO_ROOT, run_cli

PACKAGE = REPO_ROOT / "python" / "raidlab"

GROUP_JOB = """[global]
ioengine=libaio
direct=1
bs=4k
iodepth=4
runtime=2
time_based
group_reporting

[readers]
rw=randread
numjobs=2

[second]
rw=randread
bs=16k

[writers]
rw=randwrite
new_group
"""

FSYNC_JOB = """[global]
bs=8k
runtime=2
time_based

[syncer]
rw=randwrite
ioengine=psync
fsync=4

[reader]
rw=randread
ioengine=libaio
direct=1
iodepth=8
"""

RUNS = {
    "md degraded": dict(level=5, devices=4, preset="oltp-postgres", failed=[1], runtime_s=2),
    "controller": dict(level=10, devices=4, controller="perc4e-di", preset="oltp-innodb", runtime_s=2),
    "group_reporting": dict(level=5, devices=4, fio=GROUP_JOB),
    "buffered with fsync": dict(level=5, devices=4, fio=FSYNC_JOB),
    "rebuild": dict(level=5, devices=4, preset="oltp-postgres", fail=["1@0.5s"], replace=["1@1s"], runtime_s=2),
}


@pytest.fixture(scope="module", params=sorted(RUNS))
def run(request):
    result = raidlab.simulate(seed=3, **RUNS[request.param])
    return result, result.to_dict()


# --- reading the document ------------------------------------------------------------------------

def _stats(document: Dict[str, Any], job: str, direction: str) -> Dict[str, Any]:
    matches = [entry for entry in document["jobs"] if entry["jobname"] == job]
    assert len(matches) == 1, f"job {job!r} appears {len(matches)} times"
    return matches[0]["sync" if direction == "fsync" else direction]


def _percentile_ms(stats: Dict[str, Any], percent: float) -> float:
    return stats["clat_ns"]["percentile"][f"{percent:.6f}"] / 1e6


def _shown(cell: str, value_ms: Optional[float], digits: int) -> None:
    """A cell shows ``value_ms`` as written to ``digits`` decimals (or two significant digits)."""
    if value_ms is None:
        assert cell in ("-", "–"), cell
        return
    number = float(cell.replace(",", ""))
    tolerance = max(0.5 * 10 ** -digits, 0.006 * abs(value_ms)) + 1e-12
    assert abs(number - value_ms) <= tolerance, (cell, value_ms)


def _optimal_only(document: Dict[str, Any]) -> bool:
    phases = document["phases"]
    return len(phases) <= 1 and (not phases or phases[0]["name"] == "optimal")


def _busy(document: Dict[str, Any]) -> List[tuple]:
    return [(job["jobname"], d) for job in document["jobs"] for d in ("read", "write") if job[d]["total_ios"]]


# --- terminal ------------------------------------------------------------------------------------

def _terminal_jobs(text: str) -> List[List[str]]:
    lines = text.splitlines()
    start = next(i for i, line in enumerate(lines) if line.startswith("job ")) + 2
    end = next(i for i in range(start, len(lines)) if lines[i].startswith("all jobs"))
    return [line.split() for line in lines[start:end]]


def test_the_terminal_job_table_shows_the_documents_figures(run):
    _, document = run
    cells = _terminal_jobs(table.summary(document, "title"))
    shown = [(c[0], c[1]) for c in cells if c[1] != "fsync"]
    assert shown == _busy(document)
    for job, direction, iops, mib_s, mean, p50, p99, p99_9, most in cells:
        stats = _stats(document, job, direction)
        if direction == "fsync":
            seconds = max(_stats(document, job, "read")["runtime"], _stats(document, job, "write")["runtime"], 1) / 1000
            assert int(iops) == round(stats["total_ios"] / seconds)
            assert (mib_s, p50, p99, p99_9) == ("-", "-", "-", "-")
            _shown(mean, stats["lat_ns"]["mean"] / 1e6, 2)
            continue
        assert iops == f"{stats['iops']:.0f}"
        assert mib_s == f"{stats['bw_bytes'] / 2**20:.1f}"
        _shown(mean, stats["clat_ns"]["mean"] / 1e6, 2)
        for cell, percent in ((p50, 50.0), (p99, 99.0), (p99_9, 99.9)):
            _shown(cell, _percentile_ms(stats, percent), 2)
        _shown(most, stats["clat_ns"]["max"] / 1e6, 2)


def test_the_terminal_headline_line_is_the_documents_headline(run):
    _, document = run
    line = table.headline_line(document)
    figures = document["raidlab"]["headline"]
    numbers = re.findall(r"(\d+) IOPS", line)
    assert [int(n) for n in numbers] == [round(figures["iops"]), round(figures["read"]["iops"]),
                                        round(figures["write"]["iops"])]
    assert f"{figures['mib_s']:.1f} MiB/s" in line
    assert f"({figures['basis']})" in line


def test_the_terminal_phase_table_shows_the_documents_phases(run):
    _, document = run
    if _optimal_only(document):
        pytest.skip("one optimal phase: the table is not printed")
    text = "\n".join(table.bad_days(document))
    lines = text.splitlines()
    start = next(i for i, line in enumerate(lines) if line.startswith("phase ")) + 2
    rows = [line.split() for line in lines[start:] if line.strip()][:sum(
        max(1, sum(1 for d in ("read", "write") if p[d]["total_ios"])) for p in document["phases"])]
    expected = [(p, d) for p in document["phases"] for d in ("read", "write") if p[d]["total_ios"]]
    assert [(r[0], r[2]) for r in rows if r[2] != "idle"] == [(p["name"], d) for p, d in expected]
    for row, (phase, direction) in zip([r for r in rows if r[2] != "idle"], expected):
        stats = phase[direction]
        assert row[3] == f"{stats['iops']:.0f}"
        _shown(row[4], _percentile_ms(stats, 50.0), 2)
        _shown(row[5], _percentile_ms(stats, 99.0), 2)


# --- JSON ----------------------------------------------------------------------------------------

def test_the_json_headline_is_the_one_chosen_from_the_document(run):
    _, document = run
    reread = json.loads(json.dumps(document))
    assert reread["raidlab"]["headline"] == headline.compute(reread, steady=False)
    assert headline.of(reread) == reread["raidlab"]["headline"]


def test_a_reporting_groups_percentiles_are_the_cores_over_its_merged_histogram():
    result = raidlab.simulate(seed=3, **RUNS["group_reporting"])
    document = result.to_dict()
    raw = result.raw["jobs"]
    assert [job["jobname"] for job in document["jobs"]] == ["readers", "writers"]
    group = [job for job in raw if job["name"] != "writers"]
    assert len(group) == 2, "readers (its clones summed by the core) and second report as one group"
    for direction in ("read",):
        parts = [job[direction]["lat_ns"] for job in group if job[direction]["ios"]]
        bins = [[low, count] for part in parts for low, _width, count in part["buckets"]]
        low, high = min(p["min"] for p in parts), max(p["max"] for p in parts)
        percents = [float(key) for key in document["jobs"][0][direction]["clat_ns"]["percentile"]]
        expected = [min(max(v, low), high) for v in _core.latency_percentiles(bins, percents)]
        shown = list(document["jobs"][0][direction]["clat_ns"]["percentile"].values())
        assert shown == expected
        assert document["jobs"][0][direction]["total_ios"] == sum(job[direction]["ios"] for job in group)


# --- HTML ----------------------------------------------------------------------------------------

class _Tables(html.parser.HTMLParser):
    """Each table of an HTML page as its caption and rows of cell texts."""

    def __init__(self) -> None:
        super().__init__()
        self.tables: List[Dict[str, Any]] = []
        self._cell: Optional[List[str]] = None
        self._in_caption = False

    def handle_starttag(self, tag, attrs):
        if tag == "table":
            self.tables.append({"caption": "", "rows": []})
        elif tag == "tr" and self.tables:
            self.tables[-1]["rows"].append([])
        elif tag in ("td", "th") and self.tables:
            self._cell = []
        elif tag == "caption":
            self._in_caption = True

    def handle_endtag(self, tag):
        if tag in ("td", "th") and self._cell is not None:
            self.tables[-1]["rows"][-1].append("".join(self._cell).strip())
            self._cell = None
        elif tag == "caption":
            self._in_caption = False

    def handle_data(self, data):
        if self._cell is not None:
            self._cell.append(data)
        elif self._in_caption:
            self.tables[-1]["caption"] += data


def _html_table(page: str, caption: str) -> List[List[str]]:
    parser = _Tables()
    parser.feed(page)
    found = [t for t in parser.tables if t["caption"].startswith(caption)]
    assert len(found) == 1, [t["caption"] for t in parser.tables]
    return found[0]["rows"][1:]


def _html_ms(cell: str, value_ms: float) -> None:
    digits = 0 if value_ms >= 100 else 2 if value_ms >= 1 else 3
    _shown(cell, value_ms, digits)


def test_the_html_job_table_shows_the_documents_figures(run):
    _, document = run
    rows = _html_table(html_report.run_card(document, "run", "run-1"), "Per job")
    assert [(r[0], r[1]) for r in rows] == _busy(document)
    for job, direction, iops, mib_s, mean, p50, p99, p99_9, most in rows:
        stats = _stats(document, job, direction)
        assert int(iops.replace(",", "")) == round(stats["iops"])
        assert mib_s == f"{stats['bw_bytes'] / 2**20:,.1f}"
        _html_ms(mean, stats["clat_ns"]["mean"] / 1e6)
        for cell, percent in ((p50, 50.0), (p99, 99.0), (p99_9, 99.9)):
            _html_ms(cell, _percentile_ms(stats, percent))
        _html_ms(most, stats["clat_ns"]["max"] / 1e6)


def test_the_html_phase_table_shows_the_documents_phases(run):
    _, document = run
    if _optimal_only(document):
        pytest.skip("one optimal phase: the table is not shown")
    rows = _html_table(html_report.run_card(document, "run", "run-1"), "Per phase")
    expected = [(p, d) for p in document["phases"] for d in ("read", "write") if p[d]["total_ios"]]
    assert [(r[0], r[2]) for r in rows] == [(p["name"], d) for p, d in expected]
    for row, (phase, direction) in zip(rows, expected):
        assert int(row[3].replace(",", "")) == round(phase[direction]["iops"])
        _html_ms(row[4], _percentile_ms(phase[direction], 50.0))
        _html_ms(row[5], _percentile_ms(phase[direction], 99.0))


# --- DataFrames ----------------------------------------------------------------------------------

pandas = pytest.importorskip("pandas")


def _none(value: Any) -> Any:
    return None if value is None or (isinstance(value, float) and value != value) else value


def test_the_jobs_frame_and_to_pandas_hold_the_documents_figures(run):
    result, document = run
    jobs = frames.jobs(document)
    legacy = result.to_pandas()
    assert list(zip(jobs["job"], jobs["direction"])) == _busy(document)
    assert list(zip(legacy["job"], legacy["direction"])) == _busy(document)
    for (_, row), (_, old) in zip(jobs.iterrows(), legacy.iterrows()):
        stats = _stats(document, row["job"], row["direction"])
        clat = stats["clat_ns"]
        assert row["iops"] == stats["iops"] == old["iops"]
        assert row["mib_s"] == stats["bw_bytes"] / 2**20 and old["bw_bytes"] == stats["bw_bytes"]
        assert row["ios"] == stats["total_ios"]
        assert row["latency_ns_mean"] == clat["mean"] == old["latency_ns_mean"]
        assert row["latency_ns_max"] == clat["max"]
        for name, key in (("p50", "50.000000"), ("p99", "99.000000"), ("p99_9", "99.900000")):
            assert row[f"latency_ns_{name}"] == clat["percentile"][key]
        assert old["latency_ns_p50"] == clat["percentile"]["50.000000"]
        assert old["latency_ns_p99"] == clat["percentile"]["99.000000"]


def test_the_phases_and_headline_frames_hold_the_documents_figures(run):
    _, document = run
    phases = frames.phases(document)
    expected = [(p, d) for p in document["phases"] for d in ("read", "write") if d in p]
    assert len(phases) == len(expected)
    for (_, row), (phase, direction) in zip(phases.iterrows(), expected):
        stats = phase[direction]
        assert (row["phase"], row["direction"], row["iops"], row["ios"]) == (
            phase["name"], direction, stats["iops"], stats["total_ios"])
        if stats["total_ios"]:
            assert row["latency_ns_p99"] == stats["clat_ns"]["percentile"]["99.000000"]
    figures = document["raidlab"]["headline"]
    for _, row in frames.headline(document).iterrows():
        shown = figures[row["direction"]]
        assert (row["iops"], row["mib_s"], row["basis"]) == (shown["iops"], shown["mib_s"], figures["basis"])
        for percent in (50, 99):
            value = shown[f"p{percent}_ms"]
            assert _none(row[f"latency_ns_p{percent}"]) == (None if value is None else value * 1e6)


def test_the_percentiles_frame_lists_every_percentile_the_document_holds(run):
    _, document = run
    table_rows = frames.percentiles(document)
    per_job = table_rows[table_rows["job"] != "*"]
    expected = [(job["jobname"], d, float(k), float(v)) for job in document["jobs"] for d in ("read", "write")
                for k, v in (job[d]["clat_ns"].get("percentile") or {}).items()]
    assert sorted(zip(per_job["job"], per_job["direction"], per_job["percent"], per_job["latency_ns"])) == sorted(expected)


# --- compare: CSV and JSON -----------------------------------------------------------------------

def test_compares_csv_rows_are_the_headlines_of_its_json_documents(tmp_path):
    designs = tmp_path / "designs.toml"
    designs.write_text('[defaults]\ndevices = 4\n[[design]]\nname = "r5"\nlevel = 5\n'
                       '[[design]]\nname = "hw10"\nlevel = 10\ncontroller = "hw"\n'
                       '[[workload]]\nname = "oltp"\npreset = "oltp-postgres"\n')
    out_json, out_csv = tmp_path / "runs.json", tmp_path / "runs.csv"
    done = run_cli(["compare", "--designs", str(designs), "--states", "optimal,degraded", "--runtime-s", "3",
                    "--json", str(out_json), "--csv", str(out_csv), "--jobs", "1"])
    assert done.status == 0, done.stderr
    runs = json.loads(out_json.read_text())["runs"]
    rows = list(csv.DictReader(out_csv.read_text().splitlines()))
    assert [(r["design"], r["state"]) for r in rows] == [(r["design"], r["state"]) for r in runs]
    for row, entry in zip(rows, runs):
        figures = entry["document"]["raidlab"]["headline"]
        assert float(row["iops"]) == pytest.approx(figures["iops"], abs=5e-4)
        assert float(row["mib_s"]) == pytest.approx(figures["mib_s"], abs=5e-4)
        assert row["basis"] == figures["basis"]
        assert int(row["capacity_bytes"]) == entry["capacity_bytes"]
        for direction in ("read", "write"):
            for percent in (50, 99):
                value, cell = figures[direction][f"p{percent}_ms"], row[f"{direction}_latency_ms_p{percent}"]
                assert (cell == "") if value is None else float(cell) == pytest.approx(value, abs=5e-4)


# --- static: one percentile routine, one percentile list ----------------------------------------

#: The modules that render a run's document.
RENDERERS = sorted((PACKAGE / "report").glob("*.py")) + [PACKAGE / "frames.py", PACKAGE / "sim.py",
                                                           PACKAGE / "compare.py", PACKAGE / "notes.py"]
#: The one module that takes percentiles the core did not report, and holds fio's list.
LATENCY_MODULE = PACKAGE / "report" / "latency.py"


def _functions(path: Path):
    tree = ast.parse(path.read_text(encoding="utf-8"))
    return [node for node in ast.walk(tree) if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef))]


def _calls(node: ast.AST) -> set:
    return {ast.unparse(call.func) for call in ast.walk(node) if isinstance(call, ast.Call)}


def test_no_renderer_has_its_own_percentile_or_interpolation_routine():
    offenders = []
    for path in RENDERERS:
        if path == LATENCY_MODULE:
            continue
        for function in _functions(path):
            name = function.name.lower()
            maths = _calls(function) & {"math.ceil", "math.log", "math.exp", "bisect.bisect"}
            if re.search(r"mixture|interpolat", name) or (re.search(r"percentile|cdf", name) and maths):
                offenders.append(f"{path.name}: {function.name}")
    assert not offenders, "percentile maths outside raidlab.report.latency: " + ", ".join(offenders)


def _percentile_lists(path: Path) -> List[str]:
    """fio's percentile list written out in a module: a tuple or list of numbers holding 99.99,
    or one of fio's percentile keys ("99.990000")."""
    found = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, (ast.Tuple, ast.List)) and any(
                isinstance(e, ast.Constant) and e.value == 99.99 for e in node.elts):
            found.append(f"{path.name} line {node.lineno}: a list holding 99.99")
        if isinstance(node, ast.Constant) and isinstance(node.value, str) and re.fullmatch(r"\d{1,2}\.\d{6}", node.value):
            found.append(f"{path.name} line {node.lineno}: the key {node.value!r}")
    return found


def test_fios_percentile_list_is_written_once():
    # declared once in the core (sim/histogram.rs FIO_PERCENTILES), which reports those
    # percentiles; the glue and every renderer take it from there
    listed = [where for path in RENDERERS for where in _percentile_lists(path)]
    assert not listed, "fio's percentile list (or its keys) written out again: " + ", ".join(listed)
    glue = [p.name for p in (REPO_ROOT / "crates" / "raidlab-py" / "src").glob("*.rs")
            if "99.95, 99.99" in p.read_text(encoding="utf-8")]
    assert not glue, f"the glue writes fio's percentile list again: {glue}"
    assert FIO_PERCENTILES == tuple(_core.FIO_PERCENTILES)
    assert FIO_PERCENTILES[:2] == (1.0, 5.0) and FIO_PERCENTILES[-3:] == (99.9, 99.95, 99.99)


def test_only_the_row_builder_reads_a_jobs_latency_table():
    """The tables, the HTML and the DataFrames take rows (raidlab.report.rows), not fio's
    ``clat_ns`` objects, so they cannot pick different figures from it."""
    allowed = {"fio_json.py", "rows.py", "latency.py"}
    readers = [path.name for path in RENDERERS if path.name not in allowed and "clat_ns" in path.read_text()]
    assert not readers, "modules reading fio's clat_ns themselves: " + ", ".join(readers)


def test_no_report_module_imports_the_cli():
    offenders = []
    for path in sorted((PACKAGE / "report").glob("*.py")):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.ImportFrom) and (node.module or "").startswith(("raidlab.commands", "raidlab.cli")):
                offenders.append(f"{path.name}: {node.module}")
    assert not offenders, ", ".join(offenders)
