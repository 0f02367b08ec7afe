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

use crate::error::{Error, Result};
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

/// Exact division of 32-bit numbers by a fixed divisor with multiplications (Lemire, Kaser &
/// Kurz, "Faster remainder by direct computation", 2019: with `m = ⌈2^64 / d⌉`, the quotient is
/// the high word of `m·n` and the remainder the high word of `(m·n mod 2^64)·d`, exact for every
/// 32-bit `n`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct Divisor {
    d: u32,
    m: u64,
}

impl Divisor {
    fn new(d: u32) -> Divisor {
        assert!(d >= 1);
        // For d = 1, m wraps to 0; `div_rem` special-cases it.
        Divisor { d, m: (u64::MAX / d as u64).wrapping_add(1) }
    }
    #[inline(always)]
    fn div_rem(self, n: u32) -> (u32, u32) {
        if self.d == 1 {
            return (n, 0);
        }
        let product = self.m as u128 * n as u128;
        let low = product as u64;
        ((product >> 64) as u32, ((low as u128 * self.d as u128) >> 64) as u32)
    }
}

/// What [`Geometry::locate`] needs of a zone, precomputed and packed together.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct ZoneMap {
    first_lba: u64,
    first_cylinder: u32,
    spt: Divisor,
    track_skew: u32,
    cylinder_skew: u32,
    first_sector_offset: u32,
}

