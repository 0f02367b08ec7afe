//! A hardware RAID controller's settings: its cache and policies, the commands it keeps
//! outstanding, and the ceilings of its processor, buses, XOR engine and cache memory.
//!
//! Zero means "no limit" for every ceiling and command limit, so the generic controller (`hw`)
//! keeps only its cache: presets (python/raidlab/controllers.py) set the rest, with sources.

use crate::error::{Error, ErrorKind, Result};
use crate::settings::{controller_setting, run, Given, Kind, CONTROLLER_SETTINGS};
use crate::time::Nanos;

/// What the controller does with host writes (LSI's "Write Policy").
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum WritePolicy {
    /// Write-back while a BBU protects the cache, write-through without one (LSI "Write Back";
    /// the firmware falls back to write-through when the battery is missing or bad).
    WriteBack,
    /// Every write goes to the drives before it is acknowledged.
    WriteThrough,
    /// Write-back even without a BBU (LSI "Always Write Back", "write back without BBU").
    AlwaysWriteBack,
}

/// When the controller reads ahead of host reads (LSI "Read Policy": No Read Ahead, Read
/// Ahead, Adaptive Read Ahead).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ReadAheadPolicy {
    None,
    /// After every read that misses the cache, the rest of its row and the next.
    Always,
    /// Only after a read that follows the last one sequentially.
    Adaptive,
}

/// Which copy of mirrored data (RAID1/10) a read goes to.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum MirrorReads {
    /// md-like heuristics (sequential stickiness, then the idlest or nearest copy).
    Nearest,
    /// Always the primary (first live) copy.
    Primary,
    /// Alternate between the live copies.
    RoundRobin,
    /// The copy whose drive has the fewest commands outstanding.
    LeastOutstanding,
}

/// How the controller orders commands waiting for a drive beyond those it keeps outstanding.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum CommandOrder {
    /// Arrival order (with merging of contiguous commands).
    Fifo,
    /// Elevator sorting (LSI MegaRAID manual: "elevator sorting and concatenation of requests
    /// per SCSI channel").
    Elevator,
}

/// A hardware RAID controller.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct HwConfig {
    pub cache_bytes: u64,
    /// With a BBU the cache runs write-back; without one, write-through.
    pub bbu: bool,
    pub read_ahead: bool,
    /// Controller firmware time per host command.
    pub command_overhead_ns: Nanos,
    /// Host-to-cache copy rate.
    pub cache_bytes_per_second: u64,
    /// Destaging starts when dirty data exceeds this fraction of the cache (high watermark).
    pub destage_start_fraction: f64,
    /// Destage operations the controller keeps in flight.
    pub destage_concurrency: u32,

    // ---- policies, firmware queues and ceilings (0 = no limit) ----
    pub write_policy: WritePolicy,
    /// Overrides `read_ahead` unless `None` (then `read_ahead` on means adaptive).
    pub read_ahead_policy: ReadAheadPolicy,
    pub mirror_reads: MirrorReads,
    /// Once destaging, it goes on until dirty data is at or below this fraction (low
    /// watermark); a low watermark above the high one acts as the high one.
    pub destage_stop_fraction: f64,
    /// Commands the firmware keeps outstanding on one drive (0: the drive's own queue depth).
    pub commands_per_drive: u32,
    /// Commands the firmware keeps outstanding on all drives together (0: no limit).
    pub commands_total: u32,
    pub command_order: CommandOrder,
    /// The logical drive's queue depth the driver gives the host (SCSI `cmd_per_lun`).
    pub host_queue_depth: u32,
    /// Host commands the controller's processor handles per second.
    pub command_iops: u64,
    /// Host link (PCI-X / PCIe) bandwidth.
    pub host_link_bytes_per_second: u64,
    /// Device-side buses shared by the drives on them (parallel SCSI channels); 0 channels or 0
    /// bandwidth: each drive has its own link (SAS/SATA lanes) and no shared bus.
    pub channels: u32,
    pub channel_bytes_per_second: u64,
    /// Parity (XOR/P+Q) engine rate over the bytes it reads or writes.
    pub xor_bytes_per_second: u64,
    /// Cache memory bandwidth every byte through the cache uses.
    pub cache_memory_bytes_per_second: u64,
    /// Share of the cache holding data read from the drives (later reads of it hit); the rest
    /// holds writes. At most 0.9 so writes keep room.
    pub read_cache_fraction: f64,

    // ---- the battery's learn cycle ----
    /// When the BBU's learn cycle starts and how long it lasts (0: no learn cycle in the run).
    pub learn_start_ns: Nanos,
    pub learn_duration_ns: Nanos,
    /// The cache stays write-back through the learn cycle. Off by default: the battery is
    /// discharged and recharged during a learn cycle, and the firmware switches write-back
    /// logical drives to write-through until it is charged again (LSI MegaRAID SAS Software
    /// User Guide, "Battery Learn Cycle"; Dell PERC user's guides: "the controller's write
    /// policy changes to write-through during a learn cycle") unless told to keep the cache on
    /// a bad or charging battery (MegaCli `-LDSetProp CachedBadBBU`).
    pub learn_keeps_write_back: bool,
}

