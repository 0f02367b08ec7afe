//! The run settings: the design (array, md, controller, block layer, page cache, host, drives,
//! rebuild) and the run's options (seed, bounds, failures), grouped by layer.

use super::{controller, Kind, Layer, Number, Scope, Setting, Value, BLANK};
use crate::layout::{DEFAULT_CHUNK_KIB, MAX_DEVICES};

/// Longest run the engine simulates, seconds: 10^6 s (11.6 days). The result holds one
/// time-series point per simulated second, so this bounds it to a million points.
pub const MAX_SIM_TIME_S: u64 = 1_000_000;

// ---- the array ----
pub const LEVEL: Setting = Setting {
    name: "level",
    kind: Kind::Text,
    default: Value::Text("5"),
    doc: "RAID level: 0, 1, 4, 5, 6, 10 (also raid5, mirror, stripe, ...)",
    cli_help: Some("RAID level: 0, 1, 4, 5, 6, 10, or stacked md arrays 1+0, 5+0, 6+0, 0+1 (see --inner-devices)."),
    layer: Layer::Array,
    ..BLANK
};
pub const DEVICES: Setting = Setting {
    name: "devices",
    unit: "members",
    default: Value::Int(6),
    min: Some(Number::Int(1)),
    max: Some(Number::Int(MAX_DEVICES as u64)),
    doc: "Members in the array",
    cli_help: Some("Members in the array (a single drive is --level 0 --devices 1)."),
    layer: Layer::Array,
    ..BLANK
};
pub const LAYOUT: Setting = Setting {
    name: "layout",
    kind: Kind::Text,
    doc: "mdadm layout name (None: mdadm's default)",
    cli_help: Some("mdadm layout name [default: mdadm's]."),
    layer: Layer::Array,
    ..BLANK
};
pub const CHUNK_KIB: Setting = Setting {
    name: "chunk_kib",
    unit: "KiB",
    default: Value::Int(DEFAULT_CHUNK_KIB),
    min: Some(Number::Int(4)),
    max: Some(Number::Int(1 << 20)),
    doc: "Chunk size in KiB, a power of two (mdadm DEFAULT_CHUNK since 3.1, declared by the core)",
    cli_help: Some("Chunk size in KiB (power of two)."),
    layer: Layer::Array,
    ..BLANK
};
pub const INNER_DEVICES: Setting = Setting {
    name: "inner_devices",
    unit: "members",
    default: Value::Int(0),
    min: Some(Number::Int(0)),
    max: Some(Number::Int(MAX_DEVICES as u64)),
    doc: "Members of each inner array of a stacked level (0: raid1 pairs for 1+0, two inner arrays for 5+0, 6+0 and 0+1)",
    cli_help: Some(
        "Stacked levels (1+0, 5+0, 6+0, 0+1): members of each inner array (0: raid1 pairs for 1+0, two inner arrays otherwise).",
    ),
    layer: Layer::Array,
    ..BLANK
};
pub const OUTER_CHUNK_KIB: Setting = Setting {
    name: "outer_chunk_kib",
    unit: "KiB",
    default: Value::Int(DEFAULT_CHUNK_KIB),
    min: Some(Number::Int(4)),
    max: Some(Number::Int(1 << 20)),
    doc: "Chunk of the outer raid0 of a stacked level (1+0, 5+0, 6+0), KiB, a power of two",
    cli_help: Some("Stacked levels: chunk of the outer raid0 in KiB (--chunk-kib is the inner arrays')."),
    layer: Layer::Array,
    ..BLANK
};
/// Published md benchmarks often build the array on a small partition (ilsistemista.net's
/// raid10 layouts: 100 GiB of 1 TB drives; helmundwalter.de's raid5 vs raid10: 30 GB of 16 TB),
/// which bounds the seeks between a far layout's two copies (md(4): far copies sit half a
/// member further on).
pub const PARTITION_GIB: Setting = Setting {
    name: "partition_gib",
    unit: "GiB",
    kind: Kind::Float,
    default: Value::Float(0.0),
    min: Some(Number::Float(0.0)),
    max: Some(Number::Float((1u64 << 24) as f64)),
    doc: "Members are a partition of this size at the start of each drive, GiB (0: the whole drive)",
    cli_help: Some("Members are a partition of this size at the start of each drive, GiB (0: the whole drive)."),
    layer: Layer::Array,
    ..BLANK
};