/// The whole drive's layout.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Geometry {
    surfaces: u32,
    zones: Vec<Zone>,
    /// Per zone, the figures `locate` uses (derived from `zones`).
    maps: Vec<ZoneMap>,
    /// Zone index of the first sector of each `2^bucket_shift`-sector bucket: buckets are
    /// smaller than zones, so `locate` finds a sector's zone from its bucket's in at most one
    /// step instead of a binary search.
    bucket_zone: Vec<u32>,
    bucket_shift: u32,
    surfaces_div: Divisor,
    rev_ns: Nanos,
    /// Sectors the drive exposes (may be fewer than the zones hold: spares, rounding).
    capacity_sectors: u64,
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
            return Err(Error::device("surfaces and zones must be at least 1"));
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
            return Err(Error::device(format!(
                "capacity_bytes = {} does not fit: the zones hold only {} bytes",
                capacity_sectors * 512,
                first_lba * 512
            )));
        }
        let maps = built
            .iter()
            .map(|z| ZoneMap {
                first_lba: z.first_lba,
                first_cylinder: z.spec.first_cylinder,
                spt: Divisor::new(z.spec.sectors_per_track),
                track_skew: z.spec.track_skew_sectors,
                cylinder_skew: z.spec.cylinder_skew_sectors,
                first_sector_offset: z.spec.first_sector_offset,
            })
            .collect();
        // At least as many buckets as the largest zone count allows, rounded to a power of two:
        // with buckets no larger than the smallest zone, a bucket spans at most one boundary.
        let smallest = built.iter().map(|z| z.sectors).filter(|&s| s > 0).min().unwrap_or(1);
        let mut bucket_shift = 63 - smallest.leading_zeros();
        while (first_lba >> bucket_shift) > 1 << 16 {
            bucket_shift += 1;
        }
        let bucket_zone = (0..=first_lba >> bucket_shift)
            .map(|b| (built.partition_point(|z| z.first_lba <= b << bucket_shift) - 1) as u32)
            .collect();
        Ok(Geometry {
            surfaces,
            maps,
            bucket_zone,
            bucket_shift,
            surfaces_div: Divisor::new(surfaces),
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

    /// Zone index holding `lba`.
    #[inline]
    pub fn zone_of(&self, lba: u64) -> usize {
        let mut zone = self.bucket_zone[(lba >> self.bucket_shift) as usize] as usize;
        while self.maps.get(zone + 1).is_some_and(|z| z.first_lba <= lba) {
            zone += 1;
        }
        debug_assert_eq!(zone, self.maps.partition_point(|z| z.first_lba <= lba) - 1);
        zone
    }

    /// Maps a logical sector to its physical place. Panics outside the zones (a caller bug).
    pub fn locate(&self, lba: u64) -> Location {
        assert!(
            lba < self.capacity_sectors,
            "sector {lba} beyond capacity {}",
            self.capacity_sectors
        );
        let zone_index = self.zone_of(lba);
        let zone = &self.maps[zone_index];
        let offset = lba - zone.first_lba;
        let spt = zone.spt.d as u64;
        // Zones hold fewer than 2^32 sectors in practice; then every step divides 32-bit
        // numbers by multiplication. The general path below gives the same results.
        let (track, sector, cylinder_in_zone, head) = if offset <= u32::MAX as u64 {
            let (track, sector) = zone.spt.div_rem(offset as u32);
            let (cylinder, head) = self.surfaces_div.div_rem(track);
            (track as u64, sector as u64, cylinder as u64, head as u64)
        } else {
            let track = offset / spt;
            let surfaces = self.surfaces as u64;
            (track, offset % spt, track / surfaces, track % surfaces)
        };
        // Every track of the zone before this one was entered by either a cylinder switch or a
        // head switch, and each shifted the first sector by that switch's skew.
        let head_switches = track - cylinder_in_zone;
        let skewed = sector
            + cylinder_in_zone * zone.cylinder_skew as u64
            + head_switches * zone.track_skew as u64
            + zone.first_sector_offset as u64;
        let slot = if skewed <= u32::MAX as u64 {
            zone.spt.div_rem(skewed as u32).1
        } else {
            (skewed % spt) as u32
        };
        Location {
            lba,
            cylinder: zone.first_cylinder + cylinder_in_zone as u32,
            head: head as u32,
            zone: zone_index as u32,
            sector: sector as u32,
            slot,
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
        return Err(Error::device(format!(
            "{name}: cylinders {}..={} overlap or run backwards",
            zone.first_cylinder, zone.last_cylinder
        )));
    }
    let spt = zone.sectors_per_track;
    if spt == 0 {
        return Err(Error::device(format!(
            "{name}: sectors_per_track must be at least 1"
        )));
    }
    if zone.track_skew_sectors >= spt
        || zone.cylinder_skew_sectors >= spt
        || zone.first_sector_offset >= spt
    {
        return Err(Error::device(format!(
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sim::Prng;

    #[test]
    fn divisor_is_exact() {
        let mut prng = Prng::new(7);
        for d in [1u32, 2, 3, 7, 8, 457, 938, 4248, 65_537, u32::MAX - 1, u32::MAX] {
            let div = Divisor::new(d);
            for n in [0u32, 1, d - 1, d, d.wrapping_add(1), u32::MAX - 1, u32::MAX] {
                assert_eq!(div.div_rem(n), (n / d, n % d), "{n} / {d}");
            }
            for _ in 0..10_000 {
                let n = prng.below(1 << 32) as u32;
                assert_eq!(div.div_rem(n), (n / d, n % d), "{n} / {d}");
            }
        }
    }

    /// The textbook mapping, in 64-bit arithmetic throughout.
    fn reference(geo: &Geometry, lba: u64) -> Location {
        let zone_index = geo.zones.partition_point(|z| z.first_lba <= lba) - 1;
        let zone = &geo.zones[zone_index];
        let spt = zone.spec.sectors_per_track as u64;
        let offset = lba - zone.first_lba;
        let (track, sector) = (offset / spt, offset % spt);
        let surfaces = geo.surfaces as u64;
        let (cylinder_in_zone, head) = (track / surfaces, track % surfaces);
        let skew = cylinder_in_zone * zone.spec.cylinder_skew_sectors as u64
            + (track - cylinder_in_zone) * zone.spec.track_skew_sectors as u64
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

    #[test]
    fn locate_matches_the_reference_mapping_including_huge_zones() {
        // A zone of more than 2^32 sectors exercises the 64-bit path.
        let zones = [
            ZoneSpec {
                first_cylinder: 0,
                last_cylinder: 9,
                sectors_per_track: 100,
                track_skew_sectors: 7,
                cylinder_skew_sectors: 13,
                first_sector_offset: 3,
            },
            ZoneSpec {
                first_cylinder: 12,
                last_cylinder: 3_000_011,
                sectors_per_track: 4001,
                track_skew_sectors: 4000,
                cylinder_skew_sectors: 3999,
                first_sector_offset: 17,
            },
        ];
        for surfaces in [1, 3] {
            let total: u64 = 10 * 100 * surfaces as u64 + 3_000_000 * 4001 * surfaces as u64;
            assert!(total > 1 << 33);
            let geo = Geometry::new(surfaces, &zones, 6_000_000, total).unwrap();
            let mut prng = Prng::new(surfaces as u64);
            let edges = [0, 1, 999, 1000, 1001, (1u64 << 32) + 1000, total - 1];
            for lba in edges.into_iter().chain((0..20_000).map(|_| prng.below(total))) {
                assert_eq!(geo.locate(lba), reference(&geo, lba), "lba {lba}");
            }
        }
    }
}
