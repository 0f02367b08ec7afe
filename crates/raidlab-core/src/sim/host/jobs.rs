//! The host: jobs of threads that issue I/O as fio or sysbench would.
//!
//! Closed loop: each thread keeps `iodepth` I/Os outstanding and issues the next as one
//! completes. Open loop (`rate_iops`): each thread's arrivals follow a linear or Poisson
//! process and wait for a free slot when the depth is full. fio's `fsync=N` makes a thread
//! drain its I/O and flush after N writes; sysbench's `--file-fsync-freq=N` makes the next
//! `files` requests of the job, from any thread, one fsync per file.

use crate::sim::offsets::{self, Region, Zipf};
use crate::rng::Prng;
use crate::sim::workload::{Cursor, FsyncScope, Job, MixChoice};
use crate::time::Nanos;
use super::stream::{pick_size, served_file, strided, zoned_offset, FileService, ZbdZones};

/// What a host I/O does.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum HostOp {
    Read,
    Write,
    Flush,
}

/// A host I/O about to be issued: op and byte range on the array.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct HostIntent {
    pub op: HostOp,
    pub offset_bytes: u64,
    pub bytes: u64,
}

#[derive(Clone, Debug)]
pub struct ThreadState {
    pub outstanding: u32,
    pub issued: u64,
    pub bytes_issued: u64,
    writes_since_fsync: u32,
    /// Waiting for outstanding I/O to drain before a flush (fio fsync).
    pub draining: bool,
    pub flushing: bool,
    pub done: bool,
    /// Open loop: arrivals waiting for a free slot.
    pub backlog: u32,
    cursor_bytes: u64,
    rng: Prng,
    /// fio end_fsync: whether the thread wrote, and whether its final fsync was issued.
    wrote: bool,
    end_synced: bool,
    // -- fio stream options --
    /// Data writes issued (what `verify` reads back).
    writes_issued: u64,
    /// Completed data I/Os since the last think pause (fio `thinktime_blocks_counter`).
    since_think: u32,
    /// The thread asked for a think pause; the engine schedules its end.
    pause_pending: bool,
    /// Pausing (fio `thinktime`): no I/O until the engine resumes the thread.
    pub thinking: bool,
    /// The queue filled up and waits to drain to `iodepth_low`.
    refill_wait: bool,
    /// Reading back what it wrote (fio `verify`), with this many reads left.
    verifying: bool,
    verify_left: u64,
    /// The PRNG as the thread started: replaying it gives the writes in the order issued.
    start_rng: Prng,
    /// Data I/Os issued, as fio's `flow` counts them (td->flow_counter).
    pub flow_issued: u64,
    /// fio's file service: a position per file, the current file and its I/Os so far.
    files: FileService,
}

pub struct JobState {
    pub job: Job,
    pub region: Region,
    pub threads: Vec<ThreadState>,
    shared_cursor_bytes: u64,
    reads: u64,
    writes: u64,
    requests: u64,
    pending_fsyncs: u32,
    dirty: bool,
    pub issued_total: u64,
    zipf: Option<Zipf>,
    // -- fio stream options --
    zbd: ZbdZones,
    /// When the job's threads started (None: its group has not started yet).
    pub started_ns: Option<Nanos>,
    /// When its runtime ends (`Nanos::MAX` without a runtime).
    pub deadline_ns: Nanos,
    /// Every thread is done and nothing is in flight.
    pub finished: bool,
}

impl JobState {
    pub fn new(job: Job, region: Region, seed: u64, job_index: u32) -> JobState {
        let threads = (0..job.threads)
            .map(|t| Prng::derive(seed, "workload", ((job_index as u64) << 32) | t as u64))
            .map(|rng| ThreadState {
                outstanding: 0,
                issued: 0,
                bytes_issued: 0,
                writes_since_fsync: 0,
                draining: false,
                flushing: false,
                done: false,
                backlog: 0,
                cursor_bytes: 0,
                wrote: false,
                end_synced: false,
                start_rng: rng.clone(),
                rng,
                writes_issued: 0,
                since_think: 0,
                pause_pending: false,
                thinking: false,
                refill_wait: false,
                verifying: false,
                verify_left: 0,
                flow_issued: 0,
                files: FileService::default(),
            })
            .collect();
        JobState {
            job,
            region,
            threads,
            shared_cursor_bytes: 0,
            reads: 0,
            writes: 0,
            requests: 0,
            pending_fsyncs: 0,
            dirty: false,
            issued_total: 0,
            zipf: None,
            zbd: ZbdZones::default(),
            started_ns: None,
            deadline_ns: Nanos::MAX,
            finished: false,
        }
    }

