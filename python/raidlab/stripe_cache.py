"""The raid4/5/6 stripe cache raidlab sets (and simulates) for a planned or rebuilt array.

md keeps NR_STRIPES = 256 stripe heads by default (drivers/md/raid5.c); ``stripe_cache_size`` in
sysfs takes 17..32768 (raid5_set_cache_size), and the cache pins entries x 4 KiB x raid_disks of
kernel memory (Documentation/admin-guide/md.rst, "stripe_cache_size"). raidlab asks for 4096, the
usual tuning for raid5/6 writes, within a memory budget.
"""

from raidlab.settings import DEFAULTS

#: md's default stripe cache (NR_STRIPES): the declared default of ``stripe_cache_size``.
MD_DEFAULT_STRIPE_CACHE = DEFAULTS["stripe_cache_size"]
#: What raidlab sets for raid4/5/6.
STRIPE_CACHE = 4096
#: Most memory raidlab lets the stripe cache take (it is pinned kernel memory).
STRIPE_CACHE_BUDGET = 256 * 2**20
#: One stripe head's page per member.
PAGE = 4096


def planned_stripe_cache_size(devices: int) -> int:
    """The stripe_cache_size the planner simulates and emits: 4096, halved while its memory
    (entries x 4 KiB x raid_disks) would exceed 256 MiB, never below md's default 256."""
    entries = STRIPE_CACHE
    while entries > MD_DEFAULT_STRIPE_CACHE and entries * PAGE * devices > STRIPE_CACHE_BUDGET:
        entries //= 2
    return entries
