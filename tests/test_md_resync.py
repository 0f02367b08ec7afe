"""md's raid4/5/6 recovery goes through the stripe cache (issue 18 §4): raid5_sync_request takes
a head per 4 KiB stripe, waits for one when the cache is full and then sleeps a jiffy, so the
default 256-head cache leaves the drives idle between bursts, and a larger `stripe_cache_size`
rebuilds faster (the tuning advice md users follow)."""

from raidlab.drives import resolve_drive
from raidlab.run import build_run
from raidlab.sim import run_spec


def _rebuild_kib_s(stripe_cache_size: int) -> float:
    drive = resolve_drive("nearline-7200").with_capacity(2 * 10**12)
    settings = {"runtime_s": 5, "level": "5", "devices": 4, "layout": None, "chunk_kib": None,
                "drive": drive, "failed": (0,), "spare": True, "stripe_cache_size": stripe_cache_size}
    spec = build_run(settings, where="test ", allow_idle=True)
    return run_spec(spec).to_dict()["rebuild"]["rate_kib_s"]


def test_a_larger_stripe_cache_rebuilds_raid5_faster():
    small, large = _rebuild_kib_s(256), _rebuild_kib_s(4096)
    assert large > 1.3 * small, (small, large)
    # Bounded by md's default speed_limit_max (200,000 KiB/s per device) and the drive.
    assert 100_000 < small < large <= 1.02 * 200_000
