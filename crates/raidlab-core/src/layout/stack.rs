//! Stacked md arrays: an outer md array whose members are inner md arrays.
//!
//! This is how people build raid1+0, raid5+0 and raid6+0 with md (`mdadm --create /dev/md0
//! --level=1 ... ; mdadm --create /dev/md1 --level=1 ...; mdadm --create /dev/md2 --level=0
//! /dev/md0 /dev/md1`) and raid0+1 (raid1 over two raid0 arrays). Each level is an ordinary md
//! array with its own layout and chunk; the outer array sees each inner array as one member and
//! keeps its own superblock and data offset on it (mdadm 1.2 metadata on /dev/md0 like on a
//! disk, `super1.c:validate_geometry1`, see `mdadm.rs`). So an outer sector maps through the
//! outer layout to (inner array, inner sector + the outer data offset), and then through the
//! inner layout to physical members. Physical member `k` is member `k % per_set` of inner
//! array `k / per_set`.

use super::{mdadm, Array, ArraySpec, Cell, Copies, Layout, Level, Location, MAX_DEVICES};
use crate::error::{Error, Result};
use crate::SECTOR_BYTES;

/// What the caller asks for: the outer level and chunk, how many inner arrays, and the inner
/// arrays' creation parameters (every inner array alike; `inner.member_kib` is one set's).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct StackSpec {
    /// raid0 (raid1+0, raid5+0, raid6+0) or raid1 (raid0+1).
    pub outer_level: Level,
    /// The outer raid0's chunk in KiB (for an outer raid1 only the granularity of maps).
    pub outer_chunk_kib: u64,
    /// Inner arrays (members of the outer array).
    pub sets: u32,
    pub inner: ArraySpec,
}

/// The stacked levels raidlab knows: name, outer level, inner level.
const STACKED: [(&str, Level, Level); 4] = [
    ("1+0", Level::Raid0, Level::Raid1),
    ("5+0", Level::Raid0, Level::Raid5),
    ("6+0", Level::Raid0, Level::Raid6),
    ("0+1", Level::Raid1, Level::Raid0),
];

/// The stacked level a name means (`1+0`, `raid1+0`, `raid50`, `60`, `0+1`, ...), as
/// (canonical name, outer level, inner level); None for any other name. `10` and `raid10` stay
/// md's own raid10 personality.
pub fn parse_stacked(text: &str) -> Option<(&'static str, Level, Level)> {
    let lower = text.trim().to_ascii_lowercase();
    let bare = lower.strip_prefix("raid").unwrap_or(&lower);
    let name = match bare {
        "1+0" => "1+0",
        "5+0" | "50" => "5+0",
        "6+0" | "60" => "6+0",
        "0+1" | "01" => "0+1",
        _ => return None,
    };
    STACKED.iter().find(|s| s.0 == name).copied()
}

/// The level of the md array a physical member belongs to: the level itself, or a stack's
/// inner level (the physical members are the inner arrays').
pub fn member_level(text: &str) -> Result<Level> {
    match parse_stacked(text) {
        Some((_, _, inner)) => Ok(inner),
        None => Level::parse(text),
    }
}

impl StackSpec {
    /// A stack of `devices` physical members of `member_kib` each. `inner_devices` members per
    /// inner array (0: the default, raid1 pairs for 1+0 and two inner arrays otherwise);
    /// `layout` and `chunk_kib` are the inner arrays'.
    pub fn from_counts(
        name: &str,
        devices: u32,
        inner_devices: u32,
        layout: Option<Layout>,
        chunk_kib: u64,
        outer_chunk_kib: u64,
        member_kib: u64,
    ) -> Result<StackSpec> {
        let (name, outer_level, inner_level) =
            parse_stacked(name).ok_or_else(|| Error::array(format!("'{name}' is not a stacked level: expected 1+0, 5+0, 6+0 or 0+1")))?;
        let per_set = match inner_devices {
            0 if inner_level == Level::Raid1 => 2,
            0 => devices / 2,
            n => n,
        };
        if per_set == 0 || devices % per_set != 0 || devices / per_set < 2 {
            return Err(Error::array(format!(
                "raid{name} of {devices} devices: {per_set} devices per inner raid{} do not make two or more whole inner arrays (--inner-devices)",
                inner_level.number()
            )));
        }
        let inner = ArraySpec { level: inner_level, layout, chunk_kib, member_kib: vec![member_kib; per_set as usize] };
        Ok(StackSpec { outer_level, outer_chunk_kib, sets: devices / per_set, inner })
    }

