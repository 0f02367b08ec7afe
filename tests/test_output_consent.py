"""No write without consent: every file raidlab writes goes through
:mod:`raidlab.outputs`. Devices (also through a symlink), FIFOs, /dev, the measured --target and
a second output naming the same file are refused; an existing file raidlab did not write is
replaced only with --force; raidlab's own earlier outputs are replaced freely; writes are atomic.
A mistyped /dev path given to measure/calibrate --target is refused and never created.

Refusals happen before any work: fio is a stand-in that records being run, and must not be.
"""

from __future__ import annotations

import json
import os
import stat
import subprocess
import sys
from pathlib import Path

import pytest

from conftest import run_cli
from raidlab.errors import ConfigError

SIM = ["sim", "--level", "5", "--devices", "4", "--drive", "null", "--preset", "wal", "--runtime-s", "0.3"]
PRECIOUS = b"precious data the user wrote\n"
MISSING_DEV = "/dev/raidlab-nonexistent-xyz"


def refused(run, option: str, path, why: str) -> None:
    assert run.status == 2, run.stderr
    assert len(run.stderr_lines) == 1, run.stderr
    assert run.stderr.startswith(f"raidlab: error: refusing to write {option} {path}: "), run.stderr
    assert why in run.stderr, run.stderr


# -- devices, symlinks to devices, FIFOs, /dev ---------------------------------------------------


def test_a_character_device_is_refused():
    """/dev/null is a character device: the old code wrote the JSON into it and exited 0."""
    run = run_cli([*SIM, "--json", "/dev/null"])
    refused(run, "--json", "/dev/null", "it is a character device")
    assert run.stdout == ""


def test_a_symlink_to_a_device_is_the_device(tmp_path):
    link = tmp_path / "report.html"
    link.symlink_to("/dev/null")
    run = run_cli([*SIM, "--html", str(link)])
    refused(run, "--html", link, "it is a character device (/dev/null)")
    assert link.is_symlink() and os.readlink(link) == "/dev/null"


def test_a_fifo_is_refused_without_blocking(tmp_path):
    """Opening a FIFO for writing blocks until a reader comes: the type is checked first.
    (A real process with a timeout, so the old code fails instead of hanging the suite.)"""
    fifo = tmp_path / "out.json"
    os.mkfifo(fifo)
    env = dict(os.environ, PYTHONWARNINGS="ignore")
    try:
        done = subprocess.run([sys.executable, "-m", "raidlab", *SIM, "--json", str(fifo)],
                              stdin=subprocess.DEVNULL, capture_output=True, text=True, timeout=60, env=env)
    except subprocess.TimeoutExpired:
        pytest.fail("raidlab blocked opening a FIFO")
    assert done.returncode == 2
    assert done.stderr == f"raidlab: error: refusing to write --json {fifo}: it is a FIFO (named pipe)\n"
    assert stat.S_ISFIFO(os.stat(fifo).st_mode)


def _unused_block_major() -> int:
    """A block major no driver registered (/proc/devices), so the node reaches nothing."""
    try:
        text = Path("/proc/devices").read_text()
    except OSError:
        pytest.skip("no /proc/devices")
    used = {int(line.split()[0]) for line in text.split("Block devices:", 1)[-1].splitlines()
            if line.split() and line.split()[0].isdigit()}
    return next(major for major in range(240, 255) if major not in used)


def test_a_block_device_is_refused(tmp_path):
    """A block device node made here (a major no driver uses, so even the old code's write could
    reach no disk): `--json` and `--log-prefix` refuse it by type, before anything is opened."""
    node = tmp_path / "sdx"
    try:
        os.mknod(node, stat.S_IFBLK | 0o600, os.makedev(_unused_block_major(), 0))
    except (PermissionError, OSError) as error:
        pytest.skip(f"cannot make a device node here: {error}")
    run = run_cli([*SIM, "--json", str(node)])
    refused(run, "--json", node, "it is a block device")
    log = tmp_path / "run_iops.1.log"
    log.symlink_to(node)
    run = run_cli([*SIM, "--log-prefix", str(tmp_path / "run")])
    refused(run, "--log-prefix", log, f"it is a block device ({node})")
    assert not (tmp_path / "run_clat.1.log").exists()


