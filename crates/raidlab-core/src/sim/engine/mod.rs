//! The discrete-event engine: the event queue, and the `Simulation` that owns each layer's
//! state and routes every event to the layer that handles it. Host threads (`sim/host`) issue
//! I/O to an array front end (Linux md, `sim/md`, or a hardware controller, `sim/controller`),
//! whose plans (`sim/raid`) become block requests in each member's scheduler and commands to
//! each drive (`sim/block`). Time is integer nanoseconds; events are ordered by (time, sequence).

pub mod config;
pub(crate) mod events;
pub(crate) mod results;
pub(crate) mod slab;

pub use config::{ArrayEvent, ArrayEventKind, ControllerConfig, HwConfig, MdConfig, QueueDepths, RebuildConfig, SimConfig, MAX_SIM_TIME_NS};
pub use config::DriveFaults;
pub use crate::sim::host::HostOp;
pub use crate::sim::block::MemberStats;
pub use results::{DataLoss, DirectionStats, JobResult, PhaseResult, RebuildResult, SeriesPoint, SimResult};
pub use results::DriveEvent;

use crate::device::Drive;
use crate::error::{Error, ErrorKind, Result};
use crate::sim::block::BlockRoom;
use crate::sim::controller::ControllerRoom;
use crate::sim::host::HostRoom;
use crate::sim::md::MdRoom;
use crate::sim::pagecache::PageCacheRoom;
use crate::sim::raid::{RaidKind, RaidRoom};
use crate::time::Nanos;
use events::{Event, EventQueue};

/// A configured run. Build with [`Simulation::new`], then [`Simulation::run_until`] in steps
/// (the caller can show progress between them) or [`Simulation::run`] at once.
pub struct Simulation {
    pub(crate) config: SimConfig,
    pub(crate) now: Nanos,
    pub(crate) stop_ns: Nanos,
    pub(crate) events: EventQueue,
    pub(crate) results: results::Recorder,
    pub(crate) truncated: Option<String>,
    pub(crate) started: bool,
    /// Which RAID kind runs the array (`sim/raid/kind.rs` routes to it).
    pub(crate) kind: RaidKind,
    /// The layers, from the host down; each owns its state (`sim/<layer>/`).
    pub(crate) host: HostRoom,
    pub(crate) pagecache: PageCacheRoom,
    /// What every RAID kind shares (the planner, operations in flight, failures and rebuild).
    pub(crate) raid: RaidRoom,
    pub(crate) md: MdRoom,
    pub(crate) hw: ControllerRoom,
    pub(crate) block: BlockRoom,
}

impl Simulation {
    /// Validates the configuration and builds the run. `drives` has one model per member.
    pub fn new(config: SimConfig, drives: Vec<Box<dyn Drive>>) -> Result<Simulation> {
        if !config.workload.jobs.is_empty() {
            config.workload.validate()?;
        }
        if !(1..=MAX_SIM_TIME_NS).contains(&config.max_time_ns) {
            return Err(config_error(format!(
                "max_time_ns = {} is out of range: 1 to {MAX_SIM_TIME_NS} ns (10^6 s; one time-series point per simulated second)",
                config.max_time_ns
            )));
        }
        let array = RaidKind::array(&config)?;
        if drives.len() != array.devices() as usize {
            return Err(config_error(format!("{} drives for {} members", drives.len(), array.devices())));
        }
        let raid = RaidRoom::new(&config, &array, &drives)?;
        let block = BlockRoom::new(&config, RaidKind::member_queue(&config), drives)?;
        let host = HostRoom::new(&config, &array)?;
        let pagecache = PageCacheRoom::new(&config, &array, &host.regions())?;
        let md = MdRoom::new(&config, &array);
        let hw = ControllerRoom::new(&config, &array)?;
        let time_limit = config.workload.time_limit_ns();
        let stop_ns = if time_limit > 0 { time_limit.min(config.max_time_ns) } else { config.max_time_ns };
        if config.workload.jobs.is_empty() && config.timeline.is_empty() && !config.rebuild.spare {
            return Err(config_error("nothing to simulate: no workload and no failure timeline".into()));
        }
        let first_phase = if config.failed.is_empty() { "optimal" } else { "degraded" };
        let mut results = results::Recorder::new(&config.workload, first_phase);
        if config.latency_by_second {
            results.keep_latency_by_second();
        }
        Ok(Simulation {
            now: 0,
            stop_ns,
            events: EventQueue::with_capacity(4096),
            results,
            truncated: None,
            started: false,
            kind: RaidKind::of(&config),
            host,
            pagecache,
            raid,
            md,
            hw,
            block,
            config,
        })
    }

