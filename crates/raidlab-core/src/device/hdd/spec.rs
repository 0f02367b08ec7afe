//! The HDD's parameters: scalar declarations for presets and TOML files, and [`HddSpec`], the
//! full description the model runs from. A spec may also carry explicit tables (zones, seek
//! curve, skews) so a DiskSim model file can be imported later without going through scalars.

use super::geometry::{self, Geometry, ZoneSpec};
use super::seek::{SeekCurve, SeekSpec};
use crate::device::params::{self, ParamDecl, ParamValues};
use crate::error::{Error, Result};
use crate::time::NANOS_PER_MILLI;

/// How the drive orders its command queue.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum QueuePolicy {
    /// First come, first served.
    Fcfs,
    /// Shortest seek (cylinder distance) first; ties by arrival.
    Sstf,
    /// Shortest positioning time (seek + settle + rotational latency) first; ties by arrival.
    /// Worthington, Ganger & Patt 1994; Jacobson & Wilkes 1991 (SATF).
    Sptf,
}

impl QueuePolicy {
    pub fn from_code(code: u32) -> Option<QueuePolicy> {
        match code {
            0 => Some(QueuePolicy::Fcfs),
            1 => Some(QueuePolicy::Sstf),
            2 => Some(QueuePolicy::Sptf),
            _ => None,
        }
    }
    pub fn name(self) -> &'static str {
        match self {
            QueuePolicy::Fcfs => "fcfs",
            QueuePolicy::Sstf => "sstf",
            QueuePolicy::Sptf => "sptf",
        }
    }
}

/// Where read-ahead after a read stops (DiskSim's "Buffer continuous read", DiskSim 4.0
/// manual §3.4.3; meanings as its disk controller implements them).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum ReadAheadBound {
    /// `read_ahead_sectors` past the request (DiskSim 3).
    Count,
    /// As `Count`, but never beyond the track holding the request's last sector: the drive
    /// does not switch heads to read ahead (DiskSim 1).
    Track,
    /// As `Count`, but never beyond that sector's cylinder (DiskSim 2).
    Cylinder,
    /// To the end of the track holding the first sector after the request, or of the track
    /// after it when the buffered data began on an earlier track; `read_ahead_sectors` is not
    /// used (DiskSim 4, which DiskSim's code calls its DEC prefetch scheme).
    NextTrack,
}

/// How the on-drive buffer behaves beyond its sizes: choices DiskSim's disk models make (DiskSim
/// 4.0 manual §3.4.3, as its disk controller code implements them). Not scalar parameters; the
/// default is the behaviour of presets and TOML drives, and imported models set their own.
#[derive(Clone, Debug, PartialEq)]
pub struct BufferPolicy {
    /// Writes take a read segment (the least recently used) for their data, as drives whose
    /// buffer segments serve reads and writes alike do (DiskSim's "Use separate write segment"
    /// = 0, DiskSim 4.0 manual §3.4.3), so writes evict read-ahead data. False: write data
    /// lives in a buffer area of its own.
    pub writes_share_segments: bool,
    /// With `writes_share_segments`, reads may hit the data a write left in its segment
    /// (DiskSim's "Allow read hits on write data").
    pub read_hits_on_write_data: bool,
    /// Where read-ahead stops.
    pub read_ahead_bound: ReadAheadBound,
    /// A hit on buffered data restarts read-ahead after it had stopped (DiskSim's "Read-ahead
    /// on idle hit").
    pub read_ahead_on_idle_hit: bool,
    /// While waiting for a read's first sector, the drive keeps the sectors of that track that
    /// pass under the head before it (DiskSim's "Read any free blocks"): they extend the
    /// read's segment backwards at no cost to the read.
    pub read_free_blocks: bool,
    /// Zero-latency access (DiskSim's "Immediate buffer read" / "Immediate buffer write"):
    /// when the heads land inside a request's sectors on a track, the drive starts at the next
    /// sector and picks up the ones it missed on the following revolution, instead of waiting
    /// for the first one.
    pub zero_latency_reads: bool,
    pub zero_latency_writes: bool,
}

impl Default for BufferPolicy {
    fn default() -> BufferPolicy {
        BufferPolicy {
            writes_share_segments: false,
            read_hits_on_write_data: false,
            read_ahead_bound: ReadAheadBound::Count,
            read_ahead_on_idle_hit: true,
            read_free_blocks: false,
            zero_latency_reads: false,
            zero_latency_writes: false,
        }
    }
}

