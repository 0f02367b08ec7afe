//! A hardware RAID controller's parameters (`--controller-opt KEY=VALUE`, controller TOML
//! files, `raidlab controllers --params`): each one's unit, the generic controller's (`hw`)
//! value, range and meaning. Zero means "no limit" for every ceiling and command limit, so the
//! generic controller keeps only its cache; presets (python/raidlab/controllers.py) set the
//! rest, each value with its source. `HwConfig::default()` reads these defaults.

use super::{Kind, Layer, Number, Scope, Setting, Value, BLANK};

pub const CACHE_MIB: Setting = Setting {
    name: "cache_mib",
    unit: "MiB",
    kind: Kind::Int,
    default: Value::Int(256),
    min: Some(Number::Int(0)),
    max: Some(Number::Int(1 << 20)),
    doc: "Cache memory for reads and writes.",
    layer: Layer::Controller,
    scope: Scope::Controller,
    ..BLANK
};
pub const BBU: Setting = Setting {
    name: "bbu",
    unit: "bool",
    kind: Kind::Bool,
    default: Value::Bool(true),
    doc: "A battery (BBU) protects the cache.",
    layer: Layer::Controller,
    scope: Scope::Controller,
    ..BLANK
};
pub const WRITE_POLICY: Setting = Setting {
    name: "write_policy",
    kind: Kind::Choice,
    default: Value::Text("write-back"),
    choices: &["write-back", "write-through", "always-write-back"],
    doc: "write-back (falls back to write-through without a BBU), write-through, or write-back even without a BBU.",
    layer: Layer::Controller,
    scope: Scope::Controller,
    ..BLANK
};
pub const READ_AHEAD_POLICY: Setting = Setting {
    name: "read_ahead_policy",
    kind: Kind::Choice,
    default: Value::Text("none"),
    choices: &["none", "always", "adaptive"],
    doc: "Read ahead never, after every read miss, or after sequential reads (adaptive).",
    layer: Layer::Controller,
    scope: Scope::Controller,
    ..BLANK
};
pub const MIRROR_READS: Setting = Setting {
    name: "mirror_reads",
    kind: Kind::Choice,
    default: Value::Text("nearest"),
    choices: &["nearest", "primary", "round-robin", "least-outstanding"],
    doc: "RAID1/10 reads: md-like nearest/idlest copy, primary only, round robin, or the drive with the fewest commands outstanding.",
    layer: Layer::Controller,
    scope: Scope::Controller,
    ..BLANK
};
pub const DESTAGE_HIGH_PCT: Setting = Setting {
    name: "destage_high_pct",
    unit: "%",
    kind: Kind::Float,
    default: Value::Float(10.0),
    min: Some(Number::Int(0)),
    max: Some(Number::Int(100)),
    doc: "Destaging starts when dirty data exceeds this share of the cache (high watermark).",
    layer: Layer::Controller,
    scope: Scope::Controller,
    ..BLANK
};
pub const DESTAGE_LOW_PCT: Setting = Setting {
    name: "destage_low_pct",
    unit: "%",
    kind: Kind::Float,
    default: Value::Float(10.0),
    min: Some(Number::Int(0)),
    max: Some(Number::Int(100)),
    doc: "Once started, destaging goes on down to this share (low watermark; above the high one it is the high one).",
    layer: Layer::Controller,
    scope: Scope::Controller,
    ..BLANK
};
pub const DESTAGE_CONCURRENCY: Setting = Setting {
    name: "destage_concurrency",
    unit: "rows",
    kind: Kind::Int,
    default: Value::Int(16),
    min: Some(Number::Int(1)),
    max: Some(Number::Int(65536)),
    doc: "Cache rows destaging at once (each row's dirty pages coalesced into one write per extent).",
    layer: Layer::Controller,
    scope: Scope::Controller,
    ..BLANK
};
pub const COMMANDS_PER_DRIVE: Setting = Setting {
    name: "commands_per_drive",
    unit: "commands",
    kind: Kind::Int,
    default: Value::Int(0),
    min: Some(Number::Int(0)),
    max: Some(Number::Int(65536)),
    doc: "Commands the firmware keeps outstanding on one drive (0: the drive's queue depth).",
    layer: Layer::Controller,
    scope: Scope::Controller,
    ..BLANK
};
pub const COMMANDS_TOTAL: Setting = Setting {
    name: "commands_total",
    unit: "commands",
    kind: Kind::Int,
    default: Value::Int(0),
    min: Some(Number::Int(0)),
    max: Some(Number::Int(1 << 20)),
    doc: "Commands the firmware keeps outstanding on all drives together (0: no limit).",
    layer: Layer::Controller,
    scope: Scope::Controller,
    ..BLANK
};
pub const COMMAND_ORDER: Setting = Setting {
    name: "command_order",
    kind: Kind::Choice,
    default: Value::Text("fifo"),
    choices: &["fifo", "elevator"],
    doc: "How the firmware orders the commands waiting for a drive.",
    layer: Layer::Controller,
    scope: Scope::Controller,
    ..BLANK
};
pub const HOST_QUEUE_DEPTH: Setting = Setting {
    name: "host_queue_depth",
    unit: "commands",
    kind: Kind::Int,
    default: Value::Int(0),
    min: Some(Number::Int(0)),
    max: Some(Number::Int(1 << 20)),
    doc: "The logical drive's queue depth the driver gives the host (SCSI cmd_per_lun; 0: nr_requests only).",
    layer: Layer::Controller,
    scope: Scope::Controller,
    ..BLANK
};
pub const COMMAND_IOPS: Setting = Setting {
    name: "command_iops",
    unit: "IOPS",
    kind: Kind::Int,
    default: Value::Int(0),
    min: Some(Number::Int(0)),
    max: Some(Number::Int(1_000_000_000)),
    doc: "Host commands the controller's processor handles per second (0: no limit).",
    layer: Layer::Controller,
    scope: Scope::Controller,
    ..BLANK
};
pub const HOST_LINK_MB_S: Setting = Setting {
    name: "host_link_mb_s",
    unit: "MB/s",
    kind: Kind::Float,
    default: Value::Float(0.0),
    min: Some(Number::Int(0)),
    max: Some(Number::Int(1_000_000)),
    doc: "Host link bandwidth, PCI-X/PCIe (0: no limit).",
    layer: Layer::Controller,
    scope: Scope::Controller,
    ..BLANK
};
pub const CHANNELS: Setting = Setting {
    name: "channels",
    unit: "buses",
    kind: Kind::Int,
    default: Value::Int(0),
    min: Some(Number::Int(0)),
    max: Some(Number::Int(64)),
    doc: "Device-side buses shared by their drives (parallel SCSI channels; drive i on channel i mod channels); 0: a link per drive.",
    layer: Layer::Controller,
    scope: Scope::Controller,
    ..BLANK
};
pub const CHANNEL_MB_S: Setting = Setting {
    name: "channel_mb_s",
    unit: "MB/s",
    kind: Kind::Float,
    default: Value::Float(0.0),
    min: Some(Number::Int(0)),
    max: Some(Number::Int(1_000_000)),
    doc: "Bandwidth of each shared channel (Ultra320: 320).",
    layer: Layer::Controller,
    scope: Scope::Controller,
    ..BLANK
};
pub const XOR_MB_S: Setting = Setting {
    name: "xor_mb_s",
    unit: "MB/s",
    kind: Kind::Float,
    default: Value::Float(0.0),
    min: Some(Number::Int(0)),
    max: Some(Number::Int(1_000_000)),
    doc: "Parity engine rate over the data of parity writes (0: no limit).",
    layer: Layer::Controller,
    scope: Scope::Controller,
    ..BLANK
};
pub const CACHE_MEMORY_MB_S: Setting = Setting {
    name: "cache_memory_mb_s",
    unit: "MB/s",
    kind: Kind::Float,
    default: Value::Float(0.0),
    min: Some(Number::Int(0)),
    max: Some(Number::Int(1_000_000)),
    doc: "Cache memory bandwidth; a read from the drives crosses it twice, a hit or a cached write once.",
    layer: Layer::Controller,
    scope: Scope::Controller,
    ..BLANK
};
pub const CACHE_COPY_MB_S: Setting = Setting {
    name: "cache_copy_mb_s",
    unit: "MB/s",
    kind: Kind::Float,
    default: Value::Float(1000.0),
    min: Some(Number::Int(1)),
    max: Some(Number::Int(1_000_000)),
    doc: "Rate a single host transfer is copied into or out of the cache (latency, not a shared ceiling).",
    layer: Layer::Controller,
    scope: Scope::Controller,
    ..BLANK
};
pub const COMMAND_OVERHEAD_US: Setting = Setting {
    name: "command_overhead_us",
    unit: "us",
    kind: Kind::Int,
    default: Value::Int(30),
    min: Some(Number::Int(0)),
    max: Some(Number::Int(1_000_000)),
    doc: "Firmware latency per host command served from cache.",
    layer: Layer::Controller,
    scope: Scope::Controller,
    ..BLANK
};
pub const REBUILD_RATE_PCT: Setting = Setting {
    name: "rebuild_rate_pct",
    unit: "%",
    kind: Kind::Int,
    default: Value::Int(30),
    min: Some(Number::Int(1)),
    max: Some(Number::Int(100)),
    doc: "Rebuild rate: share of drive time a rebuild takes under load (LSI/Dell default 30%).",
    layer: Layer::Controller,
    scope: Scope::Controller,
    ..BLANK
};
pub const READ_CACHE_PCT: Setting = Setting {
    name: "read_cache_pct",
    unit: "%",
    kind: Kind::Float,
    default: Value::Float(0.0),
    min: Some(Number::Int(0)),
    max: Some(Number::Int(90)),
    doc: "Share of the cache holding data read from the drives (re-reads hit; oldest out first); the rest holds writes.",
    layer: Layer::Controller,
    scope: Scope::Controller,
    ..BLANK
};
pub const DRIVE_WRITE_CACHE: Setting = Setting {
    name: "drive_write_cache",
    kind: Kind::Choice,
    default: Value::Text("off"),
    choices: &["on", "off"],
    doc: "The drives' own write caches (controllers switch them off).",
    layer: Layer::Controller,
    scope: Scope::Controller,
    ..BLANK
};
pub const DRIVE_QUEUE_DEPTH: Setting = Setting {
    name: "drive_queue_depth",
    unit: "commands",
    kind: Kind::Int,
    default: Value::Int(0),
    min: Some(Number::Int(0)),
    max: Some(Number::Int(65536)),
    doc: "Commands each drive accepts, TCQ/NCQ (0: the drive model's own).",
    layer: Layer::Controller,
    scope: Scope::Controller,
    ..BLANK
};
/// During a BBU learn cycle the battery is discharged and recharged; LSI MegaRAID and Dell PERC
/// firmware switch write-back logical drives to write-through meanwhile (LSI MegaRAID SAS
/// Software User Guide, "Battery Learn Cycle"; Dell PERC user's guides) unless the cache is kept
/// on with a bad or charging battery (MegaCli `-LDSetProp CachedBadBBU`).
pub const BBU_LEARN_POLICY: Setting = Setting {
    name: "bbu_learn_policy",
    kind: Kind::Choice,
    default: Value::Text("write-through"),
    choices: &["write-through", "write-back"],
    doc: "Write policy during a BBU learn cycle (--bbu-learn): write-through (LSI/Dell PERC default) or keep write-back.",
    layer: Layer::Controller,
    scope: Scope::Controller,
    ..BLANK
};
/// Every controller parameter, in `raidlab controllers --params` order.
pub const CONTROLLER_SETTINGS: &[Setting] = &[
    CACHE_MIB,
    BBU,
    WRITE_POLICY,
    READ_AHEAD_POLICY,
    MIRROR_READS,
    DESTAGE_HIGH_PCT,
    DESTAGE_LOW_PCT,
    DESTAGE_CONCURRENCY,
    COMMANDS_PER_DRIVE,
    COMMANDS_TOTAL,
    COMMAND_ORDER,
    HOST_QUEUE_DEPTH,
    COMMAND_IOPS,
    HOST_LINK_MB_S,
    CHANNELS,
    CHANNEL_MB_S,
    XOR_MB_S,
    CACHE_MEMORY_MB_S,
    CACHE_COPY_MB_S,
    COMMAND_OVERHEAD_US,
    REBUILD_RATE_PCT,
    READ_CACHE_PCT,
    DRIVE_WRITE_CACHE,
    DRIVE_QUEUE_DEPTH,
    BBU_LEARN_POLICY,
];
