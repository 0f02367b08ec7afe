"""One run, one set of numbers: every output of a command shows the same headline figures
(IOPS, MiB/s, latency percentiles per direction) with the same label saying what they cover
(``steady state from A s to B s`` or ``whole run``).

Each test runs its command once with every output it has and reads each output back: the
terminal table, --csv, --json (the run's ``raidlab.headline`` block), --html (its tables) and
the DataFrames. A number shown with N decimals must be the JSON's figure rounded to N decimals.
"""

from __future__ import annotations

import csv
import io
import json
import re
import shutil
import subprocess
from html.parser import HTMLParser
from typing import Any, Dict, List, Optional

import pytest

from conftest import run_cli

WHOLE_RUN = "whole run"
STEADY = re.compile(r"^steady state from \d+\.\d s to \d+\.\d s$")


# --- reading the outputs back ------------------------------------------------------------------

class _Tables(HTMLParser):
    """Every table of an HTML report as rows of cell texts (header row first)."""

    def __init__(self) -> None:
        super().__init__()
        self.tables: List[List[List[str]]] = []
        self._row: Optional[List[str]] = None
        self._cell: Optional[List[str]] = None

    def handle_starttag(self, tag, attrs):
        if tag == "table":
            self.tables.append([])
        elif tag == "tr":
            self._row = []
        elif tag in ("td", "th") and self._row is not None:
            self._cell = []

    def handle_endtag(self, tag):
        if tag in ("td", "th") and self._cell is not None:
            self._row.append("".join(self._cell).strip())
            self._cell = None
        elif tag == "tr" and self._row is not None:
            self.tables[-1].append(self._row)
            self._row = None

    def handle_data(self, data):
        if self._cell is not None:
            self._cell.append(data)


def html_table(text: str, *headers: str) -> List[Dict[str, str]]:
    """The rows (as header -> cell) of the one table of the report that has all ``headers``."""
    parser = _Tables()
    parser.feed(text)
    found = [t for t in parser.tables if t and all(h in t[0] for h in headers)]
    assert len(found) == 1, [t[0] for t in parser.tables]
    head, *rows = found[0]
    return [dict(zip(head, row)) for row in rows]


def terminal_table(text: str, first_header: str) -> List[Dict[str, str]]:
    """The rows of the aligned table whose header line starts with ``first_header`` (cells are
    two or more spaces apart; no cell holds two spaces)."""
    lines = text.splitlines()
    start = next(i for i, line in enumerate(lines) if line.startswith(first_header + " "))
    head = re.split(r"\s{2,}", lines[start].strip())
    rows = []
    for line in lines[start + 2:]:
        cells = re.split(r"\s{2,}", line.strip())
        if len(cells) != len(head):  # the table ends at a blank line or a line of text
            break
        rows.append(dict(zip(head, cells)))
    return rows


def shows(text: str, value: Optional[float]) -> bool:
    """Whether ``text`` is ``value`` as a table shows it: rounded to the digits shown, or a dash
    for a figure the run does not have."""
    text = text.strip()
    if value is None:
        return text in ("-", "–", "")
    digits = len(text.split(".")[1]) if "." in text else 0
    return abs(float(text.replace(",", "")) - value) <= 0.5 * 10 ** -digits + 1e-9


def assert_shows(text: str, value: Optional[float], where: str) -> None:
    assert shows(text, value), f"{where}: shows {text!r}, the headline is {value!r}"


#: The headline's latency figures: (direction, percentile).
LATENCY = (("read", "p50"), ("read", "p99"), ("write", "p50"), ("write", "p99"))
#: Column names of a headline row: the terminal table's and the HTML's, then --csv's.
TABLE_COLUMNS = {"iops": "IOPS", "mib_s": "MiB/s", **{(d, p): f"{d} {p} ms" for d, p in LATENCY}}
CSV_COLUMNS = {"iops": "iops", "mib_s": "mib_s", **{(d, p): f"{d}_latency_ms_{p}" for d, p in LATENCY}}


def assert_row_shows(row: Dict[str, str], h: Dict[str, Any], columns: Dict[Any, str], where: str) -> None:
    """One output's row shows a run's headline: its basis, IOPS, MiB/s and each latency."""
    assert row["basis"] == h["basis"], where
    assert_shows(row[columns["iops"]], h["iops"], where)
    assert_shows(row[columns["mib_s"]], h["mib_s"], where)
    for direction, percent in LATENCY:
        assert_shows(row[columns[(direction, percent)]], h[direction][f"{percent}_ms"], f"{where} {direction} {percent}")