/// Costs of the host connection that DiskSim models (DiskSim 4.0 manual §3.4.2, as its disk
/// controller applies them) and data sheets rarely give. All zero or absent for presets and
/// TOML drives, where the per-command overheads stand for them.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct BusOverheads {
    /// Interface rate for writes when it differs from `interface_mb_s` (which then is reads').
    pub write_mb_s: Option<f64>,
    /// Before any data crosses the interface ("Data preparation overhead").
    pub data_prep_ms: f64,
    /// Reconnecting to the host after a disconnect: before a read miss's data and before a
    /// write-through write's completion ("First reselect overhead").
    pub reselect_ms: f64,
    /// Before a read miss lets go of the bus, after a read and after a write ("Read
    /// disconnect afterread/afterwrite"): its data cannot flow back sooner.
    pub read_disconnect_ms: [f64; 2],
    /// After a read's last data / a write's end ("Read/Write completion overhead").
    pub read_completion_ms: f64,
    pub write_completion_ms: f64,
    /// Sectors of a write-through write buffered before media writing starts; 0: all of it.
    pub write_start_sectors: u32,
    /// Least positioning time for a write that does not continue the previous command
    /// ("Minimum seek delay").
    pub min_write_seek_ms: f64,
}

impl BusOverheads {
    fn validate(&self) -> Result<()> {
        let times = [
            ("data preparation", self.data_prep_ms),
            ("reselect", self.reselect_ms),
            ("read disconnect after a read", self.read_disconnect_ms[0]),
            ("read disconnect after a write", self.read_disconnect_ms[1]),
            ("read completion", self.read_completion_ms),
            ("write completion", self.write_completion_ms),
            ("minimum write seek", self.min_write_seek_ms),
        ];
        for (name, ms) in times {
            if !(ms.is_finite() && (0.0..=1000.0).contains(&ms)) {
                return Err(Error::device(format!("{name} overhead = {ms} ms is out of range: expected 0 to 1000 ms")));
            }
        }
        let (lo, hi) = interface_range();
        match self.write_mb_s {
            Some(rate) if !(lo..=hi).contains(&rate) => {
                Err(Error::device(format!("write interface rate = {rate} MB/s is out of range: expected {lo} to {hi} MB/s")))
            }
            _ => Ok(()),
        }
    }
}

/// `interface_mb_s`'s declared range, for every interface rate.
fn interface_range() -> (f64, f64) {
    declared_range("interface_mb_s")
}

/// A declared parameter's (min, max).
fn declared_range(name: &str) -> (f64, f64) {
    let decl = DECLARATIONS.iter().find(|d| d.name == name).expect("declared");
    (decl.min, decl.max)
}

macro_rules! decl {
    ($name:expr, $unit:expr, $default:expr, $min:expr, $max:expr, $doc:expr) => {
        ParamDecl {
            name: $name,
            unit: $unit,
            default: $default,
            min: $min,
            max: $max,
            doc: $doc,
        }
    };
}

