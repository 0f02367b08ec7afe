//! Member I/O plans: what md issues to its members for one array request.
//!
//! A plan is plain data the simulator executes: a phase of member reads, then a phase of member
//! writes (a raid5/6 write's parity cannot be written before its pre-reads return). Plans follow
//! md: reads split at chunk boundaries (or go through the stripe cache in 4 KiB rows when the
//! array is degraded), raid4/5/6 writes choose read-modify-write or reconstruct-write per 4 KiB
//! row by md's cost rule (`handle_stripe_dirtying`), mirrors pick a copy with md's read balancing.
//! Page-sized member I/Os are merged when contiguous, as the block layer does with md's 4 KiB bios.

mod fast;
mod mirror;
pub(crate) mod parity_rows;
mod rebuild;
// Stacked arrays (md arrays of md arrays), planned level by level.
mod stacked;

pub use mirror::{MirrorState, ReadBalance};
pub use parity_rows::{RmwLevel, RowChoice, RowRule, RowWay};

use crate::error::{Error, Result};
use crate::layout::{member_mask, Array, Copies, Level, Location};

/// Why a member I/O is issued.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum IoKind {
    /// A read of requested data.
    Read,
    /// raid4/5/6 write: a pre-read of old data or parity for read-modify-write.
    RmwRead,
    /// raid4/5/6 write: a pre-read of data not being overwritten for reconstruct-write.
    RcwRead,
    /// A read of a surviving block to reconstruct a block on a failed member.
    ReconstructRead,
    /// A write of new data (each mirror copy counts as one).
    Write,
    /// A write of parity P.
    ParityWrite,
    /// A write of the raid6 syndrome Q.
    SyndromeWrite,
    /// Rebuild: a read from a surviving member.
    RebuildRead,
    /// Rebuild: a write to the member being rebuilt.
    RebuildWrite,
}

impl IoKind {
    pub fn is_write(self) -> bool {
        matches!(
            self,
            IoKind::Write | IoKind::ParityWrite | IoKind::SyndromeWrite | IoKind::RebuildWrite
        )
    }
}

/// One member I/O: `sectors` sectors at `sector` of `member`'s data area.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct MemberIo {
    pub member: u32,
    pub kind: IoKind,
    pub sector: u64,
    pub sectors: u64,
}

/// Per-row decisions a plan made, for stats and tests.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct PlanCounts {
    /// 4 KiB rows written by read-modify-write.
    pub rows_rmw: u32,
    /// 4 KiB rows written by reconstruct-write with pre-reads.
    pub rows_rcw: u32,
    /// 4 KiB rows written whole (reconstruct-write with no pre-read).
    pub rows_full: u32,
    /// 4 KiB rows whose requested data had to be reconstructed.
    pub rows_degraded: u32,
    /// 4 KiB rows handled through md's stripe cache (each holds one `stripe_head`).
    pub rows_cached: u32,
}

/// The member I/O for one array request: all `reads` complete before any of `writes` starts.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Plan {
    pub reads: Vec<MemberIo>,
    pub writes: Vec<MemberIo>,
    pub counts: PlanCounts,
}

impl Plan {
    pub fn new() -> Plan {
        Plan::default()
    }
    pub fn clear(&mut self) {
        self.reads.clear();
        self.writes.clear();
        self.counts = PlanCounts::default();
    }
    fn push(&mut self, io: MemberIo) {
        assert!(io.sectors > 0);
        if io.kind.is_write() {
            self.writes.push(io);
        } else {
            self.reads.push(io);
        }
    }
    /// Sorts each phase by member and merges contiguous I/Os of the same kind.
    fn merge(&mut self) {
        merge_ios(&mut self.reads);
        merge_ios(&mut self.writes);
    }
    /// Total sectors moved by member reads and by member writes.
    pub fn sectors(&self) -> (u64, u64) {
        let sum = |ios: &[MemberIo]| ios.iter().map(|io| io.sectors).sum();
        (sum(&self.reads), sum(&self.writes))
    }
}

#[inline]
pub(crate) fn merge_ios(ios: &mut Vec<MemberIo>) {
    // One I/O per member in member order (the usual plan of one piece or one row) is already
    // sorted, and no two of its I/Os can merge.
    if !ios.windows(2).all(|pair| pair[0].member < pair[1].member) {
        sort_and_merge_ios(ios);
    }
}

/// Out of line: most plans need no sorting, and the check above stays small enough to inline.
#[inline(never)]
fn sort_and_merge_ios(ios: &mut Vec<MemberIo>) {
    ios.sort_unstable();
    let mut kept = 0;
    for index in 1..ios.len() {
        let io = ios[index];
        let last = &mut ios[kept];
        if last.member == io.member && last.kind == io.kind && last.sector + last.sectors == io.sector {
            last.sectors += io.sectors;
        } else {
            kept += 1;
            ios[kept] = io;
        }
    }
    ios.truncate(kept + 1);
}

/// An array request.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Request {
    pub write: bool,
    pub sector: u64,
    pub sectors: u64,
}

