//! Linux md as the kernel runs it, beside the stateless planner: the raid4/5/6 stripe cache
//! (`stripe_cache`), whose heads keep their pages between requests, and the CPU of the threads
//! that handle them (`raid5d`).

pub(crate) mod faults;
pub(crate) mod flush;
pub(crate) mod front;
pub(crate) mod inner;
pub(crate) mod plug;
pub(crate) mod resync;
pub mod raid5d;
pub mod stripe_cache;

pub use raid5d::{Raid5dCpu, Raid5dThreads};
pub use stripe_cache::{HeadIo, StripeCache, WriteBio};

/// md's events: raid5d's passes (a stack's inner arrays' too).
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub(crate) enum MdEvent {
    /// md's raid5d handles the stripe heads queued for it.
    Raid5d,
    /// raid5d's pass finished handling its heads: their member I/O leaves md.
    Raid5dDone,
    /// Inner array `set`'s raid5d handles its queued stripe heads.
    InnerRaid5d { set: u32 },
    /// Inner array `set`'s raid5d pass finished handling its heads.
    InnerRaid5dDone { set: u32 },
}

use crate::layout::{Array, Level};
use crate::sim::engine::{ControllerConfig, SimConfig};
use std::collections::VecDeque;

/// md's state in a run: the raid4/5/6 stripe cache and raid5d, the stripe heads that plans
/// hold, a stack's inner arrays, read-error corrections and md's flush.
pub(crate) struct MdRoom {
    /// md's raid4/5/6 stripe cache: every host write of a parity array goes through it.
    pub(crate) stripes: Option<StripeCache>,
    pub(crate) raid5d_pending: bool,
    pub(crate) raid5d: Raid5dThreads,
    pub(crate) head_ios: Vec<HeadIo>,
    pub(crate) stripe_done: Vec<u32>,
    /// Stripe heads free for planned operations (`u32::MAX`: not counted), and the operations
    /// waiting for heads, in order.
    pub(crate) stripe_heads_free: u32,
    pub(crate) stripe_waiters: VecDeque<u32>,
    /// The stripe caches and raid5d of a stack's inner raid4/5/6 arrays.
    pub(crate) inner: Option<inner::InnerStripes>,
    /// md's read-error corrections in progress, and what the drives did.
    pub(crate) faults: faults::FaultState,
    /// md's flush in flight and the host flushes waiting for the next.
    pub(crate) flush: flush::MdFlushState,
    pub(crate) flush_done_scratch: Vec<u32>,
}

impl MdRoom {
    /// md's state for `array`: a stripe cache for raid4/5/6 (a stack's inner arrays' caches),
    /// idle under a controller.
    pub(crate) fn new(config: &SimConfig, array: &Array) -> MdRoom {
        let parity = matches!(array.level(), Level::Raid4 | Level::Raid5 | Level::Raid6);
        let stripe_heads_free = match config.controller {
            ControllerConfig::Md(md) if parity => md.stripe_cache_size,
            _ => u32::MAX,
        };
        let stripes = match config.controller {
            ControllerConfig::Md(md) if parity => {
                let mut cache = StripeCache::new(array.clone(), md.stripe_cache_size, md.rmw_level);
                cache.set_bypass_threshold(md.preread_bypass_threshold);
                Some(cache)
            }
            _ => None,
        };
        let group_thread_cnt = match config.controller {
            ControllerConfig::Md(md) => md.group_thread_cnt,
            _ => 0,
        };
        let max_sectors = config.queue_limits.largest_request_sectors();
        MdRoom {
            stripes,
            raid5d_pending: false,
            raid5d: Raid5dThreads::new(group_thread_cnt, config.array.member_kib.len(), max_sectors),
            head_ios: Vec::new(),
            stripe_done: Vec::new(),
            stripe_heads_free,
            stripe_waiters: VecDeque::new(),
            inner: inner::InnerStripes::for_array(array, config.controller, max_sectors),
            faults: faults::FaultState::default(),
            flush: flush::MdFlushState::default(),
            flush_done_scratch: Vec::new(),
        }
    }
}

impl MdRoom {
    /// Checks the stripe caches (a stack's inner ones too), raid5d's threads and md's flush.
    pub(crate) fn check(&self) {
        if let Some(inner) = &self.inner {
            inner.check();
        }
        if let Some(cache) = &self.stripes {
            cache.check();
        }
        self.raid5d.check();
        self.flush.check();
    }
}