def _key(keys, *labels: str):
    """The one (design, state, workload) key whose parts are the words of ``labels`` (an HTML
    report writes them as "RAID5 · rndrw" and "optimal", or "RAID5 · rndrw · optimal")."""
    words = {part for label in labels for part in label.split(" · ") if part}
    (found,) = [key for key in keys if set(key) == words]
    return found


# --- compare -----------------------------------------------------------------------------------

def test_compare_shows_one_set_of_figures_in_its_table_csv_json_and_html(tmp_path):
    # The classic: its controller's cache fills in the first seconds, so the steady state and
    # the whole run differ by half (RAID5 rndwr 528 vs 802 IOPS).
    out = {kind: tmp_path / f"out.{kind}" for kind in ("json", "csv", "html")}
    run = run_cli(["compare", "--states", "optimal,rebuilding", "--jobs", "1",
                   *(arg for kind, path in out.items() for arg in (f"--{kind}", str(path)))])
    assert run.status == 0, run.stderr
    document = json.loads(out["json"].read_text())
    headline = {(r["design"], r["state"], r["workload"]): r["document"]["raidlab"]["headline"]
                for r in document["runs"]}
    assert len(headline) == 12  # 2 designs x 2 states x 3 workloads
    steady = [h for h in headline.values() if STEADY.match(h["basis"])]
    assert len(steady) >= 10, [h["basis"] for h in headline.values()]
    # The whole run is still there (fio's jobs[]), and it is not what the headline says.
    rndwr = document["runs"][[(r["design"], r["state"], r["workload"]) for r in document["runs"]]
                             .index(("RAID5", "optimal", "rndwr"))]["document"]
    assert rndwr["jobs"][0]["write"]["iops"] > 1.2 * headline[("RAID5", "optimal", "rndwr")]["iops"]

    for row in terminal_table(run.stdout, "design"):
        assert_row_shows(row, headline[(row["design"], row["state"], row["workload"])], TABLE_COLUMNS,
                         f"terminal {row['design']} {row['state']} {row['workload']}")
    rows = list(csv.DictReader(io.StringIO(out["csv"].read_text())))
    assert len(rows) == 12
    for row in rows:
        assert_row_shows(row, headline[(row["design"], row["state"], row["workload"])], CSV_COLUMNS,
                         f"csv {row['design']} {row['state']} {row['workload']}")
    html_rows = html_table(out["html"].read_text(), "design", "state", "IOPS", "basis")
    assert len(html_rows) == 12
    for row in html_rows:
        assert_row_shows(row, headline[_key(headline, row["design"], row["state"], row.get("workload", ""))],
                         TABLE_COLUMNS, f"html {row['design']} {row['state']}")
    # The summary at the top of the report shows the same figures, split by direction.
    for row in html_table(out["html"].read_text(), "run", "read IOPS", "basis"):
        h = headline[_key(headline, row["run"])]
        assert row["basis"] == h["basis"]
        for direction in ("read", "write"):
            assert_shows(row[f"{direction} IOPS"], h[direction]["iops"], f"html summary {row['run']}")
            assert_shows(row[f"{direction} p99 ms"], h[direction]["p99_ms"], f"html summary {row['run']}")


# --- sim ---------------------------------------------------------------------------------------

SIM = ["sim", "--level", "5", "--devices", "4", "--drive", "cheetah-10k7", "--preset", "oltp-postgres",
       "--runtime-s", "2", "--seed", "7"]
#: The terminal's line of the headline figures (report.table.headline_line).
HEADLINE_LINE = re.compile(r"^all jobs \((?P<basis>[^)]*)\): (?P<iops>[\d,.]+) IOPS, (?P<mib_s>[\d,.]+) MiB/s"
                           r"; read (?P<read_iops>[\d,.]+) IOPS, p50 (?P<read_p50>[-\d,.]+) ms, p99 (?P<read_p99>[-\d,.]+) ms"
                           r"; write (?P<write_iops>[\d,.]+) IOPS, p50 (?P<write_p50>[-\d,.]+) ms, p99 (?P<write_p99>[-\d,.]+) ms$")


def assert_headline_line(text: str, h: Dict, where: str) -> None:
    """The terminal's headline line shows ``h`` with its basis."""
    found = [m for m in map(HEADLINE_LINE.match, text.splitlines()) if m]
    assert len(found) == 1, text
    line = found[0]
    assert line["basis"] == h["basis"], where
    assert_shows(line["iops"], h["iops"], where)
    assert_shows(line["mib_s"], h["mib_s"], where)
    for direction in ("read", "write"):
        assert_shows(line[f"{direction}_iops"], h[direction]["iops"], where)
        for percent in ("p50", "p99"):
            assert_shows(line[f"{direction}_{percent}"], h[direction][f"{percent}_ms"], f"{where} {direction} {percent}")


