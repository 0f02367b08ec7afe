//! Array operations: a host I/O (or md's or a controller's own work) planned as member I/O,
//! issued phase by phase (reads, then writes) and completed when its last block is done.

use super::{ArrayOp, MirrorAccounting, Owner};
use crate::device::Op;
use crate::plan::{IoKind, MemberIo, Request};
use crate::sim::block::sched::{BlockRequest, Scheduler};
use crate::sim::block::BlockRef;
use crate::sim::engine::Simulation;
use crate::sim::host::HostOp;

impl Simulation {
    /// Sends a host I/O (a job's O_DIRECT I/O, or a page-cache bio) to the array's front end.
    pub(crate) fn route_host(&mut self, id: u32) {
        // The array device is busy while a host I/O is at it (iostat's %util of md0).
        self.results.host_issued(self.now);
        self.kind_submit(id);
    }

    /// Plans an array operation and starts it (or queues it for stripe-cache room).
    pub(crate) fn submit_array(&mut self, owner: Owner, op: HostOp, sector: u64, sectors: u64, thread: u32) {
        self.raid.plan_scratch.clear();
        if op == HostOp::Flush {
            self.plan_flush();
        } else {
            let request = Request { write: op == HostOp::Write, sector, sectors };
            self.raid.planner
                .plan(&request, &self.raid.mirrors, &mut self.raid.plan_scratch)
                .expect("host requests lie within the array");
        }
        self.submit_planned(owner, thread, op == HostOp::Flush);
    }

    /// Turns the plan in `plan_scratch` into an array operation and starts it.
    pub(crate) fn submit_planned(&mut self, owner: Owner, thread: u32, flush: bool) {
        let (mut reads, mut writes) = (self.raid.spare_ios.pop().unwrap_or_default(), self.raid.spare_ios.pop().unwrap_or_default());
        reads.extend_from_slice(&self.raid.plan_scratch.reads);
        writes.extend_from_slice(&self.raid.plan_scratch.writes);
        let mut array_op = ArrayOp {
            owner,
            thread,
            flush,
            reads,
            writes,
            pending: 0,
            in_writes: false,
            stripe_heads: 0,
        };
        array_op.stripe_heads = self.kind_stripe_heads();
        let id = self.raid.ops.insert(array_op);
        let heads = self.raid.ops.get(id).stripe_heads;
        if heads > 0 && (heads > self.md.stripe_heads_free || !self.md.stripe_waiters.is_empty()) {
            self.md.stripe_waiters.push_back(id);
        } else {
            self.start_op(id);
        }
    }

    /// md passes a flush to every live member.
    pub(crate) fn plan_flush(&mut self) {
        for member in 0..self.block.members.len() as u32 {
            if !self.raid.planner.is_failed(member) {
                self.raid.plan_scratch.writes.push(MemberIo { member, kind: IoKind::Write, sector: 0, sectors: 0 });
            }
        }
    }

    pub(crate) fn start_op(&mut self, id: u32) {
        let heads = self.raid.ops.get(id).stripe_heads;
        assert!(heads <= self.md.stripe_heads_free, "stripe cache overcommitted");
        if self.md.stripe_heads_free != u32::MAX {
            self.md.stripe_heads_free -= heads;
        }
        let op = self.raid.ops.get_mut(id);
        op.in_writes = op.reads.is_empty();
        self.submit_phase(id);
    }

    pub(crate) fn submit_phase(&mut self, id: u32) {
        let op = self.raid.ops.get_mut(id);
        let ios = if op.in_writes { std::mem::take(&mut op.writes) } else { std::mem::take(&mut op.reads) };
        let (thread, flush) = (op.thread, op.flush);
        if ios.is_empty() {
            self.finish_op(id);
            return;
        }
        let mut pending = 0;
        for io in &ios {
            pending += self.submit_member_io(id, io, thread, flush);
        }
        self.raid.ops.get_mut(id).pending = pending;
        // Under a flushing plug the queues run when the flush ends (`issue_unplugged`).
        if !self.block.plug_flushing {
            for io in &ios {
                self.kick(io.member);
            }
        }
        // Give the vector back so its allocation is reused.
        let op = self.raid.ops.get_mut(id);
        let mut ios = ios;
        ios.clear();
        if op.in_writes { op.writes = ios } else { op.reads = ios }
    }


