//! md-exact RAID layouts: capacity, topology, the forward map (array sector → every member
//! sector that holds it), the inverse, and per-row parity roles.
//!
//! Formulas follow the Linux md driver; each level's module cites the kernel functions it
//! restates. `data/md-vectors` holds maps recorded from real md that the tests reproduce.

pub mod mdadm;
mod names;
mod raid0;
mod raid10;
mod raid456;
// Arrays whose members are md arrays (raid1+0, raid5+0, raid6+0, raid0+1).
pub mod stack;

pub use names::{Layout, Level, ParityAlgorithm, Raid0Layout, Raid10Layout};
pub use raid456::{ParityPlace, Stripe};
pub use stack::{member_level, parse_stacked, Stack, StackSpec};

use crate::error::{Error, Result};
use crate::{PAGE_SECTORS, SECTOR_BYTES};
use raid0::Raid0;
use raid10::Raid10;
use raid456::Raid456;

/// The most members raidlab models in one array.
pub const MAX_DEVICES: usize = 64;
/// Most cells a chunk map is built with at once (one per member chunk; about 2 M: a few tens
/// of MB as Python objects or JSON). 64 members of 1 TiB in 512 KiB chunks would be 134 M.
pub const MAX_MAP_ENTRIES: u64 = 1 << 21;
/// mdadm's default chunk (mdadm.h `DEFAULT_CHUNK`).
pub const DEFAULT_CHUNK_KIB: u64 = 512;

/// What the caller asks for: md's creation parameters.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ArraySpec {
    pub level: Level,
    /// `None` means mdadm's default for the level.
    pub layout: Option<Layout>,
    /// Chunk size in KiB. For raid1 (which has no chunks) it is only the granularity of maps.
    pub chunk_kib: u64,
    /// The size of each member's data area in KiB, in device-role order.
    pub member_kib: Vec<u64>,
}

/// One place a piece of data lives: a member and a sector offset in its data area.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Default)]
pub struct Location {
    pub member: u32,
    pub sector: u64,
}

/// Every copy of one array sector, in md's copy order (raid10 `find_phys` slot order).
#[derive(Clone, Debug)]
pub struct Copies {
    len: usize,
    items: [Location; MAX_DEVICES],
}

impl Copies {
    pub fn new() -> Copies {
        Copies { len: 0, items: [Location::default(); MAX_DEVICES] }
    }
    pub fn clear(&mut self) {
        self.len = 0;
    }
    pub fn push(&mut self, location: Location) {
        assert!(self.len < MAX_DEVICES, "more copies than members");
        self.items[self.len] = location;
        self.len += 1;
    }
    pub fn as_slice(&self) -> &[Location] {
        &self.items[..self.len]
    }
    pub fn len(&self) -> usize {
        self.len
    }
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }
}

impl Default for Copies {
    fn default() -> Copies {
        Copies::new()
    }
}

/// What one member sector holds.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Cell {
    /// Array data: the array sector stored here.
    Data(u64),
    /// RAID4/5/6 parity P of the row.
    P,
    /// RAID6 syndrome Q of the row.
    Q,
    /// Space md leaves unused.
    Unused,
}

#[derive(Clone, Debug)]
enum Geometry {
    Raid0(Raid0),
    Raid1,
    Striped(Raid456),
    Raid10(Raid10),
    /// An outer md array over inner md arrays (stack.rs).
    Stacked(Box<Stack>),
}

/// A validated md array: all derived geometry computed once.
#[derive(Clone, Debug)]
pub struct Array {
    level: Level,
    layout: Layout,
    chunk_sectors: u64,
    member_sectors: Vec<u64>,
    capacity_sectors: u64,
    geometry: Geometry,
}

