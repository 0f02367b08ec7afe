//! A hard disk drive model in the tradition of Ruemmler & Wilkes ("An introduction to disk
//! drive modeling", IEEE Computer 27(3), 1994) and DiskSim 4.0 (Bucy et al., CMU-PDL-08-101):
//!
//! - zoned geometry (cylinders × surfaces, sectors per track per zone) with track and cylinder
//!   skew ([`geometry`]);
//! - seek time from a measured table or Lee's three-point fit, plus write settle and head
//!   switch ([`seek`], [`mech`]);
//! - exact rotational position: the platter angle is `(t + phase) mod revolution`, the phase
//!   drawn once from the drive's own `Prng`;
//! - media transfer at the zone's rate, interface transfer at the bus rate, per-command
//!   overheads (read miss, write, cache hit);
//! - an on-drive buffer: read segments with read-ahead after a miss (sequential reads then hit),
//!   and an optional write cache that acknowledges writes from the buffer, coalesces adjacent
//!   dirty data, destages in the background and holds a Flush until all of it is on media
//!   ([`cache`]);
//! - a tagged command queue with FCFS, SSTF or SPTF ordering ([`queue`]).
//!
//! Build one from scalars with [`HddSpec::from_params`] (declared in [`DECLARATIONS`]) or a
//! preset ([`presets::preset`]), then [`Hdd::new`]. A spec can also carry explicit zone and seek
//! tables, the shape of a DiskSim model, for importing validated drives.
//!
//! Determinism: state is integer nanoseconds; floating point appears only inside one seek
//! evaluation (rounded once) and in the analytic helpers, which never feed the simulation.
//! Divisions by the drive's fixed numbers (sectors per track, surfaces, the revolution) are
//! exact multiplications by precomputed reciprocals ([`divide`]).

pub mod analytic;
pub mod cache;
pub mod divide;
pub mod drive;
pub mod geometry;
pub mod mech;
pub mod presets;
pub mod queue;
pub mod seek;
pub mod spec;

pub use analytic::Qd1Estimate;
pub use drive::{Hdd, HddStats};
pub use geometry::{Geometry, Location, ZoneSpec};
pub use presets::{preset, preset_info, Preset, PRESETS, PRESET_NAMES};
pub use seek::{SeekCurve, SeekSpec};
pub use spec::{BufferPolicy, BusOverheads, HddSpec, QueuePolicy, ReadAheadBound, DECLARATIONS};