/// Every scalar the HDD model reads. Defaults describe a generic 1 TB 7200 rpm SATA drive.
pub const DECLARATIONS: &[ParamDecl] = &[
    decl!("rpm", "rpm", 7200.0, 3600.0, 20000.0, "Spindle speed."),
    decl!(
        "capacity_bytes",
        "bytes",
        1e12,
        1048576.0,
        1e15,
        "Exposed capacity; a multiple of 512."
    ),
    decl!(
        "cylinders",
        "count",
        0.0,
        0.0,
        5e6,
        "Cylinders; 0 derives the fewest that hold capacity_bytes."
    ),
    decl!(
        "surfaces",
        "count",
        4.0,
        1.0,
        64.0,
        "Recording surfaces (heads)."
    ),
    decl!(
        "sectors_per_track_outer",
        "count",
        2000.0,
        1.0,
        1e5,
        "512 B sectors per track in the outermost zone."
    ),
    decl!(
        "sectors_per_track_inner",
        "count",
        1000.0,
        1.0,
        1e5,
        "512 B sectors per track in the innermost zone."
    ),
    decl!(
        "zones",
        "count",
        16.0,
        1.0,
        1024.0,
        "Recording zones (equal cylinder bands, sectors per track linear)."
    ),
    decl!(
        "seek_ms_single_cylinder",
        "ms",
        1.0,
        0.01,
        20.0,
        "Read seek over one cylinder."
    ),
    decl!(
        "seek_ms_average",
        "ms",
        8.5,
        0.02,
        50.0,
        "Mean read seek over uniformly random cylinder pairs."
    ),
    decl!(
        "seek_ms_full_stroke",
        "ms",
        16.0,
        0.03,
        100.0,
        "Read seek from the outermost to the innermost cylinder."
    ),
    decl!(
        "write_settle_ms",
        "ms",
        0.5,
        0.0,
        10.0,
        "Extra settle before writing after any head movement."
    ),
    decl!(
        "head_switch_ms",
        "ms",
        0.5,
        0.0,
        10.0,
        "Switching to another surface in the same cylinder."
    ),
    decl!(
        "overhead_ms_read",
        "ms",
        0.1,
        0.0,
        10.0,
        "Controller time per read that misses the cache."
    ),
    decl!(
        "overhead_ms_write",
        "ms",
        0.1,
        0.0,
        10.0,
        "Controller time per write or flush."
    ),
    decl!(
        "overhead_ms_cache_hit",
        "ms",
        0.05,
        0.0,
        10.0,
        "Controller time per read served from the cache."
    ),
    decl!(
        "interface_mb_s",
        "MB/s",
        300.0,
        1.0,
        1e5,
        "Host interface rate (10^6 bytes per second)."
    ),
    decl!(
        "cache_kib",
        "KiB",
        32768.0,
        0.0,
        1e7,
        "On-drive buffer: read segments plus the write cache."
    ),
    decl!(
        "cache_segments",
        "count",
        16.0,
        0.0,
        1024.0,
        "Read cache segments (0 disables read caching)."
    ),
    decl!(
        "cache_segment_kib",
        "KiB",
        1024.0,
        1.0,
        1e6,
        "Size of one read segment."
    ),
    decl!(
        "read_ahead_kib",
        "KiB",
        1024.0,
        0.0,
        1e6,
        "Read-ahead after a miss; at most one segment."
    ),
    decl!(
        "write_cache",
        "bool",
        1.0,
        0.0,
        1.0,
        "1: writes are acknowledged from the buffer and destaged later."
    ),
    decl!(
        "queue_depth",
        "count",
        32.0,
        1.0,
        256.0,
        "Tagged/native command queue depth."
    ),
    decl!(
        "queue_policy",
        "code",
        2.0,
        0.0,
        2.0,
        "Queue order: 0 FCFS, 1 SSTF (cylinder distance), 2 SPTF."
    ),
    // ---- behaviour in arrays: idle power management, error recovery (device/behaviour.rs reads these) ----
    BEHAVIOUR[0],
    BEHAVIOUR[1],
    BEHAVIOUR[2],
    BEHAVIOUR[3],
    BEHAVIOUR[4],
    BEHAVIOUR[5],
    BEHAVIOUR[6],
    BEHAVIOUR[7],
];
use crate::device::behaviour::DECLARATIONS as BEHAVIOUR;
const _: () = assert!(BEHAVIOUR.len() == 8, "every behaviour parameter is an HDD parameter");