    /// Queues one member I/O as block requests no larger than `max_sectors_kb` (the block
    /// layer splits larger bios); returns how many.
    pub(crate) fn submit_member_io(&mut self, id: u32, io: &MemberIo, thread: u32, flush: bool) -> u32 {
        let read = !io.kind.is_write();
        let device_op = if flush { Op::Flush } else if read { Op::Read } else { Op::Write };
        let limit = self.config.queue_limits.largest_request_sectors() as u64;
        let (mut sector, end) = (io.sector, io.sector + io.sectors);
        let mut count = 0;
        loop {
            let sectors = (end - sector).min(limit);
            match self.raid.mirrored {
                MirrorAccounting::None => {}
                // md counts every bio in flight on a member in its `nr_pending`, writes and sync
                // I/O too (raid1_write_request, raid1_sync_request and raid10's alike), and only
                // reads that read_balance chose move `next_seq_sect` (update_read_sectors).
                MirrorAccounting::Md if io.kind == IoKind::Read => self.raid.mirrors.issued(io.member, sector, sectors),
                MirrorAccounting::Md => self.raid.mirrors.issued_other(io.member),
                MirrorAccounting::Reads if read => self.raid.mirrors.issued(io.member, sector, sectors),
                MirrorAccounting::Reads => {}
            }
            let block = BlockRef { op: id, member: io.member, read, sector, sectors, thread };
            let block_id = self.block.blocks.insert(block) as u64;
            let request = BlockRequest {
                id: block_id,
                op: device_op,
                sector,
                sectors: sectors as u32,
                thread,
                sync: true,
                inserted: self.now,
            };
            self.block.members[io.member as usize].insert(self.now, request);
            count += 1;
            sector += sectors;
            if sector >= end {
                return count;
            }
        }
    }

    pub(crate) fn block_done(&mut self, block_id: u64) {
        let block = self.block.blocks.get(block_id as u32);
        self.block.members[block.member as usize].scheduler.completed(self.now, block.thread, true);
        self.block_finished(block_id);
    }


    /// A block's data is there (its scheduler was told when its command completed).
    pub(crate) fn block_finished(&mut self, block_id: u64) {
        let block = self.block.blocks.remove(block_id as u32);
        if !matches!(self.raid.ops.get(block.op).owner, Owner::Rebuild(..)) {
            self.raid.foreground_sectors += block.sectors;
            self.raid.foreground_ios += 1;
            self.kind_foreground_done();
        }
        match self.raid.mirrored {
            // md moves `head_position` when a read completes (raid1_end_read_request and
            // end_sync_read call update_head_pos; raid10_end_read_request too).
            MirrorAccounting::Md | MirrorAccounting::Reads if block.read => {
                self.raid.mirrors.completed(block.member, block.sector, block.sectors)
            }
            MirrorAccounting::Md => self.raid.mirrors.completed_other(block.member),
            MirrorAccounting::Reads | MirrorAccounting::None => {}
        }
        let op = self.raid.ops.get_mut(block.op);
        assert!(op.pending > 0, "block completion for a finished operation");
        op.pending -= 1;
        if op.pending > 0 {
            return;
        }
        if !op.in_writes && !op.writes.is_empty() {
            op.in_writes = true;
            self.submit_phase(block.op);
        } else {
            self.finish_op(block.op);
        }
    }

    pub(crate) fn finish_op(&mut self, id: u32) {
        let mut op = self.raid.ops.remove(id);
        // Keep the (empty) member I/O vectors for the next operation. (One at a time: an
        // array of the two, iterated, copied the operation about the stack.)
        op.reads.clear();
        op.writes.clear();
        self.raid.spare_ios.push(std::mem::take(&mut op.reads));
        self.raid.spare_ios.push(std::mem::take(&mut op.writes));
        if op.stripe_heads > 0 {
            self.md.stripe_heads_free += op.stripe_heads;
            self.start_stripe_waiters();
        }
        match op.owner {
            Owner::Host(host_io) => self.kind_host_done(host_io),
            Owner::Destage(destage) => self.cache_destaged(destage),
            Owner::Prefetch => {}
            Owner::Rebuild(start, sectors, rebuild) => self.rebuild_window_done(start, sectors as u64, rebuild),
            Owner::Stripes(batch) => self.stripes_done(batch),
            Owner::InnerStripes(set, batch) => self.inner_stripes_done(set, batch),
            Owner::ReadFix(fix) => self.read_fixed(fix),
            Owner::Rewrite(fix) => self.rewritten(fix),
            Owner::ReadBack(fix) => self.read_back(fix),
            Owner::MdFlush => self.md_flush_done(),
        }
    }

    pub(crate) fn start_stripe_waiters(&mut self) {
        while let Some(&next) = self.md.stripe_waiters.front() {
            if self.raid.ops.get(next).stripe_heads > self.md.stripe_heads_free {
                return;
            }
            self.md.stripe_waiters.pop_front();
            self.start_op(next);
        }
    }

}