    /// "1+0", "5+0", "6+0" or "0+1".
    pub fn name(&self) -> &'static str {
        STACKED
            .iter()
            .find(|s| s.1 == self.outer_level && s.2 == self.inner.level)
            .map(|s| s.0)
            .expect("validated stack")
    }
}

/// A validated stack: the outer array over `sets` inner arrays, all geometry derived once.
#[derive(Clone, Debug)]
pub struct Stack {
    name: &'static str,
    outer: Array,
    inner: Array,
    per_set: u32,
    /// Sectors of each inner array before the outer array's data (its mdadm data offset).
    offset_sectors: u64,
}

impl Stack {
    pub(super) fn new(spec: &StackSpec) -> Result<Stack> {
        if parse_stacked(&format!("{}+{}", spec.inner.level.number(), spec.outer_level.number())).is_none() {
            return Err(Error::array(format!(
                "raid{} over raid{} arrays is not a stack raidlab models: expected 1+0, 5+0, 6+0 or 0+1",
                spec.outer_level.number(),
                spec.inner.level.number()
            )));
        }
        let per_set = spec.inner.member_kib.len() as u32;
        let devices = per_set as u64 * spec.sets as u64;
        if spec.sets < 2 || devices > MAX_DEVICES as u64 {
            return Err(Error::array(format!(
                "a stack needs 2 or more inner arrays and at most {MAX_DEVICES} devices in all, got {} of {per_set}",
                spec.sets
            )));
        }
        let inner = Array::new(&spec.inner).map_err(|e| {
            Error::new(e.kind, format!("the inner raid{} arrays of {per_set} devices each: {}", spec.inner.level.number(), e.message))
        })?;
        let outer_chunk_sectors = spec.outer_chunk_kib * 1024 / SECTOR_BYTES;
        let chunk_for_offset = if spec.outer_level == Level::Raid1 { 0 } else { outer_chunk_sectors };
        let offset_sectors = mdadm::data_offset_sectors(inner.capacity_sectors(), chunk_for_offset);
        let outer_member_kib = inner.capacity_sectors().saturating_sub(offset_sectors) * SECTOR_BYTES / 1024;
        let outer = Array::new(&ArraySpec {
            level: spec.outer_level,
            layout: None,
            chunk_kib: spec.outer_chunk_kib,
            member_kib: vec![outer_member_kib; spec.sets as usize],
        })
        .map_err(|e| Error::array(format!("the outer raid{} of the stack: {}", spec.outer_level.number(), e.message)))?;
        let name = StackSpec::name(spec);
        Ok(Stack { name, outer, inner, per_set, offset_sectors })
    }

