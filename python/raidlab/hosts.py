"""Host (cloud instance) presets: the instance's own limits on the block volumes it reaches,
listed by ``raidlab hosts`` and chosen with ``--host NAME``.

An EC2 instance reaches its EBS volumes over one link with baseline and maximum bandwidth,
throughput and IOPS; the maximum holds for 30 minutes at least once every 24 hours, metered by
I/O and byte credit balances (``EBSIOBalance%``, ``EBSByteBalance%``). The core
(crates/raidlab-core/src/sim/instance) meters every volume member's I/O through one shared
meter with those rates and credit buckets. MB/s are 10^6 bytes per second, as AWS writes them
(Mbps / 8).
"""

from __future__ import annotations

from typing import Any, Dict, List, Optional, Tuple

from raidlab.errors import ConfigError

#: The source of every figure below.
AWS_EBS_OPTIMIZED = ("AWS, Amazon EC2 User Guide / Instance Types Guide: \"Amazon EBS-optimized instances\" "
                     "(supported instance types: baseline and maximum bandwidth (Mbps), throughput (MB/s, "
                     "128 KiB I/O) and IOPS (16 KiB I/O); instances with a maximum above the baseline burst "
                     "to it for 30 minutes at least once every 24 hours)")
BURST_MINUTES = 30.0

#: name -> (description, baseline IOPS, maximum IOPS, baseline MB/s, maximum MB/s). m5.large,
#: r5.large, c5.large and c5.xlarge were cross-checked against EC2's DescribeInstanceTypes
#: (EbsOptimizedInfo: BaselineIops, MaximumIops, BaselineThroughputInMBps, ...) as printed by
#: the AWS CLI; the other rows are the AWS table's and were not re-checked that way.
_TABLE: Dict[str, Tuple[str, float, float, float, float]] = {
    "m5.large": ("AWS m5.large (2 vCPU, 8 GiB): EBS 650 / 4,750 Mbps", 3600, 18750, 81.25, 593.75),
    "m5.xlarge": ("AWS m5.xlarge (4 vCPU, 16 GiB): EBS 1,150 / 4,750 Mbps", 6000, 18750, 143.75, 593.75),
    "m5.2xlarge": ("AWS m5.2xlarge (8 vCPU, 32 GiB): EBS 2,300 / 4,750 Mbps", 12000, 18750, 287.5, 593.75),
    "m5.4xlarge": ("AWS m5.4xlarge (16 vCPU, 64 GiB): EBS 4,750 Mbps sustained (no burst)", 18750, 18750,
                   593.75, 593.75),
    "m5.8xlarge": ("AWS m5.8xlarge (32 vCPU, 128 GiB): EBS 6,800 Mbps sustained (no burst)", 30000, 30000,
                   850.0, 850.0),
    "r5.large": ("AWS r5.large (2 vCPU, 16 GiB): EBS 650 / 4,750 Mbps", 3600, 18750, 81.25, 593.75),
    "c5.large": ("AWS c5.large (2 vCPU, 4 GiB): EBS 650 / 4,750 Mbps", 4000, 20000, 81.25, 593.75),
    "c5.xlarge": ("AWS c5.xlarge (4 vCPU, 8 GiB): EBS 1,150 / 4,750 Mbps", 6000, 20000, 143.75, 593.75),
    "i3.large": ("AWS i3.large (2 vCPU, 15.25 GiB, local NVMe not modelled here): EBS 425 Mbps sustained",
                 3000, 3000, 53.13, 53.13),
    "i3.2xlarge": ("AWS i3.2xlarge (8 vCPU, 61 GiB, local NVMe not modelled here): EBS 1,700 Mbps sustained",
                   12000, 12000, 212.5, 212.5),
}

NAMES: Tuple[str, ...] = tuple(_TABLE)


def limits(name: Optional[str], credits_pct: float = 100.0) -> Optional[Dict[str, Any]]:
    """The core's ``host`` dict for preset ``name`` (None: no host limits), its burst credits
    starting at ``credits_pct`` of the buckets."""
    if name is None:
        return None
    if name not in _TABLE:
        raise ConfigError(f"--host {name!r}: expected one of {', '.join(NAMES)} (raidlab hosts)")
    _, base_iops, max_iops, base_mb, max_mb = _TABLE[name]
    bursts = max_iops > base_iops or max_mb > base_mb
    return {"baseline_iops": float(base_iops), "burst_iops": float(max_iops), "baseline_mb_s": float(base_mb),
            "burst_mb_s": float(max_mb), "burst_minutes": BURST_MINUTES if bursts else 0.0,
            "credits_pct": float(credits_pct)}


def listing() -> List[Dict[str, Any]]:
    """Every host preset: name, description, limits and source."""
    rows = []
    for name, (description, *_rest) in _TABLE.items():
        rows.append({"name": name, "kind": "aws-ec2", "description": description, "limits": limits(name),
                     "source": AWS_EBS_OPTIMIZED})
    return rows
