//! `mq-deadline` (block/mq-deadline.c; tunables in Documentation/block/deadline-iosched.rst).
//!
//! Per direction (read, write) the scheduler keeps requests twice: in a tree sorted by start
//! sector (`sort_list`) and in a FIFO by insertion with an expiry time (`fifo_list`, `fifo_time` =
//! insertion + `read_expire`/`write_expire`). Dispatch (`__dd_dispatch_request`):
//!
//! 1. If the last batch has dispatched fewer than `fifo_batch` requests and its direction has a
//!    request at or after the position where the last one ended (`deadline_next_request`,
//!    `latest_pos`), continue the batch with it: a one-way elevator in ascending sectors.
//! 2. Otherwise start a batch: reads are preferred, but when writes are waiting the read choice
//!    counts as starving them (`dd->starved++ >= writes_starved` → writes). With no reads, writes.
//! 3. In the chosen direction, if the FIFO head has expired (`deadline_check_fifo`:
//!    now ≥ fifo_time) the batch starts from it; otherwise from the first request at or after the
//!    direction's last position, wrapping to the lowest sector when none is ahead.
//!
//! One deviation, asked for by raidlab's design: when nothing is ahead of the position and the
//! FIFO head has not expired, the kernel starts from the FIFO head (`deadline_fifo_request`),
//! while this model wraps to the lowest sector (C-LOOK). Expired requests are still served first.
//!
//! Expiry counts from the `now` of the insert call (the kernel sets `fifo_time` when the
//! request enters the scheduler), not from `BlockRequest::inserted`.
//!
//! Flushes bypass the elevator (block/blk-flush.c `blk_insert_flush` puts them on the dispatch
//! list) and so go out before anything queued here, in arrival order. Merges keep the older
//! request's FIFO position and expiry (`dd_merged_requests`). I/O priorities, zoned-write
//! locking and `prio_aging_expire` are not modelled.
//!
//! A shortcut with the same results: a read or write that arrives while nothing is queued is
//! kept aside as the lone request, outside the pool, sort trees and FIFOs. Behind a deep drive
//! queue nearly every request is dispatched before the next one arrives, and then it never
//! touches those structures: `dispatch_lone` makes the decisions of the full path for a queue
//! of one. When another request arrives first, the lone one is queued as it would have been
//! on arrival (its expiry counting from then), and the new one after it. A flush may be the
//! lone request too: it would go out first from the flush list and leaves the batch state
//! alone, so dispatching it lone is just handing it over (sysbench's fsync rounds send a flush
//! to every member of an otherwise idle queue millions of times).

use super::pool::{data_end, dir_index, Inserted, List, Pool, SortList};
use super::{BlockRequest, Dispatch, QueueLimits, Scheduler, SchedulerKind};
use crate::device::Op;
use crate::time::Nanos;

const READ: usize = 0;
const WRITE: usize = 1;

/// One data direction: sort tree keyed by (start sector, creation seq), FIFO, and the sector
/// where the last request dispatched in this direction ended.
struct Direction {
    sorted: SortList,
    fifo: List,
    position: u64,
    expire: Nanos,
}

pub struct MqDeadline {
    pool: Pool,
    dirs: [Direction; 2],
    flushes: List,
    fifo_batch: u32,
    writes_starved: u32,
    /// Direction of the current batch and requests dispatched in it (`dd->last_dir`,
    /// `dd->batching`).
    batch_dir: Option<usize>,
    batching: u32,
    /// Read batches started while writes waited (`dd->starved`).
    starved: u32,
    /// A request that arrived at an empty queue, with its insert time (module comment).
    /// While it is here, nothing else is queued.
    lone: Option<(Nanos, BlockRequest)>,
    last_now: Nanos,
}

