//! A hardware RAID controller: its cache and destage (`cache`), its settings and
//! policies (`config`), and its ceilings (`ceilings`). The front end (`front`) routes
//! host I/O through it; this room holds the controller's state and its invariants.
//!
//! Queues, from the host down:
//! - the host's block layer queues on the controller's logical drive (one device; its
//!   scheduler and `nr_requests`, and the driver's per-device depth `host_queue_depth`);
//! - the firmware keeps at most `commands_per_drive` commands on each drive and
//!   `commands_total` on all, and orders the rest (`command_order`);
//! - each drive queues what it is given up to its own depth (TCQ/NCQ).

pub mod cache;
pub mod ceilings;
pub mod config;
pub(crate) mod front;
pub(crate) mod host_queue;
pub(crate) mod rebuild;

pub use cache::WriteCache;
pub use ceilings::{Ceilings, Serial};
pub use config::{CommandOrder, HwConfig, MirrorReads, ReadAheadPolicy, WritePolicy};

/// A hardware controller's events.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub(crate) enum ControllerEvent {
    /// The host queue on the controller's logical drive asked to be polled (CFQ idling ended).
    ArrayQueueTimer,
    /// A block's data has crossed the controller's shared device bus.
    BlockDone { block: u64 },
    /// A destage finished its parity work (XOR engine, cache memory).
    DestageDone { destage: u64 },
    /// The BBU starts (true) or ends (false) its learn cycle.
    BbuLearn { start: bool },
}

use crate::error::Result;
use crate::layout::Array;
use crate::sim::engine::{config_error, ControllerConfig, SimConfig};
use crate::SECTOR_BYTES;

/// A hardware controller's part of a run (both None under md): the controller, and the host's
/// queue on its logical drive.
pub(crate) struct ControllerRoom {
    pub(crate) controller: Option<Controller>,
    pub(crate) queue: Option<host_queue::ArrayQueue>,
    /// Host I/O ids the queue released (reused).
    pub(crate) dispatched: Vec<u64>,
}

impl ControllerRoom {
    /// The controller the configuration asks for (both None under md), checked against the
    /// workload: a write is taken whole, so it must fit the cache's write share.
    pub(crate) fn new(config: &SimConfig, array: &Array) -> Result<ControllerRoom> {
        let ControllerConfig::Hardware(hw) = config.controller else {
            return Ok(ControllerRoom { controller: None, queue: None, dispatched: Vec::new() });
        };
        hw.validate()?;
        let controller = Controller::new(hw, array);
        let largest = config.workload.jobs.iter().flat_map(|j| j.block_sizes.iter().map(|b| b.0)).max().unwrap_or(0);
        // A write is taken whole: it must fit the write share (pages it may straddle too).
        if hw.write_back() && largest + 2 * crate::PAGE_SECTORS * SECTOR_BYTES > controller.cache.write_capacity() {
            return Err(config_error(format!(
                "the controller cache's write share ({} bytes) cannot take a {largest}-byte write; give a larger cache or a smaller read share",
                controller.cache.write_capacity()
            )));
        }
        let queue = host_queue::ArrayQueue::new(config.scheduler, config.queue_limits, hw.host_queue_depth);
        Ok(ControllerRoom { controller: Some(controller), queue: Some(queue), dispatched: Vec::new() })
    }
}

impl ControllerRoom {
    pub(crate) fn check(&self) {
        if let Some(controller) = &self.controller {
            controller.check();
        }
        if let Some(queue) = &self.queue {
            queue.check();
        }
    }
}

/// The controller's state in a run.
pub struct Controller {
    pub config: HwConfig,
    pub cache: WriteCache,
    pub ceilings: Ceilings,
    /// Commands outstanding on all drives (bounded by `commands_total`).
    pub commands_out: u32,
    /// Host commands inside the controller (bounded by `host_queue_depth`).
    pub host_commands: u32,
    /// The BBU is running a learn cycle.
    pub learning: bool,
}

impl Controller {
    pub fn new(config: HwConfig, array: &Array) -> Controller {
        Controller {
            config,
            cache: WriteCache::new(config, array),
            ceilings: Ceilings::new(&config),
            commands_out: 0,
            host_commands: 0,
            learning: false,
        }
    }

    /// Whether host writes are acknowledged from the cache now (a learn cycle may switch the
    /// cache to write-through).
    pub fn write_back(&self) -> bool {
        if self.learning {
            self.config.write_back_learning()
        } else {
            self.config.write_back()
        }
    }

    /// Starts or ends the BBU's learn cycle. While the cache is write-through, its dirty data
    /// drains: the cache destages all of it (the firmware flushes the cache when it leaves
    /// write-back).
    pub fn set_learning(&mut self, learning: bool) {
        self.learning = learning;
        self.cache.drain_all = learning && !self.write_back();
    }

    /// Commands the firmware may still start on the drives.
    pub fn command_budget(&self) -> u32 {
        if self.config.commands_total == 0 {
            u32::MAX
        } else {
            self.config.commands_total - self.commands_out
        }
    }

    /// Checks the controller's state: the cache's bookkeeping and the firmware limits.
    pub fn check(&self) {
        self.cache.check();
        if self.config.commands_total > 0 {
            assert!(self.commands_out <= self.config.commands_total, "more commands out than the firmware allows");
        }
        // (The host queue checks its commands against `host_queue_depth`: a merged command
        // carries several host I/Os, so `host_commands` may exceed it.)
        assert_eq!(self.cache.drain_all, self.learning && !self.write_back(), "the cache drains while a learn cycle has it write-through");
        assert_eq!(self.ceilings.channels.is_empty(), self.config.channels == 0 || self.config.channel_bytes_per_second == 0);
    }
}