// ---- Linux md (raid4/5/6): raid5.c setup_conf's defaults ----
pub const STRIPE_CACHE_SIZE: Setting = Setting {
    name: "stripe_cache_size",
    unit: "4 KiB rows",
    default: Value::Int(256), // NR_STRIPES, drivers/md/raid5.h
    min: Some(Number::Int(17)),    // raid5_set_cache_size: 17 up to 32768
    max: Some(Number::Int(32768)),
    doc: "md raid5/6 stripe_cache_size, 4 KiB rows (md NR_STRIPES)",
    cli_help: Some("md raid5/6 stripe_cache_size (4 KiB rows)."),
    layer: Layer::Md,
    ..BLANK
};
pub const RMW_LEVEL: Setting = Setting {
    name: "rmw_level",
    default: Value::Int(1), // PARITY_ENABLE_RMW
    min: Some(Number::Int(0)),
    max: Some(Number::Int(2)),
    doc: "md rmw_level: 0 never read-modify-write, 1 when cheaper, 2 also on ties",
    cli_help: Some("md rmw_level: 0 never read-modify-write, 1 when cheaper, 2 also on ties."),
    layer: Layer::Md,
    ..BLANK
};
pub const GROUP_THREAD_CNT: Setting = Setting {
    name: "group_thread_cnt",
    unit: "threads",
    default: Value::Int(0),
    min: Some(Number::Int(0)),
    max: Some(Number::Int(8192)),
    doc: "md group_thread_cnt: worker threads handling stripe heads beside raid5d (raises raid5d's CPU ceiling)",
    cli_help: Some("md raid5/6 worker threads beside raid5d."),
    layer: Layer::Md,
    ..BLANK
};
pub const SKIP_COPY: Setting = Setting {
    name: "skip_copy",
    kind: Kind::Bool,
    default: Value::Bool(false),
    doc: "md skip_copy: written pages are not copied into the stripe cache",
    cli_help: Some("md raid5/6 skip_copy: no copy of written pages into the stripe cache."),
    layer: Layer::Md,
    ..BLANK
};
pub const PREREAD_BYPASS_THRESHOLD: Setting = Setting {
    name: "preread_bypass_threshold",
    unit: "writes",
    default: Value::Int(1), // BYPASS_THRESHOLD, drivers/md/raid5.h
    min: Some(Number::Int(0)),
    max: Some(Number::Int(32768)),
    doc: "md preread_bypass_threshold: full-stripe writes that may pass a head waiting to pre-read (0 to stripe_cache_size)",
    cli_help: Some("md raid5/6 full-stripe writes that may pass a head waiting to pre-read."),
    layer: Layer::Md,
    ..BLANK
};

// ---- a hardware RAID controller ----
pub const CONTROLLER: Setting = Setting {
    name: "controller",
    kind: Kind::Structured,
    default: Value::Text("md"),
    doc: "Linux md, the generic hardware RAID controller (hw), a controller preset (raidlab controllers) or a controller FILE.toml",
    cli_help: Some("md, hw (generic hardware RAID), a preset from 'raidlab controllers', or a controller FILE.toml."),
    layer: Layer::Controller,
    ..BLANK
};
pub const CONTROLLER_OPTS: Setting = Setting {
    name: "controller_opts",
    kind: Kind::Structured,
    default: Value::Empty,
    doc: "Controller parameters over the preset's (KEY=VALUE; raidlab controllers --params)",
    cli_help: Some("Set one controller parameter (raidlab controllers --params); repeatable."),
    layer: Layer::Controller,
    ..BLANK
};
/// The controller's `cache_mib` parameter as its own option: same unit, default and range.
pub const CACHE_MIB: Setting = Setting {
    name: "cache_mib",
    unit: controller::CACHE_MIB.unit,
    default: controller::CACHE_MIB.default,
    min: controller::CACHE_MIB.min,
    max: controller::CACHE_MIB.max,
    doc: "Hardware controller cache, MiB",
    cli_help: Some("Hardware controller cache in MiB."),
    layer: Layer::Controller,
    ..BLANK
};
/// The controller's `bbu` parameter as its own option.
pub const BBU: Setting = Setting {
    name: "bbu",
    kind: Kind::Bool,
    default: controller::BBU.default,
    doc: "Hardware controller cache is battery-backed (write-back)",
    cli_help: Some("Battery-backed cache (write-back) or none (write-through)."),
    layer: Layer::Controller,
    ..BLANK
};
pub const READ_AHEAD: Setting = Setting {
    name: "read_ahead",
    kind: Kind::Bool,
    default: Value::Bool(false),
    doc: "Hardware controller read-ahead",
    cli_help: Some("Hardware controller read-ahead."),
    layer: Layer::Controller,
    ..BLANK
};
pub const BBU_LEARN_POLICY: Setting = Setting {
    name: "bbu_learn_policy",
    kind: Kind::Choice,
    default: Value::Text("default"),
    choices: &["default", "write-through", "write-back"],
    doc: "The controller's write policy during a BBU learn cycle: write-through (LSI/Dell PERC default), write-back, or default (the controller's bbu_learn_policy)",
    cli_help: Some("Write policy during the learn cycle (default: the controller's, write-through)."),
    layer: Layer::Controller,
    ..BLANK
};

