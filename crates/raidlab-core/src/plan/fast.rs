//! The shortcut for the common request: one that lies within one chunk.
//!
//! Such a request is a single piece for md, so most of the general planner's work (splitting at
//! chunk boundaries, sorting and merging member I/Os) has nothing to do. On raid4/5/6 with no
//! member failed, a read is one member read, and a write of whole pages touches the same data
//! block of every 4 KiB row it covers, so md's rmw/rcw choice is the same for each row and is
//! made once. Everything else (degraded parity arrays, partial pages, requests crossing a chunk)
//! goes to the general planner. `tests` checks the shortcut against it on random arrays.

use super::{IoKind, MemberIo, MirrorState, Plan, Planner, Request, RmwLevel};
use crate::bits::members;
use crate::layout::Level;
use crate::PAGE_SECTORS;

impl Planner {
    /// Plans `request` if it lies within one chunk and has a shortcut; false (with `plan` left
    /// empty) sends it to the general planner. The plan is the one the general planner makes.
    #[inline]
    pub(super) fn plan_within_chunk(&mut self, request: &Request, mirrors: &MirrorState, plan: &mut Plan) -> bool {
        debug_assert!(plan.reads.is_empty() && plan.writes.is_empty());
        let chunk = self.array.chunk_sectors();
        debug_assert!(chunk.is_power_of_two());
        if (request.sector & (chunk - 1)) + request.sectors > chunk {
            return false;
        }
        match self.array.level() {
            // Degraded: rows go through the stripe cache, and reads may need reconstruction.
            Level::Raid4 | Level::Raid5 | Level::Raid6 if self.failed_mask != 0 => false,
            Level::Raid4 | Level::Raid5 | Level::Raid6 if request.write => self.plan_page_write(request, plan),
            Level::Raid4 | Level::Raid5 | Level::Raid6 => {
                // One live copy: md's read balancing has nothing to choose.
                let location = self.array.map_primary(request.sector);
                let (member, sector, sectors) = (location.member, location.sector, request.sectors);
                plan.push(MemberIo { member, kind: IoKind::Read, sector, sectors });
                true
            }
            Level::Raid0 | Level::Raid1 | Level::Raid10 => {
                self.plan_mirrored(request.sector, request.sectors, request.write, mirrors, plan);
                plan.merge();
                true
            }
        }
    }

    /// A write of whole pages within one chunk of a raid4/5/6 array with no member failed.
    /// Every row it covers has the one data block overwritten, so md's costs are the same in
    /// each: rmw pre-reads that block and the parity, rcw the row's other data blocks.
    fn plan_page_write(&self, request: &Request, plan: &mut Plan) -> bool {
        if request.sector % PAGE_SECTORS != 0 || request.sectors % PAGE_SECTORS != 0 {
            return false;
        }
        assert_eq!(self.failed_mask, 0, "the shortcut plans only arrays with no member failed");
        let place = self.array.map_with_parity(request.sector).expect("raid4/5/6 rows have parity");
        let bit = |member: u32| 1u64 << member;
        let written_mask = bit(place.data.member) | bit(place.p) | place.q.map_or(0, bit);
        let all_mask = u64::MAX >> (u64::BITS - self.array.devices());
        debug_assert_eq!(written_mask.count_ones(), 1 + self.array.level().parity_count());
        // Each of the written block, P and Q is on its own live member, so costs 1.
        let rmw_cost = 1 + self.array.level().parity_count();
        let rcw_cost = self.array.data_disks() - 1;
        let use_rmw = match self.rmw_level {
            RmwLevel::Disable => false,
            RmwLevel::Enable => rmw_cost < rcw_cost,
            RmwLevel::Prefer => rmw_cost <= rcw_cost,
        };
        let rows = (request.sectors / PAGE_SECTORS) as u32;
        plan.counts.rows_cached = rows;
        let (sector, sectors) = (place.data.sector, request.sectors);
        let io = |member: u32, kind: IoKind| MemberIo { member, kind, sector, sectors };
        if use_rmw {
            plan.counts.rows_rmw = rows;
            members(written_mask).for_each(|member| plan.push(io(member, IoKind::RmwRead)));
        } else if rcw_cost == 0 {
            plan.counts.rows_full = rows;
        } else {
            plan.counts.rows_rcw = rows;
            members(all_mask & !written_mask).for_each(|member| plan.push(io(member, IoKind::RcwRead)));
        }
        for member in members(written_mask) {
            let kind = if member == place.p {
                IoKind::ParityWrite
            } else if Some(member) == place.q {
                IoKind::SyndromeWrite
            } else {
                IoKind::Write
            };
            plan.push(io(member, kind));
        }
        true
    }
}

#[cfg(test)]
mod tests;
