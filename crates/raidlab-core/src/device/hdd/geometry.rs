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

use super::divide::Divisor;
use crate::error::{Error, Result};
use crate::time::Nanos;

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
    /// Spare sectors, slipped defects, empty space and surface order (default: none of them).
    pub sparing: Sparing,
}

/// Where a zone keeps its spare sectors: DiskSim's sparing schemes (`dm_layout_g1_spare_t` in
/// DiskSim 4.0's `diskmodel/layout_g1.h`; the DiskSim 4.0 manual, CMU-PDL-08-101, §4 "Sparing
/// scheme used"). Each is what DiskSim's `layout_g1.c` maps LBNs with.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum SpareScheme {
    /// No spares (DiskSim scheme 0).
    #[default]
    None,
    /// `spares` whole tracks at the zone's end; slips are zone-relative track numbers, and a
    /// slipped track moves every later track of the zone one track on (scheme 1, TRACK_SPARING).
    Tracks,
    /// `spares` sectors at the end of every track; slips are zone-relative physical sector
    /// numbers and move the later LBNs of their own track one slot on (scheme 3,
    /// SECTPERTRACK_SPARING). Each slip also turns the following tracks by one sector.
    PerTrack,
    /// `spares` sectors at the zone's end; slips are zone-relative physical sector numbers and
    /// move every later LBN of the zone one sector on (schemes 9 SECTSPERZONE and 10; scheme 7
    /// SECTATEND without per-cylinder spares maps the same way, with `spares` = its slips).
    Zone,
}

/// One zone's spares and defects, as a DiskSim `dm_layout_g1_zone` gives them.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Sparing {
    pub scheme: SpareScheme,
    /// Tracks (`Tracks`), sectors per track (`PerTrack`) or sectors (`Zone`) kept spare.
    pub spares: u64,
    /// DiskSim's "Empty space at zone front": skipped before the zone's first LBN, in physical
    /// sectors, except with `PerTrack` where DiskSim counts it in LBNs (mapped sectors).
    pub deadspace: u64,
    /// Slipped defects (units as `SpareScheme` says), in the model file's order: DiskSim counts
    /// them in that order, which matters only when it is not ascending.
    pub slips: Vec<u64>,
    /// DiskSim's "LBN-to-PBN mapping scheme" 1: on odd cylinders counted from the zone's first
    /// the surfaces are used in reverse order, so a cylinder switch stays on the same surface.
    pub reverse_odd_cylinders: bool,
}

impl Sparing {
    /// True when the zone maps exactly as a zone without sparing.
    pub fn is_none(&self) -> bool {
        self.scheme == SpareScheme::None
            && self.deadspace == 0
            && self.slips.is_empty()
            && !self.reverse_odd_cylinders
    }

    /// LBNs a zone of `tracks` tracks of `spt` sectors holds (DiskSim's
    /// `dm_layout_g1_compute_blksinband`, `layout_g1_load.c`); None if spares and empty space
    /// exceed the zone.
    pub fn lbns(&self, tracks: u64, spt: u64) -> Option<u64> {
        let physical = tracks * spt;
        let spare = match self.scheme {
            SpareScheme::None => 0,
            SpareScheme::Tracks => self.spares.checked_mul(spt)?,
            SpareScheme::PerTrack => self.spares.checked_mul(tracks)?,
            SpareScheme::Zone => self.spares,
        };
        physical.checked_sub(spare)?.checked_sub(self.deadspace)
    }
}

/// A zone with its precomputed place in LBA space.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Zone {
    pub spec: ZoneSpec,
    /// First logical sector stored in this zone.
    pub first_lba: u64,
    /// Logical sectors the zone holds (cylinders × surfaces × sectors per track, less spares,
    /// slips a scheme counts and empty space at its front).
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
    /// Logical index of the sector on its track: LBNs of this track before it (0 = first
    /// sector the layout writes there).
    pub sector: u32,
    /// Physical index of the sector on its track before skew (DiskSim's `pbn.sector`); equals
    /// `sector` without spares, slips or empty space.
    pub physical_sector: u32,
    /// Physical slot on the track after skew, `0..sectors_per_track`.
    pub slot: u32,
    /// Physical sectors per track (the angular lattice of `slot`).
    pub sectors_per_track: u32,
    /// LBNs on this track from this one on (itself included).
    pub left: u32,
    /// Of those, the ones in consecutive physical slots: a transfer of more must let a slipped
    /// slot pass under the head.
    pub run: u32,
}