def assert_job_rows(rows: List[Dict[str, str]], document: Dict, where: str, keys: Dict[str, str]) -> None:
    """A table of jobs (job, direction, IOPS, MiB/s, p50, p99) shows fio's jobs[] of the document."""
    stats = {(job["jobname"], d): job[d] for job in document["jobs"] for d in ("read", "write") if job[d]["total_ios"]}
    assert len(rows) == len(stats), (where, rows)
    for row in rows:
        s = stats[(row[keys["job"]], row[keys["dir"]])]
        assert_shows(row[keys["IOPS"]], s["iops"], where)
        assert_shows(row[keys["MiB/s"]], s["bw_bytes"] / 2**20, where)
        for percent, key in (("50.000000", "p50"), ("99.000000", "p99")):
            assert_shows(row[keys[key]], s["clat_ns"]["percentile"][percent] / 1e6, f"{where} {key}")


def test_sim_shows_one_set_of_figures_in_its_table_json_html_logs_and_dataframes(tmp_path):
    import raidlab

    html, logs, out = tmp_path / "run.html", tmp_path / "run", tmp_path / "run.json"
    shown = run_cli([*SIM, "--html", str(html), "--log-prefix", str(logs)])
    assert shown.status == 0, shown.stderr
    assert run_cli([*SIM, "--json", str(out)]).status == 0  # same inputs and seed: the same run
    document = json.loads(out.read_text())
    h = document["raidlab"]["headline"]
    assert h["basis"] == WHOLE_RUN and h["read"]["iops"] > 0 and h["write"]["iops"] > 0
    assert h["iops"] == pytest.approx(h["read"]["iops"] + h["write"]["iops"])
    # sim reports the whole run: one job's figures are fio's jobs[] figures.
    job = document["jobs"][0]
    for direction in ("read", "write"):
        assert h[direction]["iops"] == pytest.approx(job[direction]["iops"])
        assert h[direction]["p99_ms"] == pytest.approx(job[direction]["clat_ns"]["percentile"]["99.000000"] / 1e6)

    assert_headline_line(shown.stdout, h, "terminal")
    assert_job_rows(terminal_table(shown.stdout, "job"), document, "terminal jobs",
                    {"job": "job", "dir": "dir", "IOPS": "IOPS", "MiB/s": "MiB/s", "p50": "p50", "p99": "p99"})
    report = html.read_text()
    (summary,) = html_table(report, "run", "read IOPS", "basis")
    assert summary["basis"] == h["basis"]
    assert_shows(summary["MiB/s"], h["mib_s"], "html summary")
    for direction in ("read", "write"):
        assert_shows(summary[f"{direction} IOPS"], h[direction]["iops"], "html summary")
        assert_shows(summary[f"{direction} p99 ms"], h[direction]["p99_ms"], "html summary")
    assert f"Per job, {WHOLE_RUN}" in report
    assert_job_rows(html_table(report, "job", "direction", "p99.9 ms"), document, "html jobs",
                    {"job": "job", "dir": "direction", "IOPS": "IOPS", "MiB/s": "MiB/s", "p50": "p50 ms",
                     "p99": "p99 ms"})
    # fio's iops log: each second's I/Os; over the run they average to the headline.
    for direction, code in (("read", "0"), ("write", "1")):
        values = [int(line.split(", ")[1]) for line in (tmp_path / "run_iops.1.log").read_text().splitlines()
                  if line.split(", ")[2] == code]
        assert sum(values) / len(values) == pytest.approx(h[direction]["iops"])

    result = raidlab.simulate(level=5, devices=4, drive="cheetah-10k7", preset="oltp-postgres", runtime_s=2, seed=7)
    frame = result.headline()
    assert list(frame["basis"]) == [WHOLE_RUN, WHOLE_RUN]
    for row in frame.to_dict("records"):
        figures = h[row["direction"]]
        assert row["iops"] == pytest.approx(figures["iops"]) and row["mib_s"] == pytest.approx(figures["mib_s"])
        assert row["latency_ns_p50"] == pytest.approx(figures["p50_ms"] * 1e6)
        assert row["latency_ns_p99"] == pytest.approx(figures["p99_ms"] * 1e6)
    for table in (result.to_pandas(), result.jobs()):
        for row in table.to_dict("records"):
            assert row["iops"] == pytest.approx(job[row["direction"]]["iops"])
            assert row["latency_ns_p99"] == pytest.approx(job[row["direction"]]["clat_ns"]["percentile"]["99.000000"])