def test_a_mistyped_dev_path_is_never_created():
    path = MISSING_DEV + ".json"
    assert not os.path.lexists(path)
    try:
        run = run_cli([*SIM, "--json", path])
        refused(run, "--json", path, "raidlab writes no files under /dev")
        assert not os.path.lexists(path)
    finally:
        if os.path.isfile(path) and not os.path.islink(path):
            os.unlink(path)


@pytest.mark.parametrize("command", ["measure", "calibrate"])
def test_a_mistyped_device_target_is_refused_and_not_created(command, sentinel_fio):
    fake, marker = sentinel_fio
    assert not os.path.lexists(MISSING_DEV)
    extra = ["--preset", "wal", "--size", "1M"] if command == "measure" else ["--quick", "--size", "1M"]
    try:
        run = run_cli([command, "--target", MISSING_DEV, *extra, "--fio-binary", fake,
                       "--out" if command == "calibrate" else "--json", "-"])
        assert run.status == 2 and len(run.stderr_lines) == 1, run.stderr
        assert run.stderr.startswith(f"raidlab: error: target {MISSING_DEV} does not exist"), run.stderr
        assert "mistyped" in run.stderr
        assert not os.path.lexists(MISSING_DEV)
        assert not marker.exists()
    finally:
        if os.path.isfile(MISSING_DEV) and not os.path.islink(MISSING_DEV):
            os.unlink(MISSING_DEV)


def test_a_regular_file_under_dev_is_not_a_target(tmp_path, sentinel_fio):
    """/dev/shm is a directory under /dev: a target there is not a device either."""
    fake, marker = sentinel_fio
    if not os.path.isdir("/dev/shm"):
        pytest.skip("no /dev/shm")
    run = run_cli(["measure", "--target", "/dev/shm", "--preset", "wal", "--fio-binary", fake])
    assert run.status == 2 and "is under /dev, /proc or /sys but is not a device" in run.stderr
    assert not marker.exists()


# -- the measured target, and two outputs that are one file -------------------------------------


def test_fio_output_onto_the_measured_target_is_refused(tmp_path, sentinel_fio):
    """Read-only workload, existing file: the old code ran fio, then wrote fio's output over it."""
    fake, marker = sentinel_fio
    target = tmp_path / "u.img"
    target.write_bytes(b"\x5a" * 65536)
    run = run_cli(["measure", "--target", str(target), "--preset", "backup-scan",
                   "--fio-output", str(target), "--fio-binary", fake])
    refused(run, "--fio-output", target, "it is the measured --target")
    assert target.read_bytes() == b"\x5a" * 65536
    assert not marker.exists()


def test_a_hard_link_to_the_target_is_the_target(tmp_path, sentinel_fio):
    fake, marker = sentinel_fio
    target = tmp_path / "u.img"
    target.write_bytes(b"\x5a" * 65536)
    alias = tmp_path / "alias.json"
    os.link(target, alias)
    for option in ("--json", "--html"):
        run = run_cli(["measure", "--target", str(target), "--preset", "backup-scan",
                       option, str(alias), "--force", "--fio-binary", fake])
        refused(run, option, alias, "it is the measured --target")
    run = run_cli(["calibrate", "--target", str(target), "--quick", "--out", str(alias),
                   "--destroy-data", "--fio-binary", fake])
    refused(run, "--out", alias, "it is the measured --target")
    assert target.read_bytes() == b"\x5a" * 65536
    assert not marker.exists()


def test_two_outputs_of_one_command_are_never_one_file(tmp_path):
    out = tmp_path / "out"
    run = run_cli([*SIM, "--json", str(out), "--html", str(tmp_path / "." / "out")])
    assert run.status == 2 and len(run.stderr_lines) == 1
    assert "--json writes the same file" in run.stderr or "--html writes the same file" in run.stderr
    assert not out.exists()


# -- consent: someone else's file, --force, raidlab's own file ----------------------------------