impl Array {
    /// Validates a spec as md and mdadm would and derives the geometry.
    pub fn new(spec: &ArraySpec) -> Result<Array> {
        let devices = spec.member_kib.len();
        validate_devices(spec.level, devices)?;
        let layout = spec.layout.unwrap_or_else(|| Layout::default_for(spec.level));
        validate_layout(spec.level, layout, devices as u32)?;
        validate_chunk(spec.chunk_kib)?;
        let chunk_sectors = spec.chunk_kib * 1024 / SECTOR_BYTES;
        let member_sectors = member_sectors(&spec.member_kib)?;
        let geometry = match (spec.level, layout) {
            (Level::Raid0, Layout::Raid0(mode)) => {
                Geometry::Raid0(Raid0::new(mode, chunk_sectors, &member_sectors))
            }
            (Level::Raid1, _) => Geometry::Raid1,
            (Level::Raid4 | Level::Raid5 | Level::Raid6, Layout::Parity(algorithm)) => {
                Geometry::Striped(Raid456::new(spec.level, algorithm, devices as u32, chunk_sectors))
            }
            (Level::Raid10, Layout::Raid10(word)) => {
                let smallest = *member_sectors.iter().min().expect("devices validated");
                Geometry::Raid10(Raid10::new(word, devices as u32, chunk_sectors, smallest))
            }
            _ => unreachable!("layout validated against level"),
        };
        let mut array = Array {
            level: spec.level,
            layout,
            chunk_sectors,
            member_sectors,
            capacity_sectors: 0,
            geometry,
        };
        array.capacity_sectors = array.compute_capacity_sectors();
        if array.capacity_sectors == 0 {
            return Err(Error::array(format!(
                "members are too small: a raid{} of {} devices with {} KiB chunks holds no data",
                spec.level.number(),
                devices,
                spec.chunk_kib
            )));
        }
        Ok(array)
    }

    /// A stacked array (stack.rs): its members are the physical members of every inner array,
    /// its level, layout and chunk are the outer array's.
    pub fn stacked(spec: &StackSpec) -> Result<Array> {
        let stack = Stack::new(spec)?;
        let outer = stack.outer();
        let member_sectors: Vec<u64> =
            (0..stack.sets()).flat_map(|_| stack.inner().member_sectors().iter().copied()).collect();
        Ok(Array {
            level: outer.level(),
            layout: outer.layout(),
            chunk_sectors: outer.chunk_sectors(),
            member_sectors,
            capacity_sectors: stack.capacity_sectors(),
            geometry: Geometry::Stacked(Box::new(stack)),
        })
    }

    /// The stack, if this array's members are md arrays.
    pub fn stack(&self) -> Option<&Stack> {
        match &self.geometry {
            Geometry::Stacked(stack) => Some(stack),
            _ => None,
        }
    }

    /// The array whose md personality rebuilds a failed member: an inner array of a stack (its
    /// rebuild is the inner array's own recovery), else this one.
    pub fn rebuild_array(&self) -> &Array {
        self.stack().map_or(self, |s| s.inner())
    }

    fn compute_capacity_sectors(&self) -> u64 {
        let smallest = *self.member_sectors.iter().min().expect("devices validated");
        let rounded = smallest / self.chunk_sectors * self.chunk_sectors;
        match &self.geometry {
            Geometry::Raid0(r) => r.capacity_sectors(),
            // md raid1_size: the smallest member, not rounded to a chunk.
            Geometry::Raid1 => smallest,
            // md raid5_size: smallest member rounded down to the chunk, times data disks.
            Geometry::Striped(r) => rounded * r.data_disks() as u64,
            Geometry::Raid10(r) => r.capacity_sectors(),
            Geometry::Stacked(s) => s.capacity_sectors(),
        }
    }

    pub fn level(&self) -> Level {
        self.level
    }
    pub fn layout(&self) -> Layout {
        self.layout
    }
    pub fn devices(&self) -> u32 {
        self.member_sectors.len() as u32
    }
    pub fn chunk_sectors(&self) -> u64 {
        self.chunk_sectors
    }
    pub fn chunk_bytes(&self) -> u64 {
        self.chunk_sectors * SECTOR_BYTES
    }
    pub fn member_sectors(&self) -> &[u64] {
        &self.member_sectors
    }
    /// Whole chunks in `member`'s data area (its column of the chunk map), at most `rows`.
    pub fn map_rows(&self, member: u32, rows: Option<u64>) -> u64 {
        let whole = self.member_sectors[member as usize] / self.chunk_sectors;
        rows.map_or(whole, |limit| whole.min(limit))
    }
    /// Cells of the chunk map (every member's column, at most `rows` each), or an error when
    /// there are more than [`MAX_MAP_ENTRIES`]: check before building one.
    pub fn map_cells(&self, rows: Option<u64>) -> Result<u64> {
        let cells: u64 = (0..self.devices()).map(|m| self.map_rows(m, rows)).sum();
        if cells > MAX_MAP_ENTRIES {
            let longest = (0..self.devices()).map(|m| self.map_rows(m, rows)).max().unwrap_or(0);
            return Err(Error::request(format!(
                "the chunk map has {cells} cells ({} members, up to {longest} chunks each), more than the limit of {MAX_MAP_ENTRIES}: ask for fewer rows",
                self.devices()
            )));
        }
        Ok(cells)
    }
    pub fn capacity_sectors(&self) -> u64 {
        self.capacity_sectors
    }
    pub fn capacity_bytes(&self) -> u64 {
        self.capacity_sectors * SECTOR_BYTES
    }