# --- import and measure (fio's own runs) --------------------------------------------------------

FIO = shutil.which("fio")
needs_fio = pytest.mark.skipif(FIO is None, reason="fio is not installed (make deps installs it)")
#: Two jobs at once on a file: the headline sums their rates (fio's jobs[] have no array device).
TWO_JOBS = """\
[global]
filename={target}
size=16M
ioengine=psync
runtime=1
time_based
[mix]
rw=randrw
bs=4k
[reads]
rw=randread
bs=8k
"""


def assert_whole_run_outputs(terminal: str, report: str, document: Dict, where: str) -> None:
    """The terminal's headline line and the HTML summary show the document's headline, which is
    the whole run's: the jobs' rates summed, per direction."""
    h = document["raidlab"]["headline"]
    assert h["basis"] == WHOLE_RUN
    for direction in ("read", "write"):
        assert h[direction]["iops"] == pytest.approx(sum(job[direction]["iops"] for job in document["jobs"]))
        assert h[direction]["mib_s"] == pytest.approx(sum(job[direction]["bw_bytes"] for job in document["jobs"]) / 2**20)
    assert h["read"]["iops"] > h["write"]["iops"] > 0
    assert_headline_line(terminal, h, f"{where} terminal")
    (summary,) = html_table(report, "run", "read IOPS", "basis")
    assert summary["basis"] == h["basis"]
    assert_shows(summary["MiB/s"], h["mib_s"], f"{where} html")
    for direction in ("read", "write"):
        assert_shows(summary[f"{direction} IOPS"], h[direction]["iops"], f"{where} html")
        assert_shows(summary[f"{direction} p99 ms"], h[direction]["p99_ms"], f"{where} html")


@needs_fio
def test_import_shows_one_set_of_figures_in_its_table_json_and_html(tmp_path):
    job, raw = tmp_path / "two.fio", tmp_path / "fio.json"
    job.write_text(TWO_JOBS.format(target=tmp_path / "data.bin"))
    done = subprocess.run([FIO, str(job), "--output-format=json", f"--output={raw}"], capture_output=True,
                          timeout=60)
    assert done.returncode == 0, done.stderr
    html, out = tmp_path / "import.html", tmp_path / "import.json"
    shown = run_cli(["import", str(raw), "--html", str(html)])
    assert shown.status == 0, shown.stderr
    assert run_cli(["import", str(raw), "--json", str(out)]).status == 0
    assert_whole_run_outputs(shown.stdout, html.read_text(), json.loads(out.read_text()), "import")


@needs_fio
def test_measure_shows_one_set_of_figures_in_its_table_and_html_as_its_json_has_them(tmp_path):
    job, raw, html = tmp_path / "mix.fio", tmp_path / "fio.json", tmp_path / "measure.html"
    job.write_text("[mix]\nrw=randrw\nrwmixread=70\nbs=4k\nioengine=psync\nruntime=1\ntime_based\n")
    shown = run_cli(["measure", "--target", str(tmp_path / "data.bin"), "--fio", str(job), "--size", "16M",
                     "--fio-output", str(raw), "--html", str(html)])
    assert shown.status == 0, shown.stderr
    # --json prints instead of the table: the document is fio's output read as import reads it.
    out = tmp_path / "measure.json"
    assert run_cli(["import", str(raw), "--json", str(out)]).status == 0
    assert_whole_run_outputs(shown.stdout, html.read_text(), json.loads(out.read_text()), "measure")


# --- plan and reliability ------------------------------------------------------------------------

PLAN = ["plan", "--capacity-tb", "0.1", "--preset", "oltp-postgres", "--levels", "10,5", "--chunks-kib", "64",
        "--drive", "x25e-slc", "--max-drives", "6", "--extra", "0", "--jobs", "1"]