def _writers(tmp_path: Path):
    """(option, command line without the output) for every file option of every command."""
    trace = str(tmp_path / "no-such-trace")
    fio = str(tmp_path / "no-fio")
    return [
        ("--json", SIM), ("--html", SIM),
        ("--json", ["compare", "--preset", "wal", "--runtime-s", "0.1", "--states", "optimal"]),
        ("--csv", ["compare", "--preset", "wal", "--runtime-s", "0.1", "--states", "optimal"]),
        ("--html", ["compare", "--preset", "wal", "--runtime-s", "0.1", "--states", "optimal"]),
        ("--json", ["plan", "--capacity-tb", "1", "--preset", "wal"]),
        ("--html", ["plan", "--capacity-tb", "1", "--preset", "wal"]),
        ("--json", ["measure", "--target", str(tmp_path / "t.img"), "--preset", "wal", "--fio-binary", fio]),
        ("--html", ["measure", "--target", str(tmp_path / "t.img"), "--preset", "wal", "--fio-binary", fio]),
        ("--fio-output", ["measure", "--target", str(tmp_path / "t.img"), "--preset", "wal", "--fio-binary", fio]),
        ("--json", ["import", trace]), ("--html", ["import", trace]),
        ("--out", ["calibrate", "--sweep", trace]), ("--json", ["calibrate", "--sweep", trace]),
        ("--png", ["replay", "--disksim", trace, trace]), ("--html", ["replay", "--disksim", trace, trace]),
        ("--html", ["reliability", "--level", "5", "--devices", "4"]),
    ]


def test_every_output_option_refuses_someone_elses_file(tmp_path):
    """Checked before the command does any work (no simulation, plan, fio run, or input read)."""
    victim = tmp_path / "notes.txt"
    for option, args in _writers(tmp_path):
        victim.write_bytes(PRECIOUS)
        run = run_cli([*args, option, str(victim)])
        refused(run, option, victim, "it is an existing file raidlab did not write (add --force")
        assert victim.read_bytes() == PRECIOUS, (option, args)


def test_force_replaces_someone_elses_file(tmp_path):
    victim = tmp_path / "out.json"
    victim.write_bytes(PRECIOUS)
    victim.chmod(0o640)
    run = run_cli([*SIM, "--json", str(victim), "--force"])
    assert run.status == 0, run.stderr
    assert json.loads(victim.read_text())["raidlab"]["seed"] == 1
    assert stat.S_IMODE(victim.stat().st_mode) == 0o640
    assert sorted(p.name for p in tmp_path.iterdir()) == ["out.json"]  # no temporary left behind


def test_an_empty_file_may_be_overwritten(tmp_path):
    empty = tmp_path / "report.html"
    empty.touch()
    run = run_cli([*SIM, "--html", str(empty)])
    assert run.status == 0, run.stderr
    assert empty.read_text().startswith("<!DOCTYPE html>")


def test_raidlabs_own_outputs_are_replaced_without_force(tmp_path):
    """Second runs over the first run's JSON, HTML, fio logs, PNGs and CSV."""
    pytest.importorskip("matplotlib")
    json_out, html_out, pngs, prefix = tmp_path / "r.json", tmp_path / "r.html", tmp_path / "png", tmp_path / "run"
    args = [*SIM, "--runtime-s", "2.5", "--json", str(json_out), "--html", str(html_out), "--png", str(pngs),
            "--log-prefix", str(prefix)]
    assert run_cli(args).status == 0
    written = sorted(p for p in tmp_path.rglob("*") if p.is_file())
    assert len(written) == 2 + 4 + len(list(pngs.iterdir()))
    assert all(p.stat().st_size > 0 for p in written)
    from raidlab.outputs import is_raidlab_output

    assert all(is_raidlab_output(p) for p in written), written
    again = run_cli([*args, "--seed", "2"])
    assert again.status == 0, again.stderr
    assert json.loads(json_out.read_text())["raidlab"]["seed"] == 2
    csv_out = tmp_path / "table.csv"
    compare = ["compare", "--preset", "wal", "--runtime-s", "0.1", "--states", "optimal", "--csv", str(csv_out)]
    assert run_cli(compare).status == 0
    assert run_cli(compare).status == 0
    assert is_raidlab_output(csv_out)


