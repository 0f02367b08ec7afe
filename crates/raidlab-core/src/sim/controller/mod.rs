//! A hardware RAID controller (issue 20): its cache and destage (`cache`), its settings and
//! policies (`config`), and its ceilings (`ceilings`). The engine (sim/engine/hw.rs) routes
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

pub use cache::WriteCache;
pub use ceilings::{Ceilings, Serial};
pub use config::{CommandOrder, HwConfig, MirrorReads, ReadAheadPolicy, WritePolicy};

use crate::layout::Array;

/// The controller's state in a run.
pub struct Controller {
    pub config: HwConfig,
    pub cache: WriteCache,
    pub ceilings: Ceilings,
    /// Commands outstanding on all drives (bounded by `commands_total`).
    pub commands_out: u32,
    /// Host commands inside the controller (bounded by `host_queue_depth`).
    pub host_commands: u32,
    /// Issue 24: the BBU is running a learn cycle.
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