/// The complete, checked description of one drive.
#[derive(Clone, Debug, PartialEq)]
pub struct HddSpec {
    pub rpm: f64,
    pub capacity_sectors: u64,
    pub surfaces: u32,
    /// Outer to inner; skews in sectors. Cylinder count is the last zone's last cylinder + 1.
    pub zones: Vec<ZoneSpec>,
    pub seek: SeekSpec,
    pub write_settle_ms: f64,
    pub head_switch_ms: f64,
    pub overhead_ms_read: f64,
    pub overhead_ms_write: f64,
    pub overhead_ms_cache_hit: f64,
    pub interface_mb_s: f64,
    /// Shown in reports, e.g. `SATA 3Gb/s`.
    pub interface: String,
    pub cache_segments: u32,
    pub cache_segment_sectors: u64,
    pub read_ahead_sectors: u64,
    pub write_cache: bool,
    /// Dirty data the write cache may hold.
    pub write_buffer_sectors: u64,
    pub queue_depth: u32,
    pub queue_policy: QueuePolicy,
    /// Fraction (0..=1) of a read miss that must be in the buffer before the drive starts
    /// sending it to the host: 0 streams sectors as they arrive; DiskSim's "High (read) water
    /// mark" with "Set watermark by reqsize" (DiskSim 4.0 manual §3.4.3). Not a scalar
    /// parameter (0 for presets and TOML drives); set by imported models.
    pub read_transfer_watermark: f64,
    /// Controller overheads (read miss, write, read hit; ms) when the previous command was a
    /// write, where they differ from the values above (which then apply after a read).
    /// DiskSim splits every overhead by the previous command's type ("Read miss over. after
    /// write", ...; DiskSim 4.0 manual §3.4.2). None: the same after reads and writes.
    pub overhead_ms_after_write: Option<[f64; 3]>,
    /// How the buffer behaves beyond its sizes (preset behaviour by default).
    pub buffer: BufferPolicy,
    /// Host-connection costs beyond the per-command overheads (none for presets).
    pub bus: BusOverheads,
}



fn ms_to_ns(ms: f64) -> u64 {
    (ms * NANOS_PER_MILLI as f64).round() as u64
}

impl HddSpec {
    /// Builds a spec from scalar parameters (unknown names and out-of-range values are errors).
    pub fn from_params(values: &ParamValues) -> Result<HddSpec> {
        let v = params::resolve(DECLARATIONS, values, "hdd")?;
        let rpm = params::get(&v, "rpm");
        let capacity_bytes = params::whole(&v, "capacity_bytes")?;
        if capacity_bytes % 512 != 0 {
            return Err(Error::device(format!(
                "capacity_bytes = {capacity_bytes} is not a multiple of 512"
            )));
        }
        let surfaces = params::whole(&v, "surfaces")? as u32;
        let (outer, inner) = (
            params::whole(&v, "sectors_per_track_outer")? as u32,
            params::whole(&v, "sectors_per_track_inner")? as u32,
        );
        if inner > outer {
            return Err(Error::device(format!(
                "sectors_per_track_inner = {inner} exceeds sectors_per_track_outer = {outer}"
            )));
        }
        let zone_count = params::whole(&v, "zones")? as u32;
        let capacity_sectors = capacity_bytes / 512;
        let cylinders = cylinder_count(
            params::whole(&v, "cylinders")?,
            zone_count,
            surfaces,
            outer,
            inner,
            capacity_sectors,
        )?;
        let seek = SeekSpec::ThreePoint {
            single_ms: params::get(&v, "seek_ms_single_cylinder"),
            average_ms: params::get(&v, "seek_ms_average"),
            full_stroke_ms: params::get(&v, "seek_ms_full_stroke"),
        };
        let rev_ns = (60e9 / rpm).round() as u64;
        let zones = derived_zones(&v, cylinders, zone_count, outer, inner, rev_ns);
        let mut spec = HddSpec {
            rpm,
            capacity_sectors,
            surfaces,
            zones,
            seek,
            write_settle_ms: params::get(&v, "write_settle_ms"),
            head_switch_ms: params::get(&v, "head_switch_ms"),
            overhead_ms_read: params::get(&v, "overhead_ms_read"),
            overhead_ms_write: params::get(&v, "overhead_ms_write"),
            overhead_ms_cache_hit: params::get(&v, "overhead_ms_cache_hit"),
            interface_mb_s: params::get(&v, "interface_mb_s"),
            interface: String::new(),
            cache_segments: 0,
            cache_segment_sectors: 0,
            read_ahead_sectors: 0,
            write_cache: params::whole(&v, "write_cache")? == 1,
            write_buffer_sectors: 0,
            queue_depth: params::whole(&v, "queue_depth")? as u32,
            queue_policy: QueuePolicy::from_code(params::whole(&v, "queue_policy")? as u32)
                .ok_or_else(|| Error::device("queue_policy must be 0, 1 or 2"))?,
            read_transfer_watermark: 0.0,
            overhead_ms_after_write: None,
            buffer: BufferPolicy::default(),
            bus: BusOverheads::default(),
        };
        spec.interface = format!("{} MB/s", spec.interface_mb_s);
        cache_from_params(&v, &mut spec)?;
        spec.validate()?;
        Ok(spec)
    }

