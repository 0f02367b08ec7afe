//! What md does when a member's command fails (device/behaviour.rs decides when).
//!
//! - A read error (the drive gave up within the host's timeout: ERC, or a short recovery): md
//!   reads what the other members hold and computes the block, completes the read with it,
//!   writes it back to the member and reads it back (raid5.c: `raid5_end_read_request` sets
//!   R5_ReadError; `handle_stripe` computes the block, sets R5_ReWrite and R5_Wantwrite, then
//!   R5_Wantread, and the read-back's completion logs "read error corrected"; raid1.c:
//!   `handle_read_error` → `fix_read_error` reads the other mirror, writes, re-reads). A
//!   raid4/5/6 host read that took md's chunk-aligned path is first retried through the stripe
//!   cache (`raid5_align_endio` → `add_bio_to_retry` → `retry_aligned_read`), so it meets the
//!   bad sector twice. The drive stays in the array.
//! - A timeout (the drive was still recovering when the host's timer expired): the I/O fails;
//!   md's attempt to write the block back fails on a drive that does not answer, and md fails
//!   the member (`md_error`): degraded, then recovery onto a spare or replacement (raid/rebuild.rs).
//!   The failed read and everything else the drive held are served from the other members.
//!
//! Left out: the SCSI error handler's own time (aborts and resets after the timeout), md's
//! per-device count of corrected errors (`max_corrected_read_errors`, 20), bad-block records,
//! and a controller's own correction (behind a controller a read error completes as it is;
//! only the drop is modelled).

use crate::sim::engine::config::ArrayEventKind;
use crate::sim::engine::results::DriveEvent;
use crate::sim::engine::Simulation;
use crate::sim::raid::{Owner, RaidKind};
use crate::device::behaviour::Fault;
use crate::sim::block::sched::Scheduler;
use crate::layout::Level;
use crate::plan::{IoKind, MemberIo};
use std::collections::HashSet;

/// One correction in progress: the member and its sectors.
#[derive(Clone, Copy, Debug)]
struct Fix {
    member: u32,
    sector: u64,
    sectors: u64,
    /// The failed read (a block id) the reconstruction completes.
    block: u64,
    rewrite: bool,
}

#[derive(Default)]
pub struct FaultState {
    fixes: Vec<Option<Fix>>,
    /// Blocks md already retried through the stripe cache.
    retried: HashSet<u64>,
    pub events: Vec<DriveEvent>,
}

impl FaultState {
    fn add(&mut self, fix: Fix) -> u32 {
        if let Some(free) = self.fixes.iter().position(Option::is_none) {
            self.fixes[free] = Some(fix);
            return free as u32;
        }
        self.fixes.push(Some(fix));
        self.fixes.len() as u32 - 1
    }
}

impl Simulation {
    fn drive_event(&mut self, member: u32, what: &'static str) {
        self.md.faults.events.push(DriveEvent { at_ns: self.now, member, what });
    }

    /// A scripted latent sector error: the member's next read meets it.
    pub(crate) fn latent_error(&mut self, member: u32) {
        if let Some(drive) = self.block.members[member as usize].drive.behaved() {
            drive.arm_latent_error();
            self.drive_event(member, "latent-error");
        }
    }

    /// A replacement takes the member's place: its drive starts afresh.
    pub(crate) fn drive_replaced(&mut self, member: u32) {
        let now = self.now;
        if let Some(drive) = self.block.members[member as usize].drive.behaved() {
            drive.replaced(now);
            self.kick(member);
        }
    }

