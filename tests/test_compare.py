"""`raidlab compare`: the main job, its outputs and its designs file."""

from __future__ import annotations

import csv
import io
import json

from raidlab.cli import main


def run(args, capsys):
    status = main(["compare", *args])
    captured = capsys.readouterr()
    return status, captured.out, captured.err


def test_classic_runs_and_gives_the_known_answer(capsys):
    status, out, err = run([], capsys)
    assert status == 0, err
    lines = out.splitlines()
    assert len([l for l in lines if l.startswith(("RAID5 ", "RAID10 "))]) == 18
    verdicts = [l for l in lines if l.startswith(("RAID5:", "RAID10:"))]
    assert len(verdicts) == 2
    # The classic answer: RAID10 wins random writes, RAID5 gives more capacity.
    assert "rndwr" in verdicts[1] and "usable 1500 GB" in verdicts[0] and "usable 900 GB" in verdicts[1]


def test_json_and_csv_are_complete_and_deterministic(tmp_path, capsys):
    args = ["--preset", "oltp-postgres", "--runtime-s", "2", "--states", "optimal,degraded"]
    status, out, _ = run([*args, "--json", "-"], capsys)
    assert status == 0
    first = json.loads(out)
    assert len(first["runs"]) == 4
    assert {r["state"] for r in first["runs"]} == {"optimal", "degraded"}
    assert all(r["document"]["raidlab"]["seed"] == 1 for r in first["runs"])
    _, again, _ = run([*args, "--json", "-"], capsys)
    assert out == again
    path = tmp_path / "out.csv"
    status, _, _ = run([*args, "--csv", str(path)], capsys)
    rows = list(csv.DictReader(io.StringIO(path.read_text())))
    assert len(rows) == 4 and float(rows[0]["iops"]) > 0


def test_designs_file(tmp_path, capsys):
    designs = tmp_path / "designs.toml"
    designs.write_text("""
[defaults]
drive = "x25e-slc"
controller = "md"
devices = 4
[[design]]
name = "r5-64k"
level = 5
chunk_kib = 64
[[design]]
name = "r10-f2"
level = 10
layout = "f2"
[[workload]]
name = "oltp"
preset = "oltp-innodb"
""")
    status, out, err = run(["--designs", str(designs), "--states", "optimal", "--runtime-s", "1"], capsys)
    assert status == 0, err
    assert "r5-64k" in out and "r10-f2" in out and "oltp" in out


def test_bad_designs_exit_2(tmp_path, capsys):
    bad = tmp_path / "bad.toml"
    bad.write_text('[[design]]\nname = "x"\nwarp = 9\n')
    for args in (["--designs", str(bad)], ["--designs", str(tmp_path / "missing.toml")], ["--states", "sideways"]):
        status, _, err = run(args, capsys)
        assert status == 2 and len(err.strip().splitlines()) == 1


def test_html_report(tmp_path, capsys):
    out = tmp_path / "compare.html"
    status, _, err = run(["--preset", "wal", "--runtime-s", "1", "--states", "optimal,degraded", "--html", str(out)], capsys)
    assert status == 0, err
    html = out.read_text()
    assert html.count("<svg") >= 3 and "RAID10" in html and "degraded" in html
    assert "http://" not in html.split("<body", 1)[0] and "<script src" not in html


def test_png_directory_that_cannot_be_made_is_a_one_line_error(tmp_path, capsys):
    blocker = tmp_path / "a-file"
    blocker.write_text("not a directory")
    status, _, err = run(["--preset", "wal", "--runtime-s", "1", "--states", "optimal", "--png", str(blocker / "charts")], capsys)
    assert status == 2
    assert err.count("\n") == 1 and "cannot create" in err and "charts" in err


def test_png_charts(tmp_path, capsys):
    out = tmp_path / "charts"
    status, _, err = run(["--preset", "wal", "--runtime-s", "1", "--states", "optimal,rebuilding", "--png", str(out)], capsys)
    assert status == 0, err
    names = sorted(p.name for p in out.iterdir())
    assert {"iops.png", "latency_p99.png", "latency_cdf.png", "member_utilisation.png"} <= set(names)
    assert any(n.startswith("timeline_") for n in names)
    for path in out.iterdir():
        data = path.read_bytes()
        assert data[:8] == b"\x89PNG\r\n\x1a\n" and len(data) > 5000
