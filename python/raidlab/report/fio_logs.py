"""fio-format log files of a run's 1 s time series (``raidlab sim --log-prefix``), written
through :mod:`raidlab.outputs` (which declares their names, :data:`raidlab.outputs.LOG_NAMES`)."""

from __future__ import annotations

from pathlib import Path
from typing import Any, Dict, List

from raidlab import outputs
from raidlab.outputs import LOG_NAMES
from raidlab.report import timeline


def write_fio_logs(result: Dict[str, Any], prefix: str) -> List[Path]:
    """fio's log format (``msec, value, data direction, block size, offset``; direction 0 read,
    1 write): PREFIX_iops.1.log, PREFIX_clat.1.log (p50, ns) and PREFIX_clat_p99.1.log, plus
    PREFIX_rebuild.1.log (progress in per mille, direction 2)."""
    files: Dict[str, List[str]] = {name: [] for name in LOG_NAMES}
    # fio logs nothing during ramp_time (no host I/O is counted then); the rebuild's progress
    # is the array's, logged throughout.
    windows = timeline.measured_windows(result)
    for point in result["series"]:
        msec = (point["start_ns"] + 1_000_000_000) // 1_000_000
        if timeline.is_measured(windows, point["start_ns"]):
            files["iops"].append(f"{msec}, {point['read_ios']}, 0, 0, 0")
            files["iops"].append(f"{msec}, {point['write_ios']}, 1, 0, 0")
            files["clat"].append(f"{msec}, {point['latency_ns_p50']}, 0, 0, 0")
            files["clat_p99"].append(f"{msec}, {point['latency_ns_p99']}, 0, 0, 0")
        files["rebuild"].append(f"{msec}, {int(point['rebuild_pct'] * 10)}, 2, 0, 0")
    return outputs.write_files([(Path(f"{prefix}_{name}.1.log"), "".join(line + "\n" for line in lines).encode())
                                for name, lines in files.items()], "--log-prefix")