    /// Cylinders spanned by the zone table.
    pub fn cylinders(&self) -> u32 {
        self.zones.last().map_or(0, |z| z.last_cylinder + 1)
    }

    /// Revolution time in whole nanoseconds.
    pub fn rev_ns(&self) -> u64 {
        (60e9 / self.rpm).round() as u64
    }

    /// Checks a spec however it was built (scalars, preset, or an imported DiskSim model).
    pub fn validate(&self) -> Result<()> {
        self.checked_parts().map(drop)
    }

    /// Validates the spec and returns the layout and seek curve it describes (the seek fit
    /// walks every cylinder, so the model builds them once, here).
    pub fn checked_parts(&self) -> Result<(Geometry, SeekCurve)> {
        if !(self.rpm.is_finite() && (3600.0..=20000.0).contains(&self.rpm)) {
            return Err(Error::device(format!(
                "rpm = {} is out of range: expected 3600 to 20000 rpm",
                self.rpm
            )));
        }
        if self.capacity_sectors == 0 {
            return Err(Error::device("capacity_bytes must be positive"));
        }
        let parts = (self.geometry()?, self.seek_curve()?);
        // A negative write settle (writes settle faster than reads, as in some DiskSim models)
        // may shorten a head switch but not undo it.
        if !(self.write_settle_ms.is_finite()
            && -self.head_switch_ms <= self.write_settle_ms
            && self.write_settle_ms <= 1000.0)
        {
            return Err(Error::device(format!(
                "write_settle_ms = {} is out of range: expected -head_switch_ms ({}) to 1000 ms",
                self.write_settle_ms, -self.head_switch_ms
            )));
        }
        let times = [
            ("head_switch_ms", self.head_switch_ms),
            ("overhead_ms_read", self.overhead_ms_read),
            ("overhead_ms_write", self.overhead_ms_write),
            ("overhead_ms_cache_hit", self.overhead_ms_cache_hit),
        ];
        let after = self.overhead_ms_after_write.unwrap_or([0.0; 3]);
        let times = times.into_iter().chain([
            ("overhead after a write (read miss)", after[0]),
            ("overhead after a write (write)", after[1]),
            ("overhead after a write (read hit)", after[2]),
        ]);
        for (name, ms) in times {
            if !(ms.is_finite() && (0.0..=1000.0).contains(&ms)) {
                return Err(Error::device(format!(
                    "{name} = {ms} is out of range: expected 0 to 1000 ms"
                )));
            }
        }
        // The declared range holds however the spec was made (DiskSim imports included): a
        // slower interface would overflow the drive's integer transfer times.
        let (lo, hi) = interface_range();
        if !(lo..=hi).contains(&self.interface_mb_s) {
            return Err(Error::device(format!(
                "interface_mb_s = {} is out of range: expected {lo} to {hi} MB/s",
                self.interface_mb_s
            )));
        }
        self.validate_cache_and_queue()?;
        self.bus.validate()?;
        Ok(parts)
    }

    fn validate_cache_and_queue(&self) -> Result<()> {
        // The declared ranges hold however the spec was made (DiskSim imports included): the
        // drive allocates per segment.
        let sizes = [
            ("cache_segments", self.cache_segments as f64),
            ("cache_segment_kib", self.cache_segment_sectors as f64 / 2.0),
            ("cache_kib", (self.write_buffer_sectors as f64 + self.cache_segments as f64 * self.cache_segment_sectors as f64) / 2.0),
        ];
        for (name, value) in sizes {
            let (_, hi) = declared_range(name);
            if value > hi {
                return Err(Error::device(format!("{name} = {value} is out of range: at most {hi}")));
            }
        }
        if self.read_ahead_sectors > self.cache_segment_sectors {
            return Err(Error::device(format!(
                "read_ahead_kib = {} exceeds cache_segment_kib = {}",
                self.read_ahead_sectors / 2,
                self.cache_segment_sectors / 2
            )));
        }
        if self.cache_segments > 0 && self.cache_segment_sectors == 0 {
            return Err(Error::device("cache_segment_kib must be positive when cache_segments > 0",
            ));
        }
        if self.write_cache && self.write_buffer_sectors == 0 {
            return Err(Error::device("write_cache = 1 needs buffer space: cache_kib must exceed cache_segments × cache_segment_kib",
            ));
        }
        if !(0.0..=1.0).contains(&self.read_transfer_watermark) {
            return Err(Error::device(format!(
                "read transfer watermark = {} is out of range: expected 0 to 1",
                self.read_transfer_watermark
            )));
        }
        if !(1..=1024).contains(&self.queue_depth) {
            return Err(Error::device(format!(
                "queue_depth = {} is out of range: expected 1 to 1024",
                self.queue_depth
            )));
        }
        Ok(())
    }