    /// The job's threads start now: its runtime counts from here (after `ramp`).
    pub fn launch(&mut self, now: Nanos) {
        self.started_ns = Some(now);
        if self.job.runtime_ns > 0 {
            self.deadline_ns = now.saturating_add(self.job.ramp_ns).saturating_add(self.job.runtime_ns);
        }
    }

    /// Whether every thread is done with nothing in flight (marks the job finished once).
    pub fn check_finished(&mut self) -> bool {
        if !self.finished
            && self.started_ns.is_some()
            && self.threads.iter().all(|t| t.done && t.outstanding == 0 && !t.thinking)
        {
            self.finished = true;
            return true;
        }
        false
    }

    /// Whether `thread` may issue one more I/O now: room in its queue, and with `iodepth_low`
    /// a full queue first drains to the low mark (fio `iodepth_low`).
    pub fn may_issue(&mut self, thread: usize) -> bool {
        let (depth, low) = (self.job.iodepth, self.job.iodepth_low);
        let t = &mut self.threads[thread];
        if t.outstanding >= depth {
            t.refill_wait = low > 0;
            return false;
        }
        if t.refill_wait {
            if t.outstanding > low {
                return false;
            }
            t.refill_wait = false;
        }
        true
    }

    /// A think pause `thread` asked for in `next`: the engine resumes it `think_ns` later.
    pub fn take_pause(&mut self, thread: usize) -> bool {
        let t = &mut self.threads[thread];
        if t.pause_pending {
            t.pause_pending = false;
            t.thinking = true;
            return true;
        }
        false
    }

    /// The thread waits (fio `flow`): no I/O until the engine resumes it.
    pub fn hold(&mut self, thread: usize) {
        self.threads[thread].thinking = true;
    }

    /// The think pause ended.
    pub fn resume(&mut self, thread: usize) {
        self.threads[thread].thinking = false;
    }

    /// Whether the thread should pause now (fio `handle_thinktime`): drains first.
    fn think_due(&mut self, thread: usize) -> bool {
        let job = &self.job;
        let t = &mut self.threads[thread];
        if job.think_ns == 0 || t.verifying || t.since_think < job.think_blocks {
            return false;
        }
        if t.outstanding > 0 {
            t.draining = true; // io_u_quiesce: wait for what is in flight
            return true;
        }
        t.since_think = 0;
        t.pause_pending = true;
        true
    }

    /// Starts reading back what the thread wrote once its writes are done (fio `do_verify`
    /// runs after the I/O of the job, with nothing in flight). Returns false if nothing is due.
    fn start_verify(&mut self, thread: usize) -> bool {
        let t = &mut self.threads[thread];
        if !self.job.verify || t.verifying || t.writes_issued == 0 {
            return false;
        }
        if t.outstanding > 0 {
            t.draining = true;
            return true;
        }
        t.verifying = true;
        t.verify_left = t.writes_issued;
        t.rng = t.start_rng.clone();
        t.cursor_bytes = 0;
        t.files = FileService::default();
        true
    }

    /// Whether `thread` has reached the job's caps (I/O count, bytes, size without time_based).
    fn capped(&self, thread: usize) -> bool {
        let job = &self.job;
        let state = &self.threads[thread];
        let bytes_cap = if job.io_bytes > 0 {
            job.io_bytes
        } else if !job.time_based && job.number_ios == 0 && job.total_ios == 0 {
            self.region.bytes
        } else {
            0
        }
        .saturating_mul(job.loops as u64);
        (job.number_ios > 0 && state.issued >= job.number_ios)
            || (job.total_ios > 0 && self.issued_total >= job.total_ios)
            || (bytes_cap > 0 && state.bytes_issued >= bytes_cap)
    }

