//! Everything a run needs, resolved: the array, the controller in front of it, the schedulers
//! on its members, the workload, the seed and the run's bounds.

use crate::layout::ArraySpec;
use crate::plan::{ReadBalance, RmwLevel};
use crate::sim::md::stripe_cache::BYPASS_THRESHOLD;
use crate::sim::md::Raid5dCpu;
use crate::sim::pagecache::PageCacheConfig;
use crate::sim::sched::{QueueLimits, SchedulerKind};
use crate::sim::workload::Workload;
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
    fn default() -> MdConfig {
        // md's defaults: NR_STRIPES = 256, rmw_level ENABLE (raid5.c setup_conf),
        // group_thread_cnt 0, skip_copy 0, BYPASS_THRESHOLD 1.
        MdConfig {
            stripe_cache_size: 256,
            rmw_level: RmwLevel::Enable,
            read_balance: ReadBalance::Md,
            group_thread_cnt: 0,
            skip_copy: false,
            preread_bypass_threshold: BYPASS_THRESHOLD,
            raid5d_cpu: Raid5dCpu::SERVER,
        }
    }
}

/// A hardware RAID controller: its settings live in its own room (`sim::controller`).
pub use crate::sim::controller::config::HwConfig;

#[derive(Clone, Copy, Debug, PartialEq)]
pub enum ControllerConfig {
    Md(MdConfig),
    Hardware(HwConfig),
}

/// Longest run the engine simulates: 10^6 s (11.6 days). The result holds one time-series
/// point per simulated second, so this bounds it to a million points.
pub const MAX_SIM_TIME_NS: Nanos = 1_000_000 * 1_000_000_000;

/// A whole run.
#[derive(Clone, Debug, PartialEq)]
pub struct SimConfig {
    pub seed: u64,
    pub array: ArraySpec,
    /// Sectors before each member's data area (md's data offset; 0 for controllers).
    pub data_offset_sectors: u64,
    pub failed: Vec<u32>,
    pub controller: ControllerConfig,
    pub scheduler: SchedulerKind,
    pub queue_limits: QueueLimits,
    pub workload: Workload,
    /// Hard bound on simulated time (the run stops there even if jobs want more).
    pub max_time_ns: Nanos,
    /// Hard bound on events processed.
    pub max_events: u64,
    /// Failures and replacements during the run, in time order.
    pub timeline: Vec<ArrayEvent>,
    pub rebuild: RebuildConfig,

    // ---- issue 20: command queues below the scheduler ----
    pub queues: QueueDepths,
    /// The host's page cache, used by buffered jobs.
    pub page_cache: PageCacheConfig,

    // ---- issue 24: the instance's limits on its cloud volumes ----
    /// The instance's EBS IOPS and bandwidth (baseline and burst) shared by every volume member;
    /// None: no host limit.
    pub host_limits: Option<crate::sim::instance::HostLimits>,
    // ---- issue 24 §2: stacked arrays ----
    /// An array of md arrays (raid1+0, raid5+0, raid6+0, raid0+1): when set, the run's array is
    /// this stack and `array` only records the physical members (the inner arrays' spec).
    pub stack: Option<crate::layout::StackSpec>,
    // ---- issue 24 §3: drives that misbehave in arrays ----
    /// Each member's idle power management and error recovery, and the host's command timeout.
    pub drive_faults: DriveFaults,
    // ---- latency percentiles over a window found after the run ----
    /// Keep each second's read and write latency distributions of each job in the series
    /// (`SeriesPoint::latency_ns_by_job`), so that a report can give percentiles over the
    /// steady state it finds once the run is over (`raidlab compare`, `plan`). Costs a few
    /// KiB per job and simulated second; off for plain runs.
    pub latency_by_second: bool,
}

/// Issue 24 §3: how the members behave beyond their mechanics (`device::behaviour`).
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
        DriveFaults { command_timeout_ns: 30_000_000_000, behaviours: Vec::new() }
    }
}

impl SimConfig {
    /// A run of `workload` on `array`, everything else at a plain default: seed 1, md with its
    /// own defaults, mq-deadline with nr_requests 256 and max_sectors_kb 1280 (the kernel's
    /// defaults), mdadm 1.2's 1 MiB data offset, no failures and no timeline, md's rebuild
    /// limits, each drive's own queue depth, the default page cache, and bounds of an hour and
    /// 200 million events. Callers set what they care about with struct update syntax,
    /// `SimConfig { seed: 7, ..SimConfig::new(array, workload) }`, so a field added later needs
    /// no edit where its default will do.
    pub fn new(array: ArraySpec, workload: Workload) -> SimConfig {
        SimConfig {
            seed: 1,
            array,
            data_offset_sectors: 2048,
            failed: Vec::new(),
            controller: ControllerConfig::Md(MdConfig::default()),
            scheduler: SchedulerKind::mq_deadline_default(),
            queue_limits: QueueLimits { nr_requests: 256, max_sectors: 2560 },
            workload,
            max_time_ns: 3_600_000_000_000,
            max_events: 200_000_000,
            timeline: Vec::new(),
            rebuild: RebuildConfig::default(),
            queues: QueueDepths::default(),
            page_cache: PageCacheConfig::default(),
            host_limits: None,
            stack: None,
            drive_faults: DriveFaults::default(),
            latency_by_second: false,
        }
    }
}

/// Command queue depths below the host's scheduler.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct QueueDepths {
    /// Commands each drive accepts (its TCQ/NCQ depth; `--drive-queue-depth`); 0 = the drive
    /// model's own. Behind md this is the member's SCSI `queue_depth` as well.
    pub drive_queue_depth: u32,
}

/// Something that happens to the array at a point in simulated time.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum ArrayEventKind {
    /// The member fails (md marks it faulty; no more I/O goes to it).
    Fail(u32),
    /// A new drive replaces the (failed) member and recovery starts.
    Replace(u32),
    /// Issue 24 §3: the member has a sector it cannot read under the next read it serves.
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
    fn default() -> RebuildConfig {
        // md.c: sysctl_speed_limit_min = 1000, sysctl_speed_limit_max = 200000.
        RebuildConfig { speed_limit_min: 1000, speed_limit_max: 200_000, spare: false, rebuild_priority: 30, start_ppm: 0 }
    }
}
