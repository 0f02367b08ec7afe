//! Linux block-layer I/O schedulers in front of each drive: none (FIFO with merging),
//! mq-deadline, and a legacy CFQ-like mode with per-thread idling.
//!
//! The engine inserts block requests as they arrive and, whenever the drive has a free command
//! slot, asks the scheduler for the next request to dispatch. A dispatched request may carry
//! several merged block requests (their ids are written to `merged_ids`); the engine completes
//! them all when the drive command completes. A scheduler may hold requests back on purpose
//! (CFQ idling); it then reports when to ask again through `next_timer`.

use crate::device::Op;
use crate::time::Nanos;

/// One block-layer request for a drive.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct BlockRequest {
    pub id: u64,
    pub op: Op,
    pub sector: u64,
    pub sectors: u32,
    /// The host thread on whose behalf the request was made (CFQ queues by it).
    pub thread: u32,
    /// Synchronous (reads, O_DIRECT/O_SYNC writes, flushes) vs asynchronous (background) I/O.
    pub sync: bool,
    pub inserted: Nanos,
}

/// A drive command built from one or more merged requests.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Dispatch {
    pub op: Op,
    pub sector: u64,
    pub sectors: u32,
}

/// Which scheduler, with its tunables (names and defaults as in Linux sysfs).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SchedulerKind {
    /// `none` (noop on legacy kernels): FIFO, with back/front merging of contiguous requests.
    None,
    /// `mq-deadline`: sector-sorted per direction, FIFO expiry, batches, write starvation.
    MqDeadline { read_expire_ns: Nanos, write_expire_ns: Nanos, fifo_batch: u32, writes_starved: u32 },
    /// Legacy CFQ-like: per-thread queues served in time slices, idling `slice_idle` for a
    /// sync thread's next request.
    Cfq { slice_sync_ns: Nanos, slice_async_ns: Nanos, slice_idle_ns: Nanos, quantum: u32 },
}

/// Limits shared by every scheduler.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct QueueLimits {
    /// `nr_requests`: requests the queue holds before submitters wait.
    pub nr_requests: u32,
    /// `max_sectors_kb` in sectors: the largest merged request.
    pub max_sectors: u32,
}

/// The engine's view of a scheduler.
pub trait Scheduler {
    /// Adds a request; it may merge into a queued one.
    fn insert(&mut self, now: Nanos, request: BlockRequest);
    /// The next command to send to the drive, or `None` (nothing queued, or idling on purpose).
    /// The ids of every request it covers are appended to `merged_ids`.
    fn dispatch(&mut self, now: Nanos, merged_ids: &mut Vec<u64>) -> Option<Dispatch>;
    /// When to call `dispatch` again although nothing else happened (CFQ's idle timer).
    fn next_timer(&self) -> Option<Nanos>;
    /// Tells the scheduler a request of `thread` completed (CFQ uses it to end idling).
    fn completed(&mut self, now: Nanos, thread: u32, sync: bool);
    /// Requests queued (not yet dispatched).
    fn queued(&self) -> usize;
}

// ---------------------------------------------------------------------------------------------
// Implementations: `none.rs`, `deadline.rs`, `cfq.rs`, sharing the request pool and merge index
// in `pool.rs`.

mod cfq;
mod deadline;
mod none;
mod pool;
pub mod plug;

pub use cfq::Cfq;
pub use deadline::MqDeadline;
pub use none::NoneScheduler;

use crate::error::{Error, ErrorKind, Result};
use crate::time::NANOS_PER_MILLI;

/// Builds the scheduler for one drive. Panics on tunables or limits that [`SchedulerKind::validate`]
/// or [`QueueLimits::validate`] reject (callers validate user input first).
pub fn new_scheduler(kind: SchedulerKind, limits: QueueLimits) -> Box<dyn Scheduler> {
    Box::new(AnyScheduler::new(kind, limits))
}

/// One of the schedulers, called without dynamic dispatch: the engine asks a member's scheduler
/// several things per request, and most answers (an empty queue, no timer) are one load once
/// inlined.
pub enum AnyScheduler {
    None(NoneScheduler),
    MqDeadline(MqDeadline),
    Cfq(Cfq),
}

impl AnyScheduler {
    /// As [`new_scheduler`].
    pub fn new(kind: SchedulerKind, limits: QueueLimits) -> AnyScheduler {
        match kind {
            SchedulerKind::None => AnyScheduler::None(NoneScheduler::new(limits)),
            SchedulerKind::MqDeadline { .. } => AnyScheduler::MqDeadline(MqDeadline::new(kind, limits)),
            SchedulerKind::Cfq { .. } => AnyScheduler::Cfq(Cfq::new(kind, limits)),
        }
    }

    /// Whether `next_timer` can ever be `Some`: only CFQ holds requests back (idling).
    pub fn sets_timers(&self) -> bool {
        matches!(self, AnyScheduler::Cfq(_))
    }
}

/// Forwards a call to whichever scheduler it is.
macro_rules! each {
    ($self:expr, $s:ident => $call:expr) => {
        match $self {
            AnyScheduler::None($s) => $call,
            AnyScheduler::MqDeadline($s) => $call,
            AnyScheduler::Cfq($s) => $call,
        }
    };
}

