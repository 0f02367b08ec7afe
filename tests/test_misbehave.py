"""Drives that misbehave in arrays, end to end (API and CLI).

A latent sector error under load on a drive without ERC stalls it past the host's 30 s command
timeout and md drops it (the spare is rebuilt); with ERC the read fails after 7 s, md computes
the block from parity, rewrites it, and the drive stays. Reliability counts the drops.
"""

import json
import re
import subprocess
import sys

import pytest

from raidlab.sim import simulate

#: green-5400 (no ERC) with a sector its deep recovery needs 40 s or more for, on small members
#: so the spare's rebuild ends within the run.
DESKTOP = {"preset": "green-5400", "params": {"recovery_s_min": 40.0, "capacity_bytes": 500002816.0}}


def _run(drive, runtime_s):
    result = simulate(level=5, devices=4, drive=drive, fio=None, preset="oltp-innodb", runtime_s=runtime_s,
                      latent_error=["1@2s"], spare=True, speed_limit_min=100000)
    return result.to_dict()


def test_no_erc_drive_is_dropped_at_the_command_timeout_and_the_spare_rebuilt():
    doc = _run(DESKTOP, 90)
    events = [(e["event"], e["member"]) for e in doc["drive_events"]]
    assert events == [("latent-error", 1), ("timeout-dropped", 1)]
    dropped_s = doc["drive_events"][1]["at_s"]
    # The first read after 2 s met the sector; 30 s later the host's timer expired.
    assert 32.0 <= dropped_s < 32.1
    phases = [(p["name"], round(p["start_s"], 6)) for p in doc["phases"]]
    assert [name for name, _ in phases] == ["optimal", "rebuilding", "optimal"]
    assert phases[1][1] == round(dropped_s, 6)
    rebuild = doc["rebuild"]
    assert rebuild["member"] == 1 and rebuild["start_s"] == pytest.approx(dropped_s)
    assert rebuild["end_s"] is not None and rebuild["end_s"] < 90
    assert doc["data_loss"] is None


def test_erc_drive_stays_and_the_sector_is_rewritten():
    drive = {"preset": "green-5400", "params": {"erc_read_s": 7.0, "capacity_bytes": 500002816.0}}
    doc = _run(drive, 40)
    events = [e["event"] for e in doc["drive_events"]]
    assert events[0] == "latent-error" and events[-1] == "corrected"
    assert "timeout-dropped" not in events
    errors = [e["at_s"] for e in doc["drive_events"] if e["event"] == "read-error"]
    assert errors and errors[0] - 2.0 == pytest.approx(7.0, abs=0.1)
    assert [p["name"] for p in doc["phases"]] == ["optimal"]
    assert doc["rebuild"] is None


def test_plain_runs_have_no_drive_events_key():
    doc = simulate(level=5, devices=4, drive="green-5400", preset="oltp-innodb", runtime_s=2).to_dict()
    assert "drive_events" not in doc


def _cli(*args):
    return subprocess.run([sys.executable, "-m", "raidlab", *args], capture_output=True, text=True, timeout=600)


def test_cli_latent_error_shows_on_the_summary_and_bad_input_is_one_line(tmp_path):
    report = tmp_path / "r.html"
    run = _cli("sim", "--level", "5", "--devices", "4", "--drive", "green-5400", "--preset", "oltp-innodb",
               "--runtime-s", "40", "--latent-error", "1@2s", "--seed", "1", "--html", str(report))
    assert run.returncode == 0, run.stderr
    assert "drive events: 2.000 s member1 latent-error" in run.stdout
    # The HTML report lists them too, and marks the drive's read error on the timeline.
    html = report.read_text(encoding="utf-8")
    assert "<caption>Drive events</caption>" in html
    assert '<th scope="row">2.000 s</th><td>member1</td><td>latent-error</td>' in html
    # The read error comes when the workload first reads the bad sector: the summary's time.
    read_error_s = re.search(r"([0-9.]+) s member1 read-error", run.stdout).group(1)
    assert float(read_error_s) > 2.0
    assert f'<th scope="row">{read_error_s} s</th><td>member1</td><td>read-error</td>' in html
    assert "member1 read-error" in html.split("<caption>Drive events</caption>")[1]  # the timeline's marker
    bad = _cli("sim", "--level", "5", "--devices", "4", "--preset", "oltp-innodb", "--latent-error", "x@2s")
    assert bad.returncode == 2 and bad.stderr.strip().count("\n") == 0
    assert bad.stderr.startswith("raidlab: error: --latent-error 'x@2s'")
    bad = _cli("sim", "--level", "5", "--devices", "4", "--preset", "oltp-innodb", "--failed", "1",
               "--latent-error", "1@2s")
    assert bad.returncode == 2 and "a latent error needs a working member" in bad.stderr