    /// Number of copies of each data sector (1 for striped levels with parity).
    pub fn copies(&self) -> u32 {
        match &self.geometry {
            Geometry::Raid1 => self.devices(),
            Geometry::Raid10(r) => r.layout().copies(),
            Geometry::Stacked(s) => s.outer().copies() * s.inner().copies(),
            _ => 1,
        }
    }

    /// The raid10 geometry word, if this is raid10.
    pub fn raid10_layout(&self) -> Option<Raid10Layout> {
        match self.layout {
            Layout::Raid10(r) => Some(r),
            _ => None,
        }
    }

    /// Members of parity rows (raid4/5/6): data members per row.
    pub fn data_disks(&self) -> u32 {
        match &self.geometry {
            Geometry::Striped(r) => r.data_disks(),
            Geometry::Raid1 => 1,
            Geometry::Raid0(_) => self.devices(),
            Geometry::Raid10(r) => r.data_disks_for_io_opt(),
            Geometry::Stacked(s) => s.outer().data_disks() * s.inner().data_disks(),
        }
    }

    /// The block device's `minimum_io_size` md sets, in bytes.
    pub fn io_min_bytes(&self) -> u64 {
        match &self.geometry {
            // raid1 sets no io_min; the queue reports its logical block size.
            Geometry::Raid1 => SECTOR_BYTES,
            Geometry::Stacked(s) => s.io_limits_bytes().0,
            _ => self.chunk_bytes(),
        }
    }

    /// The block device's `optimal_io_size` md sets, in bytes (0 means none).
    pub fn io_opt_bytes(&self) -> u64 {
        match &self.geometry {
            Geometry::Raid1 => 0,
            Geometry::Stacked(s) => s.io_limits_bytes().1,
            _ => self.chunk_bytes() * self.data_disks() as u64,
        }
    }

    /// Every (member, member sector) holding array sector `sector`, in md's copy order.
    /// Panics if `sector` is outside the array: callers check requests first.
    #[inline]
    pub fn map(&self, sector: u64, out: &mut Copies) {
        assert!(sector < self.capacity_sectors, "sector {sector} beyond the array");
        out.clear();
        match &self.geometry {
            Geometry::Raid0(r) => out.push(r.map(sector)),
            Geometry::Raid1 => {
                for member in 0..self.devices() {
                    out.push(Location { member, sector });
                }
            }
            Geometry::Striped(r) => out.push(r.map(sector)),
            Geometry::Raid10(r) => r.map(sector, out),
            Geometry::Stacked(s) => s.map(sector, out),
        }
        debug_assert!(!out.is_empty());
    }

    /// The first copy of `sector` (the only one for raid0/4/5/6).
    #[inline]
    pub fn map_primary(&self, sector: u64) -> Location {
        assert!(sector < self.capacity_sectors, "sector {sector} beyond the array");
        match &self.geometry {
            Geometry::Raid0(r) => r.map(sector),
            Geometry::Raid1 => Location { member: 0, sector },
            Geometry::Striped(r) => r.map(sector),
            Geometry::Raid10(r) => r.map_first(sector),
            Geometry::Stacked(s) => {
                let mut copies = Copies::new();
                s.map(sector, &mut copies);
                copies.as_slice()[0]
            }
        }
    }