// ---- the block layer on each member (on the logical drive behind a controller) ----
pub const SCHEDULER: Setting = Setting {
    name: "scheduler",
    kind: Kind::Choice,
    default: Value::Text("mq-deadline"),
    choices: &["none", "mq-deadline", "cfq"],
    doc: "I/O scheduler on each member",
    cli_help: Some("I/O scheduler on each member."),
    layer: Layer::Block,
    ..BLANK
};
pub const NR_REQUESTS: Setting = Setting {
    name: "nr_requests",
    unit: "requests",
    default: Value::Int(128), // BLKDEV_DEFAULT_RQ, include/linux/blkdev.h
    min: Some(Number::Int(1)),
    max: Some(Number::Int(65536)),
    doc: "Block-layer queue size (BLKDEV_DEFAULT_RQ): requests queued and at the driver, per member under md, on the logical drive behind a controller",
    cli_help: Some(
        "Block-layer queue size (queued and at the driver): per member under md, on the logical drive behind a controller.",
    ),
    layer: Layer::Block,
    ..BLANK
};
pub const MAX_SECTORS_KB: Setting = Setting {
    name: "max_sectors_kb",
    unit: "KiB",
    default: Value::Int(1280), // BLK_DEF_MAX_SECTORS (2560 sectors), include/linux/blkdev.h
    min: Some(Number::Int(4)),
    max: Some(Number::Int(1 << 20)),
    doc: "Largest merged request per member, KiB (BLK_DEF_MAX_SECTORS)",
    cli_help: Some("Largest merged request per member, KiB."),
    layer: Layer::Block,
    ..BLANK
};