    /// The next I/O `thread` issues, or `None` if it must wait (draining) or is finished.
    pub fn next(&mut self, thread: usize, now: Nanos) -> Option<HostIntent> {
        let t = &self.threads[thread];
        if t.done || t.flushing || t.draining || t.thinking {
            return None;
        }
        if now >= self.deadline_ns {
            self.threads[thread].done = true;
            return None;
        }
        if t.verifying {
            return self.next_verify(thread);
        }
        if self.pending_fsyncs > 0 {
            self.pending_fsyncs -= 1;
            return Some(HostIntent { op: HostOp::Flush, offset_bytes: 0, bytes: 0 });
        }
        if self.job.fsync_scope == FsyncScope::Thread
            && self.job.fsync_every > 0
            && t.writes_since_fsync >= self.job.fsync_every
        {
            return self.start_thread_fsync(thread);
        }
        if self.think_due(thread) {
            return None;
        }
        if self.capped(thread) {
            return self.finish_thread(thread);
        }
        Some(self.next_data_io(thread))
    }

    /// A thread at its caps ends, after one fsync of its file if the job has end_fsync and the
    /// thread wrote (fio `td_io_fsync` at the end of `do_io` when `end_fsync` is set).
    fn finish_thread(&mut self, thread: usize) -> Option<HostIntent> {
        let t = &mut self.threads[thread];
        if self.job.fsync_end && t.wrote && !t.end_synced {
            if t.outstanding > 0 {
                t.draining = true;
                return None;
            }
            t.end_synced = true;
            t.flushing = true;
            return Some(HostIntent { op: HostOp::Flush, offset_bytes: 0, bytes: 0 });
        }
        if self.start_verify(thread) {
            return if self.threads[thread].verifying { self.next_verify(thread) } else { None };
        }
        self.threads[thread].done = true;
        None
    }

    /// The next read-back of `verify`: replays the thread's draws and reads each write again.
    fn next_verify(&mut self, thread: usize) -> Option<HostIntent> {
        if self.threads[thread].verify_left == 0 {
            self.threads[thread].done = true;
            return None;
        }
        loop {
            let (read, offset, bytes) = self.draw(thread);
            if !read {
                self.threads[thread].verify_left -= 1;
                return Some(HostIntent { op: HostOp::Read, offset_bytes: offset, bytes });
            }
        }
    }

    fn start_thread_fsync(&mut self, thread: usize) -> Option<HostIntent> {
        let t = &mut self.threads[thread];
        if t.outstanding > 0 {
            t.draining = true;
            return None;
        }
        t.writes_since_fsync = 0;
        t.flushing = true;
        Some(HostIntent { op: HostOp::Flush, offset_bytes: 0, bytes: 0 })
    }

    fn choose_read(&mut self, thread: usize) -> bool {
        match self.job.mix {
            MixChoice::Random => {
                let fraction = self.job.read_fraction;
                fraction >= 1.0 || (fraction > 0.0 && self.threads[thread].rng.chance(fraction))
            }
            MixChoice::Ratio => {
                // sysbench: read while (reads+1)/(writes+1) < ratio, ratio = r/(1-r).
                let fraction = self.job.read_fraction;
                if fraction >= 1.0 || fraction <= 0.0 {
                    return fraction >= 1.0;
                }
                let ratio = fraction / (1.0 - fraction);
                ((self.reads + 1) as f64) / ((self.writes + 1) as f64) < ratio
            }
        }
    }