impl Location {
    /// LBNs from this one to the last its track holds (this one included).
    pub fn left_on_track(&self) -> u32 {
        self.left
    }

    /// LBNs from this one that lie in consecutive physical slots of its track, so one span of
    /// [`Geometry::span`] covers them.
    pub fn contiguous(&self) -> u32 {
        self.run
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
    /// Index into `Geometry::spared`, or `NOT_SPARED` for the plain mapping.
    spared: u32,
}

const NOT_SPARED: u32 = u32::MAX;

/// Sectors-per-track values above this get no precomputed divisor (the table is indexed by
/// the value; real drives have a few thousand at most).
const SPT_TABLE_MAX: u32 = 1 << 14;

/// [`Geometry::spt_divs`]: each zone's sectors per track at its own index, 1 elsewhere.
fn spt_divisors(zones: &[Zone]) -> Vec<Divisor> {
    let spts = zones.iter().map(|z| z.spec.sectors_per_track).filter(|&s| s <= SPT_TABLE_MAX);
    let mut table = vec![Divisor::new(1); spts.clone().max().map_or(0, |s| s as usize + 1)];
    for spt in spts {
        table[spt as usize] = Divisor::new(spt);
    }
    table
}

/// A zone with sparing, precomputed for [`Geometry::locate`].
#[derive(Clone, Debug, PartialEq, Eq)]
struct Spared {
    scheme: SpareScheme,
    deadspace: u64,
    /// LBNs the zone holds.
    lbns: u64,
    /// LBNs per track (`PerTrack`), else sectors per track.
    lbns_per_track: u64,
    /// The slips in ascending order.
    slips: Vec<u64>,
    /// The slips in the model file's order when that is not ascending (DiskSim's own
    /// validated atlas_III lists them so): DiskSim counts them in that order.
    in_order: Option<Vec<u64>>,
    /// Physical sectors (zone-relative) of the zone's first and last LBNs.
    first_physical: u64,
    last_physical: u64,
    /// `slips[i] - i`, non-decreasing. DiskSim tests each slip in turn, counting it if it is at
    /// or before the position plus the slips counted so far (`layout_g1.c`,
    /// `g1_ltop_sectperzonespare`); with increasing slips exactly those with `slips[i] - i` at
    /// or before the unslipped position pass, so a binary search counts them.
    shifted: Vec<u64>,
    reverse: bool,
}

impl Spared {
    fn new(zone: &Zone, surfaces: u32) -> Spared {
        let sp = &zone.spec.sparing;
        let spt = zone.spec.sectors_per_track as u64;
        let mut slips = sp.slips.clone();
        slips.sort_unstable();
        let in_order = (slips != sp.slips).then(|| sp.slips.clone());
        let shifted: Vec<u64> = slips.iter().enumerate().map(|(i, s)| s - i as u64).collect();
        let last = (sp.deadspace + zone.sectors).max(1) - 1;
        let mut spared = Spared {
            first_physical: 0,
            last_physical: 0,
            scheme: sp.scheme,
            deadspace: sp.deadspace,
            lbns: zone.sectors,
            lbns_per_track: if sp.scheme == SpareScheme::PerTrack { spt - sp.spares } else { spt },
            slips,
            in_order,
            shifted,
            reverse: sp.reverse_odd_cylinders && surfaces > 1,
        };
        spared.first_physical = sp.deadspace + spared.slips_before(sp.deadspace) as u64;
        spared.last_physical = last + spared.slips_before(last) as u64;
        spared
    }