// ---- the host's page cache (buffered I/O: fio direct=0, sysbench without O_DIRECT) ----
// The vm sysctls' defaults are the kernel's (mm/page-writeback.c: vm_dirty_ratio 20,
// dirty_background_ratio 10, dirty_expire_interval 30 s, dirty_writeback_interval 5 s).
pub const RAM_GIB: Setting = Setting {
    name: "ram_gib",
    unit: "GiB",
    kind: Kind::Float,
    default: Value::Float(64.0),
    min: Some(Number::Float(0.015625)),
    max: Some(Number::Int(1 << 20)),
    doc: "Host RAM the page cache may use, GiB: Linux's dirtyable memory (free plus file pages), the installed RAM less what the kernel and processes hold, e.g. a database's shared buffers (default: a typical database/storage server, 2 sockets x 4 channels x 8 GiB DIMMs; set your own)",
    cli_help: Some("Host RAM for the page cache (buffered I/O), GiB."),
    layer: Layer::PageCache,
    ..BLANK
};
pub const DIRTY_RATIO: Setting = Setting {
    name: "dirty_ratio",
    unit: "%",
    default: Value::Int(20),
    min: Some(Number::Int(1)),
    max: Some(Number::Int(100)),
    doc: "vm.dirty_ratio: writers wait above this percent of that memory dirty",
    cli_help: Some("vm.dirty_ratio, percent: writers wait above it."),
    layer: Layer::PageCache,
    ..BLANK
};
pub const DIRTY_BACKGROUND_RATIO: Setting = Setting {
    name: "dirty_background_ratio",
    unit: "%",
    default: Value::Int(10),
    min: Some(Number::Int(0)),
    max: Some(Number::Int(100)),
    doc: "vm.dirty_background_ratio: background writeback starts above this percent of that memory dirty",
    cli_help: Some("vm.dirty_background_ratio, percent: background writeback above it."),
    layer: Layer::PageCache,
    ..BLANK
};
pub const DIRTY_EXPIRE_CENTISECS: Setting = Setting {
    name: "dirty_expire_centisecs",
    unit: "centiseconds",
    default: Value::Int(3000),
    min: Some(Number::Int(1)),
    max: Some(Number::Int(10_000_000)),
    doc: "vm.dirty_expire_centisecs: dirty data older than this is written back by the periodic flush",
    cli_help: Some("vm.dirty_expire_centisecs: age at which dirty data is written back."),
    layer: Layer::PageCache,
    ..BLANK
};
pub const DIRTY_WRITEBACK_CENTISECS: Setting = Setting {
    name: "dirty_writeback_centisecs",
    unit: "centiseconds",
    default: Value::Int(500),
    min: Some(Number::Int(1)),
    max: Some(Number::Int(10_000_000)),
    doc: "vm.dirty_writeback_centisecs: the flusher's period",
    cli_help: Some("vm.dirty_writeback_centisecs: the flusher's period."),
    layer: Layer::PageCache,
    ..BLANK
};
pub const READ_AHEAD_KB: Setting = Setting {
    name: "read_ahead_kb",
    unit: "KiB",
    default: Value::Int(0),
    min: Some(Number::Int(0)),
    max: Some(Number::Int(1 << 20)),
    doc: "read_ahead_kb of the array (0: the kernel's: 128 KiB, md raid4/5/6 and raid10 at least two full stripes)",
    cli_help: Some("Array read_ahead_kb (0: the kernel's; md raid4/5/6/10: two full stripes)."),
    layer: Layer::PageCache,
    ..BLANK
};

// ---- the host (cloud instance): its limits on its volumes ----
pub const HOST: Setting = Setting {
    name: "host",
    kind: Kind::Structured,
    doc: "Host/instance preset whose EBS IOPS and bandwidth (baseline, burst) cap the sum of its volume members (raidlab hosts; None: no host limit)",
    cli_help: Some("Host/instance preset whose EBS limits cap all volume members (raidlab hosts)."),
    layer: Layer::Host,
    ..BLANK
};
pub const HOST_CREDITS_PCT: Setting = Setting {
    name: "host_credits_pct",
    unit: "%",
    kind: Kind::Float,
    default: Value::Float(100.0),
    min: Some(Number::Float(0.0)),
    max: Some(Number::Float(100.0)),
    doc: "The host's EBS burst credits at the start, % of its buckets (CloudWatch EBSIOBalance%; 0: it has burst already today)",
    cli_help: Some("The host's EBS burst credits at the start, % (0: already spent)."),
    layer: Layer::Host,
    ..BLANK
};