    pub fn now(&self) -> Nanos {
        self.now
    }

    /// What the instance's EBS limits did so far (None without host limits).
    pub fn host_report(&self) -> Option<crate::sim::instance::HostReport> {
        self.block.host_meter.as_ref().map(|meter| {
            meter.borrow().check();
            meter.borrow().report()
        })
    }

    /// The time the run stops at the latest.
    pub fn stop_ns(&self) -> Nanos {
        self.stop_ns
    }

    /// Whether the run has ended (time limit, all jobs finished, or a bound hit).
    pub fn finished(&self) -> bool {
        self.started && (self.now >= self.stop_ns || self.events.is_empty() || self.truncated.is_some())
    }

    /// Runs to completion and returns the results.
    pub fn run(mut self) -> SimResult {
        self.run_until(Nanos::MAX);
        self.finish()
    }

    /// Processes events up to simulated time `until` (or the end of the run).
    pub fn run_until(&mut self, until: Nanos) {
        if !self.started {
            self.start();
        }
        while let Some(time) = self.events.peek_time() {
            // Data loss ends the run at the loss (`stop_ns` moves back to it): re-read the limit
            // each event, and handle nothing after the loss, not even events at the same time
            // (they would complete I/O of an array that no longer exists).
            if time > until.min(self.stop_ns) || self.results.data_loss.is_some() {
                break;
            }
            if self.events.pushed() > self.config.max_events {
                self.truncated = Some(format!("stopped after {} events (max_events)", self.config.max_events));
                break;
            }
            let (time, event) = self.events.pop().expect("peeked");
            assert!(time >= self.now, "event in the past");
            self.now = time;
            self.handle(event);
        }
        if self.events.peek_time().is_none_or(|t| t > self.stop_ns) && until >= self.stop_ns {
            self.now = self.now.max(self.stop_ns.min(self.end_of_work()));
        }
    }

    fn end_of_work(&self) -> Nanos {
        if self.events.is_empty() { self.now } else { self.stop_ns }
    }

    fn start(&mut self) {
        self.started = true;
        self.host.flows = self.host.new_flows();
        self.schedule_timeline();
        self.kind_start();
        self.start_jobs();
    }

    /// Hands the event to the room that owns it.
    fn handle(&mut self, event: Event) {
        match event {
            Event::Host(event) => self.host_event(event),
            Event::PageCache(event) => self.page_cache_event(event),
            Event::Raid(event) => self.raid_event(event),
            Event::Md(event) => self.md_event(event),
            Event::Controller(event) => self.controller_event(event),
            Event::Block(event) => self.block_event(event),
        }
    }

    /// Checks the run's queues, md's stripe caches and raid5d's plugs, and the controller's
    /// state (tests call it between steps).
    pub fn check(&mut self) {
        self.block.check();
        self.kind_check();
    }

    /// Ends the run and returns the results.
    pub fn finish(mut self) -> SimResult {
        let end = self.now.min(self.stop_ns);
        let pct = self.rebuild_pct();
        self.results.close_windows(end, pct);
        for member in &mut self.block.members {
            member.finish(end);
        }
        self.estimate_rebuilds(end);
        let member_stats = self.block.members.iter().map(|m| m.stats.clone()).collect();
        let finished: Vec<bool> = self.host.jobs.iter().map(|job| job.finished).collect();
        self.results.finish(&self.config, end, &finished, member_stats, self.events.pushed(), self.truncated.take())
    }

    /// What the members' behaviour did so far (latent errors met, corrections,
    /// drops), in time order; read it before `finish`.
    pub fn drive_events(&self) -> &[DriveEvent] {
        &self.md.faults.events
    }

    /// The page cache, if the run has one (buffered jobs): its `stats()` are the run's page-cache
    /// figures (read them before `finish`), and tests call its `check()` between steps.
    pub fn page_cache(&self) -> Option<&crate::sim::pagecache::PageCache> {
        self.pagecache.cache.as_ref()
    }
}


pub(crate) fn config_error(message: String) -> Error {
    Error::new(ErrorKind::InvalidConfig, message)
}