impl MqDeadline {
    pub fn new(kind: SchedulerKind, limits: QueueLimits) -> MqDeadline {
        let SchedulerKind::MqDeadline { read_expire_ns, write_expire_ns, fifo_batch, writes_starved } = kind
        else {
            panic!("MqDeadline::new given {kind:?}");
        };
        kind.validate().unwrap_or_else(|e| panic!("{e}"));
        limits.validate().unwrap_or_else(|e| panic!("{e}"));
        let direction =
            |expire| Direction { sorted: SortList::new(), fifo: List::new(), position: 0, expire };
        MqDeadline {
            pool: Pool::new(limits.max_sectors),
            dirs: [direction(read_expire_ns), direction(write_expire_ns)],
            flushes: List::new(),
            fifo_batch,
            writes_starved,
            batch_dir: None,
            batching: 0,
            starved: 0,
            lone: None,
            last_now: 0,
        }
    }

    /// Full O(queued) consistency check (tests, debugging).
    pub fn check_invariants(&self) {
        self.pool.check();
        let mut total = self.flushes.len();
        for (index, dir) in self.dirs.iter().enumerate() {
            assert_eq!(dir.sorted.len(), dir.fifo.len(), "direction {index}: sort tree and FIFO disagree");
            for ((sector, seq), slot) in dir.sorted.iter() {
                let node = self.pool.node(slot);
                assert_eq!((node.sector, node.seq), (sector, seq), "sort key of slot {slot}");
                assert_eq!(dir_index(node.op), index, "slot {slot} in the wrong direction");
            }
            total += dir.sorted.len();
        }
        assert_eq!(total, self.pool.len(), "queued count");
        if self.lone.is_some() {
            assert_eq!(self.pool.len(), 0, "a lone request with others queued");
        }
    }

    fn tick(&mut self, now: Nanos) {
        assert!(now >= self.last_now, "scheduler time went backwards ({now} < {})", self.last_now);
        self.last_now = now;
    }

    /// The first request at or after the direction's position.
    fn next_ahead(&self, dir: usize) -> Option<u32> {
        let d = &self.dirs[dir];
        d.sorted.first_from((d.position, 0)).map(|(_, slot)| slot)
    }

    fn take(&mut self, dir: usize, slot: u32, merged_ids: &mut Vec<u64>) -> Dispatch {
        let node = self.pool.node(slot);
        let key = (node.sector, node.seq);
        let d = &mut self.dirs[dir];
        let removed = d.sorted.remove(&key);
        assert_eq!(removed, Some(slot), "dispatched request missing from the sort tree");
        self.pool.unlink(&mut d.fifo, slot);
        let dispatch = self.pool.take(slot, merged_ids);
        self.dirs[dir].position = dispatch.sector + dispatch.sectors as u64;
        dispatch
    }

    /// Queues a request that arrived at `now` in the pool, sort tree and FIFO.
    fn enqueue(&mut self, now: Nanos, request: BlockRequest) {
        match self.pool.insert(0, &request) {
            Inserted::New(slot) if request.op == Op::Flush => self.pool.push_back(&mut self.flushes, slot),
            Inserted::New(slot) => {
                let dir = &mut self.dirs[dir_index(request.op)];
                let node = self.pool.node_mut(slot);
                node.deadline = now + dir.expire;
                let previous = dir.sorted.insert((node.sector, node.seq), slot);
                assert!(previous.is_none(), "duplicate sort key");
                self.pool.push_back(&mut dir.fifo, slot);
            }
            Inserted::Merged { slot, old_sector, absorbed } => {
                let dir = &mut self.dirs[dir_index(request.op)];
                let node = self.pool.node(slot);
                if node.sector != old_sector {
                    let moved = dir.sorted.remove(&(old_sector, node.seq));
                    assert_eq!(moved, Some(slot), "merged request missing from the sort tree");
                    dir.sorted.insert((node.sector, node.seq), slot);
                }
                if let Some(victim) = absorbed {
                    assert!(
                        self.pool.node(victim.slot).deadline >= node.deadline,
                        "the older request (earlier expiry) survives a merge"
                    );
                    let removed = dir.sorted.remove(&(victim.sector, victim.seq));
                    assert_eq!(removed, Some(victim.slot), "absorbed request missing from the sort tree");
                    self.pool.unlink(&mut dir.fifo, victim.slot);
                    self.pool.free_absorbed(victim.slot);
                }
            }
        }
    }

