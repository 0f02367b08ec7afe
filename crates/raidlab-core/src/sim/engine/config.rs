//! Everything a run needs, resolved: the array, the controller in front of it, the schedulers
//! on its members, the workload, the seed and the run's bounds.

use crate::layout::{mdadm, ArraySpec, Level};
use crate::plan::{ReadBalance, RmwLevel};
use crate::sim::md::Raid5dCpu;
use crate::sim::pagecache::PageCacheConfig;
use crate::sim::block::sched::{QueueLimits, SchedulerKind};
use crate::sim::workload::Workload;
use crate::settings::run;
use crate::time::Nanos;

/// Linux md's knobs the simulator honours.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct MdConfig {
    /// `stripe_cache_size`: 4 KiB rows (one page per member each) md may hold at once.
    pub stripe_cache_size: u32,
    pub rmw_level: RmwLevel,
    pub read_balance: ReadBalance,
    /// sysfs `group_thread_cnt`: worker threads handling stripe heads beside raid5d.
    pub group_thread_cnt: u32,
    /// sysfs `skip_copy`: written pages are not copied into the stripe cache.
    pub skip_copy: bool,
    /// sysfs `preread_bypass_threshold`: full-stripe writes that may pass a pre-reading head.
    pub preread_bypass_threshold: u32,
    /// The CPU raid5d and its workers run on.
    pub raid5d_cpu: Raid5dCpu,
}

impl Default for MdConfig {
    /// md's defaults, as declared in `settings::run` (raid5.c setup_conf: NR_STRIPES, rmw_level
    /// PARITY_ENABLE_RMW, no worker groups, skip_copy off, BYPASS_THRESHOLD).
    fn default() -> MdConfig {
        MdConfig {
            stripe_cache_size: run::STRIPE_CACHE_SIZE.default_int() as u32,
            rmw_level: rmw_level(run::RMW_LEVEL.default_int()).expect("the declared rmw_level is md's"),
            read_balance: ReadBalance::Md,
            group_thread_cnt: run::GROUP_THREAD_CNT.default_int() as u32,
            skip_copy: run::SKIP_COPY.default_bool(),
            preread_bypass_threshold: run::PREREAD_BYPASS_THRESHOLD.default_int() as u32,
            raid5d_cpu: Raid5dCpu::SERVER,
        }
    }
}

/// md's `rmw_level` number (sysfs `rmw_level`: 0, 1 or 2) as the planner's rule; None past 2.
pub fn rmw_level(level: u64) -> Option<RmwLevel> {
    match level {
        0 => Some(RmwLevel::Disable),
        1 => Some(RmwLevel::Enable),
        2 => Some(RmwLevel::Prefer),
        _ => None,
    }
}

/// A hardware RAID controller: its settings live in its own room (`sim::controller`).
pub use crate::sim::controller::config::HwConfig;

#[derive(Clone, Copy, Debug, PartialEq)]
pub enum ControllerConfig {
    Md(MdConfig),
    Hardware(HwConfig),
}

impl ControllerConfig {
    /// Sectors md puts before each member's data: mdadm 1.2's choice for the member's size and
    /// chunk (`layout::mdadm::data_offset_sectors`) on an md array; none behind a hardware
    /// controller, and none for a lone drive (`--level 0 --devices 1` is the bare drive, no md).
    pub fn data_offset_sectors(&self, level: Level, devices: u32, device_sectors: u64, chunk_kib: u64) -> u64 {
        data_offset_sectors(matches!(self, ControllerConfig::Md(_)), level, devices, device_sectors, chunk_kib)
    }

    /// The drives' write caches: on or off where asked (`drive_write_cache`); unasked, a
    /// hardware controller switches them off (they would be volatile behind its battery-backed
    /// cache) and md leaves each drive's own default (None).
    pub fn drive_write_cache(&self, asked: Option<bool>) -> Option<bool> {
        match (self, asked) {
            (_, Some(on)) => Some(on),
            (ControllerConfig::Hardware(_), None) => Some(false),
            (ControllerConfig::Md(_), None) => None,
        }
    }
}

/// Sectors before each member's data: mdadm 1.2's data offset on an md array (`md`), none
/// behind a hardware controller or for a lone drive (see `ControllerConfig::data_offset_sectors`).
pub fn data_offset_sectors(md: bool, level: Level, devices: u32, device_sectors: u64, chunk_kib: u64) -> u64 {
    if md && !(level == Level::Raid0 && devices == 1) {
        mdadm::data_offset_sectors(device_sectors, chunk_kib * 2)
    } else {
        0
    }
}

/// KiB of each member's data area: the member device less the data offset before it. The
/// simulator's members and every capacity a report shows are this size.
pub fn member_data_kib(md: bool, level: Level, devices: u32, device_sectors: u64, chunk_kib: u64) -> u64 {
    device_sectors.saturating_sub(data_offset_sectors(md, level, devices, device_sectors, chunk_kib)) / 2
}

