//! Zoned recording geometry: where each sector sits (cylinder, surface, angle on the platter).
//!
//! The layout follows DiskSim's `dm_layout_g1` (Bucy, Schindler, Schlosser & Ganger, "The
//! DiskSim Simulation Environment Version 4.0 Reference Manual", CMU-PDL-08-101, 2008) and
//! Ruemmler & Wilkes ("An introduction to disk drive modeling", IEEE Computer 27(3), 1994):
//! zones of cylinders with a constant number of sectors per track, logical sectors filling a
//! cylinder surface by surface before moving one cylinder inwards, and each track's first sector
//! rotated by the track skew (after a head switch) or the cylinder skew (after a one-cylinder
//! seek) so a sequential transfer does not lose a revolution at each track boundary.
//!
//! Angles are measured in nanoseconds of rotation, `0..rev_ns`, so the platter angle at time `t`
//! is the integer `(t + phase) % rev_ns` and no floating point enters positioning.

use crate::error::{Error, ErrorKind, Result};
use crate::sim::Nanos;

/// One recording zone as a DiskSim model file describes it (all counts in 512-byte sectors).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ZoneSpec {
    pub first_cylinder: u32,
    /// Inclusive, as in DiskSim's "Last cylinder number".
    pub last_cylinder: u32,
    pub sectors_per_track: u32,
    /// Rotation between the first sectors of consecutive tracks in one cylinder.
    pub track_skew_sectors: u32,
    /// Rotation between the last track of a cylinder and the first track of the next.
    pub cylinder_skew_sectors: u32,
    /// Rotation of the zone's first sector relative to the index (DiskSim "Offset of first block").
    pub first_sector_offset: u32,
}

/// A zone with its precomputed place in LBA space.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Zone {
    pub spec: ZoneSpec,
    /// First logical sector stored in this zone.
    pub first_lba: u64,
    /// Logical sectors the zone holds (cylinders × surfaces × sectors per track).
    pub sectors: u64,
}

/// Where one logical sector lives.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Location {
    /// The logical sector located.
    pub lba: u64,
    pub cylinder: u32,
    pub head: u32,
    pub zone: u32,
    /// Logical index of the sector on its track (0 = first sector the layout writes there).
    pub sector: u32,
    /// Physical slot on the track after skew, `0..sectors_per_track`.
    pub slot: u32,
    pub sectors_per_track: u32,
}

impl Location {
    /// Sectors from this one to the end of its track.
    pub fn left_on_track(&self) -> u32 {
        self.sectors_per_track - self.sector
    }
}

/// The whole drive's layout.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Geometry {
    surfaces: u32,
    zones: Vec<Zone>,
    rev_ns: Nanos,
    /// Sectors the drive exposes (may be fewer than the zones hold: spares, rounding).
    capacity_sectors: u64,
}

fn invalid(message: String) -> Error {
    Error::new(ErrorKind::InvalidDevice, message)
}

impl Geometry {
    /// Builds and checks a layout; errors name the offending zone.
    pub fn new(
        surfaces: u32,
        zones: &[ZoneSpec],
        rev_ns: Nanos,
        capacity_sectors: u64,
    ) -> Result<Geometry> {
        if surfaces == 0 || zones.is_empty() {
            return Err(invalid("surfaces and zones must be at least 1".into()));
        }
        assert!(
            rev_ns > 0 && rev_ns < u32::MAX as u64,
            "revolution {rev_ns} ns"
        );
        let mut built = Vec::with_capacity(zones.len());
        let mut first_lba = 0u64;
        let mut next_cylinder = 0u32;
        for (index, spec) in zones.iter().enumerate() {
            check_zone(index, spec, next_cylinder)?;
            let cylinders = (spec.last_cylinder - spec.first_cylinder + 1) as u64;
            let sectors = cylinders * surfaces as u64 * spec.sectors_per_track as u64;
            built.push(Zone {
                spec: spec.clone(),
                first_lba,
                sectors,
            });
            first_lba += sectors;
            next_cylinder = spec.last_cylinder + 1;
        }
        if first_lba < capacity_sectors {
            return Err(invalid(format!(
                "capacity_bytes = {} does not fit: the zones hold only {} bytes",
                capacity_sectors * 512,
                first_lba * 512
            )));
        }
        Ok(Geometry {
            surfaces,
            zones: built,
            rev_ns,
            capacity_sectors,
        })
    }

    pub fn surfaces(&self) -> u32 {
        self.surfaces
    }
    pub fn zones(&self) -> &[Zone] {
        &self.zones
    }
    pub fn rev_ns(&self) -> Nanos {
        self.rev_ns
    }
    pub fn capacity_sectors(&self) -> u64 {
        self.capacity_sectors
    }
    /// Cylinders from the outer edge to the last zone's last cylinder (gaps included).
    pub fn cylinders(&self) -> u32 {
        self.zones.last().map_or(0, |z| z.spec.last_cylinder + 1)
    }

    /// Zone index holding `lba` (binary search over the zone table).
    pub fn zone_of(&self, lba: u64) -> usize {
        self.zones.partition_point(|z| z.first_lba <= lba) - 1
    }

