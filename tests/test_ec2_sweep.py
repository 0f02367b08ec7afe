"""The EC2 sweep DBAs run to choose an md array over EBS volumes, shipped as examples/ec2-gp3-sweep.toml: md raid0/raid10/raid10 f2/raid5
over 2-4 gp3 volumes behind an m5.2xlarge, sysbench fileio 16 GiB in five modes at 1/4/8/16
threads. The whole sweep runs here (each point 10 simulated seconds; a few seconds in all)."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest

import raidlab
from conftest import REPO_ROOT

pd = pytest.importorskip("pandas")
pytest.importorskip("pyarrow")

EXAMPLE = REPO_ROOT / "examples" / "ec2-gp3-sweep.toml"
# m5.2xlarge's sustained EBS limits (AWS "Amazon EBS-optimized instances").
HOST_IOPS, HOST_MB_S = 12000, 287.5


@pytest.fixture(scope="module")
def frame(tmp_path_factory):
    store = tmp_path_factory.mktemp("ec2") / "store"
    env = dict(os.environ, PYTHONWARNINGS="ignore")
    done = subprocess.run([sys.executable, "-m", "raidlab", "sweep", str(EXAMPLE), "--out", str(store), "--jobs", "2"],
                          capture_output=True, text=True, timeout=600, env=env, stdin=subprocess.DEVNULL)
    assert done.returncode == 0, done.stderr
    assert done.stdout.startswith("220 points: 0 already stored, 220 to run"), done.stdout
    rows = raidlab.load_sweep(store)
    rows["mode"] = rows.sysbench.str.extract(r"--file-test-mode=(\w+)", expand=False)
    rows["threads"] = rows.sysbench.str.extract(r"--threads=(\d+)", expand=False).astype(int)
    return rows


def _iops(frame, level, layout, devices, mode, threads=16, column=None):
    row = frame[(frame.level == level) & (frame.layout == layout) & (frame.devices == devices)
                & (frame["mode"] == mode) & (frame.threads == threads)]
    assert len(row) == 1
    row = row.iloc[0]
    return row[column] if column else row.read_iops + row.write_iops


def test_every_valid_point_ran(frame):
    # 3 levels/layouts x 3 sizes + raid5 x 2 sizes (raid5 needs 3) = 11 arrays; 5 modes x 4 threads.
    assert len(frame) == 11 * 20 and frame.key.is_unique
    assert set(frame["mode"]) == {"seqwr", "seqrd", "rndrd", "rndwr", "rndrw"}
    assert set(frame.threads) == {1, 4, 8, 16}
    assert not ((frame.level == 5) & (frame.devices == 2)).any()
    assert set(frame.host) == {"m5.2xlarge"} and set(frame.drive) == {"ebs-gp3"}
    assert frame.truncated.isna().all()


def test_the_instance_caps_every_point(frame):
    assert ((frame.read_iops + frame.write_iops) <= HOST_IOPS * 1.01).all()
    assert (((frame.read_mib_s + frame.write_mib_s) * 2**20 / 1e6) <= HOST_MB_S * 1.01).all()


def test_orderings(frame):
    raid0 = [_iops(frame, 0, "original", n, "rndrd") for n in (2, 3, 4)]
    assert raid0[0] < raid0[1] < raid0[2] and raid0[2] > 1.6 * raid0[0]
    # Random writes: raid0 writes once, raid10 twice, raid5 reads and writes data and parity.
    assert _iops(frame, 0, "original", 4, "rndwr") > _iops(frame, 10, "n2", 4, "rndwr") > _iops(frame, 5, "left-symmetric", 4, "rndwr")
    # More threads, more I/O in flight: never fewer IOPS at 16 threads than at 1.
    for _, group in frame.groupby(["level", "layout", "devices", "mode"]):
        by_threads = group.set_index("threads")
        total = by_threads.read_iops + by_threads.write_iops
        assert total[16] > total[1]