// ---- the drives ----
pub const DRIVE: Setting = Setting {
    name: "drive",
    kind: Kind::Structured,
    default: Value::Text("cheetah-10k7"),
    doc: "Drive model: a preset, a drive FILE.toml, a DiskSim NAME.parv/.diskspecs, or a drive dict",
    cli_help: Some("Drive model: a preset from 'raidlab drives', a drive FILE.toml, or a DiskSim FILE.parv/.diskspecs."),
    layer: Layer::Drive,
    ..BLANK
};
/// The controller's `drive_queue_depth` parameter, for md's members too.
pub const DRIVE_QUEUE_DEPTH: Setting = Setting {
    name: "drive_queue_depth",
    unit: controller::DRIVE_QUEUE_DEPTH.unit,
    default: controller::DRIVE_QUEUE_DEPTH.default,
    min: controller::DRIVE_QUEUE_DEPTH.min,
    max: controller::DRIVE_QUEUE_DEPTH.max,
    doc: "Commands each drive accepts, TCQ/NCQ (0: the drive model's own, or the controller preset's)",
    cli_help: Some("Commands each drive accepts (TCQ/NCQ); 0: the drive's own."),
    layer: Layer::Drive,
    ..BLANK
};
pub const DRIVE_WRITE_CACHE: Setting = Setting {
    name: "drive_write_cache",
    kind: Kind::Choice,
    default: Value::Text("default"),
    choices: &["default", "on", "off"],
    doc: "The drives' write caches: on, off, or default (off behind a hardware controller, the drive's own under md)",
    cli_help: Some("The drives' write caches (default: off behind a controller)."),
    layer: Layer::Drive,
    ..BLANK
};
pub const COMMAND_TIMEOUT_S: Setting = Setting {
    name: "command_timeout_s",
    unit: "s",
    kind: Kind::Float,
    default: Value::Float(30.0), // SD_TIMEOUT, drivers/scsi/sd.h
    min: Some(Number::Float(0.0)),
    max: Some(Number::Float(1e6)),
    doc: "The host's command timeout per member, s: a drive still recovering a sector then is dropped (Linux SCSI default 30 s, /sys/block/sdX/device/timeout; 0: none)",
    cli_help: Some("The host's command timeout per member (Linux SCSI: 30 s; 0: none)."),
    layer: Layer::Drive,
    scope: Scope::Options,
    ..BLANK
};

// ---- rebuilds and failures ----
pub const SPEED_LIMIT_MIN: Setting = Setting {
    name: "speed_limit_min",
    unit: "KiB/s",
    default: Value::Int(1000), // md.c sysctl_speed_limit_min
    min: Some(Number::Int(1)),
    max: Some(Number::Int(1_000_000_000)),
    doc: "md speed_limit_min, KiB/s per device",
    cli_help: Some("md speed_limit_min, KiB/s per device."),
    layer: Layer::Rebuild,
    ..BLANK
};
pub const SPEED_LIMIT_MAX: Setting = Setting {
    name: "speed_limit_max",
    unit: "KiB/s",
    default: Value::Int(200_000), // md.c sysctl_speed_limit_max
    min: Some(Number::Int(1)),
    max: Some(Number::Int(1_000_000_000)),
    doc: "md speed_limit_max, KiB/s per device",
    cli_help: Some("md speed_limit_max, KiB/s per device."),
    layer: Layer::Rebuild,
    ..BLANK
};
/// The controller's `rebuild_rate_pct` parameter under the name of its own option.
pub const REBUILD_PRIORITY: Setting = Setting {
    name: "rebuild_priority",
    unit: controller::REBUILD_RATE_PCT.unit,
    default: controller::REBUILD_RATE_PCT.default,
    min: controller::REBUILD_RATE_PCT.min,
    max: controller::REBUILD_RATE_PCT.max,
    doc: "Hardware controller rebuild rate: percent of drive time under load",
    cli_help: Some("Hardware controller rebuild rate: percent of drive time under load."),
    layer: Layer::Rebuild,
    ..BLANK
};
pub const FAILED: Setting = Setting {
    name: "failed",
    kind: Kind::Structured,
    default: Value::Empty,
    doc: "Members failed from the start (indices from 0)",
    cli_help: Some("Start degraded: failed member indices (from 0)."),
    layer: Layer::Rebuild,
    scope: Scope::Options,
    ..BLANK
};
pub const TIMELINE: Setting = Setting {
    name: "timeline",
    kind: Kind::Structured,
    default: Value::Empty,
    doc: "Scripted failures and replacements",
    layer: Layer::Rebuild,
    scope: Scope::Options,
    ..BLANK
};
pub const SPARE: Setting = Setting {
    name: "spare",
    kind: Kind::Bool,
    default: Value::Bool(false),
    doc: "A hot spare: rebuild starts as soon as a member fails",
    cli_help: Some("A hot spare: rebuild starts as soon as a member fails."),
    layer: Layer::Rebuild,
    scope: Scope::Options,
    ..BLANK
};
pub const REBUILD_START_PCT: Setting = Setting {
    name: "rebuild_start_pct",
    unit: "%",
    kind: Kind::Float,
    default: Value::Float(0.0),
    min: Some(Number::Float(0.0)),
    max: Some(Number::Float(99.9)),
    doc: "Where in the member a rebuild starts, % (the part below counts as rebuilt): the rebuild's rate at inner, slower zones",
    layer: Layer::Rebuild,
    scope: Scope::Options,
    ..BLANK
};
pub const BBU_LEARN: Setting = Setting {
    name: "bbu_learn",
    unit: "s",
    kind: Kind::Structured,
    doc: "A BBU learn cycle START+DURATION, seconds (e.g. 30+60): a hardware controller with a battery-backed cache runs its learn policy meanwhile",
    cli_help: Some("A BBU learn cycle, seconds (e.g. 30+60): hardware controllers with a battery-backed cache."),
    layer: Layer::Controller,
    scope: Scope::Options,
    ..BLANK
};

