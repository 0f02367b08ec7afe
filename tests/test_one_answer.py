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
from html.parser import HTMLParser
from typing import Dict, List, Optional

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
        if not line.strip():
            break
        rows.append(dict(zip(head, re.split(r"\s{2,}", line.strip()))))
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

    latency = (("read", "p50"), ("read", "p99"), ("write", "p50"), ("write", "p99"))
    for row in terminal_table(run.stdout, "design"):
        h = headline[(row["design"], row["state"], row["workload"])]
        where = f"terminal {row['design']} {row['state']} {row['workload']}"
        assert row["basis"] == h["basis"], where
        assert_shows(row["IOPS"], h["iops"], where)
        assert_shows(row["MiB/s"], h["mib_s"], where)
        for direction, percent in latency:
            assert_shows(row[f"{direction} {percent} ms"], h[direction][f"{percent}_ms"], f"{where} {direction} {percent}")
    rows = list(csv.DictReader(io.StringIO(out["csv"].read_text())))
    assert len(rows) == 12
    for row in rows:
        h = headline[(row["design"], row["state"], row["workload"])]
        where = f"csv {row['design']} {row['state']} {row['workload']}"
        assert row["basis"] == h["basis"], where
        assert_shows(row["iops"], h["iops"], where)
        assert_shows(row["mib_s"], h["mib_s"], where)
        for direction, percent in latency:
            assert_shows(row[f"{direction}_latency_ms_{percent}"], h[direction][f"{percent}_ms"], where)
    html_rows = html_table(out["html"].read_text(), "design", "state", "IOPS", "basis")
    assert len(html_rows) == 12
    for row in html_rows:
        design, workload = row["design"].split(" · ")
        h = headline[(design, row["state"], workload)]
        where = f"html {row['design']} {row['state']}"
        assert row["basis"] == h["basis"], where
        assert_shows(row["IOPS"], h["iops"], where)
        assert_shows(row["MiB/s"], h["mib_s"], where)
        for direction, percent in latency:
            assert_shows(row[f"{direction} {percent} ms"], h[direction][f"{percent}_ms"], where)
    # The summary at the top of the report shows the same figures, split by direction.
    for row in html_table(out["html"].read_text(), "run", "read IOPS", "basis"):
        design, workload, state = row["run"].split(" · ")
        h = headline[(design, state, workload)]
        assert row["basis"] == h["basis"]
        for direction in ("read", "write"):
            assert_shows(row[f"{direction} IOPS"], h[direction]["iops"], f"html summary {row['run']}")
            assert_shows(row[f"{direction} p99 ms"], h[direction]["p99_ms"], f"html summary {row['run']}")