/// Smallest partition a member may be: room for mdadm's data offset and a few chunks (mdadm
/// refuses tiny members).
pub const MIN_PARTITION_BYTES: u64 = 64 << 20;

/// Sectors of each member device: the whole drive (`partition_bytes` 0), or a partition at its
/// start, which keeps the drive's outer zones and its seeks short, as published benchmarks on
/// partitions had them.
pub fn member_device_sectors(capacity_bytes: u64, partition_bytes: u64) -> crate::error::Result<u64> {
    if partition_bytes == 0 {
        return Ok(capacity_bytes / crate::SECTOR_BYTES);
    }
    if !(MIN_PARTITION_BYTES..=capacity_bytes).contains(&partition_bytes) {
        return Err(crate::error::Error::new(
            crate::error::ErrorKind::InvalidConfig,
            format!("partition_gib: a partition of {partition_bytes} bytes does not fit: 64 MiB up to the drive's {capacity_bytes} bytes"),
        ));
    }
    Ok(partition_bytes / crate::SECTOR_BYTES)
}

/// Longest run the engine simulates (`settings::MAX_SIM_TIME_S`, 10^6 s), in ns.
pub const MAX_SIM_TIME_NS: Nanos = crate::settings::MAX_SIM_TIME_S * 1_000_000_000;

/// A whole run, grouped by the layer each setting belongs to (`settings::Layer`), from the
/// run's own bounds down to the drives and the failures played on them.
#[derive(Clone, Debug, PartialEq)]
pub struct SimConfig {
    // ---- the run ----
    pub seed: u64,
    /// Hard bound on simulated time (the run stops there even if jobs want more).
    pub max_time_ns: Nanos,
    /// Hard bound on events processed.
    pub max_events: u64,
    /// Keep each second's read and write latency distributions of each job in the series
    /// (`SeriesPoint::latency_ns_by_job`), so that a report can give percentiles over the
    /// steady state it finds once the run is over (`raidlab compare`, `plan`). Costs a few
    /// KiB per job and simulated second; off for plain runs.
    pub latency_by_second: bool,

    // ---- the host: its jobs and its (cloud instance's) limits ----
    pub workload: Workload,
    /// The instance's EBS IOPS and bandwidth (baseline and burst) shared by every volume member;
    /// None: no host limit.
    pub host_limits: Option<crate::sim::instance::HostLimits>,

    // ---- the host's page cache ----
    /// The host's page cache, used by buffered jobs.
    pub page_cache: PageCacheConfig,

    // ---- the array: md or a hardware controller ----
    pub array: ArraySpec,
    /// An array of md arrays (raid1+0, raid5+0, raid6+0, raid0+1): when set, the run's array is
    /// this stack and `array` only records the physical members (the inner arrays' spec).
    pub stack: Option<crate::layout::StackSpec>,
    /// Sectors before each member's data area (md's data offset; 0 for controllers):
    /// [`ControllerConfig::data_offset_sectors`].
    pub data_offset_sectors: u64,
    pub controller: ControllerConfig,

    // ---- the block layer on each member (on the logical drive behind a controller) ----
    pub scheduler: SchedulerKind,
    pub queue_limits: QueueLimits,

    // ---- the drives ----
    /// Command queue depths below the scheduler.
    pub queues: QueueDepths,
    /// Each member's idle power management and error recovery, and the host's command timeout.
    pub drive_faults: DriveFaults,

    // ---- failures and rebuilds ----
    /// Members failed from the start.
    pub failed: Vec<u32>,
    /// Failures and replacements during the run, in time order.
    pub timeline: Vec<ArrayEvent>,
    pub rebuild: RebuildConfig,
}

/// How the members behave beyond their mechanics (`device::behaviour`).
#[derive(Clone, Debug, PartialEq)]
pub struct DriveFaults {
    /// The host's (or controller's) command timeout; 0: none. Linux's SCSI disk default is 30 s
    /// (`SD_TIMEOUT`, drivers/scsi/sd.h; `/sys/block/sdX/device/timeout`).
    pub command_timeout_ns: Nanos,
    /// One per member, or empty: every member at the declared defaults (no idle timers, ERC).
    pub behaviours: Vec<crate::device::behaviour::Behaviour>,
}

impl Default for DriveFaults {
    fn default() -> DriveFaults {
        DriveFaults { command_timeout_ns: seconds_ns(run::COMMAND_TIMEOUT_S.default_float()), behaviours: Vec::new() }
    }
}

/// Seconds as whole nanoseconds, rounded (as the glue converts a user's seconds).
pub fn seconds_ns(seconds: f64) -> Nanos {
    (seconds * 1e9).round() as Nanos
}