    /// "1+0", "5+0", "6+0" or "0+1".
    pub fn name(&self) -> &'static str {
        self.name
    }
    /// The outer array: its members are the inner arrays.
    pub fn outer(&self) -> &Array {
        &self.outer
    }
    /// One inner array (they are all alike).
    pub fn inner(&self) -> &Array {
        &self.inner
    }
    pub fn sets(&self) -> u32 {
        self.outer.devices()
    }
    pub fn per_set(&self) -> u32 {
        self.per_set
    }
    /// The outer array's data offset on each inner array, in sectors.
    pub fn offset_sectors(&self) -> u64 {
        self.offset_sectors
    }
    /// (inner array, member within it) of physical member `member`.
    pub fn place(&self, member: u32) -> (u32, u32) {
        (member / self.per_set, member % self.per_set)
    }

    pub(super) fn capacity_sectors(&self) -> u64 {
        self.outer.capacity_sectors()
    }

    /// Every physical copy of outer sector `sector`: each outer copy (an inner array and a
    /// sector of it), through the inner layout.
    pub(super) fn map(&self, sector: u64, out: &mut Copies) {
        let mut outer = Copies::new();
        let mut inner = Copies::new();
        self.outer.map(sector, &mut outer);
        for o in outer.as_slice() {
            self.inner.map(o.sector + self.offset_sectors, &mut inner);
            for l in inner.as_slice() {
                out.push(Location { member: o.member * self.per_set + l.member, sector: l.sector });
            }
        }
    }

    pub(super) fn unmap(&self, member: u32, sector: u64) -> Cell {
        let (set, local) = self.place(member);
        match self.inner.unmap(local, sector) {
            Cell::Data(inner_sector) if inner_sector >= self.offset_sectors => {
                self.outer.unmap(set, inner_sector - self.offset_sectors)
            }
            Cell::Data(_) => Cell::Unused,
            other => other,
        }
    }

    /// The inner arrays that cannot run with the physical members in `failed_mask` failed.
    pub fn lost_sets(&self, failed_mask: u64) -> Vec<u32> {
        let per = self.per_set;
        (0..self.sets())
            .filter(|&set| {
                let local: Vec<u32> = (0..per).filter(|&m| failed_mask & (1 << (set * per + m)) != 0).collect();
                !local.is_empty() && self.inner.loses_data(&local)
            })
            .collect()
    }

    /// Data is lost when the outer array cannot run without the inner arrays that are lost.
    pub(super) fn loses_data(&self, failed_mask: u64) -> bool {
        self.outer.loses_data(&self.lost_sets(failed_mask))
    }

    /// md's stacked queue limits (block/blk-settings.c `blk_stack_limits`, which md applies
    /// over each member's limits in `mddev_stack_rdev_limits`): io_min is the larger of the
    /// outer array's and an inner array's, io_opt their least common multiple (`lcm_not_zero`).
    pub(super) fn io_limits_bytes(&self) -> (u64, u64) {
        let io_min = self.outer.io_min_bytes().max(self.inner.io_min_bytes());
        let (a, b) = (self.outer.io_opt_bytes(), self.inner.io_opt_bytes());
        let io_opt = match (a, b) {
            (0, x) | (x, 0) => x,
            (a, b) => a / gcd(a, b) * b,
        };
        (io_min, io_opt)
    }
}

fn gcd(a: u64, b: u64) -> u64 {
    if b == 0 { a } else { gcd(b, a % b) }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn stack(name: &str, devices: u32, inner: u32) -> Array {
        Array::stacked(&StackSpec::from_counts(name, devices, inner, None, 64, 128, 1 << 20).unwrap()).unwrap()
    }

    #[test]
    fn names_parse_and_raid10_stays_md_raid10() {
        assert_eq!(parse_stacked("raid1+0").unwrap().0, "1+0");
        assert_eq!(parse_stacked("RAID50").unwrap().0, "5+0");
        assert_eq!(parse_stacked("60").unwrap().0, "6+0");
        assert!(parse_stacked("10").is_none() && parse_stacked("raid10").is_none());
    }

    #[test]
    fn raid1_0_maps_each_sector_to_one_pair_and_loses_data_only_with_a_whole_pair() {
        let a = stack("1+0", 6, 0);
        assert_eq!((a.devices(), a.copies()), (6, 2));
        let mut copies = Copies::new();
        // Outer chunk 128 KiB = 256 sectors: sector 300 is in the outer chunk 1, on pair 1.
        a.map(300, &mut copies);
        let members: Vec<u32> = copies.as_slice().iter().map(|l| l.member).collect();
        assert_eq!(members, vec![2, 3]);
        let offset = a.stack().unwrap().offset_sectors();
        assert_eq!(copies.as_slice()[0].sector, 300 - 256 + offset);
        assert_eq!(a.unmap(3, 300 - 256 + offset), Cell::Data(300));
        assert!(a.loses_data(&[2, 3]));
        assert!(!a.loses_data(&[0, 3, 5]));
        // raid0+1: one failure takes its whole raid0 half out; one in each half loses data.
        let b = stack("0+1", 6, 0);
        assert!(!b.loses_data(&[0, 1, 2]));
        assert!(b.loses_data(&[0, 3]));
    }

    #[test]
    fn raid5_0_limits_stack_as_the_block_layer_does() {
        let a = stack("5+0", 8, 4);
        // Inner raid5 of 4: io_opt 3 × 64 KiB; outer raid0 of 2: 2 × 128 KiB; lcm = 768 KiB.
        assert_eq!((a.io_min_bytes(), a.io_opt_bytes()), (128 * 1024, 768 * 1024));
        assert!(!a.loses_data(&[0, 4]));
        assert!(a.loses_data(&[4, 5]));
    }
}