    /// The first copy of `sector` with its row's parity members (raid4/5/6 only).
    #[inline]
    pub fn map_with_parity(&self, sector: u64) -> Option<ParityPlace> {
        assert!(sector < self.capacity_sectors, "sector {sector} beyond the array");
        match &self.geometry {
            Geometry::Striped(r) => Some(r.map_with_parity(sector)),
            _ => None,
        }
    }

    /// Data index `i` of raid4/5/6 row `row` and the row's P and Q (one entry of `stripe`).
    #[inline]
    pub fn place_in_row(&self, row: u64, i: u32) -> Option<ParityPlace> {
        match &self.geometry {
            Geometry::Striped(r) => {
                assert!(i < r.data_disks(), "data index {i} of a row of {}", r.data_disks());
                Some(r.place_in_row(row, i))
            }
            _ => None,
        }
    }

    /// What member `member` holds at `sector` of its data area.
    pub fn unmap(&self, member: u32, sector: u64) -> Cell {
        assert!(member < self.devices(), "member {member} out of range");
        if sector >= self.member_sectors[member as usize] {
            return Cell::Unused;
        }
        let cell = match &self.geometry {
            Geometry::Raid0(r) => r.unmap(member, sector),
            Geometry::Raid1 => {
                if sector < self.capacity_sectors {
                    Cell::Data(sector)
                } else {
                    Cell::Unused
                }
            }
            Geometry::Striped(r) => r.unmap(member, sector, self.capacity_sectors),
            Geometry::Raid10(r) => r.unmap(member, sector),
            Geometry::Stacked(s) => s.unmap(member, sector),
        };
        if let Cell::Data(array_sector) = cell {
            debug_assert!(array_sector < self.capacity_sectors);
        }
        cell
    }

    /// The parity row (`stripe` in md's words) of a member sector, for raid4/5/6.
    pub fn parity_row(&self, member_sector: u64) -> u64 {
        member_sector / self.chunk_sectors
    }

    /// The roles of each member in parity row `row` (raid4/5/6 only).
    pub fn stripe(&self, row: u64) -> Option<Stripe> {
        match &self.geometry {
            Geometry::Striped(r) => Some(r.stripe(row)),
            _ => None,
        }
    }

    /// Parity rows (chunk-rows) the array uses on each member (raid4/5/6).
    pub fn parity_rows(&self) -> u64 {
        match &self.geometry {
            Geometry::Striped(r) => self.capacity_sectors / self.chunk_sectors / r.data_disks() as u64,
            _ => 0,
        }
    }

    /// Sectors of each member that hold array data or redundancy (what a rebuild must write).
    pub fn member_used_sectors(&self, member: u32) -> u64 {
        let size = self.member_sectors[member as usize];
        match &self.geometry {
            Geometry::Raid0(r) => r.member_used_sectors(member),
            Geometry::Raid1 => self.capacity_sectors,
            Geometry::Striped(_) => self.parity_rows() * self.chunk_sectors,
            Geometry::Raid10(r) => r.member_used_sectors().min(size),
            Geometry::Stacked(s) => s.inner().member_used_sectors(s.place(member).1),
        }
    }

    /// Whether losing exactly the members in `failed` loses data (derived from the map, not
    /// from a per-level rule).
    pub fn loses_data(&self, failed: &[u32]) -> bool {
        let failed_mask = member_mask(failed, self.devices());
        match &self.geometry {
            Geometry::Raid0(_) => failed_mask != 0,
            Geometry::Raid1 => failed_mask.count_ones() >= self.devices(),
            Geometry::Striped(_) => failed_mask.count_ones() > self.level.parity_count(),
            Geometry::Raid10(r) => r.loses_data(failed_mask),
            Geometry::Stacked(s) => s.loses_data(failed_mask),
        }
    }
}

/// A bit mask of members; panics on a member out of range.
pub fn member_mask(members: &[u32], devices: u32) -> u64 {
    let mut mask = 0u64;
    for &member in members {
        assert!(member < devices, "member {member} out of range");
        mask |= 1 << member;
    }
    mask
}

