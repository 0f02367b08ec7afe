//! A CFQ-like scheduler after the legacy block/cfq-iosched.c (removed in Linux 5.0) and
//! Documentation/block/cfq-iosched.txt.
//!
//! Modelled:
//! - One queue per thread for synchronous I/O (`cfq_queue` per process/io_context) and one
//!   shared queue for asynchronous I/O (CFQ's per-priority `async_cfqq`, here a single one).
//!   Requests merge only within their queue (`cfq_allow_merge`).
//! - Queues with requests wait on a round-robin ring (the service tree); the active queue is
//!   served for its time slice, `slice_sync` for sync queues and `slice_async` for the async
//!   queue (`cfq_prio_slice` at the default priority 4). A queue whose slice ended with requests
//!   left goes to the back of the ring.
//! - Within a queue, requests go in ascending sector order from where the last dispatched
//!   request ended (the disk head, `cfqd->last_position`), wrapping to the lowest sector.
//! - Idling (`cfq_select_queue`, `cfq_completed_request`, `cfq_arm_slice_timer`): when the
//!   active sync queue runs out of requests before its slice ends, CFQ does not move on. While
//!   the queue still has requests in flight it waits for them (`cfqq->dispatched` and
//!   `cfq_should_idle` → keep the queue); when the last one completes it arms the idle timer for
//!   `slice_idle`. A request from the same thread arriving meanwhile is dispatched at once
//!   (`cfq_rq_enqueued` cancels the timer); when the timer fires the queue expires and the next
//!   one runs. `slice_idle = 0` disables idling, as the kernel document advises for RAID LUNs.
//!   The async queue never idles.
//! - `quantum` (`cfq_may_dispatch`): with other queues waiting, the active queue may have at most
//!   `quantum` requests in flight; the sole busy queue is not limited ("Sole queue user, no
//!   limit").
//! - Seeky queues (`cfq_update_io_seektime`, `CIC_SEEKY`): each sync queue keeps a weighted
//!   mean of the distance from its last request's end to its next request's start (samples and
//!   total decay by 7/8 per request, as the kernel's fixed-point means do; the distance clamped
//!   to 4 × mean + 2 Mi sectors for the first samples, + 128 Ki after). With more than 80
//!   samples' weight and a mean beyond 8 Ki sectors the queue is seeky and gets no idle window
//!   (`cfq_update_idle_window`: `sample_valid(seek_samples) && CIC_SEEKY(cic)` → `enable_idle
//!   = 0`, as from 2.6.33; 2.6.2x required `hw_tag` too, which a RAID controller's logical
//!   drive has). Many random readers on one array device therefore share it instead of each
//!   holding it idle in turn: CFQ stays near deadline there.
//! - Flushes bypass the elevator (block/blk-flush.c; the legacy request queue's `queue_head`
//!   is served before the elevator), so they dispatch first, even while idling.
//!
//! In-flight accounting: a dispatched request counts as in flight for its queue (the sync
//! queue of its thread, or the async queue) until the engine reports it with
//! [`Scheduler::completed`], which it must call exactly once per block request id (each id of
//! a merged dispatch), with the request's own `thread` and `sync`. Flushes count for their
//! thread's queue too (a small deviation: the kernel's flush requests carry no cfq_queue).
//!
//! Not modelled: I/O priorities and classes, cgroups/groups and group idling, workload classes
//! (sync-noidle/async shares, `target_latency`/`low_latency` slice scaling), the think-time and
//! think-time heuristic that turns idling off, close cooperators, `back_seek_max`/penalty,
//! `fifo_expire_sync`/`_async` checks, `slice_async_rq`, holding async dispatch while sync I/O is
//! in flight, and starting a slice at the first completion (`slice_new`) rather than activation.

use std::collections::VecDeque;

use super::pool::{Inserted, IntMap, List, Pool, SortList};
use super::{BlockRequest, Dispatch, QueueLimits, Scheduler, SchedulerKind};
use crate::device::Op;
use crate::time::Nanos;