    /// Slips counted for an unslipped position `at` (see `shifted`). Unsorted slips are
    /// counted as DiskSim's `g1_ltop_sectperzonespare` loop does, in the file's order: a slip
    /// counts if it is at or before `at` plus the slips counted before it.
    fn slips_before(&self, at: u64) -> usize {
        match &self.in_order {
            None => self.shifted.partition_point(|&s| s <= at),
            Some(order) => order.iter().fold(0, |k, &slip| if slip <= at + k as u64 { k + 1 } else { k }),
        }
    }

    /// Where zone-relative LBN `rel` lies, per DiskSim's `layout_g1.c` (`g1_ltop_*` for each
    /// scheme).
    fn place(&self, rel: u64, spt: u64) -> Placed {
        match self.scheme {
            SpareScheme::None | SpareScheme::Zone => self.place_in_zone(rel, spt),
            SpareScheme::Tracks => {
                // `g1_ltop_trackspare`: each slipped track at or before moves it one track on.
                let at = rel + self.deadspace;
                let track = at / spt + self.slips_before(at / spt) as u64;
                let sector = at % spt;
                // LBNs on this track before `rel` (empty space may cover the track's front).
                let index = at - (at - sector).max(self.deadspace);
                let left = (spt - sector).min(self.lbns - rel);
                Placed { track, sector, index, left, run: left }
            }
            SpareScheme::PerTrack => self.place_per_track(rel, spt),
        }
    }

    /// `g1_ltop_sectperzonespare`: the slips counted move the LBN on; a track's LBNs are its
    /// physical sectors from the zone's first LBN to its last that are not slipped.
    fn place_in_zone(&self, rel: u64, spt: u64) -> Placed {
        let at = rel + self.deadspace;
        let k = self.slips_before(at);
        let physical = at + k as u64;
        let (track, sector) = (physical / spt, physical % spt);
        let first = (track * spt).max(self.first_physical);
        let last = ((track + 1) * spt - 1).min(self.last_physical);
        let index = physical - first - self.slips_in(first, physical);
        // (Unsorted slips may put an LBN on a slipped sector, as DiskSim's loop does: it keeps
        // at least itself.)
        let left = (last + 1).saturating_sub(physical + self.slips_in(physical, last + 1)).max(1);
        let next = self.slips.partition_point(|&s| s <= physical);
        let gap = self.slips.get(next).map_or(u64::MAX, |s| s - physical);
        Placed { track, sector, index, left, run: left.min(gap) }
    }

    /// `g1_ltop_sectpertrackspare`: the track from LBNs per track, then this track's slips at
    /// or before the LBN's index plus the slips counted so far.
    fn place_per_track(&self, rel: u64, spt: u64) -> Placed {
        let at = rel + self.deadspace;
        let per = self.lbns_per_track;
        let (track, on_track) = (at / per, at % per);
        let first = track * spt;
        let from = self.slips.partition_point(|&s| s < first);
        let to = self.slips.partition_point(|&s| s < first + spt);
        let mut sector = on_track;
        let mut next = spt;
        for &slip in &self.slips[from..to] {
            if slip - first <= sector {
                sector += 1;
            } else {
                next = slip - first;
                break;
            }
        }
        let index = at - (at - on_track).max(self.deadspace);
        let left = (per - on_track).min(self.lbns - rel);
        Placed { track, sector, index, left, run: left.min(next - sector) }
    }