    /// Draws the next data I/O of `thread` (direction, array offset, bytes).
    fn draw(&mut self, thread: usize) -> (bool, u64, u64) {
        let read = self.choose_read(thread);
        let job = &self.job;
        let region = self.region;
        let t = &mut self.threads[thread];
        let bytes = if !read && !job.write_block_sizes.is_empty() {
            pick_size(&job.write_block_sizes, &mut t.rng)
        } else {
            offsets::block_size(job, &mut t.rng)
        };
        let random = job.random_fraction >= 1.0
            || (job.random_fraction > 0.0 && t.rng.chance(job.random_fraction));
        let (offset, bytes) = if random && !job.zones.is_empty() {
            (zoned_offset(job, &region, bytes, &mut t.rng), bytes)
        } else if random {
            (offsets::random_offset(job, &region, bytes, &mut t.rng, &mut self.zipf), bytes)
        } else if job.file_service > 0 && job.cursor == Cursor::PerThread && region.bytes > region.file_bytes {
            served_file(job, &region, bytes, &mut t.files, &mut t.rng)
        } else {
            let cursor = match job.cursor {
                Cursor::PerThread => &mut t.cursor_bytes,
                Cursor::Shared => &mut self.shared_cursor_bytes,
            };
            let (offset, length) = sequential(cursor, &region, bytes);
            if job.seq_skip_bytes != 0 {
                let next = (offset + length) as i128 + job.seq_skip_bytes as i128;
                *cursor = next.rem_euclid(region.bytes as i128) as u64;
            }
            (offset, length)
        };
        let offset = if random && !read && job.zbd_zone_bytes > 0 {
            self.zbd.write_pointer(job, &region, offset, bytes, &mut self.threads[thread].rng)
        } else {
            offset
        };
        let offset = strided(job, offset);
        let clone_offset = job.offset_increment_bytes * thread as u64;
        (read, region.start_bytes + clone_offset + offset, bytes)
    }

    fn next_data_io(&mut self, thread: usize) -> HostIntent {
        let (read, offset, bytes) = self.draw(thread);
        let t = &mut self.threads[thread];
        t.issued += 1;
        t.bytes_issued += bytes;
        self.issued_total += 1;
        self.requests += 1;
        if read {
            self.reads += 1;
        } else {
            self.writes += 1;
            t.writes_since_fsync += 1;
            t.wrote = true;
            t.writes_issued += 1;
            self.dirty = true;
        }
        self.schedule_fsync_round();
        let op = if read { HostOp::Read } else { HostOp::Write };
        HostIntent { op, offset_bytes: offset, bytes }
    }

    /// sysbench: every `fsync_every` requests, if anything was written, one fsync per file.
    fn schedule_fsync_round(&mut self) {
        let every = self.job.fsync_every as u64;
        if self.job.fsync_scope == FsyncScope::AllFiles && every > 0 && self.requests % every == 0 && self.dirty {
            self.pending_fsyncs += self.job.files;
            self.dirty = false;
        }
    }

    /// Bookkeeping when one of `thread`'s I/Os completes.
    pub fn completed(&mut self, thread: usize, op: HostOp) {
        let t = &mut self.threads[thread];
        assert!(t.outstanding > 0, "completion without an outstanding I/O");
        t.outstanding -= 1;
        if op == HostOp::Flush && t.flushing {
            t.flushing = false;
        }
        if op != HostOp::Flush {
            t.since_think = t.since_think.saturating_add(1);
        }
        if t.draining && t.outstanding == 0 {
            t.draining = false;
        }
    }

    /// Time of the next open-loop arrival after `now` for a thread.
    pub fn next_arrival(&mut self, thread: usize, now: Nanos) -> Nanos {
        assert!(self.job.open_loop());
        let mean_ns = self.job.arrival_gap_ns();
        let gap = if self.job.poisson_arrivals {
            self.threads[thread].rng.exponential(mean_ns)
        } else {
            mean_ns
        };
        now + (gap.round() as Nanos).max(1)
    }
}

/// Sequential: take `bytes` at the cursor, clipped at the end of the current file; wrap at
/// the end of the region.
fn sequential(cursor: &mut u64, region: &Region, bytes: u64) -> (u64, u64) {
    if *cursor >= region.bytes {
        *cursor = 0;
    }
    let file_end = (*cursor / region.file_bytes + 1) * region.file_bytes;
    let length = bytes.min(file_end - *cursor);
    let offset = *cursor;
    *cursor += length;
    (offset, length)
}