impl Default for HwConfig {
    /// The generic controller (`hw`): every parameter at its declared default
    /// (`settings::CONTROLLER_SETTINGS`), read-ahead off (`settings::run::READ_AHEAD`), no
    /// learn cycle.
    fn default() -> HwConfig {
        let mut hw = HwConfig {
            cache_bytes: 0,
            bbu: false,
            read_ahead: run::READ_AHEAD.default_bool(),
            command_overhead_ns: 0,
            cache_bytes_per_second: 0,
            destage_start_fraction: 0.0,
            destage_concurrency: 0,
            write_policy: WritePolicy::WriteBack,
            read_ahead_policy: ReadAheadPolicy::None,
            mirror_reads: MirrorReads::Nearest,
            destage_stop_fraction: 0.0,
            commands_per_drive: 0,
            commands_total: 0,
            command_order: CommandOrder::Fifo,
            host_queue_depth: 0,
            command_iops: 0,
            host_link_bytes_per_second: 0,
            channels: 0,
            channel_bytes_per_second: 0,
            xor_bytes_per_second: 0,
            cache_memory_bytes_per_second: 0,
            read_cache_fraction: 0.0,
            learn_start_ns: 0,
            learn_duration_ns: 0,
            learn_keeps_write_back: false,
        };
        for setting in CONTROLLER_SETTINGS {
            let given = setting.default.given().expect("every controller parameter has a default");
            hw.set(setting.name, given).expect("every declared default is in its range");
        }
        hw
    }
}

/// MB/s as bytes per second; a positive rate never rounds to 0, which means "no limit".
fn mb_per_s(mb: f64) -> u64 {
    ((mb * 1e6).round() as u64).max(u64::from(mb > 0.0))
}

impl HwConfig {
    /// Sets parameter `name` (as `settings::CONTROLLER_SETTINGS` declares it, in its unit) after
    /// checking `value` against the declaration. Parameters of the controller that live
    /// elsewhere in the run's configuration (`rebuild_rate_pct`, `drive_write_cache`,
    /// `drive_queue_depth`) are checked and left to their callers: `Ok(false)`.
    pub fn set(&mut self, name: &str, value: Given<'_>) -> Result<bool> {
        let setting = controller_setting(name).ok_or_else(|| {
            Error::new(ErrorKind::InvalidConfig, format!("unknown controller parameter '{name}'"))
        })?;
        match value {
            Given::Text(text) => self.set_choice(name, setting.check_choice(text)?),
            Given::Flag(on) if setting.kind == Kind::Bool => self.set_flag(name, on),
            Given::Number(number) if matches!(setting.kind, Kind::Int | Kind::Float) => {
                self.set_number(name, setting.check(number)?)
            }
            _ => Err(Error::new(ErrorKind::InvalidConfig, format!("{name}: expected a {}", setting.kind.name()))),
        }
    }

