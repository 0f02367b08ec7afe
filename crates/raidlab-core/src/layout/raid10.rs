//! RAID10 near, far and offset layouts, including device counts not a multiple of the copies.
//!
//! Restates kernel `drivers/md/raid10.c`: `setup_geo` (layout word), `calc_sectors` (used
//! space and stride), `raid10_size`, `__raid10_find_phys` (forward) and `raid10_find_virt`
//! (inverse), and `raid10_set_io_opt`.

use super::names::Raid10Layout;
use super::{Cell, Copies, Location};

/// md's far-set size for a layout word (`setup_geo`).
pub fn far_set_size(layout: Raid10Layout, disks: u32) -> u32 {
    match layout.far_set_mode {
        0 => disks,
        1 => disks / layout.far_copies,
        2 => layout.far_copies * layout.near_copies,
        _ => unreachable!("validated far-set mode"),
    }
}

#[derive(Clone, Debug)]
pub struct Raid10 {
    layout: Raid10Layout,
    disks: u32,
    chunk_shift: u32,
    far_set_size: u32,
    last_far_set_start: u32,
    last_far_set_size: u32,
    stride_sectors: u64,
    array_chunks: u64,
    used_sectors: u64,
}

impl Raid10 {
    pub fn new(layout: Raid10Layout, disks: u32, chunk_sectors: u64, member_sectors: u64) -> Raid10 {
        assert!(chunk_sectors.is_power_of_two());
        assert!(layout.copies() >= 2 && layout.copies() <= disks);
        let chunk_shift = chunk_sectors.trailing_zeros();
        let nc = layout.near_copies as u64;
        let fc = layout.far_copies as u64;
        // calc_sectors: chunks per device → array chunks → used chunks per device (rounded up).
        let device_chunks = member_sectors >> chunk_shift;
        let array_chunks = (device_chunks / fc) * disks as u64 / nc;
        let used_chunks = (array_chunks * layout.copies() as u64).div_ceil(disks as u64);
        let stride_sectors = if layout.offset {
            chunk_sectors
        } else {
            (used_chunks / fc) << chunk_shift
        };
        let fss = far_set_size(layout, disks);
        Raid10 {
            layout,
            disks,
            chunk_shift,
            far_set_size: fss,
            last_far_set_start: (disks / fss - 1) * fss,
            last_far_set_size: fss + disks % fss,
            stride_sectors,
            array_chunks,
            used_sectors: used_chunks << chunk_shift,
        }
    }

    pub fn layout(&self) -> Raid10Layout {
        self.layout
    }

    pub fn capacity_sectors(&self) -> u64 {
        self.array_chunks << self.chunk_shift
    }

    pub fn member_used_sectors(&self) -> u64 {
        self.used_sectors
    }

    /// The member count md multiplies the chunk by for `optimal_io_size` (raid10_set_io_opt).
    pub fn data_disks_for_io_opt(&self) -> u32 {
        if self.disks % self.layout.near_copies == 0 {
            self.disks / self.layout.near_copies
        } else {
            self.disks
        }
    }

    /// Position of the first near copy: (member, member sector).
    #[inline]
    fn first(&self, sector: u64) -> (u32, u64) {
        let chunk = sector >> self.chunk_shift;
        let offset = sector & ((1 << self.chunk_shift) - 1);
        let x = chunk * self.layout.near_copies as u64;
        let mut row = x / self.disks as u64;
        let dev = (x - row * self.disks as u64) as u32;
        if self.layout.offset {
            row *= self.layout.far_copies as u64;
        }
        (dev, (row << self.chunk_shift) + offset)
    }

    #[inline]
    fn next_far(&self, member: u32) -> u32 {
        let set = member / self.far_set_size;
        let d = member + self.layout.near_copies;
        if self.disks % self.far_set_size != 0 && d > self.last_far_set_start {
            (d - self.last_far_set_start) % self.last_far_set_size + self.last_far_set_start
        } else {
            d % self.far_set_size + self.far_set_size * set
        }
    }

    #[inline]
    pub fn map_first(&self, sector: u64) -> Location {
        let (member, sector) = self.first(sector);
        Location { member, sector }
    }

    // Inlined into `Array::map`, which the planner calls for every raid10 request.
    #[inline(always)]
    pub fn map(&self, sector: u64, out: &mut Copies) {
        let (mut dev, mut base) = self.first(sector);
        for _ in 0..self.layout.near_copies {
            let mut d = dev;
            let mut address = base;
            out.push(Location { member: d, sector: address });
            for _ in 1..self.layout.far_copies {
                d = self.next_far(d);
                address += self.stride_sectors;
                out.push(Location { member: d, sector: address });
            }
            dev += 1;
            if dev == self.disks {
                dev = 0;
                base += 1 << self.chunk_shift;
            }
        }
    }

    /// raid10_find_virt, then confirmed through the forward map (unused space maps nowhere).
    pub fn unmap(&self, member: u32, sector: u64) -> Cell {
        if sector >= self.used_sectors {
            return Cell::Unused;
        }
        let candidate = self.find_virt(member, sector);
        if candidate >= self.capacity_sectors() {
            return Cell::Unused;
        }
        let mut copies = Copies::new();
        self.map(candidate, &mut copies);
        let here = Location { member, sector };
        if copies.as_slice().contains(&here) {
            Cell::Data(candidate)
        } else {
            Cell::Unused
        }
    }

    fn find_virt(&self, member: u32, sector: u64) -> u64 {
        let mut set_start = member / self.far_set_size * self.far_set_size;
        let mut set_size = self.far_set_size;
        if self.disks % self.far_set_size != 0 && member >= self.last_far_set_start {
            set_start = self.last_far_set_start;
            set_size = self.last_far_set_size;
        }
        let nc = self.layout.near_copies;
        let offset = sector & ((1 << self.chunk_shift) - 1);
        let mut dev = member;
        let mut sector = sector;
        let chunk;
        if self.layout.offset {
            let raw = sector >> self.chunk_shift;
            let far_index = (raw % self.layout.far_copies as u64) as u32;
            chunk = raw / self.layout.far_copies as u64;
            let back = far_index * nc;
            dev = if dev >= set_start + back { dev - back } else { dev + set_size - back };
        } else {
            let mut steps = 0;
            while sector >= self.stride_sectors && steps + 1 < self.layout.far_copies {
                sector -= self.stride_sectors;
                dev = if dev < nc + set_start { dev + set_size - nc } else { dev - nc };
                steps += 1;
            }
            chunk = sector >> self.chunk_shift;
        }
        let vchunk = (chunk * self.disks as u64 + dev as u64) / nc as u64;
        (vchunk << self.chunk_shift) + offset
    }

    /// True if losing every member in `failed_mask` leaves some chunk with no copy.
    /// The copy sets repeat with a period of `disks` chunks (near) or rows, so checking one
    /// period of array chunks is exhaustive.
    pub fn loses_data(&self, failed_mask: u64) -> bool {
        let period = (self.disks as u64 * self.layout.far_copies as u64).min(self.array_chunks);
        let mut copies = Copies::new();
        (0..period).any(|chunk| {
            copies.clear();
            self.map(chunk << self.chunk_shift, &mut copies);
            copies.as_slice().iter().all(|l| failed_mask & (1 << l.member) != 0)
        })
    }
}