    /// The layout this spec describes.
    pub fn geometry(&self) -> Result<Geometry> {
        Geometry::new(
            self.surfaces,
            &self.zones,
            self.rev_ns(),
            self.capacity_sectors,
        )
    }

    /// The seek curve this spec describes.
    pub fn seek_curve(&self) -> Result<SeekCurve> {
        SeekCurve::new(&self.seek, self.cylinders())
    }
}

/// The given cylinder count, checked; or (when 0) the fewest equal-band cylinders holding capacity.
fn cylinder_count(
    given: u64,
    zones: u32,
    surfaces: u32,
    outer: u32,
    inner: u32,
    capacity: u64,
) -> Result<u32> {
    if given > 0 {
        if given < zones as u64 {
            return Err(Error::device(format!(
                "cylinders = {given} is fewer than zones = {zones}"
            )));
        }
        return Ok(given as u32);
    }
    // Each band of `per_zone` cylinders holds per_zone × surfaces × Σ spt over the bands.
    let per_band_cylinder = geometry::linear_zone_track_sum(zones, outer, inner) * surfaces as u64;
    let per_zone = capacity.div_ceil(per_band_cylinder);
    let cylinders = per_zone * zones as u64;
    if cylinders > geometry::MAX_CYLINDERS as u64 {
        return Err(Error::device(format!(
            "capacity_bytes needs {cylinders} cylinders with these sectors per track; raise sectors_per_track_*"
        )));
    }
    Ok(cylinders as u32)
}

/// Zone table from scalars, with skews derived from the switch times (see `skew_for`).
fn derived_zones(
    v: &ParamValues,
    cylinders: u32,
    zones: u32,
    outer: u32,
    inner: u32,
    rev_ns: u64,
) -> Vec<ZoneSpec> {
    // Skews cover the write case (settle included) so sequential writes never lose a
    // revolution at a track boundary; reads then pay the same small gap, as on real drives.
    // A cylinder switch is a one-cylinder seek (the head change overlaps it).
    let settle = ms_to_ns(params::get(v, "write_settle_ms"));
    let track_switch = ms_to_ns(params::get(v, "head_switch_ms")) + settle;
    let cylinder_switch = ms_to_ns(params::get(v, "seek_ms_single_cylinder")) + settle;
    geometry::linear_zones(cylinders, zones, outer, inner)
        .into_iter()
        .map(|(first, last, spt)| ZoneSpec {
            first_cylinder: first,
            last_cylinder: last,
            sectors_per_track: spt,
            track_skew_sectors: geometry::skew_for(track_switch, spt, rev_ns),
            cylinder_skew_sectors: geometry::skew_for(cylinder_switch, spt, rev_ns),
            first_sector_offset: 0,
            sparing: Default::default(),
        })
        .collect()
}

fn cache_from_params(v: &ParamValues, spec: &mut HddSpec) -> Result<()> {
    let cache_kib = params::whole(v, "cache_kib")?;
    let segments = params::whole(v, "cache_segments")?;
    let segment_kib = params::whole(v, "cache_segment_kib")?;
    let read_ahead_kib = params::whole(v, "read_ahead_kib")?;
    let read_part = segments * segment_kib;
    if read_part > cache_kib {
        return Err(Error::device(format!(
            "cache_segments × cache_segment_kib = {read_part} KiB exceeds cache_kib = {cache_kib}"
        )));
    }
    if read_ahead_kib > segment_kib {
        return Err(Error::device(format!(
            "read_ahead_kib = {read_ahead_kib} exceeds cache_segment_kib = {segment_kib}"
        )));
    }
    spec.cache_segments = segments as u32;
    spec.cache_segment_sectors = segment_kib * 2;
    spec.read_ahead_sectors = read_ahead_kib * 2;
    spec.write_buffer_sectors = (cache_kib - read_part) * 2;
    Ok(())
}