    fn set_choice(&mut self, name: &str, i: usize) -> Result<bool> {
        match name {
            "write_policy" => self.write_policy = [WritePolicy::WriteBack, WritePolicy::WriteThrough, WritePolicy::AlwaysWriteBack][i],
            "read_ahead_policy" => self.read_ahead_policy = [ReadAheadPolicy::None, ReadAheadPolicy::Always, ReadAheadPolicy::Adaptive][i],
            "mirror_reads" => {
                self.mirror_reads =
                    [MirrorReads::Nearest, MirrorReads::Primary, MirrorReads::RoundRobin, MirrorReads::LeastOutstanding][i]
            }
            "command_order" => self.command_order = [CommandOrder::Fifo, CommandOrder::Elevator][i],
            "bbu_learn_policy" => self.learn_keeps_write_back = i == 1,
            _ => return Ok(false),
        }
        Ok(true)
    }

    fn set_flag(&mut self, name: &str, on: bool) -> Result<bool> {
        match name {
            "bbu" => self.bbu = on,
            _ => return Ok(false),
        }
        Ok(true)
    }

    fn set_number(&mut self, name: &str, v: f64) -> Result<bool> {
        match name {
            "cache_mib" => self.cache_bytes = (v as u64) << 20,
            "destage_high_pct" => self.destage_start_fraction = v / 100.0,
            "destage_low_pct" => self.destage_stop_fraction = v / 100.0,
            "read_cache_pct" => self.read_cache_fraction = v / 100.0,
            "destage_concurrency" => self.destage_concurrency = v as u32,
            "commands_per_drive" => self.commands_per_drive = v as u32,
            "commands_total" => self.commands_total = v as u32,
            "host_queue_depth" => self.host_queue_depth = v as u32,
            "command_iops" => self.command_iops = v as u64,
            "channels" => self.channels = v as u32,
            "command_overhead_us" => self.command_overhead_ns = v as u64 * 1000,
            "cache_copy_mb_s" => self.cache_bytes_per_second = mb_per_s(v),
            "host_link_mb_s" => self.host_link_bytes_per_second = mb_per_s(v),
            "channel_mb_s" => self.channel_bytes_per_second = mb_per_s(v),
            "xor_mb_s" => self.xor_bytes_per_second = mb_per_s(v),
            "cache_memory_mb_s" => self.cache_memory_bytes_per_second = mb_per_s(v),
            _ => return Ok(false),
        }
        Ok(true)
    }

    /// Whether writes are acknowledged from the cache.
    pub fn write_back(&self) -> bool {
        self.cache_bytes > 0
            && match self.write_policy {
                WritePolicy::WriteBack => self.bbu,
                WritePolicy::WriteThrough => false,
                WritePolicy::AlwaysWriteBack => true,
            }
    }

    /// Whether writes are acknowledged from the cache while the BBU runs a learn cycle: the
    /// battery does not count then, unless the cache is kept on during learning.
    pub fn write_back_learning(&self) -> bool {
        HwConfig { bbu: self.bbu && self.learn_keeps_write_back, ..*self }.write_back()
    }

    /// The read-ahead in effect.
    pub fn read_ahead_mode(&self) -> ReadAheadPolicy {
        match (self.read_ahead_policy, self.read_ahead) {
            (ReadAheadPolicy::None, true) => ReadAheadPolicy::Adaptive,
            (policy, _) => policy,
        }
    }

    /// Checks the fractions and the channel settings.
    pub fn validate(&self) -> Result<()> {
        let bad = |m: String| Err(Error::new(ErrorKind::InvalidConfig, m));
        if !(0.0..=1.0).contains(&self.destage_start_fraction) || !(0.0..=1.0).contains(&self.destage_stop_fraction) {
            return bad("destage watermarks must be fractions of the cache, 0 to 1".into());
        }
        if !(0.0..=0.9).contains(&self.read_cache_fraction) {
            return bad(format!("read cache share {} must be 0 to 0.9 of the cache", self.read_cache_fraction));
        }
        if self.learn_duration_ns > 0 && !(self.bbu && self.cache_bytes > 0) {
            return bad("a BBU learn cycle needs a controller with a cache and a BBU (bbu on, cache_mib above 0)".into());
        }
        if self.destage_concurrency == 0 || self.cache_bytes_per_second == 0 {
            return bad("destage_concurrency and the cache copy rate must be positive".into());
        }
        Ok(())
    }
}