    /// Maps a logical sector to its physical place. Panics outside the zones (a caller bug).
    pub fn locate(&self, lba: u64) -> Location {
        assert!(
            lba < self.capacity_sectors,
            "sector {lba} beyond capacity {}",
            self.capacity_sectors
        );
        let zone_index = self.zone_of(lba);
        let zone = &self.zones[zone_index];
        let spt = zone.spec.sectors_per_track as u64;
        let offset = lba - zone.first_lba;
        let track = offset / spt;
        let sector = offset % spt;
        let cylinder_in_zone = track / self.surfaces as u64;
        let head = track % self.surfaces as u64;
        // Every track of the zone before this one was entered by either a cylinder switch or a
        // head switch, and each shifted the first sector by that switch's skew.
        let head_switches = track - cylinder_in_zone;
        let skew = cylinder_in_zone * zone.spec.cylinder_skew_sectors as u64
            + head_switches * zone.spec.track_skew_sectors as u64
            + zone.spec.first_sector_offset as u64;
        Location {
            lba,
            cylinder: zone.spec.first_cylinder + cylinder_in_zone as u32,
            head: head as u32,
            zone: zone_index as u32,
            sector: sector as u32,
            slot: ((sector + skew) % spt) as u32,
            sectors_per_track: spt as u32,
        }
    }

    /// Angle (ns of rotation after the index) at which physical `slot` begins.
    #[inline]
    pub fn angle(&self, slot: u32, sectors_per_track: u32) -> u32 {
        debug_assert!(slot < sectors_per_track);
        (slot as u64 * self.rev_ns / sectors_per_track as u64) as u32
    }

    /// Time for `count` consecutive sectors starting at physical `slot` to pass under the head.
    /// Uses the same integer lattice as [`Geometry::angle`], so back-to-back spans tile exactly.
    #[inline]
    pub fn span(&self, slot: u32, count: u32, sectors_per_track: u32) -> Nanos {
        let spt = sectors_per_track as u64;
        let from = slot as u64 * self.rev_ns / spt;
        let to = (slot as u64 + count as u64) * self.rev_ns / spt;
        to - from
    }

    /// Sectors of a span starting at `slot` that have fully passed `elapsed` ns after it began.
    pub fn sectors_within(
        &self,
        slot: u32,
        count: u32,
        sectors_per_track: u32,
        elapsed: Nanos,
    ) -> u32 {
        let estimate = (elapsed * sectors_per_track as u64 / self.rev_ns).min(count as u64) as u32;
        // The lattice floors can put the estimate one off either way; settle it exactly.
        let mut done = estimate;
        while done < count && self.span(slot, done + 1, sectors_per_track) <= elapsed {
            done += 1;
        }
        while done > 0 && self.span(slot, done, sectors_per_track) > elapsed {
            done -= 1;
        }
        done
    }
}

fn check_zone(index: usize, zone: &ZoneSpec, next_cylinder: u32) -> Result<()> {
    let name = format!("zone {index}");
    if zone.first_cylinder < next_cylinder || zone.last_cylinder < zone.first_cylinder {
        return Err(invalid(format!(
            "{name}: cylinders {}..={} overlap or run backwards",
            zone.first_cylinder, zone.last_cylinder
        )));
    }
    let spt = zone.sectors_per_track;
    if spt == 0 {
        return Err(invalid(format!(
            "{name}: sectors_per_track must be at least 1"
        )));
    }
    if zone.track_skew_sectors >= spt
        || zone.cylinder_skew_sectors >= spt
        || zone.first_sector_offset >= spt
    {
        return Err(invalid(format!(
            "{name}: skews and offset must be below sectors_per_track = {spt}"
        )));
    }
    Ok(())
}

/// Skew in sectors that lets a switch taking `switch_ns` finish before the next track's first
/// sector arrives, with one sector of margin so lattice rounding can never cost a revolution.
pub fn skew_for(switch_ns: Nanos, sectors_per_track: u32, rev_ns: Nanos) -> u32 {
    let spt = sectors_per_track as u64;
    let sectors = (switch_ns * spt).div_ceil(rev_ns) + 1;
    sectors.min(spt - 1) as u32
}

/// Zone table for a drive described by outer/inner sectors per track: `zones` bands of equal
/// cylinder count, sectors per track falling linearly from the outer to the inner band (linear
/// bit density at constant track pitch makes track capacity proportional to radius).
pub fn linear_zones(
    cylinders: u32,
    zones: u32,
    spt_outer: u32,
    spt_inner: u32,
) -> Vec<(u32, u32, u32)> {
    assert!(zones >= 1 && cylinders >= zones && spt_inner <= spt_outer);
    let base = cylinders / zones;
    let extra = cylinders % zones;
    let mut first = 0u32;
    let mut table = Vec::with_capacity(zones as usize);
    for z in 0..zones {
        let count = base + u32::from(z < extra);
        let fraction = if zones == 1 {
            0.0
        } else {
            z as f64 / (zones - 1) as f64
        };
        let spt = (spt_outer as f64 - fraction * (spt_outer - spt_inner) as f64).round() as u32;
        table.push((first, first + count - 1, spt));
        first += count;
    }
    table
}

/// Sectors per cylinder-surface summed over a linear zone plan with `cylinders_per_zone` each.
pub fn linear_zone_track_sum(zones: u32, spt_outer: u32, spt_inner: u32) -> u64 {
    linear_zones(zones, zones, spt_outer, spt_inner)
        .iter()
        .map(|&(_, _, spt)| spt as u64)
        .sum()
}