    /// The direction of a new batch, given which directions have requests (`None`: neither):
    /// reads are preferred, but a read batch while writes wait counts as starving them, and
    /// after `writes_starved` such batches the writes go.
    fn batch_direction(&mut self, reads: bool, writes: bool) -> Option<usize> {
        if reads && writes {
            if self.starved >= self.writes_starved {
                self.starved = 0;
                Some(WRITE)
            } else {
                self.starved += 1;
                Some(READ)
            }
        } else if reads {
            Some(READ)
        } else if writes {
            self.starved = 0;
            Some(WRITE)
        } else {
            None
        }
    }

    /// Dispatches the lone request as the full path would a queue holding only it: it
    /// continues the batch when the batch is in its direction, not yet `fifo_batch` long, and it
    /// lies at or after the position (what `next_ahead` finds); otherwise it starts a batch in its
    /// direction, being the FIFO head and the only request ahead or to wrap to.
    fn dispatch_lone(&mut self, request: BlockRequest, merged_ids: &mut Vec<u64>) -> Dispatch {
        if request.op == Op::Flush {
            // As the flush list's head leaves: no sort tree, no batch, no position.
            assert_eq!(request.sectors, 0, "a flush carries no sectors (request {})", request.id);
            merged_ids.push(request.id);
            return Dispatch { op: request.op, sector: request.sector, sectors: 0 };
        }
        // The checks queueing it would have made: here rather than in `insert`, which the
        // engine inlines into its hottest loops.
        let end = data_end(&request);
        let dir = dir_index(request.op);
        let ahead = request.sector >= self.dirs[dir].position;
        if self.batch_dir == Some(dir) && self.batching < self.fifo_batch && ahead {
            self.batching += 1;
        } else {
            let chosen = self.batch_direction(dir == READ, dir == WRITE);
            assert_eq!(chosen, Some(dir), "a lone request starts a batch in its direction");
            self.batch_dir = chosen;
            self.batching = 1;
        }
        self.dirs[dir].position = end;
        merged_ids.push(request.id);
        Dispatch { op: request.op, sector: request.sector, sectors: request.sectors }
    }

    /// [`Scheduler::dispatch`] with a request queued (lone or in the pool).
    #[inline(never)]
    fn dispatch_queued(&mut self, now: Nanos, merged_ids: &mut Vec<u64>) -> Option<Dispatch> {
        if let Some((_, request)) = self.lone {
            self.lone = None;
            return Some(self.dispatch_lone(request, merged_ids));
        }
        if let Some(slot) = self.pool.pop_front(&mut self.flushes) {
            return Some(self.pool.take(slot, merged_ids));
        }

        // Continue the current batch in ascending sector order.
        if let Some(dir) = self.batch_dir {
            if self.batching < self.fifo_batch {
                if let Some(slot) = self.next_ahead(dir) {
                    self.batching += 1;
                    return Some(self.take(dir, slot, merged_ids));
                }
            }
        }

        // A new batch: choose the direction.
        let reads = !self.dirs[READ].fifo.is_empty();
        let writes = !self.dirs[WRITE].fifo.is_empty();
        let Some(dir) = self.batch_direction(reads, writes) else {
            self.batch_dir = None;
            return None;
        };

        // Start from an expired FIFO head, else from the elevator position (wrapping).
        let d = &self.dirs[dir];
        let head = d.fifo.front().expect("chosen direction has requests");
        let slot = if self.pool.node(head).deadline <= now {
            head
        } else {
            match self.next_ahead(dir) {
                Some(slot) => slot,
                None => d.sorted.first().expect("sort tree has requests").1,
            }
        };
        self.batch_dir = Some(dir);
        self.batching = 1;
        Some(self.take(dir, slot, merged_ids))
    }
}

impl Scheduler for MqDeadline {
    fn insert(&mut self, now: Nanos, request: BlockRequest) {
        self.tick(now);
        if let Some((inserted, lone)) = self.lone.take() {
            self.enqueue(inserted, lone);
        } else if self.pool.len() == 0 {
            self.lone = Some((now, request));
            return;
        }
        self.enqueue(now, request);
    }