// ---- the run itself ----
pub const SEED: Setting = Setting {
    name: "seed",
    default: Value::Int(1),
    min: Some(Number::Int(0)),
    max: Some(Number::Int(u64::MAX)),
    doc: "Seed of the run: same inputs and seed give identical output",
    cli_help: Some("Seed of the run: same inputs and seed give identical output."),
    scope: Scope::Options,
    ..BLANK
};
pub const RUNTIME_S: Setting = Setting {
    name: "runtime_s",
    unit: "s",
    kind: Kind::Float,
    min: Some(Number::Float(0.001)),
    max: Some(Number::Int(MAX_SIM_TIME_S)),
    doc: "Overrides the workload's own run time, s",
    cli_help: Some("Override the workload's run time."),
    scope: Scope::Options,
    ..BLANK
};
pub const MAX_TIME_S: Setting = Setting {
    name: "max_time_s",
    unit: "s",
    kind: Kind::Float,
    default: Value::Float(3600.0),
    min: Some(Number::Float(0.001)),
    max: Some(Number::Int(MAX_SIM_TIME_S)),
    doc: "Bound on simulated time, s",
    cli_help: Some("Bound on simulated time."),
    scope: Scope::Options,
    ..BLANK
};
pub const MAX_EVENTS: Setting = Setting {
    name: "max_events",
    unit: "events",
    default: Value::Int(2_000_000_000),
    min: Some(Number::Int(1)),
    max: Some(Number::Int((1 << 63) - 1)),
    doc: "Bound on simulated events",
    scope: Scope::Options,
    ..BLANK
};
pub const LATENCY_BY_SECOND: Setting = Setting {
    name: "latency_by_second",
    kind: Kind::Bool,
    default: Value::Bool(false),
    doc: "Keep each second's read and write latency distributions, so that the report's steady_state section gives latency percentiles over the steady state too (compare and plan set it; a few KiB a job and second)",
    scope: Scope::Options,
    ..BLANK
};

/// Every run setting, in the order of `raidlab.Design`'s and then `raidlab.Options`' fields
/// (the Python API's positional order).
pub const RUN_SETTINGS: &[Setting] = &[
    LEVEL,
    DEVICES,
    LAYOUT,
    CHUNK_KIB,
    DRIVE,
    CONTROLLER,
    CACHE_MIB,
    BBU,
    READ_AHEAD,
    SCHEDULER,
    STRIPE_CACHE_SIZE,
    RMW_LEVEL,
    GROUP_THREAD_CNT,
    SKIP_COPY,
    PREREAD_BYPASS_THRESHOLD,
    NR_REQUESTS,
    MAX_SECTORS_KB,
    SPEED_LIMIT_MIN,
    SPEED_LIMIT_MAX,
    REBUILD_PRIORITY,
    RAM_GIB,
    DIRTY_RATIO,
    DIRTY_BACKGROUND_RATIO,
    DIRTY_EXPIRE_CENTISECS,
    DIRTY_WRITEBACK_CENTISECS,
    READ_AHEAD_KB,
    DRIVE_QUEUE_DEPTH,
    DRIVE_WRITE_CACHE,
    CONTROLLER_OPTS,
    HOST,
    HOST_CREDITS_PCT,
    BBU_LEARN_POLICY,
    INNER_DEVICES,
    OUTER_CHUNK_KIB,
    PARTITION_GIB,
    SEED,
    RUNTIME_S,
    MAX_TIME_S,
    MAX_EVENTS,
    FAILED,
    TIMELINE,
    SPARE,
    REBUILD_START_PCT,
    BBU_LEARN,
    COMMAND_TIMEOUT_S,
    LATENCY_BY_SECOND,
];