/// Which planner `Planner::plan` runs: the shortcut for requests within one chunk where it
/// applies, or the general planner alone (what the shortcut is tested against).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Path {
    Fast,
    #[cfg_attr(not(test), allow(dead_code, reason = "only the tests plan without the shortcut"))]
    General,
}

/// Plans array requests for one array with a given set of failed members.
#[derive(Clone, Debug)]
pub struct Planner {
    array: Array,
    failed_mask: u64,
    rmw_level: RmwLevel,
    copies: Copies,
    /// A failed member being rebuilt, and the member sector below which it is back in sync.
    recovering: Option<(u32, u64)>,

    // ---- stacked arrays ----
    /// An inner array's planner: its first member's index among the physical members (md's
    /// read balancing state is kept per physical member). 0 for an array that is not inside a stack.
    member_base: u32,
    /// A stacked array's planners, the outer array's over one per inner array (plan/stacked.rs).
    stack: Option<Box<stacked::StackPlanner>>,
}

impl Planner {
    /// Fails with `DataLoss` if md could not run the array with these members failed.
    pub fn new(array: Array, failed: &[u32], rmw_level: RmwLevel) -> Result<Planner> {
        for &member in failed {
            if member >= array.devices() {
                return Err(Error::request(format!(
                    "failed member {member} does not exist: the array has members 0 to {}",
                    array.devices() - 1
                )));
            }
        }
        if array.loses_data(failed) {
            return Err(Error::data_loss(format!(
                "raid{} {} cannot run with members {failed:?} failed: data is lost",
                array.level().number(),
                array.layout().name()
            )));
        }
        let failed_mask = member_mask(failed, array.devices());
        let stack = match array.stack() {
            Some(stack) => Some(Box::new(stacked::StackPlanner::new(stack, failed_mask, rmw_level)?)),
            None => None,
        };
        Ok(Planner { array, failed_mask, rmw_level, copies: Copies::new(), recovering: None, member_base: 0, stack })
    }

    /// Marks failed `member` as rebuilt below member sector `in_sync_below` (None: no rebuild).
    /// md serves I/O that falls wholly within a recovering device's rebuilt part as if the
    /// device were in sync (raid1 `read_balance` and raid5 `handle_stripe` test the device's
    /// `recovery_offset`); everything else still treats it as failed.
    pub fn set_recovering(&mut self, recovering: Option<(u32, u64)>) {
        if let Some((member, _)) = recovering {
            assert!(self.is_failed(member), "member {member} recovers but has not failed");
        }
        if let Some(stack) = self.stack.as_mut() {
            stack.set_recovering(recovering); // the inner array's own recovery
            return;
        }
        self.recovering = recovering;
    }

    pub fn array(&self) -> &Array {
        &self.array
    }
    pub fn is_failed(&self, member: u32) -> bool {
        self.failed_mask & (1 << member) != 0
    }
    /// Members md cannot use for the 4 KiB row at member sector `sector`: the failed ones, less
    /// a recovering member already rebuilt past the row (`handle_stripe` tests `recovery_offset`).
    pub fn failed_mask_at(&self, sector: u64) -> u64 {
        match self.recovering {
            Some((member, below)) if sector + crate::PAGE_SECTORS <= below => self.failed_mask & !(1 << member),
            _ => self.failed_mask,
        }
    }
    pub fn is_degraded(&self) -> bool {
        self.failed_mask != 0
    }

    /// Checks a request against the array; plans return this error for bad requests.
    pub fn check(&self, request: &Request) -> Result<()> {
        let end = request.sector.checked_add(request.sectors);
        if request.sectors == 0 || end.is_none_or(|end| end > self.array.capacity_sectors()) {
            return Err(Error::request(format!(
                "request of {} sectors at sector {} is outside the array of {} sectors",
                request.sectors,
                request.sector,
                self.array.capacity_sectors()
            )));
        }
        Ok(())
    }

    /// The member I/O md issues for `request`, written into `plan`. With a member recovering,
    /// the plan that uses it stands if all its I/O there lies in the rebuilt part (md decides
    /// per stripe; a request straddling the rebuild point is planned as degraded).
    pub fn plan(&mut self, request: &Request, mirrors: &MirrorState, plan: &mut Plan) -> Result<()> {
        self.plan_by(Path::Fast, request, mirrors, plan)
    }

    fn plan_by(&mut self, path: Path, request: &Request, mirrors: &MirrorState, plan: &mut Plan) -> Result<()> {
        self.check(request)?;
        if let Some(stack) = self.stack.as_mut() {
            plan.clear();
            stack.plan(request, mirrors, plan);
            plan.merge();
            return Ok(());
        }
        if let Some((member, below)) = self.recovering {
            if self.plan_in_sync(path, request, mirrors, plan, member, below) {
                return Ok(());
            }
        }
        self.plan_with_mask(path, request, mirrors, plan);
        Ok(())
    }