    /// A block request whose command failed.
    #[inline(never)]
    pub(crate) fn block_faulted(&mut self, member: u32, block_id: u64, fault: Fault) {
        let block = *self.block.blocks.get(block_id as u32);
        if fault == Fault::Timeout {
            self.drive_event(member, "timeout-dropped");
            self.array_change(ArrayEventKind::Fail(member));
        } else if fault == Fault::ReadError {
            self.drive_event(member, "read-error");
        }
        if self.kind != RaidKind::Md {
            self.kind_block_done(member, block_id);
            return;
        }
        let owner = self.raid.ops.get(block.op).owner;
        if !block.read || self.results.data_loss.is_some() || matches!(owner, Owner::Rebuild(..)) {
            // A write to a member md has failed is skipped (the others hold the stripe); a
            // rebuild read that fails is not modelled further (md records a bad block).
            self.block_done(block_id);
            return;
        }
        self.block.members[member as usize].scheduler.completed(self.now, block.thread, true);
        if fault == Fault::ReadError && self.took_aligned_read(owner) && self.md.faults.retried.insert(block_id) {
            // raid5_align_endio: the aligned read failed; md retries it through the stripe cache.
            self.drive_event(member, "retry");
            let request = crate::sim::block::sched::BlockRequest {
                id: block_id,
                op: crate::device::Op::Read,
                sector: block.sector,
                sectors: block.sectors as u32,
                thread: block.thread,
                sync: true,
                inserted: self.now,
            };
            self.block.members[member as usize].insert(self.now, request);
            self.kick(member);
            return;
        }
        self.md.faults.retried.remove(&block_id);
        let mut failed = self.raid.failed.clone();
        if !failed.contains(&member) {
            failed.push(member);
        }
        if self.raid.planner.array().loses_data(&failed) {
            // Nothing left to compute the block from: md fails the member ("read error not
            // correctable"), which loses the array.
            self.array_change(ArrayEventKind::Fail(member));
            self.block_finished(block_id);
            return;
        }
        let rewrite = fault == Fault::ReadError && !self.raid.failed.contains(&member);
        let fix = Fix { member, sector: block.sector, sectors: block.sectors, block: block_id, rewrite };
        self.raid.plan_scratch.clear();
        self.raid.planner.plan_read_fix(member, block.sector, block.sectors, &mut self.raid.plan_scratch).expect("a read within the member");
        self.raid.plan_scratch.writes.clear();
        let index = self.md.faults.add(fix);
        self.submit_planned(Owner::ReadFix(index), block.thread, false);
    }

    /// Whether md read `owner`'s data by its chunk-aligned path: a host read of a raid4/5/6 array
    /// that is not degraded, within one chunk (raid5_make_request: `mddev->degraded == 0`;
    /// raid5_read_one_chunk: `in_chunk_boundary`).
    fn took_aligned_read(&self, owner: Owner) -> bool {
        let array = self.raid.planner.array();
        let Owner::Host(id) = owner else { return false };
        if !matches!(array.level(), Level::Raid4 | Level::Raid5 | Level::Raid6) || !self.raid.failed.is_empty() {
            return false;
        }
        let io = self.host.ios.get(id);
        let chunk = array.chunk_sectors();
        io.sector % chunk + io.sectors <= chunk
    }

    /// The block is computed from the other members: the read completes, and md writes it back.
    #[inline(never)]
    pub(crate) fn read_fixed(&mut self, index: u32) {
        let fix = self.md.faults.fixes[index as usize].expect("a fix in progress");
        self.block_finished(fix.block);
        if fix.rewrite {
            self.fix_step(index, IoKind::Write, Owner::Rewrite(index));
        } else {
            self.md.faults.fixes[index as usize] = None;
        }
    }

    /// The rewrite is done: md reads the sectors back (R5_ReWrite then R5_Wantread).
    #[inline(never)]
    pub(crate) fn rewritten(&mut self, index: u32) {
        self.fix_step(index, IoKind::Read, Owner::ReadBack(index));
    }

    /// md's next step of a fix, from raid5d: `kind` of the fixed sectors on their member,
    /// unless the member failed or the array lost data meanwhile (the fix is then dropped).
    fn fix_step(&mut self, index: u32, kind: IoKind, owner: Owner) {
        let fix = self.md.faults.fixes[index as usize].expect("a fix in progress");
        if self.raid.failed.contains(&fix.member) || self.results.data_loss.is_some() {
            self.md.faults.fixes[index as usize] = None;
            return;
        }
        self.raid.plan_scratch.clear();
        let io = MemberIo { member: fix.member, kind, sector: fix.sector, sectors: fix.sectors };
        if kind == IoKind::Write { self.raid.plan_scratch.writes.push(io) } else { self.raid.plan_scratch.reads.push(io) }
        self.submit_planned(owner, crate::sim::block::RAID5D_THREAD, false);
    }

    /// The read-back succeeded: "read error corrected".
    #[inline(never)]
    pub(crate) fn read_back(&mut self, index: u32) {
        let fix = self.md.faults.fixes[index as usize].take().expect("a fix in progress");
        self.drive_event(fix.member, "corrected");
    }
}