/// Index of the shared async queue.
const ASYNC: u32 = 0;

struct CfqQueue {
    /// Requests by (start sector, creation seq).
    sorted: SortList,
    sync: bool,
    /// The owning thread (sync queues only).
    thread: u32,
    /// Block requests dispatched and not yet completed (`cfqq->dispatched`).
    in_flight: u32,
    /// On the round-robin ring (has requests and is not active).
    on_ring: bool,
    /// Seek statistics (`cic->last_request_pos`, `seek_samples`, `seek_total`, `seek_mean`).
    last_pos: u64,
    seek_samples: u64,
    seek_total: u64,
    seek_mean: u64,
}

/// `CIC_SEEKY`: mean seek distance beyond 8 Ki sectors.
const SEEKY_SECTORS: u64 = 8 * 1024;

impl CfqQueue {
    fn new(sync: bool, thread: u32) -> CfqQueue {
        CfqQueue {
            sorted: SortList::new(),
            sync,
            thread,
            in_flight: 0,
            on_ring: false,
            last_pos: 0,
            seek_samples: 0,
            seek_total: 0,
            seek_mean: 0,
        }
    }

    /// `cfq_update_io_seektime`: folds the distance to a new request into the mean.
    fn seek_sample(&mut self, sector: u64, sectors: u32) {
        let mut distance = sector.abs_diff(self.last_pos);
        self.last_pos = sector + sectors as u64;
        let clamp = if self.seek_samples <= 60 { 2 * 1024 * 1024 } else { 2 * 1024 * 64 };
        distance = distance.min(self.seek_mean * 4 + clamp);
        self.seek_samples = (7 * self.seek_samples + 256) / 8;
        self.seek_total = (7 * self.seek_total + 256 * distance) / 8;
        self.seek_mean = (self.seek_total + self.seek_samples / 2) / self.seek_samples;
    }

    /// `sample_valid(seek_samples) && CIC_SEEKY(cic)`.
    fn seeky(&self) -> bool {
        self.seek_samples > 80 && self.seek_mean > SEEKY_SECTORS
    }
}

pub struct Cfq {
    pool: Pool,
    queues: Vec<CfqQueue>,
    /// Thread → its sync queue (lookups only).
    sync_queue_of: IntMap<u32, u32>,
    ring: VecDeque<u32>,
    active: Option<u32>,
    slice_end: Nanos,
    /// Set while the empty active sync queue waits for its thread's next request.
    idle_until: Option<Nanos>,
    flushes: List,
    /// Where the last dispatched request ended.
    head: u64,
    slice_sync: Nanos,
    slice_async: Nanos,
    slice_idle: Nanos,
    quantum: u32,
    last_now: Nanos,
}

impl Cfq {
    pub fn new(kind: SchedulerKind, limits: QueueLimits) -> Cfq {
        let SchedulerKind::Cfq { slice_sync_ns, slice_async_ns, slice_idle_ns, quantum } = kind else {
            panic!("Cfq::new given {kind:?}");
        };
        kind.validate().unwrap_or_else(|e| panic!("{e}"));
        limits.validate().unwrap_or_else(|e| panic!("{e}"));
        Cfq {
            pool: Pool::new(limits.max_sectors),
            queues: vec![CfqQueue::new(false, 0)],
            sync_queue_of: IntMap::default(),
            ring: VecDeque::new(),
            active: None,
            slice_end: 0,
            idle_until: None,
            flushes: List::new(),
            head: 0,
            slice_sync: slice_sync_ns,
            slice_async: slice_async_ns,
            slice_idle: slice_idle_ns,
            quantum,
            last_now: 0,
        }
    }

    /// The thread whose sync queue is being served (`None`: no queue, or the async queue).
    pub fn active_thread(&self) -> Option<u32> {
        let queue = &self.queues[self.active? as usize];
        queue.sync.then_some(queue.thread)
    }