def test_plan_shows_one_set_of_figures_in_its_table_json_and_html(tmp_path):
    html, out = tmp_path / "plan.html", tmp_path / "plan.json"
    shown = run_cli([*PLAN, "--html", str(html)])
    assert shown.status == 0, shown.stderr
    assert run_cli([*PLAN, "--json", str(out)]).status == 0  # the same seed: the same plan
    document = json.loads(out.read_text())
    points = {p["label"]: p for p in document["points"]}
    basis = {d["name"]: d["optimal"]["basis"] for d in document["designs"]}
    rows = terminal_table(shown.stdout, "design")
    assert len(rows) >= 2
    for row in rows:
        name = row["design"].lstrip("* ").strip()
        assert_shows(row["IOPS"], points[name]["iops"], f"plan terminal {row['design']}")
        assert_shows(row["p99 ms"], points[name]["p99_ms"], f"plan terminal {row['design']}")
        assert row["basis"] == basis[name], (row, basis[name])
    html_rows = html_table(html.read_text(), "design", "IOPS", "p99 ms", "Pareto")
    assert len(html_rows) == len(points)
    for row in html_rows:
        assert_shows(row["IOPS"], points[row["design"]]["iops"], f"plan html {row['design']}")
        assert_shows(row["p99 ms"], points[row["design"]]["p99_ms"], f"plan html {row['design']}")
        assert row["basis"] == basis[row["design"]]


RELIABILITY = ["reliability", "--level", "6", "--devices", "6", "--capacity-tb", "4", "--trials", "2000"]


def test_reliability_shows_one_set_of_figures_in_its_text_json_and_html(tmp_path):
    from raidlab.units import format_probability

    html = tmp_path / "reliability.html"
    shown = run_cli([*RELIABILITY, "--html", str(html)])
    assert shown.status == 0, shown.stderr
    answer = run_cli([*RELIABILITY, "--json"]).json()
    lines = [line for line in shown.stdout.splitlines() if re.match(r"^(MTTDL|P\(|expected bytes)", line)]
    text = {re.split(r"\s{2,}", line)[0]: re.split(r"\s{2,}", line)[1:] for line in lines}
    assert text["P(array loss in 5 y)"][0] == format_probability(answer["p_array_loss"])
    assert text["P(any sector lost in 5 y)"][0] == format_probability(answer["p_sector_loss"])
    assert float(text["MTTDL"][0].rstrip(" y")) == pytest.approx(answer["mttdl_years"], rel=1e-2)
    # The report's results table: the text's rows, cell for cell (a dash is a dash).
    html_rows = html_table(html.read_text(), "exact Markov chain (exponential)")
    head = list(html_rows[0])
    shown_html = {row[head[0]]: [row[h].replace("–", "-") for h in head[1:]] for row in html_rows}
    for name, cells in text.items():
        assert shown_html[name] == cells, name


def test_compare_from_python_gives_the_headline_figures_as_a_dataframe():
    from raidlab import frames
    from raidlab.compare import classic, compare

    designs, cases = classic()
    rows = compare(designs, cases[1:2], ["optimal"], runtime_s=15)
    frame = frames.comparison(rows)
    assert len(frame) == 2
    for row, record in zip(rows, frame.to_dict("records")):
        h = row.document["raidlab"]["headline"]
        assert STEADY.match(h["basis"]) and record["basis"] == h["basis"]
        assert (record["design"], record["state"], record["workload"]) == (row.design, "optimal", "rndwr")
        assert record["iops"] == h["iops"] and record["mib_s"] == h["mib_s"]
        assert record["write_latency_ms_p99"] == h["write"]["p99_ms"] and record["read_latency_ms_p99"] is None


def test_a_compare_runs_document_imported_again_keeps_its_steady_state_headline(tmp_path):
    # import used to recompute every headline over the whole run: 1718 IOPS where compare said 1118.
    out = tmp_path / "c.json"
    assert run_cli(["compare", "--states", "optimal", "--jobs", "1", "--json", str(out)]).status == 0
    run = next(r for r in json.loads(out.read_text())["runs"]
               if (r["design"], r["workload"]) == ("RAID5", "rndrw"))
    single = tmp_path / "run.json"
    single.write_text(json.dumps(run["document"]))
    imported = run_cli(["import", str(single), "--json"])
    assert imported.status == 0, imported.stderr
    assert imported.json()["raidlab"]["headline"] == run["document"]["raidlab"]["headline"]
    assert STEADY.match(run["document"]["raidlab"]["headline"]["basis"])


def test_import_loads_every_run_of_a_compare_json_with_its_headline(tmp_path):
    # import refused compare's own --json ("no document with jobs").
    out = tmp_path / "c.json"
    assert run_cli(["compare", "--states", "optimal", "--jobs", "1", "--json", str(out)]).status == 0
    runs = json.loads(out.read_text())["runs"]
    imported = run_cli(["import", str(out), "--json"])
    assert imported.status == 0, imported.stderr
    documents = imported.json()
    assert len(documents) == len(runs) == 6
    assert [d["raidlab"]["headline"] for d in documents] == [r["document"]["raidlab"]["headline"] for r in runs]
    table = run_cli(["import", str(out)])
    assert f"imported {out} [RAID10 optimal rndrw]" in table.stdout
