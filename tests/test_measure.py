"""`raidlab measure`, `raidlab import` and `raidlab calibrate`: real fio runs on temp files.

Acceptance: measure reproduces fio's own IOPS of the same run within 2 %; writes are
refused on a block device, a mounted device and a non-empty file; a missing fio binary and fio's
own errors are one line with exit status 2; fio 3.33 JSON generated here imports with every field
raidlab shows intact; a quick calibration on this machine's disk predicts a workload outside
its sweep (the error is printed and must be finite). Sizes and run times are small (the whole
file runs in well under a minute).
"""

from __future__ import annotations

import hashlib
import json
import math
import os
import shutil
import stat
import subprocess
from pathlib import Path

import pytest

from raidlab.cli import main
from raidlab.measure import calibrate as calibration
from raidlab.measure import fit, safety
from raidlab.measure.importer import parse_fio_json

FIO = shutil.which("fio")
needs_fio = pytest.mark.skipif(FIO is None, reason="fio is not installed (make deps installs it)")

RANDRW_JOB = """\
[mix]
rw=randrw
rwmixread=70
bs=4k
ioengine=libaio
iodepth=4
direct=1
runtime=1
time_based
"""


def run_cli(args, capsys):
    status = main([str(a) for a in args])
    captured = capsys.readouterr()
    return status, captured.out, captured.err