    /// Slips in `[from, to)`.
    fn slips_in(&self, from: u64, to: u64) -> u64 {
        (self.slips.partition_point(|&s| s < to) - self.slips.partition_point(|&s| s < from)) as u64
    }
}

/// One LBN's place in a spared zone.
struct Placed {
    /// Zone-relative track (cylinder × surfaces + logical surface).
    track: u64,
    /// Physical sector on the track.
    sector: u64,
    /// LBNs on the track before this one.
    index: u64,
    /// LBNs on the track from this one on.
    left: u64,
    /// Of those, the ones in consecutive physical sectors.
    run: u64,
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
    /// Zones with sparing (few), indexed by `ZoneMap::spared`.
    spared: Vec<Spared>,
    surfaces_div: Divisor,
    rev_ns: Nanos,
    rev_div: Divisor,
    /// Divisors for the zones' sectors per track, indexed by that number (others unset): the
    /// angle of a slot and the time of a span divide by it (see [`Geometry::spt_div`]).
    spt_divs: Vec<Divisor>,
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
            let sectors = zone_lbns(index, spec, surfaces)?;
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
        let mut spared = Vec::new();
        let maps = built
            .iter()
            .map(|z| ZoneMap {
                first_lba: z.first_lba,
                first_cylinder: z.spec.first_cylinder,
                spt: Divisor::new(z.spec.sectors_per_track),
                track_skew: z.spec.track_skew_sectors,
                cylinder_skew: z.spec.cylinder_skew_sectors,
                first_sector_offset: z.spec.first_sector_offset,
                spared: if z.spec.sparing.is_none() {
                    NOT_SPARED
                } else {
                    spared.push(Spared::new(z, surfaces));
                    (spared.len() - 1) as u32
                },
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
            spared,
            surfaces_div: Divisor::new(surfaces),
            rev_div: Divisor::new(rev_ns as u32),
            spt_divs: spt_divisors(&built),
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
    /// The revolution as a [`Divisor`]: angles are remainders by it.
    #[inline(always)]
    pub fn rev_div(&self) -> Divisor {
        self.rev_div
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
        if zone.spared != NOT_SPARED {
            return self.locate_spared(lba, zone_index);
        }
        let offset = lba - zone.first_lba;
        let spt = zone.spt.get() as u64;
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
            physical_sector: sector as u32,
            slot,
            sectors_per_track: spt as u32,
            left: (spt - sector) as u32,
            run: (spt - sector) as u32,
        }
    }

    /// [`Geometry::locate`] in a zone with spares, slips, empty space or reversed surfaces.
    /// The angle follows DiskSim's `g1_map_pbn_skew` (`layout_g1.c`): first-block offset, plus
    /// a track skew per track switch (the logical surface index plus surfaces − 1 per cylinder
    /// of the zone before), a cylinder skew per cylinder, and the physical sector.
    #[cold]
    fn locate_spared(&self, lba: u64, zone_index: usize) -> Location {
        let zone = &self.maps[zone_index];
        let spared = &self.spared[zone.spared as usize];
        let spt = zone.spt.get() as u64;
        let surfaces = self.surfaces as u64;
        let Placed { track, sector, index, left, run } = spared.place(lba - zone.first_lba, spt);
        let (cylinder_in_zone, surface) = (track / surfaces, track % surfaces);
        let head = if spared.reverse && cylinder_in_zone % 2 == 1 {
            surfaces - 1 - surface
        } else {
            surface
        };
        // Per-track sparing: each slip on an earlier track (by physical head) turns this one by
        // a sector (`g1_map_pbn_skew`'s slip offset).
        let slip_turns = if spared.scheme == SpareScheme::PerTrack {
            let cutoff = (cylinder_in_zone * surfaces + head) * spt;
            spared.slips.partition_point(|&s| s < cutoff) as u64
        } else {
            0
        };
        let switches = surface + (surfaces - 1) * cylinder_in_zone;
        let skewed = (sector + slip_turns + zone.first_sector_offset as u64)
            + cylinder_in_zone % spt * zone.cylinder_skew as u64
            + switches % spt * zone.track_skew as u64;
        Location {
            lba,
            cylinder: zone.first_cylinder + cylinder_in_zone as u32,
            head: head as u32,
            zone: zone_index as u32,
            sector: index as u32,
            physical_sector: sector as u32,
            slot: (skewed % spt) as u32,
            sectors_per_track: spt as u32,
            left: left as u32,
            run: run as u32,
        }
    }

    /// Angle (ns of rotation after the index) at which physical `slot` begins.
    #[inline]
    pub fn angle(&self, slot: u32, sectors_per_track: u32) -> u32 {
        debug_assert!(slot < sectors_per_track);
        self.spt_div(sectors_per_track).div(slot as u64 * self.rev_ns) as u32
    }

    /// The divisor `sectors_per_track`: a zone's, precomputed; built here for any other.
    #[inline(always)]
    fn spt_div(&self, sectors_per_track: u32) -> Divisor {
        match self.spt_divs.get(sectors_per_track as usize) {
            Some(&div) if div.get() == sectors_per_track => div,
            _ => Divisor::new(sectors_per_track),
        }
    }

    /// Time for `count` consecutive sectors starting at physical `slot` to pass under the head.
    /// Uses the same integer lattice as [`Geometry::angle`], so back-to-back spans tile exactly.
    #[inline]
    pub fn span(&self, slot: u32, count: u32, sectors_per_track: u32) -> Nanos {
        let spt = self.spt_div(sectors_per_track);
        let from = spt.div(slot as u64 * self.rev_ns);
        let to = spt.div((slot as u64 + count as u64) * self.rev_ns);
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
        let estimate = self.rev_div.div(elapsed * sectors_per_track as u64).min(count as u64) as u32;
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

/// LBNs zone `index` holds (cylinders × surfaces × sectors per track less what its sparing
/// sets aside); errors name the zone when its sparing data cannot fit.
pub fn zone_lbns(index: usize, spec: &ZoneSpec, surfaces: u32) -> Result<u64> {
    let tracks = (spec.last_cylinder - spec.first_cylinder + 1) as u64 * surfaces as u64;
    let spt = spec.sectors_per_track as u64;
    let sp = &spec.sparing;
    let bad = |what: String| Err(Error::device(format!("zone {index}: {what}")));
    // DiskSim takes slips in any order (its validated atlas_III lists some out of order) and
    // counts them in that order; a slip listed twice is refused.
    let mut sorted = sp.slips.clone();
    sorted.sort_unstable();
    if sorted.windows(2).any(|w| w[0] == w[1]) {
        return bad("a slip is listed twice".into());
    }
    let (limit, unit) = match sp.scheme {
        SpareScheme::Tracks => (tracks, "tracks"),
        _ => (tracks * spt, "sectors"),
    };
    if let Some(&last) = sorted.last().filter(|&&s| s >= limit) {
        return bad(format!("slip {last} lies beyond the zone's {limit} {unit}"));
    }
    let slips = sp.slips.len() as u64;
    match sp.scheme {
        SpareScheme::None if sp.spares > 0 || slips > 0 => {
            return bad("spares and slips need a sparing scheme".into());
        }
        SpareScheme::Tracks | SpareScheme::Zone if slips > sp.spares => {
            return bad(format!("{slips} slips exceed the {} spares", sp.spares));
        }
        SpareScheme::PerTrack => check_per_track(&sorted, sp.spares, spt).map_err(|e| Error::device(format!("zone {index}: {e}")))?,
        _ => {}
    }
    match sp.lbns(tracks, spt) {
        Some(n) => Ok(n),
        None => bad(format!(
            "{} spares and {} sectors of empty space exceed the zone",
            sp.spares, sp.deadspace
        )),
    }
}

/// Per-track sparing: fewer spares than sectors on a track, and no more slips on a track than
/// it has spares (DiskSim's `g1_ltop_sectpertrackspare` assumes both).
fn check_per_track(slips: &[u64], spares: u64, spt: u64) -> std::result::Result<(), String> {
    if spares >= spt {
        return Err(format!("{spares} spares per track leave no sector of {spt} for data"));
    }
    let mut i = 0;
    while i < slips.len() {
        let track = slips[i] / spt;
        let n = slips[i..].iter().take_while(|&&s| s / spt == track).count();
        if n as u64 > spares {
            return Err(format!("track {track} has {n} slips but {spares} spares"));
        }
        i += n;
    }
    Ok(())
}

/// Most cylinders a drive may have: the model tabulates seek times per cylinder distance, and
/// today's largest drives have a few hundred thousand tracks per surface.
pub const MAX_CYLINDERS: u32 = 5_000_000;

fn check_zone(index: usize, zone: &ZoneSpec, next_cylinder: u32) -> Result<()> {
    let name = format!("zone {index}");
    if zone.last_cylinder >= MAX_CYLINDERS {
        return Err(Error::device(format!(
            "{name}: cylinder {} is out of range: a drive has at most {MAX_CYLINDERS} cylinders",
            zone.last_cylinder
        )));
    }
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
    use crate::rng::Prng;

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
            physical_sector: sector as u32,
            slot: ((sector + skew) % spt) as u32,
            sectors_per_track: spt as u32,
            left: (spt - sector) as u32,
            run: (spt - sector) as u32,
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
                sparing: Sparing::default(),
            },
            ZoneSpec {
                first_cylinder: 12,
                last_cylinder: 3_000_011,
                sectors_per_track: 4001,
                track_skew_sectors: 4000,
                cylinder_skew_sectors: 3999,
                first_sector_offset: 17,
                sparing: Sparing::default(),
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

    /// DiskSim's per-slip loops (`layout_g1.c`, `g1_ltop_*`) restated directly: zone-relative
    /// LBN → (zone-relative logical track, physical sector).
    fn disksim_place(sp: &Sparing, rel: u64, spt: u64) -> (u64, u64) {
        let at = rel + sp.deadspace;
        match sp.scheme {
            SpareScheme::None | SpareScheme::Zone => {
                let mut k = 0;
                for &slip in &sp.slips {
                    if slip <= at + k {
                        k += 1;
                    }
                }
                ((at + k) / spt, (at + k) % spt)
            }
            SpareScheme::Tracks => {
                let mut track = at / spt;
                for &slip in &sp.slips {
                    if slip <= track {
                        track += 1;
                    }
                }
                (track, at % spt)
            }
            SpareScheme::PerTrack => {
                let per = spt - sp.spares;
                let (track, mut sector) = (at / per, at % per);
                for &slip in &sp.slips {
                    if slip >= track * spt && slip - track * spt <= sector {
                        sector += 1;
                    }
                }
                (track, sector)
            }
        }
    }

    /// A small zone with random sparing of every scheme.
    fn random_spared_zone(prng: &mut Prng, surfaces: u32) -> ZoneSpec {
        let cylinders = 1 + prng.below(6) as u32;
        let spt = 3 + prng.below(20) as u32;
        let tracks = (cylinders * surfaces) as u64;
        let physical = tracks * spt as u64;
        let scheme = [SpareScheme::None, SpareScheme::Tracks, SpareScheme::PerTrack, SpareScheme::Zone]
            [prng.below(4) as usize];
        let (spares, deadspace, slips) = match scheme {
            SpareScheme::None => (0, prng.below(spt as u64 * 2), Vec::new()),
            SpareScheme::Tracks => {
                let spares = prng.below(tracks / 2 + 1);
                (spares, prng.below(spt as u64 * 2), pick(prng, spares, tracks))
            }
            SpareScheme::PerTrack => {
                let spares = 1 + prng.below(spt as u64 / 2);
                let mut slips = Vec::new();
                for t in 0..tracks {
                    let n = prng.below(spares + 1);
                    for s in pick(prng, n, spt as u64) {
                        slips.push(t * spt as u64 + s);
                    }
                }
                (spares, prng.below(spt as u64 * 2), slips)
            }
            SpareScheme::Zone => {
                let spares = prng.below(physical / 3 + 1);
                (spares, prng.below(spt as u64 * 2), pick(prng, spares, physical))
            }
        };
        ZoneSpec {
            first_cylinder: 0,
            last_cylinder: cylinders - 1,
            sectors_per_track: spt,
            track_skew_sectors: prng.below(spt as u64) as u32,
            cylinder_skew_sectors: prng.below(spt as u64) as u32,
            first_sector_offset: prng.below(spt as u64) as u32,
            sparing: Sparing {
                scheme,
                spares,
                deadspace,
                slips,
                reverse_odd_cylinders: prng.below(2) == 1,
            },
        }
    }

    /// Up to `n` distinct sorted numbers below `limit`.
    fn pick(prng: &mut Prng, n: u64, limit: u64) -> Vec<u64> {
        let mut v: Vec<u64> = (0..n).map(|_| prng.below(limit)).collect();
        v.sort_unstable();
        v.dedup();
        v
    }

    /// Chains random zones one after another.
    fn random_geometry(prng: &mut Prng) -> Option<Geometry> {
        let surfaces = 1 + prng.below(4) as u32;
        let mut zones: Vec<ZoneSpec> = Vec::new();
        for _ in 0..1 + prng.below(3) {
            let mut z = random_spared_zone(prng, surfaces);
            let first = zones.last().map_or(0, |p| p.last_cylinder + 1 + prng.below(2) as u32);
            (z.first_cylinder, z.last_cylinder) = (first, first + z.last_cylinder);
            zones.push(z);
        }
        let held: Option<u64> = zones
            .iter()
            .enumerate()
            .map(|(i, z)| zone_lbns(i, z, surfaces).ok())
            .sum();
        // Deadspace may exceed a small zone: then the geometry must refuse it.
        let Some(held) = held.filter(|&h| h > 0) else {
            assert!(held.is_some() || Geometry::new(surfaces, &zones, 1_000_000, 0).is_err());
            return None;
        };
        Some(Geometry::new(surfaces, &zones, 1_000_000, held).unwrap())
    }

    #[test]
    fn spared_layouts_are_bijections_that_avoid_slips_and_follow_disksim() {
        let mut prng = Prng::new(11);
        let mut checked = 0;
        while checked < 400 {
            let Some(geo) = random_geometry(&mut prng) else { continue };
            checked += 1;
            let surfaces = geo.surfaces as u64;
            let mut seen = std::collections::HashSet::new();
            let mut previous: Option<(u32, u64, Location)> = None;
            for lba in 0..geo.capacity_sectors {
                let l = geo.locate(lba);
                let zone = &geo.zones[l.zone as usize];
                let (spec, spt) = (&zone.spec, zone.spec.sectors_per_track as u64);
                let sp = &spec.sparing;
                let cylinder = (l.cylinder - spec.first_cylinder) as u64;
                let reversed = sp.reverse_odd_cylinders && cylinder % 2 == 1;
                let surface = if reversed { surfaces - 1 - l.head as u64 } else { l.head as u64 };
                let track = cylinder * surfaces + surface;
                let want = disksim_place(sp, lba - zone.first_lba, spt);
                assert_eq!((track, l.physical_sector as u64), want, "lba {lba} in {spec:?}");
                assert!(seen.insert((l.cylinder, l.head, l.physical_sector)), "lba {lba} reuses a sector");
                let slipped = match sp.scheme {
                    SpareScheme::Tracks => sp.slips.contains(&track),
                    _ => sp.slips.contains(&(track * spt + l.physical_sector as u64)),
                };
                assert!(!slipped && l.physical_sector < spt as u32, "lba {lba} on a slipped sector");
                let physical = track * spt + l.physical_sector as u64;
                let same_track = |p: &Location| (p.cylinder, p.head) == (l.cylinder, l.head);
                match previous.filter(|p| p.0 == l.zone) {
                    Some((zone, before, prev)) => {
                        assert!(physical > before, "lba {lba} not after {}", lba - 1);
                        let next_slot = same_track(&prev) && prev.physical_sector + 1 == l.physical_sector;
                        assert_eq!(prev.run, if next_slot { l.run + 1 } else { 1 }, "run at {} ({zone})", lba - 1);
                        let (left, index) = if same_track(&prev) { (l.left + 1, prev.sector + 1) } else { (1, 0) };
                        assert_eq!((prev.left, l.sector), (left, index), "LBNs on the track at {lba}");
                    }
                    None => assert_eq!(l.sector, 0, "lba {lba} starts its zone's first track"),
                }
                assert!(l.run >= 1 && l.run <= l.left);
                let turns = if sp.scheme == SpareScheme::PerTrack {
                    let cutoff = (cylinder * surfaces + l.head as u64) * spt;
                    sp.slips.iter().filter(|&&s| s < cutoff).count() as u64
                } else {
                    0
                };
                let skew = cylinder * spec.cylinder_skew_sectors as u64
                    + (surface + (surfaces - 1) * cylinder) * spec.track_skew_sectors as u64
                    + spec.first_sector_offset as u64
                    + turns;
                assert_eq!(l.slot as u64, (l.physical_sector as u64 + skew) % spt, "slot of lba {lba}");
                if previous.is_some_and(|p| p.0 != l.zone) {
                    assert_eq!(previous.unwrap().2.left, 1, "a zone's last LBN ends its track");
                }
                previous = Some((l.zone, physical, l));
            }
            assert!(previous.is_some_and(|p| p.2.run == 1 && p.2.left == 1), "last LBN ends its run");
        }
    }

    #[test]
    fn an_empty_sparing_description_maps_as_the_plain_layout() {
        // Scheme `Zone` with nothing spare takes the spared path; it must agree exactly.
        let mut prng = Prng::new(3);
        for _ in 0..200 {
            let surfaces = 1 + prng.below(5) as u32;
            let mut zone = random_spared_zone(&mut prng, surfaces);
            zone.sparing = Sparing::default();
            let plain = Geometry::new(surfaces, std::slice::from_ref(&zone), 1_000_000, 1).unwrap();
            let all = plain.zones[0].sectors;
            let plain = Geometry::new(surfaces, std::slice::from_ref(&zone), 1_000_000, all).unwrap();
            zone.sparing = Sparing { scheme: SpareScheme::Zone, ..Sparing::default() };
            let spared = Geometry::new(surfaces, &[zone], 1_000_000, all).unwrap();
            assert_eq!(spared.maps[0].spared, 0);
            for lba in 0..all {
                assert_eq!(spared.locate(lba), plain.locate(lba), "lba {lba}");
            }
        }
    }

    #[test]
    fn bad_sparing_is_refused_naming_the_zone() {
        let zone = |sparing: Sparing| ZoneSpec {
            first_cylinder: 0,
            last_cylinder: 1,
            sectors_per_track: 10,
            track_skew_sectors: 1,
            cylinder_skew_sectors: 2,
            first_sector_offset: 0,
            sparing,
        };
        let ok = zone(Sparing::default());
        let cases = [
            (Sparing { scheme: SpareScheme::Zone, spares: 1, slips: vec![3, 4], ..Default::default() }, "2 slips exceed the 1 spares"),
            (Sparing { scheme: SpareScheme::Zone, spares: 2, slips: vec![4, 4], ..Default::default() }, "listed twice"),
            (Sparing { scheme: SpareScheme::Zone, spares: 2, slips: vec![40], ..Default::default() }, "slip 40 lies beyond the zone's 40 sectors"),
            (Sparing { scheme: SpareScheme::Tracks, spares: 1, slips: vec![4], ..Default::default() }, "slip 4 lies beyond the zone's 4 tracks"),
            (Sparing { scheme: SpareScheme::PerTrack, spares: 1, slips: vec![11, 12], ..Default::default() }, "track 1 has 2 slips but 1 spares"),
            (Sparing { scheme: SpareScheme::PerTrack, spares: 10, ..Default::default() }, "leave no sector"),
            (Sparing { scheme: SpareScheme::None, spares: 1, ..Default::default() }, "need a sparing scheme"),
            (Sparing { deadspace: 41, ..Default::default() }, "exceed the zone"),
        ];
        for (sparing, needle) in cases {
            let mut second = zone(sparing);
            (second.first_cylinder, second.last_cylinder) = (2, 3);
            let err = Geometry::new(2, &[ok.clone(), second], 1_000_000, 1).unwrap_err();
            assert!(err.message.starts_with("zone 1: ") && err.message.contains(needle), "{}", err.message);
        }
    }
}
