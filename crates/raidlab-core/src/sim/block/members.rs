//! One member of the array as the engine sees it: a block-layer scheduler in front of a drive,
//! the commands in flight, and the statistics fio reports per disk.

use crate::device::behaviour::Fault;
use crate::device::{AnyDrive, Command, Completion, Drive, Op};
use crate::sim::block::sched::{AnyScheduler, BlockRequest, Scheduler};
use crate::time::Nanos;

/// Per-member counters (fio `disk_util` and more).
#[derive(Clone, Debug, Default, PartialEq)]
pub struct MemberStats {
    pub read_ios: u64,
    pub write_ios: u64,
    pub flush_ios: u64,
    pub read_sectors: u64,
    pub write_sectors: u64,
    /// Block requests merged into another before reaching the drive (`/sys/block/*/stat`
    /// read and write merges): `read_ios - read_merges` requests reached the drive.
    pub read_merges: u64,
    pub write_merges: u64,
    /// Requests queued or in the drive, integrated over time (request·ns).
    pub queue_area: u128,
    pub busy_ns: Nanos,
    /// Read and write requests in flight integrated over time (request·ns): the sum of their
    /// times from queueing to completion, which is what /proc/diskstats' read and write ticks
    /// count (Documentation/admin-guide/iostats.rst, fields 4 and 8), so `iostat -x`'s
    /// r_await and w_await are these over the requests.
    pub read_area: u128,
    pub write_area: u128,
}

/// The block requests behind one drive command: the first in place (a command is usually
/// one request, and reading it then needs no second load), any merged into it after.
#[derive(Debug, Default)]
struct SlotIds {
    first: u64,
    merged: Vec<u64>,
    /// The command's operation (which in-flight count its requests leave).
    op: Option<Op>,
}

impl SlotIds {
    fn set(&mut self, ids: &[u64]) {
        debug_assert!(self.merged.is_empty(), "a slot in use");
        self.first = ids[0];
        self.merged.extend_from_slice(&ids[1..]);
    }
    fn len(&self) -> usize {
        1 + self.merged.len()
    }
}

pub struct Member {
    pub scheduler: AnyScheduler,
    pub drive: AnyDrive,
    /// Added to member sectors to get drive sectors (md's data offset).
    pub lba_offset: u64,
    depth: u32,
    in_drive: u32,
    /// Block request ids behind each command slot.
    slots: Vec<SlotIds>,
    free_slots: Vec<u32>,
    /// When a DriveWake event is pending for this member.
    pub wake_at: Option<Nanos>,
    pub timer_at: Option<Nanos>,
    outstanding: u64,
    /// Reads and writes among `outstanding` (iostat's awaits).
    outstanding_reads: u64,
    outstanding_writes: u64,
    last_change: Nanos,
    pub stats: MemberStats,
    merged: Vec<u64>,
    completions: Vec<Completion>,
    /// Block request ids finished by the last `advance`.
    pub done: Vec<u64>,
    /// Requests beyond `nr_requests`, waiting (unsorted, unmerged) to enter the scheduler.
    overflow: std::collections::VecDeque<BlockRequest>,
    /// `nr_requests` bounds the requests in the scheduler *and* at the driver: a request holds
    /// its tag (blk-mq: the scheduler tag from `blk_mq_get_request` until
    /// `blk_mq_free_request` at completion) while queued and while the drive has it.
    nr_requests: usize,
    // ---- commands that failed (device/behaviour.rs) ----
    /// Block requests among `done` whose command failed, with the fault.
    pub faulted: Vec<(u64, Fault)>,
    command_faults: Vec<(u64, Fault)>,
}

impl Member {
    /// `depth_cap` (0: none) limits the commands the drive is given below its own queue depth
    /// (the SCSI device `queue_depth`, or a controller's commands per drive).
    pub fn new(scheduler: AnyScheduler, drive: AnyDrive, lba_offset: u64, nr_requests: u32, depth_cap: u32) -> Member {
        assert!(nr_requests >= 1, "nr_requests");
        let own = drive.queue_depth();
        let depth = if depth_cap > 0 { own.min(depth_cap) } else { own };
        assert!(depth >= 1, "drive queue depth");
        Member {
            scheduler,
            drive,
            lba_offset,
            depth,
            in_drive: 0,
            slots: (0..depth).map(|_| SlotIds::default()).collect(),
            free_slots: (0..depth).rev().collect(),
            wake_at: None,
            timer_at: None,
            outstanding: 0,
            outstanding_reads: 0,
            outstanding_writes: 0,
            last_change: 0,
            stats: MemberStats::default(),
            merged: Vec::with_capacity(64),
            completions: Vec::with_capacity(depth as usize),
            done: Vec::with_capacity(depth as usize),
            overflow: std::collections::VecDeque::new(),
            nr_requests: nr_requests as usize,
            faulted: Vec::new(),
            command_faults: Vec::new(),
        }
    }

    fn account(&mut self, now: Nanos) {
        assert!(now >= self.last_change, "time went backwards");
        self.stats.queue_area += self.outstanding as u128 * (now - self.last_change) as u128;
        self.stats.read_area += self.outstanding_reads as u128 * (now - self.last_change) as u128;
        self.stats.write_area += self.outstanding_writes as u128 * (now - self.last_change) as u128;
        self.last_change = now;
    }

