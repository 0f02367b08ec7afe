//! RAID0 with md's zones, so members of unequal size are used to the full.
//!
//! Restates kernel `drivers/md/raid0.c` `create_strip_zones`, `find_zone` and `map_sector`.
//! Zone z spans the members larger than the previous zone's smallest member; ORIG picks the
//! member from the absolute array chunk, ALT from the chunk within the zone (raid0.h).

use super::names::Raid0Layout;
use super::{Cell, Location};

#[derive(Clone, Debug)]
struct Zone {
    /// First array sector past this zone (md `zone_end`).
    end_sector: u64,
    /// Member sector where the zone starts on each of its members (md `dev_start`).
    dev_start: u64,
    /// Members in raid-disk order.
    members: Vec<u32>,
}

#[derive(Clone, Debug)]
pub struct Raid0 {
    layout: Raid0Layout,
    chunk_shift: u32,
    zones: Vec<Zone>,
    member_rounded: Vec<u64>,
}

impl Raid0 {
    pub fn new(requested: Raid0Layout, chunk_sectors: u64, member_sectors: &[u64]) -> Raid0 {
        assert!(chunk_sectors.is_power_of_two());
        // md rounds every member down to a whole chunk first.
        let rounded: Vec<u64> =
            member_sectors.iter().map(|s| s / chunk_sectors * chunk_sectors).collect();
        let mut zones = Vec::new();
        let mut dev_start = 0u64;
        let mut end_sector = 0u64;
        loop {
            let members: Vec<u32> =
                (0..rounded.len() as u32).filter(|&m| rounded[m as usize] > dev_start).collect();
            if members.is_empty() {
                break;
            }
            let smallest = members.iter().map(|&m| rounded[m as usize]).min().expect("non-empty");
            end_sector += (smallest - dev_start) * members.len() as u64;
            zones.push(Zone { end_sector, dev_start, members });
            dev_start = smallest;
        }
        assert!(zones.len() <= member_sectors.len());
        // One zone, or a second zone of one member: both layouts agree, md forces ORIG.
        let layout = if zones.len() < 2 || zones[1].members.len() == 1 {
            Raid0Layout::Original
        } else {
            requested
        };
        Raid0 { layout, chunk_shift: chunk_sectors.trailing_zeros(), zones, member_rounded: rounded }
    }

    pub fn capacity_sectors(&self) -> u64 {
        self.zones.last().map_or(0, |z| z.end_sector)
    }

    pub fn member_used_sectors(&self, member: u32) -> u64 {
        self.member_rounded[member as usize]
    }

    #[inline]
    pub fn map(&self, sector: u64) -> Location {
        let mut zone_start = 0;
        let mut index = 0;
        while sector >= self.zones[index].end_sector {
            zone_start = self.zones[index].end_sector;
            index += 1;
        }
        let zone = &self.zones[index];
        let in_zone = sector - zone_start;
        let width = zone.members.len() as u64;
        let offset = sector & ((1 << self.chunk_shift) - 1);
        let row = (in_zone >> self.chunk_shift) / width;
        let chunk_for_member = match self.layout {
            Raid0Layout::Original => sector >> self.chunk_shift,
            Raid0Layout::Alternate => in_zone >> self.chunk_shift,
        };
        let member = zone.members[(chunk_for_member % width) as usize];
        Location { member, sector: zone.dev_start + (row << self.chunk_shift) + offset }
    }

    pub fn unmap(&self, member: u32, sector: u64) -> Cell {
        if sector >= self.member_rounded[member as usize] {
            return Cell::Unused;
        }
        let mut zone_start = 0;
        for zone in &self.zones {
            let zone_rows_end = zone.dev_start + (zone.end_sector - zone_start) / zone.members.len() as u64;
            if sector < zone_rows_end {
                return self.unmap_in_zone(zone, zone_start, member, sector);
            }
            zone_start = zone.end_sector;
        }
        unreachable!("a sector below the rounded size lies in some zone")
    }

    fn unmap_in_zone(&self, zone: &Zone, zone_start: u64, member: u32, sector: u64) -> Cell {
        let width = zone.members.len() as u64;
        let position = zone.members.iter().position(|&m| m == member).expect("member in zone") as u64;
        let row = (sector - zone.dev_start) >> self.chunk_shift;
        let offset = sector & ((1 << self.chunk_shift) - 1);
        // Search the row's chunks for the one md puts on this member.
        for column in 0..width {
            let in_zone_chunk = row * width + column;
            let array_sector = zone_start + (in_zone_chunk << self.chunk_shift) + offset;
            let chunk_for_member = match self.layout {
                Raid0Layout::Original => array_sector >> self.chunk_shift,
                Raid0Layout::Alternate => in_zone_chunk,
            };
            if chunk_for_member % width == position {
                return Cell::Data(array_sector);
            }
        }
        unreachable!("each member of a zone holds one chunk of each row")
    }
}