def digest(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def table_rows(text: str):
    """{(job, dir): [cells]} from the job table raidlab prints."""
    rows = {}
    for line in text.splitlines():
        cells = line.split()
        if len(cells) == 9 and cells[1] in ("read", "write", "fsync"):
            rows[(cells[0], cells[1])] = cells
    return rows


# -- measure: exact parsing --------------------------------------------------------------------


@needs_fio
def test_measure_reproduces_fios_own_iops_of_the_same_run(tmp_path, capsys):
    job = tmp_path / "mix.fio"
    job.write_text(RANDRW_JOB)
    target, raw = tmp_path / "data.bin", tmp_path / "fio.json"
    status, out, err = run_cli(["measure", "--target", target, "--fio", job, "--size", "32M",
                                "--fio-output", raw], capsys)
    assert status == 0, err
    fio_doc = parse_fio_json(raw.read_text())
    fio_job = fio_doc["jobs"][0]
    rows = table_rows(out)
    for direction in ("read", "write"):
        fio_iops = fio_job[direction]["iops"]
        assert fio_iops > 50
        shown = float(rows[("mix", direction)][2])
        assert abs(shown - fio_iops) / fio_iops < 0.02, (direction, shown, fio_iops)
        assert float(rows[("mix", direction)][3]) == pytest.approx(fio_job[direction]["bw_bytes"] / 2**20, abs=0.05)

    # The JSON document of another run against that run's own fio output: identical numbers.
    out_json = tmp_path / "measured.json"
    status, _, err = run_cli(["measure", "--target", target, "--fio", job, "--destroy-data",
                              "--json", out_json, "--fio-output", raw], capsys)
    assert status == 0, err
    document = json.loads(out_json.read_text())
    fio_doc = parse_fio_json(raw.read_text())
    for direction in ("read", "write"):
        ours, theirs = document["jobs"][0][direction], fio_doc["jobs"][0][direction]
        assert abs(ours["iops"] - theirs["iops"]) / theirs["iops"] < 0.02
        assert ours["total_ios"] == theirs["total_ios"]
        assert ours["clat_ns"]["percentile"] == theirs["clat_ns"]["percentile"]
    block = document["raidlab"]
    assert block["source"] == "measured"
    assert block["tool"] == "fio" and block["tool_version"].startswith("fio-3")
    assert "filename=" in block["job_file"] and block["workload"]["jobs"][0]["iodepth"] == 4
    assert document["fio version"] == fio_doc["fio version"]


@needs_fio
def test_read_only_workload_never_relays_out_an_existing_file(tmp_path, capsys):
    target = tmp_path / "precious.bin"
    target.write_bytes(os.urandom(4 << 20))
    before = digest(target)
    job = tmp_path / "read.fio"
    job.write_text("[scan]\nrw=randread\nbs=4k\ndirect=1\nruntime=1\ntime_based\n")
    # --size beyond the file: fio would unlink and lay the file out again (filesetup.c
    # extend_file); raidlab caps the region at the file's size instead and says so.
    status, out, err = run_cli(["measure", "--target", target, "--fio", job, "--size", "64M",
                                "--runtime-s", "0.5"], capsys)
    assert status == 0, err
    assert "more than" in err and "holds" in err
    assert digest(target) == before
    assert table_rows(out)[("scan", "read")]


# -- refusals ----------------------------------------------------------------------------------


def test_writes_to_a_non_empty_file_are_refused(tmp_path, capsys, sentinel_fio):
    fake, marker = sentinel_fio
    target = tmp_path / "data.bin"
    target.write_bytes(b"x" * 8192)
    status, out, err = run_cli(["measure", "--target", target, "--preset", "oltp-postgres",
                                "--fio-binary", fake], capsys)
    assert status == 2
    assert err.count("\n") == 1 and err.startswith("raidlab: error: refusing to write")
    assert "existing file" in err and "--destroy-data" in err
    assert not marker.exists()
    assert target.read_bytes() == b"x" * 8192


def _block_devices():
    for name in sorted(os.listdir("/sys/block")) if os.path.isdir("/sys/block") else []:
        path = f"/dev/{name}"
        try:
            if stat.S_ISBLK(os.stat(path).st_mode):
                yield path
        except OSError:
            continue


def test_writes_to_a_block_device_are_refused(capsys, sentinel_fio):
    fake, marker = sentinel_fio
    devices = list(_block_devices())
    if not devices:
        pytest.skip("no block device node under /dev for the entries of /sys/block")
    for device in devices[:3]:
        status, _, err = run_cli(["measure", "--target", device, "--preset", "wal",
                                  "--fio-binary", fake], capsys)
        assert status == 2, device
        assert err.startswith("raidlab: error: refusing to write to") and err.count("\n") == 1
        assert "block device" in err or "mounted" in err or "held by" in err or "swap" in err
    assert not marker.exists()


def test_block_device_refusal_through_a_stubbed_stat(monkeypatch, tmp_path, sentinel_fio):
    """The same rule without relying on this machine's devices."""
    fake, marker = sentinel_fio
    monkeypatch.setattr(safety, "inspect",
                        lambda path: safety.Target(path, "block", 1 << 30, "8:0", []))
    from raidlab.measure import measure
    from raidlab.errors import ConfigError

    with pytest.raises(ConfigError, match="refusing to write to block device .*--destroy-data"):
        measure("/dev/sdz", preset="oltp-innodb", fio_binary=str(fake))
    monkeypatch.setattr(safety, "inspect",
                        lambda path: safety.Target(path, "block", 1 << 30, "8:0", ["mounted at /srv"]))
    with pytest.raises(ConfigError, match="mounted at /srv.*even with --destroy-data"):
        measure("/dev/sdz", preset="oltp-innodb", destroy_data=True, fio_binary=str(fake))
    assert not marker.exists()


def _root_device():
    """The /dev node of the device mounted at /, if any."""
    try:
        with open("/proc/self/mountinfo") as handle:
            for line in handle:
                fields = line.split()
                if fields[4] == "/":
                    uevent = Path(f"/sys/dev/block/{fields[2]}/uevent")
                    for entry in uevent.read_text().splitlines():
                        if entry.startswith("DEVNAME="):
                            path = "/dev/" + entry.split("=", 1)[1]
                            if os.path.exists(path):
                                return path
    except OSError:
        return None
    return None


def test_a_mounted_device_is_refused_even_with_destroy_data(capsys, sentinel_fio):
    fake, marker = sentinel_fio
    device = _root_device()
    if device is None:
        pytest.skip("the root file system is not on a block device node we can see")
    status, _, err = run_cli(["measure", "--target", device, "--preset", "oltp-postgres",
                              "--destroy-data", "--fio-binary", fake], capsys)
    assert status == 2
    assert "mounted at /" in err and "even with --destroy-data" in err
    assert not marker.exists()


def test_read_only_workloads_are_allowed_on_devices(capsys, tmp_path):
    """Reads pass the safety check (dry run: nothing is started)."""
    device = next(iter(_block_devices()), None)
    if device is None:
        pytest.skip("no block device node")
    status, out, err = run_cli(["measure", "--target", device, "--preset", "backup-scan",
                                "--size", "16M", "--dry-run"], capsys)
    assert status == 0, err
    assert f"filename={device}" in out and "rw=read" in out


def test_missing_fio_binary_is_one_clear_line(tmp_path, capsys, monkeypatch):
    status, _, err = run_cli(["measure", "--target", tmp_path / "new.bin", "--preset", "wal",
                              "--fio-binary", tmp_path / "no" / "fio"], capsys)
    assert status == 2 and err.count("\n") == 1
    assert "not found" in err and "apt-get install fio" in err
    monkeypatch.setenv("PATH", str(tmp_path))
    monkeypatch.delenv("RAIDLAB_FIO", raising=False)
    status, _, err = run_cli(["measure", "--target", tmp_path / "new.bin", "--preset", "wal"], capsys)
    assert status == 2 and err.count("\n") == 1
    assert err.startswith("raidlab: error: fio not found")
    assert not (tmp_path / "new.bin").exists()


@needs_fio
@pytest.mark.skipif(not os.path.exists("/dev/full"), reason="no /dev/full")
def test_fios_own_error_is_one_line(capsys):
    status, _, err = run_cli(["measure", "--target", "/dev/full", "--preset", "wal", "--size", "8M",
                              "--runtime-s", "1", "--destroy-data"], capsys)
    assert status == 2
    assert err.count("\n") == 1
    assert err.startswith("raidlab: error: fio failed on /dev/full: fio: io_u error")
    assert "No space left on device" in err


def test_sysbench_runs_as_the_closest_fio_job_and_says_what_differs(tmp_path, capsys):
    options = ("--file-test-mode=rndrw --file-num=4 --file-total-size=64M --file-fsync-freq=100 "
               "--file-extra-flags=direct --threads=2 --time=1")
    status, out, err = run_cli(["measure", "--target", tmp_path / "sb.bin", "--sysbench", options,
                                "--dry-run"], capsys)
    assert status == 0, err
    assert "nrfiles" not in out and "rwmixread=60" in out and "numjobs=2" in out
    assert "fsync=40" in out  # 100 requests × 40 % writes between sync points
    assert "4 files laid end to end" in err and "fsync" in err


# -- import ------------------------------------------------------------------------------------


def _fio_json(tmp_path) -> Path:
    """A real fio 3.x JSON file: a mixed job with fdatasync, so every row raidlab shows exists."""
    out = tmp_path / "run.json"
    done = subprocess.run(
        [FIO, "--name=imported", f"--filename={tmp_path / 'imp.bin'}", "--size=16m", "--rw=randrw",
         "--rwmixread=70", "--bs=4k", "--fdatasync=8", "--runtime=1", "--time_based",
         "--output-format=json", f"--output={out}"],
        capture_output=True, text=True, timeout=60, stdin=subprocess.DEVNULL)
    assert done.returncode == 0, done.stderr
    return out


@needs_fio
def test_import_round_trips_every_field_raidlab_shows(tmp_path, capsys):
    path = _fio_json(tmp_path)
    original = json.loads(path.read_text())
    assert original["fio version"].startswith("fio-3")
    status, out, err = run_cli(["import", path, "--json"], capsys)
    assert status == 0, err
    document = json.loads(out)
    assert document["raidlab"]["source"] == "measured"
    assert document["raidlab"]["tool_version"] == original["fio version"]
    theirs, ours = original["jobs"][0], document["jobs"][0]
    for direction in ("read", "write"):
        for key in ("iops", "bw_bytes", "bw", "runtime", "total_ios", "io_bytes"):
            assert ours[direction][key] == theirs[direction][key], (direction, key)
        for key in ("mean", "max", "min", "percentile"):
            assert ours[direction]["clat_ns"][key] == theirs[direction]["clat_ns"][key]
    # fio 3.33 reports sync.total_ios = 0; the count is lat_ns.N.
    assert ours["sync"]["total_ios"] == theirs["sync"]["lat_ns"]["N"] > 0
    assert ours["sync"]["lat_ns"]["mean"] == theirs["sync"]["lat_ns"]["mean"]
    for mine, fios in zip(document["disk_util"], original.get("disk_util", [])):
        for key in ("name", "read_ios", "write_ios", "util"):
            assert mine[key] == fios[key]

    # The table shows those numbers, formatted as `raidlab sim` formats them.
    from raidlab.report.table import _ms_value

    status, text, err = run_cli(["import", path], capsys)
    assert status == 0, err
    rows = table_rows(text)
    for direction in ("read", "write"):
        stats = theirs[direction]
        cells = rows[("imported", direction)]
        assert cells[2] == f"{stats['iops']:.0f}"
        assert cells[3] == f"{stats['bw_bytes'] / 2**20:.1f}"
        assert cells[4] == _ms_value(stats['clat_ns']['mean'] / 1e6)
        assert cells[6] == _ms_value(stats['clat_ns']['percentile']['99.000000'] / 1e6)
    assert ("imported", "fsync") in rows

    # Again as a document raidlab wrote: nothing changes but where it came from.
    again = tmp_path / "again.json"
    again.write_text(out)
    status, out2, _ = run_cli(["import", again, "--json"], capsys)
    redone = json.loads(out2)
    assert redone["raidlab"].pop("imported_from") == str(again)
    document["raidlab"].pop("imported_from")
    assert redone == document

    # Measured and simulated runs side by side: tables, and one HTML report.
    simulated = tmp_path / "sim.json"
    status, _, err = run_cli(["sim", "--level", "0", "--devices", "1", "--drive", "null", "--preset",
                              "oltp-postgres", "--runtime-s", "0.05", "--json", simulated], capsys)
    assert status == 0, err
    report = tmp_path / "both.html"
    status, text, err = run_cli(["import", path, simulated, "--html", report], capsys)
    assert status == 0, err
    assert "measured with fio-3" in text and "s simulated" in text
    assert report.read_text().count("<svg") >= 2


@needs_fio
def test_import_tolerates_fio_preamble_and_refuses_non_fio_json(tmp_path, capsys):
    path = _fio_json(tmp_path)
    noisy = tmp_path / "noisy.json"
    noisy.write_text("$ fio job.fio --output-format=json\n"
                     "fio: pid=0, err=20/file:filesetup.c:455, func=fstat, error=Not a directory\n"
                     + path.read_text() + "\nJobs: 0 (f=0)\n")
    status, out, err = run_cli(["import", noisy, "--json"], capsys)
    assert status == 0, err
    clean = json.loads(run_cli(["import", path, "--json"], capsys)[1])
    noisy_doc = json.loads(out)
    assert noisy_doc["jobs"] == clean["jobs"]
    bad = tmp_path / "bad.json"
    bad.write_text('{"hello": 1}\n')
    status, _, err = run_cli(["import", bad], capsys)
    assert status == 2 and "not fio JSON output" in err
    old = tmp_path / "fio2.json"
    old.write_text(json.dumps({"fio version": "fio-2.2.10", "jobs": [
        {"jobname": "x", "read": {"iops": 1, "clat": {"mean": 1.0}}, "write": {}}]}))
    status, _, err = run_cli(["import", old], capsys)
    assert status == 2 and "fio 2.x" in err


# -- calibration -------------------------------------------------------------------------------


def _synthetic_sweep(drive, span, quick=True):
    """A sweep measured on a simulated drive instead of with fio (no I/O)."""
    from raidlab.workload import Workload

    observations = []
    for point in calibration.sweep_points(quick):
        result = fit.single_drive_sim(drive, Workload((point.job(500_000_000),), "fio", ""), seed=11)
        observations.append(fit.Observation.from_document(point, result.to_dict()))
    return observations


def test_hdd_fit_recovers_a_simulated_disk():
    span = 1 << 30
    observations = _synthetic_sweep({"preset": "cheetah-10k7", "params": {"capacity_bytes": span}}, span)
    result = fit.fit_model("hdd", observations, span, max_evals=40)
    assert result.params["rpm"] == 10000.0
    assert result.mean_abs_pct < 20.0, result.errors_pct
    assert 3.0 < result.params["seek_ms_average"] < 6.5


def test_empirical_fit_predicts_points_outside_its_sweep_and_chooser_prefers_physical_models():
    span = 256 << 20
    truth = {"kind": "empirical", "params": {"capacity_bytes": span, "read_parallelism": 6,
                                             "write_parallelism": 2, "read_contention": 0.05,
                                             "read_mb_s": 800.0, "write_mb_s": 400.0}}
    observations = _synthetic_sweep(truth, span)
    result = fit.fit_model("empirical", observations, span, max_evals=40)
    assert result.mean_abs_pct < 10.0, result.errors_pct
    model = {"kind": "empirical", "params": result.params}
    for held_out in (fit.Point("randread", 4096, 4), fit.Point("randwrite", 16384, 2),
                     fit.Point("randread", 65536, 16)):
        expected, _ = fit.predict_point(truth, held_out, 0.5, 0, seed=5)
        got, _ = fit.predict_point(model, held_out, 0.5, 0, seed=5)
        assert abs(got / expected - 1) < 0.15, (held_out.name, got, expected)
    hdd = fit.Fit("hdd", {"rpm": 7200.0}, [1.0], [9.0], 0.09, 1)
    empirical = fit.Fit("empirical", {"x": 1.0}, [1.0], [2.0], 0.02, 1)
    assert fit.choose({"hdd": hdd, "empirical": empirical}).kind == "hdd"  # within 10 %
    hdd.errors_pct, hdd.rms_log = [40.0], 0.4
    assert fit.choose({"hdd": hdd, "empirical": empirical}).kind == "empirical"


@needs_fio
def test_quick_calibration_predicts_a_workload_outside_its_sweep(tmp_path, capsys):
    target, model = tmp_path / "cal.bin", tmp_path / "drive.toml"
    sweep = tmp_path / "sweep.json"
    status, out, err = run_cli(["calibrate", "--target", target, "--size", "64M", "--capacity-tb", "0.5",
                                "--quick", "--runtime-s", "1", "--out", model, "--json", sweep], capsys)
    assert status == 0, err
    result = json.loads(sweep.read_text())
    assert len(result["sweep"]) == len(calibration.sweep_points(True))
    assert result["model"] in fit.MODELS
    assert math.isfinite(result["fit_error"]["mean_abs_pct"])
    text = model.read_text()
    assert text.startswith("# raidlab drive model") and f'kind = "{result["model"]}"' in text
    assert "fit error on the sweep" in text

    # `raidlab sim --drive` reads the file and predicts an array of the drive.
    status, out, err = run_cli(["sim", "--drive", model, "--level", "5", "--devices", "4",
                                "--chunk-kib", "64", "--preset", "oltp-postgres", "--runtime-s", "0.2"], capsys)
    assert status == 0, err
    assert table_rows(out)[("oltp-postgres", "read")]

    # Validation: randrw 70/30 8 KiB at depth 4 is not in the sweep. Predict it on one drive
    # and measure it with fio on the same file.
    job = tmp_path / "validate.fio"
    job.write_text("[validate]\nrw=randrw\nrwmixread=70\nbs=8k\nioengine=libaio\niodepth=4\n"
                   "direct=1\nruntime=1\ntime_based\n")
    from raidlab.measure import measure
    from raidlab.workload import parse_fio

    total = lambda j: j["read"]["iops"] + j["write"]["iops"]  # noqa: E731
    # The median of three 1 s runs: a shared machine's disk swings between runs.
    runs = sorted((measure(str(target), fio=str(job), destroy_data=True).document["jobs"][0]
                   for _ in range(3)), key=total)
    measured = runs[1]
    predicted = fit.single_drive_sim(str(model), parse_fio(job.read_text())).to_dict()["jobs"][0]
    error = 100.0 * (total(predicted) - total(measured)) / total(measured)
    read_error = 100.0 * (predicted["read"]["iops"] - measured["read"]["iops"]) / measured["read"]["iops"]
    with capsys.disabled():
        print(f"\n[calibration] model {result['model']}, sweep fit error mean "
              f"{result['fit_error']['mean_abs_pct']:.1f} % (max {result['fit_error']['max_abs_pct']:.1f} %); "
              f"randrw 70/30 8k QD4: measured {total(measured):.0f} IOPS, predicted "
              f"{total(predicted):.0f} IOPS, error {error:+.1f} % (reads {read_error:+.1f} %)")
    assert math.isfinite(error) and math.isfinite(read_error)
    assert total(measured) > 0 and total(predicted) > 0