    /// Plans as if recovering `member` were in sync; true if the plan's I/O there lies below
    /// `below`, the point the rebuild has reached (else `plan` is to be planned again).
    /// Out of line: only rebuilds take it, and `plan` stays small enough to inline.
    #[inline(never)]
    fn plan_in_sync(
        &mut self,
        path: Path,
        request: &Request,
        mirrors: &MirrorState,
        plan: &mut Plan,
        member: u32,
        below: u64,
    ) -> bool {
        let failed = self.failed_mask;
        self.failed_mask &= !(1 << member);
        self.plan_with_mask(path, request, mirrors, plan);
        self.failed_mask = failed;
        let in_sync = |io: &MemberIo| io.member != member || io.sector + io.sectors <= below;
        plan.reads.iter().chain(&plan.writes).all(in_sync)
    }

    #[inline]
    fn plan_with_mask(&mut self, path: Path, request: &Request, mirrors: &MirrorState, plan: &mut Plan) {
        plan.clear();
        let planned = path == Path::Fast && self.plan_within_chunk(request, mirrors, plan);
        if !planned {
            self.plan_general(request, mirrors, plan);
        }
        debug_assert!(plan.reads.iter().chain(&plan.writes).all(|io| !self.is_failed(io.member)));
    }

    /// Plans any request: chunk pieces, or 4 KiB rows through the stripe cache.
    /// Kept out of line so the shortcut's callers stay small.
    #[inline(never)]
    fn plan_general(&mut self, request: &Request, mirrors: &MirrorState, plan: &mut Plan) {
        match (self.array.level(), request.write) {
            (Level::Raid4 | Level::Raid5 | Level::Raid6, false) if !self.is_degraded() => {
                self.plan_chunk_pieces(request, mirrors, plan)
            }
            (Level::Raid4 | Level::Raid5 | Level::Raid6, _) => {
                parity_rows::plan_rows(&self.array, self.failed_mask, self.rmw_level, request, plan)
            }
            (Level::Raid1, _) => self.plan_mirrored(request.sector, request.sectors, request.write, mirrors, plan),
            (Level::Raid0 | Level::Raid10, _) => self.plan_chunk_pieces(request, mirrors, plan),
        }
        plan.merge();
    }

    /// Splits at chunk boundaries and sends each piece to its member(s).
    fn plan_chunk_pieces(&mut self, request: &Request, mirrors: &MirrorState, plan: &mut Plan) {
        let chunk = self.array.chunk_sectors();
        let mut sector = request.sector;
        let end = request.sector + request.sectors;
        while sector < end {
            let piece = (chunk - sector % chunk).min(end - sector);
            self.plan_mirrored(sector, piece, request.write, mirrors, plan);
            sector += piece;
        }
    }

    /// One piece that lies within a chunk: write every live copy, or read the chosen one.
    #[inline]
    fn plan_mirrored(&mut self, sector: u64, sectors: u64, write: bool, mirrors: &MirrorState, plan: &mut Plan) {
        self.array.map(sector, &mut self.copies);
        let live = |l: &Location| self.failed_mask & (1 << l.member) == 0;
        if write {
            for location in self.copies.as_slice().iter().filter(|l| live(l)) {
                plan.push(MemberIo { member: location.member, kind: IoKind::Write, sector: location.sector, sectors });
            }
            return;
        }
        let layout = self.array.raid10_layout();
        let chosen = if self.member_base == 0 {
            mirrors.choose(self.copies.as_slice(), self.failed_mask, sectors, layout)
        } else {
            self.choose_shifted(mirrors, sectors)
        };
        let location = chosen.expect("Planner::new rejected failure sets that lose data");
        plan.push(MemberIo { member: location.member, kind: IoKind::Read, sector: location.sector, sectors });
    }

    /// The I/O to rebuild `sectors` sectors of `target` from `sector` of its data area.
    pub fn plan_rebuild(&mut self, target: u32, sector: u64, sectors: u64, plan: &mut Plan) -> Result<()> {
        plan.clear();
        if let Some(stack) = self.stack.as_mut() {
            stack.plan_rebuild(target, sector, sectors, plan)?;
            plan.merge();
            return Ok(());
        }
        rebuild::plan_rebuild(&self.array, self.failed_mask, target, sector, sectors, plan)?;
        plan.merge();
        Ok(())
    }

    /// md's answer to a read error on `member`: read what the other members hold
    /// of `sectors` at `sector` (its mirror copy, or the rest of each stripe to recompute it),
    /// then write it back to `member` (raid5.c handle_stripe's R5_ReadError → R5_ReWrite;
    /// raid1.c fix_read_error). The plan is the rebuild's with `member` counted as failed.
    pub fn plan_read_fix(&mut self, member: u32, sector: u64, sectors: u64, plan: &mut Plan) -> Result<()> {
        plan.clear();
        rebuild::plan_rebuild(&self.array, self.failed_mask | (1 << member), member, sector, sectors, plan)?;
        plan.merge();
        Ok(())
    }
}

#[cfg(test)]
mod tests;
