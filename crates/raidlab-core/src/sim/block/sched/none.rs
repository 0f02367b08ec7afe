//! `none` (blk-mq) / `noop` (legacy, block/noop-iosched.c): no reordering at all. Requests leave
//! in arrival order; the only thing the block layer still does is merge contiguous requests
//! (block/blk-merge.c), so a merged request keeps the queue position of the older part.
//! Flushes keep their place in the FIFO.

use super::pool::{Inserted, List, Pool};
use super::{BlockRequest, Dispatch, QueueLimits, Scheduler};
use crate::time::Nanos;

pub struct NoneScheduler {
    pool: Pool,
    fifo: List,
    last_now: Nanos,
}

impl NoneScheduler {
    pub fn new(limits: QueueLimits) -> NoneScheduler {
        limits.validate().unwrap_or_else(|e| panic!("{e}"));
        NoneScheduler { pool: Pool::new(limits.max_sectors), fifo: List::new(), last_now: 0 }
    }

    /// Full O(queued) consistency check (tests, debugging).
    pub fn check_invariants(&self) {
        self.pool.check();
        assert_eq!(self.fifo.len(), self.pool.len(), "every queued request is on the FIFO");
    }

    fn tick(&mut self, now: Nanos) {
        assert!(now >= self.last_now, "scheduler time went backwards ({now} < {})", self.last_now);
        self.last_now = now;
    }
}

impl Scheduler for NoneScheduler {
    fn insert(&mut self, now: Nanos, request: BlockRequest) {
        self.tick(now);
        match self.pool.insert(0, &request) {
            Inserted::New(slot) => self.pool.push_back(&mut self.fifo, slot),
            Inserted::Merged { absorbed, .. } => {
                if let Some(victim) = absorbed {
                    self.pool.unlink(&mut self.fifo, victim.slot);
                    self.pool.free_absorbed(victim.slot);
                }
            }
        }
        debug_assert_eq!(self.fifo.len(), self.pool.len());
    }

    fn dispatch(&mut self, now: Nanos, merged_ids: &mut Vec<u64>) -> Option<Dispatch> {
        self.tick(now);
        let slot = self.pool.pop_front(&mut self.fifo)?;
        Some(self.pool.take(slot, merged_ids))
    }

    fn next_timer(&self) -> Option<Nanos> {
        None
    }

    fn completed(&mut self, now: Nanos, _thread: u32, _sync: bool) {
        self.tick(now);
    }

    /// Queued scheduler requests after merging (each one future drive command). Like the
    /// kernel's `nr_requests`, which counts `struct request`s: a bio merged into a queued request
    /// takes no new one.
    fn queued(&self) -> usize {
        self.pool.len()
    }
}
