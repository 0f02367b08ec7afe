"""A sweep from Python: RAID5 vs RAID10 chunk sizes under a database load, then a pivot table.

    python examples/sweep_example.py [STORE_DIR]

Runs examples/sweep-16.toml into STORE_DIR (default: ./sweep-16.store); a second run finds
every point stored and runs none. Needs pyarrow and pandas (pip install 'raidlab[sweep]').
"""

import os
import sys

import raidlab

HERE = os.path.dirname(os.path.abspath(__file__))


def main(out: str) -> None:
    frame = raidlab.sweep(os.path.join(HERE, "sweep-16.toml"), out=out)
    oltp = frame[frame.preset == "oltp-postgres"]
    oltp = oltp.assign(read_p99_ms=oltp.read_latency_ns_p99 / 1e6)  # the store keeps ns
    table = oltp.pivot_table(index=["level", "devices"], columns="chunk_kib", values=["read_iops", "read_p99_ms"])
    print(f"{len(frame)} points; oltp-postgres read IOPS and read p99 (ms) by chunk KiB:")
    print(table.round(1).to_string())
    # Every point's full fio-shaped JSON is beside its row:
    first = frame.iloc[0]
    print(f"point {first.key}: {out}/json/{first.key}.json")
    # The same store, read back later (every row, ordered by the options):
    assert len(raidlab.load_sweep(out)) >= len(frame)


if __name__ == "__main__":
    main(sys.argv[1] if len(sys.argv) > 1 else "sweep-16.store")