    /// Queues a block request in the scheduler.
    pub fn insert(&mut self, now: Nanos, request: BlockRequest) {
        self.account(now);
        self.outstanding += 1;
        match request.op {
            Op::Read => {
                self.outstanding_reads += 1;
                self.stats.read_ios += 1;
                self.stats.read_sectors += request.sectors as u64;
            }
            Op::Write => {
                self.outstanding_writes += 1;
                self.stats.write_ios += 1;
                self.stats.write_sectors += request.sectors as u64;
            }
            Op::Flush => self.stats.flush_ios += 1,
        }
        // Tags held before this request: every request inserted and not completed, less those
        // still waiting for a tag.
        let tagged = self.outstanding as usize - 1 - self.overflow.len();
        if tagged >= self.nr_requests || !self.overflow.is_empty() {
            self.overflow.push_back(request);
        } else {
            self.scheduler.insert(now, request);
        }
    }

    /// Moves requests waiting for a tag into the scheduler while tags are free. Inlined for
    /// the usual case, nothing waiting (every dispatch asks, twice), the loop out of line.
    #[inline(always)]
    fn refill(&mut self, now: Nanos) {
        if !self.overflow.is_empty() {
            self.refill_waiting(now);
        }
    }

    #[inline(never)]
    fn refill_waiting(&mut self, now: Nanos) {
        while !self.overflow.is_empty() && (self.outstanding as usize - self.overflow.len()) < self.nr_requests {
            let Some(request) = self.overflow.pop_front() else { return };
            self.scheduler.insert(now, request);
        }
    }

    /// Moves requests from the scheduler into free drive slots, at most `budget` commands
    /// (a controller's total; decremented per command). Inlined into the engine's `kick`, its
    /// one caller.
    #[inline]
    pub fn dispatch(&mut self, now: Nanos, budget: &mut u32) {
        self.refill(now);
        while self.in_drive < self.depth && *budget > 0 {
            self.merged.clear();
            let Some(dispatch) = self.scheduler.dispatch(now, &mut self.merged) else { break };
            assert!(!self.merged.is_empty(), "a dispatch covers at least one request");
            let merges = self.merged.len() as u64 - 1;
            match dispatch.op {
                Op::Read => self.stats.read_merges += merges,
                Op::Write => self.stats.write_merges += merges,
                Op::Flush => {}
            }
            let slot = self.free_slots.pop().expect("a free slot below depth");
            self.slots[slot as usize].set(&self.merged);
            self.slots[slot as usize].op = Some(dispatch.op);
            self.in_drive += 1;
            *budget -= 1;
            let command = Command {
                id: slot as u64,
                op: dispatch.op,
                sector: dispatch.sector + self.lba_offset,
                sectors: dispatch.sectors,
            };
            self.drive.submit(now, command);
            self.refill(now);
        }
    }

    /// Advances the drive to `now` and lists the block request ids it finished in `done`
    /// (replacing the last list); returns how many.
    pub fn advance(&mut self, now: Nanos) -> usize {
        self.completions.clear();
        self.done.clear();
        self.drive.advance(now, &mut self.completions);
        self.faulted.clear();
        if let Some(drive) = self.drive.behaved() {
            self.command_faults.clear();
            drive.take_faults(&mut self.command_faults);
        }
        for index in 0..self.completions.len() {
            let completion = self.completions[index];
            // The engine advances a drive at each time `next_event` names, so a completion
            // due earlier was missed (a drive deferred work it promised not to).
            assert_eq!(completion.time, now, "a completion reported late or early");
            let slot = completion.id as u32;
            assert!(slot < self.depth, "unknown command slot");
            debug_assert!(!self.free_slots.contains(&slot), "completion of a free slot");
            self.account(now);
            let ids = &mut self.slots[slot as usize];
            if let Some(&(_, fault)) = self.command_faults.iter().find(|f| f.0 == completion.id) {
                self.faulted.push((ids.first, fault));
                self.faulted.extend(ids.merged.iter().map(|&id| (id, fault)));
            }
            self.outstanding -= ids.len() as u64;
            match ids.op.take() {
                Some(Op::Read) => self.outstanding_reads -= ids.len() as u64,
                Some(Op::Write) => self.outstanding_writes -= ids.len() as u64,
                _ => {}
            }
            self.done.push(ids.first);
            // One id at a time: there are seldom more, and a copy of the slice calls memcpy.
            for &id in ids.merged.iter() {
                self.done.push(id);
            }
            ids.merged.clear();
            self.free_slots.push(slot);
            self.in_drive -= 1;
        }
        self.done.len()
    }

    /// The fault of a block request the last `advance` finished, if its command failed.
    pub fn fault_of(&self, id: u64) -> Option<Fault> {
        self.faulted.iter().find(|f| f.0 == id).map(|f| f.1)
    }

    /// Whether requests wait in the scheduler or for a tag.
    pub fn has_waiting(&self) -> bool {
        self.scheduler.queued() > 0 || !self.overflow.is_empty()
    }

    /// Commands the drive has now.
    pub fn in_drive(&self) -> u32 {
        self.in_drive
    }

    /// Checks the queue bookkeeping: tags within `nr_requests`, commands within the depth.
    pub fn check(&self) {
        assert!(self.in_drive <= self.depth, "more commands than the drive's depth");
        assert!(self.outstanding as usize >= self.overflow.len(), "requests counted");
        assert!(self.outstanding as usize - self.overflow.len() <= self.nr_requests, "more tags than nr_requests");
    }

    pub fn finish(&mut self, now: Nanos) {
        self.account(now);
        self.drive.run_to(now);
        self.stats.busy_ns = self.drive.busy_nanos();
    }
}