fn validate_devices(level: Level, devices: usize) -> Result<()> {
    let minimum = match level {
        Level::Raid0 => 1,
        Level::Raid1 | Level::Raid4 | Level::Raid5 | Level::Raid10 => 2,
        Level::Raid6 => 4,
    };
    if devices < minimum {
        return Err(Error::array(format!(
            "raid{} needs at least {minimum} devices, got {devices}",
            level.number()
        )));
    }
    if devices > MAX_DEVICES {
        return Err(Error::array(format!(
            "raidlab models at most {MAX_DEVICES} devices in one array, got {devices}"
        )));
    }
    Ok(())
}

fn validate_layout(level: Level, layout: Layout, devices: u32) -> Result<()> {
    let fits = match (level, layout) {
        (Level::Raid0, Layout::Raid0(_)) | (Level::Raid1, Layout::Mirror) => true,
        (Level::Raid4, Layout::Parity(a)) => a == ParityAlgorithm::ParityN,
        (Level::Raid5, Layout::Parity(a)) => a.valid_for_raid5(),
        (Level::Raid6, Layout::Parity(_)) => true,
        (Level::Raid10, Layout::Raid10(r)) => return validate_raid10(r, devices),
        _ => false,
    };
    if !fits {
        return Err(Error::layout(format!(
            "layout '{}' is not valid for raid{}: expected {}",
            layout.name(),
            level.number(),
            Layout::choices(level)
        )));
    }
    Ok(())
}

fn validate_raid10(r: Raid10Layout, devices: u32) -> Result<()> {
    let copies = r.copies();
    if copies < 2 || copies > devices {
        return Err(Error::layout(format!(
            "raid10 layout {} keeps {copies} copies, which needs 2 to {devices} copies on {devices} devices",
            r.name()
        )));
    }
    if r.far_set_mode != 0 {
        let far_set_size = raid10::far_set_size(r, devices);
        if far_set_size < r.far_copies {
            return Err(Error::layout(format!(
                "raid10 layout {}: far sets of {far_set_size} devices cannot hold {} far copies",
                r.name(),
                r.far_copies
            )));
        }
    }
    Ok(())
}

fn validate_chunk(chunk_kib: u64) -> Result<()> {
    // md: chunk must be a power of two and at least PAGE_SIZE (raid5 setup_conf, raid10 setup_geo).
    if chunk_kib < 4 || !chunk_kib.is_power_of_two() {
        return Err(Error::array(format!(
            "chunk must be a power of two of at least 4 KiB, got {chunk_kib} KiB"
        )));
    }
    if chunk_kib > 1024 * 1024 {
        return Err(Error::array(format!("chunk of {chunk_kib} KiB is larger than 1 GiB")));
    }
    Ok(())
}

fn member_sectors(member_kib: &[u64]) -> Result<Vec<u64>> {
    let mut sectors = Vec::with_capacity(member_kib.len());
    for (member, &kib) in member_kib.iter().enumerate() {
        // Sizes beyond 2^50 KiB (an exbibyte) are nonsense and would overflow sector maths.
        if !(4..=(1u64 << 50)).contains(&kib) {
            return Err(Error::array(format!(
                "member {member} size {kib} KiB is out of range (4 KiB to 1 EiB)"
            )));
        }
        // md works in 4 KiB pages for every level with chunks; keep sizes page-aligned.
        sectors.push(kib * 1024 / SECTOR_BYTES / PAGE_SECTORS * PAGE_SECTORS);
    }
    Ok(sectors)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_chunk_map_past_the_limit_is_refused_before_it_is_built() {
        let spec = |member_kib: u64| ArraySpec { level: Level::Raid0, layout: None, chunk_kib: 512, member_kib: vec![member_kib; 64] };
        let huge = Array::new(&spec(1 << 30)).unwrap();
        let err = huge.map_cells(None).unwrap_err();
        assert_eq!(err.kind, crate::ErrorKind::InvalidRequest);
        assert!(err.message.contains("134217728 cells (64 members, up to 2097152 chunks each), more than the limit of 2097152"), "{err}");
        assert_eq!(huge.map_cells(Some(8)).unwrap(), 64 * 8);
        // Exactly at the limit: 64 members of 32768 chunks.
        assert_eq!(Array::new(&spec(32768 * 512)).unwrap().map_cells(None).unwrap(), MAX_MAP_ENTRIES);
        assert!(Array::new(&spec(32769 * 512)).unwrap().map_cells(None).is_err());
    }
}