    /// Inlined for an empty queue, what most calls find (the engine asks after every
    /// completion): what the full path ends in with nothing queued, without the call.
    #[inline(always)]
    fn dispatch(&mut self, now: Nanos, merged_ids: &mut Vec<u64>) -> Option<Dispatch> {
        self.tick(now);
        if self.lone.is_none() && self.pool.len() == 0 {
            self.batch_dir = None;
            return None;
        }
        self.dispatch_queued(now, merged_ids)
    }

    /// mq-deadline never holds requests back, so it needs no timer.
    fn next_timer(&self) -> Option<Nanos> {
        None
    }

    fn completed(&mut self, now: Nanos, _thread: u32, _sync: bool) {
        self.tick(now);
    }

    /// Queued scheduler requests after merging (the kernel's `nr_requests` counts these).
    fn queued(&self) -> usize {
        self.pool.len() + self.lone.is_some() as usize
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn request(id: u64, op: Op, sector: u64, sectors: u32) -> BlockRequest {
        BlockRequest { id, op, sector, sectors, thread: 0, sync: true, inserted: 0 }
    }

    fn scheduler() -> MqDeadline {
        MqDeadline::new(SchedulerKind::mq_deadline_default(), QueueLimits { nr_requests: 64, max_sectors: 256 })
    }

    fn next(s: &mut MqDeadline, now: Nanos) -> Option<(Dispatch, Vec<u64>)> {
        let mut ids = Vec::new();
        s.dispatch(now, &mut ids).map(|d| (d, ids))
    }

    /// What the batch logic remembers between dispatches.
    fn batch_state(s: &MqDeadline) -> (Option<usize>, u32, u32, [u64; 2]) {
        (s.batch_dir, s.batching, s.starved, [s.dirs[READ].position, s.dirs[WRITE].position])
    }

    #[test]
    fn a_flush_into_an_idle_queue_goes_out_at_once_and_leaves_the_read_batch_as_it_was() {
        let (mut plain, mut flushed) = (scheduler(), scheduler());
        for s in [&mut plain, &mut flushed] {
            s.insert(0, request(1, Op::Read, 800, 8));
            assert_eq!(next(s, 0), Some((Dispatch { op: Op::Read, sector: 800, sectors: 8 }, vec![1])));
        }
        flushed.insert(10, request(2, Op::Flush, 0, 0));
        assert_eq!(flushed.queued(), 1);
        assert_eq!(next(&mut flushed, 10), Some((Dispatch { op: Op::Flush, sector: 0, sectors: 0 }, vec![2])));
        assert_eq!(flushed.queued(), 0);
        assert_eq!(batch_state(&flushed), batch_state(&plain));
        // The next read continues the batch in both (it lies ahead of the position).
        for s in [&mut plain, &mut flushed] {
            s.insert(20, request(3, Op::Read, 900, 8));
            assert_eq!(next(s, 20).map(|(_, ids)| ids), Some(vec![3]));
        }
        assert_eq!(batch_state(&flushed), batch_state(&plain));
        assert_eq!(batch_state(&plain), (Some(READ), 2, 0, [908, 0]));
        flushed.check_invariants();
    }

    #[test]
    fn a_lone_flush_joined_by_a_read_is_queued_and_still_goes_first() {
        let mut s = scheduler();
        s.insert(0, request(1, Op::Flush, 0, 0));
        s.insert(5, request(2, Op::Read, 64, 8));
        s.insert(6, request(3, Op::Flush, 0, 0));
        assert_eq!(s.queued(), 3);
        s.check_invariants();
        let order: Vec<Vec<u64>> = std::iter::from_fn(|| next(&mut s, 10).map(|(_, ids)| ids)).collect();
        assert_eq!(order, [vec![1], vec![3], vec![2]], "flushes in arrival order, then the read");
        assert_eq!(s.queued(), 0);
    }
}