def test_a_users_own_fio_logs_are_not_raidlabs(tmp_path):
    """fio writes logs in the same line format; only the set with raidlab's _rebuild log is ours.
    Every log is checked before the first is written."""
    prefix = tmp_path / "bench"
    theirs = b"1000, 5012, 0, 4096, 0\n2000, 4990, 0, 4096, 0\n"
    clat = prefix.parent / "bench_clat.1.log"
    clat.write_bytes(theirs.replace(b", 4096,", b", 0,"))  # fio with log_avg_msec: bs 0
    run = run_cli([*SIM, "--log-prefix", str(prefix)])
    refused(run, "--log-prefix", clat, "raidlab did not write")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["bench_clat.1.log"]
    from raidlab.outputs import is_raidlab_output

    assert not is_raidlab_output(clat)


def test_a_foreign_png_in_the_charts_directory_stops_every_chart(tmp_path):
    pytest.importorskip("matplotlib")
    pngs = tmp_path / "charts"
    pngs.mkdir()
    photo = pngs / "latency_cdf.png"
    photo.write_bytes(b"\x89PNG\r\n\x1a\n" + b"\0" * 64)
    run = run_cli([*SIM, "--png", str(pngs)])
    refused(run, "--png", photo, "raidlab did not write")
    assert sorted(p.name for p in pngs.iterdir()) == ["latency_cdf.png"]


from raidlab.commands.compare import CSV_COLUMNS


@pytest.mark.parametrize("text, ours", [
    ('{"raidlab": {"version": "0.1.0", "seed": 1}, "jobs": []}', True),
    ('[{"raidlab": {"source": "measured"}}, {"raidlab": {"version": "0.1.0"}}]', True),
    ('{"raidlab_version": "0.1.0", "sweep": []}', True),
    ('{"fio version": "fio-3.33", "jobs": []}', False),
    ('[{"raidlab": {}}, {"jobs": []}]', False),
    ('{"raidlab": "yes"}', False),
    ("<!DOCTYPE html>\n<html><head><meta name=\"generator\" content=\"raidlab\"></head></html>", True),
    ("<!DOCTYPE html>\n<html><head><meta name=\"generator\" content=\"Hugo\"></head></html>", False),
    ("# raidlab drive model fitted by 'raidlab calibrate' (raidlab 0.1.0, fio-3.33)\nkind = \"ssd\"\n", True),
    ('preset = "cheetah-10k7"\n', False),
    (",".join(CSV_COLUMNS) + "\nraid5,md,512,optimal,wal,1,2\n", True),
    ("design,state,workload,iops,mib_s\nraid5,optimal,wal,1,2\n", False),
    ("name,iops\nx,1\n", False),
])
def test_what_counts_as_raidlabs_own_output(tmp_path, text, ours):
    path = tmp_path / "file"
    path.write_text(text)
    from raidlab.outputs import is_raidlab_output

    assert is_raidlab_output(path) is ours


# -- atomic writes --------------------------------------------------------------------------------


def test_a_failed_write_leaves_the_old_file_and_no_temporary(tmp_path, monkeypatch):
    old = tmp_path / "r.json"
    old.write_text('{"raidlab": {"version": "old"}}\n')

    def crash(src, dst):
        raise OSError(28, "No space left on device")

    from raidlab import outputs

    monkeypatch.setattr(os, "replace", crash)
    with pytest.raises(ConfigError, match=r"^cannot write --json .*r\.json: No space left on device$"):
        outputs.write_text(old, '{"raidlab": {"version": "new"}}\n', "--json")
    assert old.read_text() == '{"raidlab": {"version": "old"}}\n'
    assert sorted(p.name for p in tmp_path.iterdir()) == ["r.json"]


def test_a_symlink_to_a_file_is_followed_and_kept(tmp_path):
    real = tmp_path / "real.json"
    real.write_text('{"raidlab": {"version": "old"}}\n')
    link = tmp_path / "link.json"
    link.symlink_to(real)
    assert run_cli([*SIM, "--json", str(link)]).status == 0
    assert link.is_symlink() and json.loads(real.read_text())["raidlab"]["seed"] == 1


@pytest.mark.parametrize("command", ["sim", "compare", "plan", "measure", "import", "calibrate",
                                     "replay", "reliability"])
def test_every_command_that_writes_files_has_force(command):
    run = run_cli([command, "--help"])
    assert run.status == 0 and "--force" in run.stdout
    assert "raidlab did not write" in " ".join(run.stdout.split())