impl Scheduler for AnyScheduler {
    #[inline]
    fn insert(&mut self, now: Nanos, request: BlockRequest) {
        each!(self, s => s.insert(now, request))
    }
    /// Forced inline: a member's dispatch asks after every completion, and mq-deadline's
    /// answer from an empty queue is a few loads once inlined.
    #[inline(always)]
    fn dispatch(&mut self, now: Nanos, merged_ids: &mut Vec<u64>) -> Option<Dispatch> {
        each!(self, s => s.dispatch(now, merged_ids))
    }
    #[inline]
    fn next_timer(&self) -> Option<Nanos> {
        each!(self, s => s.next_timer())
    }
    #[inline]
    fn completed(&mut self, now: Nanos, thread: u32, sync: bool) {
        each!(self, s => s.completed(now, thread, sync))
    }
    #[inline]
    fn queued(&self) -> usize {
        each!(self, s => s.queued())
    }
}

impl SchedulerKind {
    /// mq-deadline with the kernel's defaults (block/mq-deadline.c: `read_expire = HZ / 2`,
    /// `write_expire = 5 * HZ`, `writes_starved = 2`, `fifo_batch = 16`; the same values are
    /// documented in Documentation/block/deadline-iosched.rst).
    pub fn mq_deadline_default() -> SchedulerKind {
        SchedulerKind::MqDeadline {
            read_expire_ns: 500 * NANOS_PER_MILLI,
            write_expire_ns: 5000 * NANOS_PER_MILLI,
            fifo_batch: 16,
            writes_starved: 2,
        }
    }

    /// CFQ with the defaults of the legacy block/cfq-iosched.c from 2.6.3x on (`cfq_slice_sync =
    /// HZ / 10`, `cfq_slice_async = HZ / 25`, `cfq_slice_idle = HZ / 125`, i.e. 100, 40 and 8 ms;
    /// `cfq_quantum = 8`; see also Documentation/block/cfq-iosched.txt). Kernels before ~2.6.30
    /// used `cfq_quantum = 4` and `slice_idle = HZ / 100`.
    pub fn cfq_default() -> SchedulerKind {
        SchedulerKind::Cfq {
            slice_sync_ns: 100 * NANOS_PER_MILLI,
            slice_async_ns: 40 * NANOS_PER_MILLI,
            slice_idle_ns: 8 * NANOS_PER_MILLI,
            quantum: 8,
        }
    }

    /// The sysfs name (`/sys/block/<dev>/queue/scheduler`).
    pub fn name(&self) -> &'static str {
        match self {
            SchedulerKind::None => "none",
            SchedulerKind::MqDeadline { .. } => "mq-deadline",
            SchedulerKind::Cfq { .. } => "cfq",
        }
    }

    /// A scheduler by name with its default tunables: `none` (or the legacy `noop`),
    /// `mq-deadline` (or the legacy `deadline`), `cfq`. Case-insensitive.
    pub fn parse(name: &str) -> Result<SchedulerKind> {
        match name.trim().to_ascii_lowercase().as_str() {
            "none" | "noop" => Ok(SchedulerKind::None),
            "mq-deadline" | "deadline" => Ok(SchedulerKind::mq_deadline_default()),
            "cfq" => Ok(SchedulerKind::cfq_default()),
            _ => Err(Error::new(
                ErrorKind::InvalidConfig,
                format!("unknown I/O scheduler '{name}' (expected none, mq-deadline or cfq)"),
            )),
        }
    }

    /// Checks tunables against the ranges the kernel's sysfs stores accept (CFQ's slices and
    /// quantum are at least 1; mq-deadline accepts 0 for all four).
    pub fn validate(&self) -> Result<()> {
        let bad = |message: String| Err(Error::new(ErrorKind::InvalidConfig, message));
        match *self {
            SchedulerKind::None | SchedulerKind::MqDeadline { .. } => Ok(()),
            SchedulerKind::Cfq { slice_sync_ns, slice_async_ns, quantum, .. } => {
                if slice_sync_ns == 0 || slice_async_ns == 0 {
                    bad(format!("cfq slice_sync and slice_async must be positive (got {slice_sync_ns} ns, {slice_async_ns} ns)"))
                } else if quantum == 0 {
                    bad("cfq quantum must be at least 1".to_string())
                } else {
                    Ok(())
                }
            }
        }
    }
}

impl QueueLimits {
    /// The largest request the queue builds, in sectors: `max_sectors_kb`, and never below one
    /// 4 KiB page.
    pub fn largest_request_sectors(&self) -> u32 {
        self.max_sectors.max(8)
    }

    /// `nr_requests` at least 1; `max_sectors_kb` at least one 4 KiB page, as sysfs demands
    /// (block/blk-sysfs.c `queue_max_sectors_store`).
    pub fn validate(&self) -> Result<()> {
        if self.nr_requests == 0 {
            return Err(Error::new(ErrorKind::InvalidConfig, "nr_requests must be at least 1"));
        }
        if self.max_sectors < 8 {
            return Err(Error::new(
                ErrorKind::InvalidConfig,
                format!("max_sectors_kb must be at least 4 (got {} sectors)", self.max_sectors),
            ));
        }
        Ok(())
    }
}