def _reliability(*extra):
    # A day's repair, as these figures were worked out with (the default is the drive's idle rebuild, 4.4 h).
    run = _cli("reliability", "--level", "5", "--devices", "8", "--drive", "green-5400", "--capacity-tb", "1",
               "--uber", "1e-14", "--trials", "0", "--mttr-hours", "24", "--json", *extra)
    assert run.returncode == 0, run.stderr
    return json.loads(run.stdout)


def test_reliability_desktop_drives_without_erc_lose_arrays_by_timeout_drops():
    no_erc = _reliability()
    erc = _reliability("--erc-s", "7")
    drops = no_erc["timeout_drops"]
    # 55 TB read a drive-year at 1e-14 per bit: 8 * 55e12 * 1e-14 = 4.4 read errors a year;
    # recovery uniform on 10-120 s outlasts 30 s with P = 90/110.
    assert drops["read_errors_per_drive_year"] == pytest.approx(4.4, rel=1e-4)
    assert drops["p_recovery_over_timeout"] == pytest.approx(90 / 110)
    assert drops["drops_per_drive_year"] == pytest.approx(4.4 * 90 / 110, rel=1e-4)
    assert erc["timeout_drops"]["drops_per_drive_year"] == 0.0
    assert erc["timeout_drops"]["erc_s"] == 7.0 and drops["erc_s"] is None
    # The mechanism: drops join the failures, so MTTDL falls from tens of thousands of years to
    # about one.
    assert erc["mttdl_years"] > 20000
    assert no_erc["mttdl_years"] < 2
    assert no_erc["p_array_loss"] > 0.99 > 0.001 > erc["p_array_loss"]
    # A longer host timeout (the raid wiki's 180 s) removes the drops.
    patient = _reliability("--command-timeout-s", "180")
    assert patient["timeout_drops"]["drops_per_drive_year"] == 0.0
    assert patient["mttdl_years"] == pytest.approx(erc["mttdl_years"])


def test_reliability_text_shows_the_drop_rates():
    run = _cli("reliability", "--level", "5", "--devices", "8", "--drive", "green-5400", "--capacity-tb", "1",
               "--uber", "1e-14", "--trials", "0")
    assert run.returncode == 0, run.stderr
    assert ("drops by timeout: no ERC, recovery 10-120 s vs a 30 s command timeout; 55 TB read a year gives "
            "4.4 read errors per drive-year, P(recovery > timeout) 0.818: 3.6 drops per drive-year") in run.stdout


def test_presets_list_the_parking_desktop_drive():
    run = _cli("drives", "--json")
    names = [d["name"] for d in json.loads(run.stdout)]
    assert "green-5400-idle3" in names


def test_parked_heads_show_in_the_latency_tail(tmp_path):
    # One 4 KiB read every 10 s: past the 8 s idle3 timer, every read waits for the heads to load
    # (0.5 s) on green-5400-idle3; green-5400 (timer off) serves it with a seek.
    job = tmp_path / "idle.fio"
    job.write_text("[idle]\nrw=randread\nbs=4k\ndirect=1\nthinktime=10s\nruntime=60\ntime_based\n")
    percentiles = {}
    for drive in ("green-5400-idle3", "green-5400"):
        doc = simulate(level=5, devices=4, drive=drive, fio=str(job)).to_dict()
        clat = doc["jobs"][0]["read"]["clat_ns"]
        percentiles[drive] = (clat["percentile"]["50.000000"], clat["max"])
    p50, worst = percentiles["green-5400-idle3"]
    assert 500e6 <= p50 and worst < 540e6
    assert percentiles["green-5400"][1] < 40e6