impl SimConfig {
    /// A run of `workload` on `array`, everything else at its declared default
    /// (`settings::RUN_SETTINGS`, the values a user of `raidlab sim` gets: seed 1, md with its
    /// own defaults, mq-deadline with nr_requests 128 and max_sectors_kb 1280, no failures and
    /// no timeline, md's rebuild limits, each drive's own queue depth, the default page cache,
    /// bounds of an hour and 2 billion events), and mdadm 1.2's 1 MiB data offset. Callers set
    /// what they care about with struct update syntax,
    /// `SimConfig { seed: 7, ..SimConfig::new(array, workload) }`, so a field added later needs
    /// no edit where its default will do.
    pub fn new(array: ArraySpec, workload: Workload) -> SimConfig {
        SimConfig {
            seed: run::SEED.default_int(),
            max_time_ns: seconds_ns(run::MAX_TIME_S.default_float()),
            max_events: run::MAX_EVENTS.default_int(),
            latency_by_second: run::LATENCY_BY_SECOND.default_bool(),
            workload,
            host_limits: None,
            page_cache: PageCacheConfig::default(),
            array,
            stack: None,
            data_offset_sectors: 2048,
            controller: ControllerConfig::Md(MdConfig::default()),
            scheduler: SchedulerKind::parse(run::SCHEDULER.default_text()).expect("the declared scheduler exists"),
            queue_limits: QueueLimits {
                nr_requests: run::NR_REQUESTS.default_int() as u32,
                max_sectors: run::MAX_SECTORS_KB.default_int() as u32 * 2,
            },
            queues: QueueDepths::default(),
            drive_faults: DriveFaults::default(),
            failed: Vec::new(),
            timeline: Vec::new(),
            rebuild: RebuildConfig::default(),
        }
    }
}

/// Command queue depths below the host's scheduler.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct QueueDepths {
    /// Commands each drive accepts (its TCQ/NCQ depth; `--drive-queue-depth`); 0 = the drive
    /// model's own. Behind md this is the member's SCSI `queue_depth` as well.
    pub drive_queue_depth: u32,
}

impl Default for QueueDepths {
    fn default() -> QueueDepths {
        QueueDepths { drive_queue_depth: run::DRIVE_QUEUE_DEPTH.default_int() as u32 }
    }
}

/// Something that happens to the array at a point in simulated time.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum ArrayEventKind {
    /// The member fails (md marks it faulty; no more I/O goes to it).
    Fail(u32),
    /// A new drive replaces the (failed) member and recovery starts.
    Replace(u32),
    /// The member has a sector it cannot read (a latent sector error) under the next read it
    /// serves.
    LatentError(u32),
}

impl ArrayEventKind {
    /// The member the event is about.
    pub fn member(self) -> u32 {
        match self {
            ArrayEventKind::Fail(m) | ArrayEventKind::Replace(m) | ArrayEventKind::LatentError(m) => m,
        }
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub struct ArrayEvent {
    pub at_ns: Nanos,
    pub kind: ArrayEventKind,
}

/// How rebuilds run.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct RebuildConfig {
    /// md `speed_limit_min`, KiB/s per device (md default 1000).
    pub speed_limit_min: u64,
    /// md `speed_limit_max`, KiB/s per device (md default 200000).
    pub speed_limit_max: u64,
    /// A hot spare takes over a failed member at once.
    pub spare: bool,
    /// Hardware controllers: percent of drive time given to the rebuild under load.
    pub rebuild_priority: u32,
    /// Where in the member a rebuild starts, parts per million of it (the part below counts as
    /// rebuilt): a rebuild's rate sampled at inner zones, whose media is slower.
    pub start_ppm: u32,
}

impl Default for RebuildConfig {
    /// md's sysctls (md.c: sysctl_speed_limit_min 1000, sysctl_speed_limit_max 200000), no hot
    /// spare, a controller's 30% rebuild rate, from the member's start: `settings::run`.
    fn default() -> RebuildConfig {
        RebuildConfig {
            speed_limit_min: run::SPEED_LIMIT_MIN.default_int(),
            speed_limit_max: run::SPEED_LIMIT_MAX.default_int(),
            spare: run::SPARE.default_bool(),
            rebuild_priority: run::REBUILD_PRIORITY.default_int() as u32,
            start_ppm: pct_ppm(run::REBUILD_START_PCT.default_float()),
        }
    }
}

/// A percentage as parts per million, rounded half to even (as Python's `round`, so a
/// percentage converted here and one converted by a caller agree).
pub fn pct_ppm(pct: f64) -> u32 {
    (pct * 10_000.0).round_ties_even() as u32
}

/// Host RAM given in GiB (`ram_gib`) as bytes, whole 4 KiB pages: the page cache's unit.
pub fn ram_bytes(gib: f64) -> u64 {
    (gib * (1u64 << 30) as f64) as u64 / 4096 * 4096
}

/// A partition given in GiB (`partition_gib`) as bytes, whole 1 MiB units (parted's default
/// alignment, parted(8) "--align optimal"); 0 is the whole drive.
pub fn partition_bytes(gib: f64) -> u64 {
    (gib * (1u64 << 30) as f64) as u64 >> 20 << 20
}

/// A vm.dirty_*_centisecs value (hundredths of a second) as nanoseconds.
pub fn centisecs_ns(centisecs: u64) -> Nanos {
    centisecs * 10_000_000
}