    /// Whether the scheduler is idling, waiting for the active thread's next request.
    pub fn idling(&self) -> bool {
        self.idle_until.is_some()
    }

    /// Full O(queued) consistency check (tests, debugging).
    pub fn check_invariants(&self) {
        self.pool.check();
        let mut total = self.flushes.len();
        for (index, queue) in self.queues.iter().enumerate() {
            let index = index as u32;
            for ((sector, seq), slot) in queue.sorted.iter() {
                let node = self.pool.node(slot);
                assert_eq!(
                    (node.sector, node.seq, node.qkey),
                    (sector, seq, index),
                    "queue {index}: slot {slot}"
                );
            }
            total += queue.sorted.len();
            let on_ring = self.ring.iter().filter(|&&q| q == index).count();
            assert_eq!(on_ring, queue.on_ring as usize, "queue {index}: ring membership");
            if queue.on_ring {
                assert!(!queue.sorted.is_empty(), "queue {index}: empty queue on the ring");
                assert_ne!(self.active, Some(index), "queue {index}: active and on the ring");
            }
        }
        assert_eq!(total, self.pool.len(), "queued count");
        if self.idle_until.is_some() {
            let active = self.active.expect("idling without an active queue");
            // (Requests may have arrived since: the next dispatch serves them and ends idling.)
            assert!(self.queues[active as usize].sync, "idling on the async queue");
        }
    }

    fn tick(&mut self, now: Nanos) {
        assert!(now >= self.last_now, "scheduler time went backwards ({now} < {})", self.last_now);
        self.last_now = now;
    }

    fn queue_for(&mut self, thread: u32, sync: bool) -> u32 {
        if !sync {
            return ASYNC;
        }
        if let Some(&q) = self.sync_queue_of.get(&thread) {
            return q;
        }
        let q = u32::try_from(self.queues.len()).expect("too many CFQ queues");
        self.queues.push(CfqQueue::new(true, thread));
        self.sync_queue_of.insert(thread, q);
        q
    }

    /// Ends the active queue's slice: back to the ring if it still has requests.
    fn expire(&mut self) {
        let active = self.active.take().expect("expire without an active queue");
        self.idle_until = None;
        let queue = &mut self.queues[active as usize];
        if !queue.sorted.is_empty() {
            queue.on_ring = true;
            self.ring.push_back(active);
        }
    }

    /// Whether the queue idles when it runs dry (`cfq_cfqq_idle_window`).
    fn idles(&self, q: u32) -> bool {
        let queue = &self.queues[q as usize];
        queue.sync && self.slice_idle > 0 && !queue.seeky()
    }

    fn dispatch_from(&mut self, q: u32, merged_ids: &mut Vec<u64>) -> Dispatch {
        let queue = &mut self.queues[q as usize];
        let (key, slot) = match queue.sorted.first_from((self.head, 0)) {
            Some(entry) => entry,
            None => queue.sorted.first().expect("dispatch from an empty queue"),
        };
        queue.sorted.remove(&key);
        let dispatch = self.pool.take(slot, merged_ids);
        self.head = dispatch.sector + dispatch.sectors as u64;
        dispatch
    }
}

impl Scheduler for Cfq {
    fn insert(&mut self, now: Nanos, request: BlockRequest) {
        self.tick(now);
        let q = self.queue_for(request.thread, request.sync);
        match self.pool.insert(q, &request) {
            Inserted::New(slot) if request.op == Op::Flush => self.pool.push_back(&mut self.flushes, slot),
            Inserted::New(slot) => {
                let seq = self.pool.node(slot).seq;
                let queue = &mut self.queues[q as usize];
                if queue.sync {
                    queue.seek_sample(request.sector, request.sectors);
                }
                assert!(queue.sorted.insert((request.sector, seq), slot).is_none(), "duplicate sort key");
                if !queue.on_ring && self.active != Some(q) {
                    queue.on_ring = true;
                    self.ring.push_back(q);
                }
            }
            Inserted::Merged { slot, old_sector, absorbed } => {
                let node = self.pool.node(slot);
                let queue = &mut self.queues[q as usize];
                if node.sector != old_sector {
                    assert_eq!(
                        queue.sorted.remove(&(old_sector, node.seq)),
                        Some(slot),
                        "merged request not queued"
                    );
                    queue.sorted.insert((node.sector, node.seq), slot);
                }
                if let Some(victim) = absorbed {
                    let removed = queue.sorted.remove(&(victim.sector, victim.seq));
                    assert_eq!(removed, Some(victim.slot), "absorbed request not queued");
                    self.pool.free_absorbed(victim.slot);
                }
            }
        }
    }

    fn dispatch(&mut self, now: Nanos, merged_ids: &mut Vec<u64>) -> Option<Dispatch> {
        self.tick(now);
        let ids_before = merged_ids.len();
        if let Some(slot) = self.pool.pop_front(&mut self.flushes) {
            let q = self.pool.node(slot).qkey;
            let dispatch = self.pool.take(slot, merged_ids);
            self.queues[q as usize].in_flight += (merged_ids.len() - ids_before) as u32;
            return Some(dispatch);
        }
        loop {
            let Some(active) = self.active else {
                // Select the next queue (`cfq_set_active_queue`) and start its slice.
                let next = self.ring.pop_front()?;
                let queue = &mut self.queues[next as usize];
                assert!(
                    queue.on_ring && !queue.sorted.is_empty(),
                    "queue {next} on the ring without requests"
                );
                queue.on_ring = false;
                self.active = Some(next);
                self.slice_end = now + if queue.sync { self.slice_sync } else { self.slice_async };
                self.idle_until = None;
                continue;
            };
            if now >= self.slice_end {
                self.expire();
                continue;
            }
            let queue = &self.queues[active as usize];
            if !queue.sorted.is_empty() {
                // A request arrived while idling: the point of idling, serve it at once.
                self.idle_until = None;
                if queue.in_flight >= self.quantum && !self.ring.is_empty() {
                    return None;
                }
                let dispatch = self.dispatch_from(active, merged_ids);
                self.queues[active as usize].in_flight += (merged_ids.len() - ids_before) as u32;
                return Some(dispatch);
            }
            if let Some(until) = self.idle_until {
                if now < until {
                    return None;
                }
                self.expire();
                continue;
            }
            if queue.in_flight > 0 && self.idles(active) {
                // Wait for the in-flight requests; the last completion arms the idle timer.
                return None;
            }
            self.expire();
        }
    }

    fn next_timer(&self) -> Option<Nanos> {
        let slice = (self.active.is_some() && !self.ring.is_empty()).then_some(self.slice_end);
        match (self.idle_until, slice) {
            (Some(a), Some(b)) => Some(a.min(b)),
            (a, b) => a.or(b),
        }
    }

    fn completed(&mut self, now: Nanos, thread: u32, sync: bool) {
        self.tick(now);
        let q = if sync {
            *self
                .sync_queue_of
                .get(&thread)
                .unwrap_or_else(|| panic!("completion for thread {thread}, which never queued sync I/O"))
        } else {
            ASYNC
        };
        let queue = &mut self.queues[q as usize];
        assert!(
            queue.in_flight > 0,
            "completion for queue {q} (thread {thread}, sync {sync}) with nothing in flight"
        );
        queue.in_flight -= 1;
        let dry = queue.in_flight == 0 && queue.sorted.is_empty();
        if self.active == Some(q) && dry && now < self.slice_end && self.idle_until.is_none() && self.idles(q) {
            self.idle_until = Some(now + self.slice_idle);
        }
    }

    /// Queued scheduler requests after merging (the kernel's `nr_requests` counts these).
    fn queued(&self) -> usize {
        self.pool.len()
    }
}
