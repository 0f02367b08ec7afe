//! The discrete-event engine: host threads issue I/O to an array front end (Linux md or a
//! hardware controller), whose plans become block requests in each member's scheduler and
//! commands to each drive. Time is integer nanoseconds; events are ordered by (time, sequence).

mod array_queue;
mod buffered;
pub mod config;
mod events;
mod faults;
mod flow;
mod host;
mod hw;
// issue 24 §2: the stripe caches of a stack's inner raid4/5/6 arrays.
mod inner_stripes;
mod md_flush;
mod members;
mod raid5d_plug;
mod rebuild;
mod results;
mod slab;
mod stream;
mod stripes;

pub use config::{ArrayEvent, ArrayEventKind, ControllerConfig, HwConfig, MdConfig, QueueDepths, RebuildConfig, SimConfig, MAX_SIM_TIME_NS};
pub use config::DriveFaults;
pub use host::HostOp;
pub use members::MemberStats;
pub use results::{DataLoss, DirectionStats, JobResult, PhaseResult, RebuildResult, SeriesPoint, SimResult};
pub use results::DriveEvent;

use crate::device::{AnyDrive, Drive, Op};
use crate::error::{Error, ErrorKind, Result};
use crate::layout::{Array, Level};
use crate::plan::{IoKind, MemberIo, MirrorState, Plan, Planner, Request, RmwLevel};
use crate::sim::md::{HeadIo, Raid5dThreads, StripeCache};
use crate::sim::offsets::Region;
use crate::sim::workload::Job;
use crate::sim::sched::{self, BlockRequest, Scheduler};
use crate::time::Nanos;
use crate::SECTOR_BYTES;
use crate::sim::controller::{CommandOrder, Controller, MirrorReads};
use array_queue::ArrayQueue;
use events::{Event, EventQueue};
use host::{HostIntent, JobState};
use members::Member;
use slab::Slab;
use std::collections::{HashMap, VecDeque};

/// The kernel threads that issue member I/O of their own, as the schedulers see them (CFQ
/// keeps a queue per thread): md's raid5d (stripe handling, and md correcting a read error),
/// the page cache's flusher, and md's resync thread. Host threads are numbered from 0.
const RAID5D_THREAD: u32 = u32::MAX;
const FLUSHER_THREAD: u32 = u32::MAX - 1;
const RESYNC_THREAD: u32 = u32::MAX - 2;

/// Who is waiting for an array operation.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Owner {
    Host(u32),
    /// A controller destage of one cache row.
    Destage(u64),
    /// A controller read-ahead.
    Prefetch,
    /// A rebuild window: first member sector, length, and which rebuild (its result's index).
    Rebuild(u64, u32, u32),
    /// A batch of md stripe heads handled alike (raid4/5/6 writes).
    Stripes(u32),
    /// A batch of stripe heads of inner array `.0` of a stack (issue 24 §2).
    InnerStripes(u32, u32),
    // Issue 24 §3 (faults.rs): md correcting a read error, by correction.
    /// Reading the other members to compute the failed block.
    ReadFix(u32),
    /// Writing the computed block back to the member.
    Rewrite(u32),
    /// Reading it back.
    ReadBack(u32),
    /// md's one flush in flight to the members (md_flush.rs), for the host flushes it covers.
    MdFlush,
}

struct HostIo {
    job: u32,
    thread: u32,
    op: HostOp,
    sector: u64,
    sectors: u64,
    issued_at: Nanos,
}

struct ArrayOp {
    owner: Owner,
    thread: u32,
    flush: bool,
    reads: Vec<MemberIo>,
    writes: Vec<MemberIo>,
    pending: u32,
    in_writes: bool,
    stripe_heads: u32,
}

#[derive(Clone, Copy)]
struct BlockRef {
    op: u32,
    member: u32,
    read: bool,
    sector: u64,
    sectors: u64,
    thread: u32,
}

/// What the mirror read balancer is told about member I/O.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum MirrorAccounting {
    /// Not a mirrored array.
    None,
    /// md: every member I/O counts as pending; reads also move the head.
    Md,
    /// A hardware controller's mirrors: reads only.
    Reads,
}

/// A configured run. Build with [`Simulation::new`], then [`Simulation::run_until`] in steps
/// (the caller can show progress between them) or [`Simulation::run`] at once.
pub struct Simulation {
    config: SimConfig,
    now: Nanos,
    stop_ns: Nanos,
    planner: Planner,
    mirrors: MirrorState,
    mirrored: MirrorAccounting,
    members: Vec<Member>,
    events: EventQueue,
    jobs: Vec<JobState>,
    host_ios: Slab<HostIo>,
    ops: Slab<ArrayOp>,
    blocks: Slab<BlockRef>,
    stripe_heads_free: u32,
    stripe_waiters: VecDeque<u32>,
    /// A hardware RAID controller (sim/controller) and the host's queue on its logical drive.
    controller: Option<Controller>,
    array_queue: Option<ArrayQueue>,
    /// Host I/O ids the array queue released (reused).
    host_dispatch: Vec<u64>,
    /// md's raid4/5/6 stripe cache: every host write of a parity array goes through it.
    stripes: Option<StripeCache>,
    raid5d_pending: bool,
    raid5d: Raid5dThreads,
    head_ios: Vec<HeadIo>,
    /// A plug is being flushed: requests go into their queues, which run only once all are in
    /// (`blk_mq_flush_plug_list` inserts the whole list, then runs the queues).
    plug_flushing: bool,
    /// A flushing plug's queues in the order their requests were made (the flush runs them
    /// newest first: `issue_unplugged`); kept for its allocation.
    plug_made: Vec<u32>,
    stripe_done: Vec<u32>,
    results: results::Recorder,
    plan_scratch: Plan,
    /// Emptied member I/O vectors of finished operations, reused so operations allocate nothing.
    spare_ios: Vec<Vec<MemberIo>>,
    truncated: Option<String>,
    started: bool,
    failed: Vec<u32>,
    rebuild: Option<rebuild::RebuildState>,
    /// Sectors of non-rebuild I/O completed on members (md's idleness check).
    foreground_sectors: u64,
    /// Non-rebuild member commands completed (a controller's rebuild share).
    foreground_ios: u64,
    /// fio's steady-state criterion (the first job's that sets one): the run ends once met.
    steady: crate::sim::steady::SteadyState,
    // The host's page cache (buffered jobs only).
    page_cache: Option<crate::sim::pagecache::PageCache>,
    page_cache_bios: Vec<crate::sim::pagecache::Bio>,
    /// fsyncs in flight: files each still waits for.
    page_cache_syncs: HashMap<u32, u32>,
    /// fio `flow` groups (issue 22).
    flows: flow::Flows,
    /// Issue 24: the instance's meter in front of every volume member (`config.host_limits`).
    host_meter: Option<std::rc::Rc<std::cell::RefCell<crate::sim::instance::HostMeter>>>,
    /// issue 24 §2: the stripe caches and raid5d of a stack's inner raid4/5/6 arrays.
    inner_stripes: Option<inner_stripes::InnerStripes>,
    /// Issue 24 §3: md's read-error corrections in progress, and what the drives did.
    faults: faults::FaultState,
    /// md's flush in flight and the host flushes waiting for the next (md_flush.rs).
    md_flush: md_flush::MdFlushState,
    md_flush_done_scratch: Vec<u32>,
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
        let array = match &config.stack {
            Some(stack) => stacked_array(&config, stack)?,
            None => Array::new(&config.array)?,
        };
        if drives.len() != array.devices() as usize {
            return Err(config_error(format!("{} drives for {} members", drives.len(), array.devices())));
        }
        let (rmw_level, read_balance) = match config.controller {
            ControllerConfig::Md(md) => (md.rmw_level, md.read_balance),
            ControllerConfig::Hardware(hw) => (RmwLevel::Enable, match hw.mirror_reads {
                MirrorReads::Nearest => crate::plan::ReadBalance::Md,
                MirrorReads::Primary => crate::plan::ReadBalance::First,
                MirrorReads::RoundRobin => crate::plan::ReadBalance::RoundRobin,
                MirrorReads::LeastOutstanding => crate::plan::ReadBalance::LeastOutstanding,
            }),
        };
        let mut mirrors = MirrorState::new(array.devices(), read_balance);
        for (member, drive) in drives.iter().enumerate() {
            mirrors.nonrotational[member] = !drive.info().rotational;
        }
        let mirrored = match (array.level(), config.controller) {
            (Level::Raid1 | Level::Raid10, ControllerConfig::Md(_)) => MirrorAccounting::Md,
            (Level::Raid1 | Level::Raid10, ControllerConfig::Hardware(_)) => MirrorAccounting::Reads,
            // A stack with copies (raid1+0, raid0+1): md's read balancing of its mirrors.
            (_, ControllerConfig::Md(_)) if array.stack().is_some() && array.copies() > 1 => MirrorAccounting::Md,
            _ => MirrorAccounting::None,
        };
        let planner = Planner::new(array.clone(), &config.failed, rmw_level)?;
        faults::check(&config, array.devices())?;
        let drives = faults::wrap_drives(&config, drives);
        let (drives, host_meter) = limit_by_host(&config, drives)?;
        let members = build_members(&config, drives);
        let jobs = build_jobs(&config, &array)?;
        let regions: Vec<_> = jobs.iter().map(|j| (j.job.clone(), j.region)).collect();
        let page_cache = buffered::build_page_cache(&config, &array, &regions);
        if page_cache.is_some() {
            config.page_cache.validate()?;
        }
        let stripe_heads_free = match config.controller {
            ControllerConfig::Md(md) if is_parity(&array) => md.stripe_cache_size,
            _ => u32::MAX,
        };
        let (controller, array_queue) = match config.controller {
            ControllerConfig::Hardware(hw) => {
                hw.validate()?;
                let controller = Controller::new(hw, &array);
                let largest = config.workload.jobs.iter().flat_map(|j| j.block_sizes.iter().map(|b| b.0)).max().unwrap_or(0);
                // A write is taken whole: it must fit the write share (pages it may straddle too).
                if hw.write_back() && largest + 2 * crate::PAGE_SECTORS * SECTOR_BYTES > controller.cache.write_capacity() {
                    return Err(config_error(format!(
                        "the controller cache's write share ({} bytes) cannot take a {largest}-byte write; give a larger cache or a smaller read share",
                        controller.cache.write_capacity()
                    )));
                }
                let queue = ArrayQueue::new(config.scheduler, config.queue_limits, hw.host_queue_depth);
                (Some(controller), Some(queue))
            }
            ControllerConfig::Md(_) => (None, None),
        };
        let stripes = match config.controller {
            ControllerConfig::Md(md) if is_parity(&array) => {
                let mut cache = StripeCache::new(array.clone(), md.stripe_cache_size, md.rmw_level);
                cache.set_bypass_threshold(md.preread_bypass_threshold);
                Some(cache)
            }
            _ => None,
        };
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
        let failed = config.failed.clone();
        Ok(Simulation {
            now: 0,
            stop_ns,
            planner,
            mirrors,
            mirrored,
            members,
            events: EventQueue::with_capacity(4096),
            jobs,
            host_ios: Slab::with_capacity(4096),
            ops: Slab::with_capacity(4096),
            blocks: Slab::with_capacity(16384),
            stripe_heads_free,
            stripe_waiters: VecDeque::new(),
            controller,
            array_queue,
            host_dispatch: Vec::new(),
            stripes,
            raid5d_pending: false,
            raid5d: Raid5dThreads::new(
                match config.controller {
                    ControllerConfig::Md(md) => md.group_thread_cnt,
                    _ => 0,
                },
                config.array.member_kib.len(),
                config.queue_limits.largest_request_sectors(),
            ),
            head_ios: Vec::new(),
            plug_flushing: false,
            plug_made: Vec::new(),
            stripe_done: Vec::new(),
            results,
            plan_scratch: Plan::new(),
            spare_ios: Vec::new(),
            truncated: None,
            started: false,
            failed,
            rebuild: None,
            foreground_sectors: 0,
            foreground_ios: 0,
            steady: config.workload.jobs.iter().map(|j| j.steady).find(|s| s.enabled()).unwrap_or_default(),
            page_cache,
            page_cache_bios: Vec::new(),
            page_cache_syncs: HashMap::new(),
            flows: flow::Flows::default(),
            host_meter,
            inner_stripes: inner_stripes::InnerStripes::for_array(&array, config.controller, config.queue_limits.largest_request_sectors()),
            faults: faults::FaultState::default(),
            md_flush: md_flush::MdFlushState::default(),
            md_flush_done_scratch: Vec::new(),
            config,
        })
    }

    pub fn now(&self) -> Nanos {
        self.now
    }

    /// What the instance's EBS limits did so far (issue 24; None without host limits).
    pub fn host_report(&self) -> Option<crate::sim::instance::HostReport> {
        self.host_meter.as_ref().map(|meter| {
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
        self.flows = flow::Flows::new(&self.jobs);
        self.schedule_timeline();
        self.schedule_bbu_learn();
        if let Some(first) = self.jobs.iter().map(|j| j.job.group).min() {
            self.begin_group(first);
        }
    }

    /// Starts the jobs of stonewall group `group` (fio `stonewall`): each after its own
    /// `startdelay` (fio's `startdelay` counts from when the job may start).
    fn begin_group(&mut self, group: u32) {
        for job in 0..self.jobs.len() as u32 {
            let state = &self.jobs[job as usize];
            if state.job.group != group {
                continue;
            }
            if state.job.start_delay_ns > 0 {
                self.events.push(self.now + state.job.start_delay_ns, Event::JobStart { job });
            } else {
                self.launch(job);
            }
        }
    }

    /// A job's threads start issuing.
    fn launch(&mut self, job: u32) {
        self.jobs[job as usize].launch(self.now);
        let state = &self.jobs[job as usize];
        self.results.start_job(job, self.now, state.deadline_ns);
        for thread in 0..self.jobs[job as usize].job.threads {
            if self.jobs[job as usize].job.open_loop() {
                // fio's usec_for_io (io_u.c): a linear rate issues its first I/O at once (no
                // bytes are due yet); a Poisson process waits its first exponential gap.
                let first = if self.jobs[job as usize].job.poisson_arrivals {
                    self.jobs[job as usize].next_arrival(thread as usize, self.now)
                } else {
                    self.now
                };
                self.events.push(first, Event::Arrival { job, thread });
            } else {
                self.issue(job, thread);
            }
        }
        self.after_issue(job);
    }

    /// After a job's threads may have finished: the next stonewall group starts once every
    /// job of this one has.
    fn after_issue(&mut self, job: u32) {
        if !self.jobs[job as usize].check_finished() {
            return;
        }
        for (waiting_job, waiting_thread) in self.flows.leave(&self.jobs[job as usize]) {
            self.events.push(self.now, Event::Resume { job: waiting_job, thread: waiting_thread });
        }
        let group = self.jobs[job as usize].job.group;
        if self.jobs.iter().any(|j| j.job.group == group && !j.finished) {
            return;
        }
        if let Some(next) = self.jobs.iter().map(|j| j.job.group).filter(|&g| g > group).min() {
            self.begin_group(next);
        }
    }

    /// A thread ahead of its flow share waits: `flow_sleep`, or until the flow moves on (and
    /// at the latest until its runtime ends).
    #[inline(never)]
    fn hold_for_flow(&mut self, job: u32, thread: u32) {
        let state = &mut self.jobs[job as usize];
        state.hold(thread as usize);
        if state.job.flow_sleep_ns > 0 {
            self.events.push(self.now + state.job.flow_sleep_ns, Event::Resume { job, thread });
            return;
        }
        let deadline = state.deadline_ns;
        self.flows.wait(&self.jobs[job as usize], job, thread);
        if deadline < Nanos::MAX {
            self.events.push(deadline.max(self.now), Event::Resume { job, thread });
        }
    }

    /// A thread's think pause ended (fio `thinktime`).
    #[inline(never)]
    fn resume(&mut self, job: u32, thread: u32) {
        self.jobs[job as usize].resume(thread as usize);
        self.issue(job, thread);
        self.after_issue(job);
    }

    fn handle(&mut self, event: Event) {
        match event {
            Event::DriveWake { member } => self.drive_wake(member),
            Event::SchedulerTimer { member } => {
                let m = &mut self.members[member as usize];
                if m.timer_at == Some(self.now) {
                    m.timer_at = None;
                    self.kick(member);
                }
            }
            Event::Arrival { job, thread } => self.arrival(job, thread),
            Event::JobStart { job } => self.launch(job),
            Event::Resume { job, thread } => self.resume(job, thread),
            Event::CacheAck { host_io } => self.host_complete(host_io),
            Event::ArrayChange { kind } => self.array_change(kind),
            Event::RebuildTimer => self.rebuild_timer(),
            Event::Raid5d => self.raid5d(),
            Event::Raid5dDone => self.raid5d_done(),
            Event::ArrayQueueTimer => self.array_queue_timer(),
            Event::BlockDone { block } => self.block_done(block),
            Event::DestageDone { destage } => self.destage_done(destage),
            Event::PageCacheTimer => self.page_cache_timer(),
            Event::BbuLearn { start } => self.bbu_learn(start),
            Event::InnerRaid5d { set } => self.inner_raid5d(set),
            Event::InnerRaid5dDone { set } => self.inner_raid5d_done(set),
        }
    }

    #[inline(never)]
    fn arrival(&mut self, job: u32, thread: u32) {
        let state = &mut self.jobs[job as usize];
        let t = thread as usize;
        if state.threads[t].done {
            return;
        }
        state.threads[t].backlog += 1;
        let next = state.next_arrival(t, self.now);
        if next <= self.stop_ns {
            self.events.push(next, Event::Arrival { job, thread });
        }
        self.issue(job, thread);
        self.after_issue(job);
    }

    /// Issues I/O for a thread while it has room (depth, and backlog for open loop).
    fn issue(&mut self, job: u32, thread: u32) {
        if self.now >= self.stop_ns {
            return;
        }
        loop {
            let state = &mut self.jobs[job as usize];
            let open_loop = state.job.open_loop();
            if !state.may_issue(thread as usize) || (open_loop && state.threads[thread as usize].backlog == 0) {
                return;
            }
            if self.flows.ahead(state, state.threads[thread as usize].flow_issued) && !state.threads[thread as usize].done {
                self.hold_for_flow(job, thread);
                return;
            }
            let state = &mut self.jobs[job as usize];
            let Some(intent) = state.next(thread as usize, self.now) else {
                if state.take_pause(thread as usize) {
                    let at = self.now + state.job.think_ns;
                    self.events.push(at, Event::Resume { job, thread });
                }
                return;
            };
            let t = &mut state.threads[thread as usize];
            t.outstanding += 1;
            if open_loop {
                t.backlog -= 1;
            }
            if intent.op != HostOp::Flush {
                t.flow_issued += 1;
                for (waiting_job, waiting_thread) in self.flows.issued(&self.jobs[job as usize]) {
                    self.events.push(self.now, Event::Resume { job: waiting_job, thread: waiting_thread });
                }
            }
            self.submit_host(job, thread, intent);
        }
    }

    fn submit_host(&mut self, job: u32, thread: u32, intent: HostIntent) {
        let sector = intent.offset_bytes / SECTOR_BYTES;
        let sectors = intent.bytes / SECTOR_BYTES;
        assert!(intent.op == HostOp::Flush || (sectors > 0 && intent.bytes % SECTOR_BYTES == 0));
        let io = HostIo { job, thread, op: intent.op, sector, sectors, issued_at: self.now };
        let id = self.host_ios.insert(io);
        if self.page_cache.is_some() && self.jobs[job as usize].job.buffered {
            self.buffered_submit(id);
        } else {
            self.route_host(id);
        }
    }

    /// Sends a host I/O (a job's O_DIRECT I/O, or a page-cache bio) to the array's front end.
    fn route_host(&mut self, id: u32) {
        let io = self.host_ios.get(id);
        let (op, sector, sectors, thread) = (io.op, io.sector, io.sectors, io.thread);
        // The array device is busy while a host I/O is at it (iostat's %util of md0).
        self.results.host_issued(self.now);
        if self.controller.is_some() {
            self.array_queue_submit(id);
        } else if op == HostOp::Write && self.stripes.is_some() {
            self.md_write(id);
        } else if op == HostOp::Write && self.inner_stripes.is_some() {
            self.inner_md_write(id);
        } else if op == HostOp::Flush {
            self.md_flush_request(id);
        } else {
            self.submit_array(Owner::Host(id), op, sector, sectors, thread);
        }
    }

    /// Plans an array operation and starts it (or queues it for stripe-cache room).
    fn submit_array(&mut self, owner: Owner, op: HostOp, sector: u64, sectors: u64, thread: u32) {
        self.plan_scratch.clear();
        if op == HostOp::Flush {
            self.plan_flush();
        } else {
            let request = Request { write: op == HostOp::Write, sector, sectors };
            self.planner
                .plan(&request, &self.mirrors, &mut self.plan_scratch)
                .expect("host requests lie within the array");
        }
        self.submit_planned(owner, thread, op == HostOp::Flush);
    }

    /// Turns the plan in `plan_scratch` into an array operation and starts it.
    fn submit_planned(&mut self, owner: Owner, thread: u32, flush: bool) {
        let (mut reads, mut writes) = (self.spare_ios.pop().unwrap_or_default(), self.spare_ios.pop().unwrap_or_default());
        reads.extend_from_slice(&self.plan_scratch.reads);
        writes.extend_from_slice(&self.plan_scratch.writes);
        let mut array_op = ArrayOp {
            owner,
            thread,
            flush,
            reads,
            writes,
            pending: 0,
            in_writes: false,
            stripe_heads: 0,
        };
        if let ControllerConfig::Md(md) = self.config.controller {
            array_op.stripe_heads = self.plan_scratch.counts.rows_cached.min(md.stripe_cache_size);
        }
        let id = self.ops.insert(array_op);
        let heads = self.ops.get(id).stripe_heads;
        if heads > 0 && (heads > self.stripe_heads_free || !self.stripe_waiters.is_empty()) {
            self.stripe_waiters.push_back(id);
        } else {
            self.start_op(id);
        }
    }

    /// md passes a flush to every live member.
    fn plan_flush(&mut self) {
        for member in 0..self.members.len() as u32 {
            if !self.planner.is_failed(member) {
                self.plan_scratch.writes.push(MemberIo { member, kind: IoKind::Write, sector: 0, sectors: 0 });
            }
        }
    }

    fn start_op(&mut self, id: u32) {
        let heads = self.ops.get(id).stripe_heads;
        assert!(heads <= self.stripe_heads_free, "stripe cache overcommitted");
        if self.stripe_heads_free != u32::MAX {
            self.stripe_heads_free -= heads;
        }
        let op = self.ops.get_mut(id);
        op.in_writes = op.reads.is_empty();
        self.submit_phase(id);
    }

    fn submit_phase(&mut self, id: u32) {
        let op = self.ops.get_mut(id);
        let ios = if op.in_writes { std::mem::take(&mut op.writes) } else { std::mem::take(&mut op.reads) };
        let (thread, flush) = (op.thread, op.flush);
        if ios.is_empty() {
            self.finish_op(id);
            return;
        }
        let mut pending = 0;
        for io in &ios {
            pending += self.submit_member_io(id, io, thread, flush);
        }
        self.ops.get_mut(id).pending = pending;
        // Under a flushing plug the queues run when the flush ends (`issue_unplugged`).
        if !self.plug_flushing {
            for io in &ios {
                self.kick(io.member);
            }
        }
        // Give the vector back so its allocation is reused.
        let op = self.ops.get_mut(id);
        let mut ios = ios;
        ios.clear();
        if op.in_writes { op.writes = ios } else { op.reads = ios }
    }

    /// Queues one member I/O as block requests no larger than `max_sectors_kb` (the block
    /// layer splits larger bios); returns how many.
    fn submit_member_io(&mut self, id: u32, io: &MemberIo, thread: u32, flush: bool) -> u32 {
        let read = !io.kind.is_write();
        let device_op = if flush { Op::Flush } else if read { Op::Read } else { Op::Write };
        let limit = self.config.queue_limits.largest_request_sectors() as u64;
        let (mut sector, end) = (io.sector, io.sector + io.sectors);
        let mut count = 0;
        loop {
            let sectors = (end - sector).min(limit);
            match self.mirrored {
                MirrorAccounting::None => {}
                // md counts every bio in flight on a member in its `nr_pending`, writes and sync
                // I/O too (raid1_write_request, raid1_sync_request and raid10's alike), and only
                // reads that read_balance chose move `next_seq_sect` (update_read_sectors).
                MirrorAccounting::Md if io.kind == IoKind::Read => self.mirrors.issued(io.member, sector, sectors),
                MirrorAccounting::Md => self.mirrors.issued_other(io.member),
                MirrorAccounting::Reads if read => self.mirrors.issued(io.member, sector, sectors),
                MirrorAccounting::Reads => {}
            }
            let block = BlockRef { op: id, member: io.member, read, sector, sectors, thread };
            let block_id = self.blocks.insert(block) as u64;
            let request = BlockRequest {
                id: block_id,
                op: device_op,
                sector,
                sectors: sectors as u32,
                thread,
                sync: true,
                inserted: self.now,
            };
            self.members[io.member as usize].insert(self.now, request);
            count += 1;
            sector += sectors;
            if sector >= end {
                return count;
            }
        }
    }

    fn block_done(&mut self, block_id: u64) {
        let block = self.blocks.get(block_id as u32);
        self.members[block.member as usize].scheduler.completed(self.now, block.thread, true);
        self.block_finished(block_id);
    }

    /// A block's data is there (its scheduler was told when its command completed).
    fn block_finished(&mut self, block_id: u64) {
        let block = self.blocks.remove(block_id as u32);
        if !matches!(self.ops.get(block.op).owner, Owner::Rebuild(..)) {
            self.foreground_sectors += block.sectors;
            self.foreground_ios += 1;
            if self.rebuild.is_some() && matches!(self.config.controller, ControllerConfig::Hardware(_)) {
                self.rebuild_pump();
            }
        }
        match self.mirrored {
            // md moves `head_position` when a read completes (raid1_end_read_request and
            // end_sync_read call update_head_pos; raid10_end_read_request too).
            MirrorAccounting::Md | MirrorAccounting::Reads if block.read => {
                self.mirrors.completed(block.member, block.sector, block.sectors)
            }
            MirrorAccounting::Md => self.mirrors.completed_other(block.member),
            MirrorAccounting::Reads | MirrorAccounting::None => {}
        }
        let op = self.ops.get_mut(block.op);
        assert!(op.pending > 0, "block completion for a finished operation");
        op.pending -= 1;
        if op.pending > 0 {
            return;
        }
        if !op.in_writes && !op.writes.is_empty() {
            op.in_writes = true;
            self.submit_phase(block.op);
        } else {
            self.finish_op(block.op);
        }
    }

    fn finish_op(&mut self, id: u32) {
        let mut op = self.ops.remove(id);
        // Keep the (empty) member I/O vectors for the next operation. (One at a time: an
        // array of the two, iterated, copied the operation about the stack.)
        op.reads.clear();
        op.writes.clear();
        self.spare_ios.push(std::mem::take(&mut op.reads));
        self.spare_ios.push(std::mem::take(&mut op.writes));
        if op.stripe_heads > 0 {
            self.stripe_heads_free += op.stripe_heads;
            self.start_stripe_waiters();
        }
        match op.owner {
            Owner::Host(host_io) if self.controller.is_some() => self.controller_host_done(host_io),
            Owner::Host(host_io) => self.host_complete(host_io),
            Owner::Destage(destage) => self.cache_destaged(destage),
            Owner::Prefetch => {}
            Owner::Rebuild(start, sectors, rebuild) => self.rebuild_window_done(start, sectors as u64, rebuild),
            Owner::Stripes(batch) => self.stripes_done(batch),
            Owner::InnerStripes(set, batch) => self.inner_stripes_done(set, batch),
            Owner::ReadFix(fix) => self.read_fixed(fix),
            Owner::Rewrite(fix) => self.rewritten(fix),
            Owner::ReadBack(fix) => self.read_back(fix),
            Owner::MdFlush => self.md_flush_done(),
        }
    }

    fn start_stripe_waiters(&mut self) {
        while let Some(&next) = self.stripe_waiters.front() {
            if self.ops.get(next).stripe_heads > self.stripe_heads_free {
                return;
            }
            self.stripe_waiters.pop_front();
            self.start_op(next);
        }
    }

    fn host_complete(&mut self, id: u32) {
        // Behind a controller, the I/Os the host queue sent (a job's O_DIRECT I/O or a page-cache
        // bio; not a buffered I/O the page cache served) free their tag.
        let via_queue = self.array_queue.as_ref().is_some_and(|queue| queue.holds(id as u64));
        if self.host_ios.get(id).job == buffered::KERNEL_JOB {
            self.results.host_done(self.now);
            if via_queue {
                self.array_queue_done(id, self.host_ios.get(id).thread);
            }
            self.page_cache_bio_done(id);
            return;
        }
        let io = self.host_ios.remove(id);
        // (A buffered I/O went to the page cache, not to the array: route_host never saw it.)
        if self.page_cache.is_none() || !self.jobs[io.job as usize].job.buffered {
            self.results.host_done(self.now);
        }
        let pct = self.rebuild_pct();
        let seconds = self.results.seconds();
        self.results.close_windows(self.now, pct);
        if self.steady.enabled()
            && self.results.seconds() > seconds
            && self.results.steady_at.is_none()
            && self.results.steady_check(&self.steady, self.now)
        {
            // fio ends a job that reached steady state (steadystate.c): the run stops here.
            self.stop_ns = self.stop_ns.min(self.now);
        }
        if self.now <= self.stop_ns {
            let bytes = io.sectors * SECTOR_BYTES;
            self.results.record(io.job, io.op, bytes, io.issued_at, self.now);
        }
        self.jobs[io.job as usize].completed(io.thread as usize, io.op);
        if via_queue {
            self.array_queue_done(id, io.thread);
        }
        self.issue(io.job, io.thread);
        self.after_issue(io.job);
    }

    /// Dispatches what the member's scheduler releases and re-arms its wake-ups.
    fn kick(&mut self, member: u32) {
        let now = self.now;
        let mut budget = self.command_budget();
        let m = &mut self.members[member as usize];
        m.dispatch(now, &mut budget);
        let next = m.drive.next_event();
        if next != m.wake_at {
            if let Some(time) = next {
                assert!(time >= now, "drive event in the past");
                self.events.push(time, Event::DriveWake { member });
            }
            m.wake_at = next;
        }
        // Only CFQ sets timers: the others are not asked after every dispatch.
        if !m.scheduler.sets_timers() {
            debug_assert_eq!(m.scheduler.next_timer(), None, "a scheduler that sets no timers");
            return;
        }
        let timer = m.scheduler.next_timer();
        if timer != m.timer_at {
            if let Some(time) = timer {
                self.events.push(time.max(now), Event::SchedulerTimer { member });
            }
            m.timer_at = timer.map(|t| t.max(now));
        }
    }

    fn drive_wake(&mut self, member: u32) {
        if self.members[member as usize].wake_at != Some(self.now) {
            return; // stale: the drive's next event moved
        }
        self.members[member as usize].wake_at = None;
        let count = self.members[member as usize].advance(self.now);
        for index in 0..count {
            // Read in place: completing a block never advances a drive (only this wake-up
            // does), so the member's list of finished ids stays as it is until the loop ends.
            let id = self.members[member as usize].done[index];
            if !self.members[member as usize].faulted.is_empty() {
                if let Some(fault) = self.members[member as usize].fault_of(id) {
                    self.block_faulted(member, id, fault);
                    continue;
                }
            }
            if self.controller.is_some() {
                self.controller_block_finished(member, id);
            } else {
                self.block_done(id);
            }
        }
        self.kick(member);
        // A controller's total command limit: commands freed here may start on other drives.
        if count > 0 && self.controller.as_ref().is_some_and(|c| c.config.commands_total > 0) {
            for other in 0..self.members.len() as u32 {
                if other != member && self.members[other as usize].has_waiting() {
                    self.kick(other);
                }
            }
        }
    }

    /// Commands a controller's firmware may still start on the drives (`commands_total`).
    fn command_budget(&mut self) -> u32 {
        let Some(controller) = self.controller.as_mut() else { return u32::MAX };
        if controller.config.commands_total == 0 {
            return u32::MAX;
        }
        let out: u32 = self.members.iter().map(|m| m.in_drive()).sum();
        controller.commands_out = out;
        controller.config.commands_total.saturating_sub(out)
    }

    /// Checks the run's queues, md's stripe caches and raid5d's plugs, and the controller's
    /// state (tests call it between steps).
    pub fn check(&mut self) {
        for member in &self.members {
            member.check();
        }
        self.command_budget();
        if let Some(controller) = &self.controller {
            controller.check();
        }
        if let Some(queue) = &self.array_queue {
            queue.check();
        }
        if let Some(meter) = &self.host_meter {
            meter.borrow().check();
        }
        if let Some(inner) = &self.inner_stripes {
            inner.check();
        }
        if let Some(cache) = &self.stripes {
            cache.check();
        }
        assert!(!self.plug_flushing, "a plug flush left open");
        self.raid5d.check();
        self.md_flush.check();
    }

    /// Ends the run and returns the results.
    pub fn finish(mut self) -> SimResult {
        let end = self.now.min(self.stop_ns);
        let pct = self.rebuild_pct();
        self.results.close_windows(end, pct);
        for member in &mut self.members {
            member.finish(end);
        }
        self.estimate_rebuilds(end);
        let member_stats = self.members.iter().map(|m| m.stats.clone()).collect();
        let finished: Vec<bool> = self.jobs.iter().map(|job| job.finished).collect();
        self.results.finish(&self.config, end, &finished, member_stats, self.events.pushed(), self.truncated.take())
    }

    /// Issue 24 §3: what the members' behaviour did so far (latent errors met, corrections,
    /// drops), in time order; read it before `finish`.
    pub fn drive_events(&self) -> &[DriveEvent] {
        &self.faults.events
    }

    /// The page cache, if the run has one (buffered jobs): its `stats()` are the run's page-cache
    /// figures (read them before `finish`), and tests call its `check()` between steps.
    pub fn page_cache(&self) -> Option<&crate::sim::pagecache::PageCache> {
        self.page_cache.as_ref()
    }
}

impl Simulation {
    /// Extrapolates each unfinished rebuild over the rebuilt drive's zones. A rebuilt sector
    /// costs the media's time to pass under the head (a revolution per track, plus the track's
    /// share of the skews that rotate the next track's first sector: about twice as long on the
    /// inner tracks as on the outer) plus a
    /// share of what else the rebuild waits for per request (command overhead, missed
    /// revolutions between requests, md's sync window), which does not depend on the zone. The
    /// second part is what the measured rate leaves after the media time of the sectors done;
    /// each zone still to come costs both, capped at md's `speed_limit_max`. A media-bound
    /// rebuild thus slows towards the inner tracks as the media does, and one bound by its
    /// requests keeps nearly its rate. A rebuild md held at `speed_limit_min` (foreground I/O:
    /// the measured rate within a quarter of it) runs at that limit whatever the zone: no
    /// estimate here.
    fn estimate_rebuilds(&mut self, end: Nanos) {
        let limits = self.config.rebuild;
        let md = matches!(self.config.controller, ControllerConfig::Md(_));
        for index in 0..self.results.rebuilds.len() {
            let rebuild = &self.results.rebuilds[index];
            if rebuild.end_ns.is_some() || rebuild.aborted_ns.is_some() || rebuild.done_sectors == 0 {
                continue;
            }
            let elapsed = end.saturating_sub(rebuild.start_ns) as f64;
            let member = &self.members[rebuild.member as usize];
            let AnyDrive::Hdd(hdd) = &member.drive else { continue };
            let sectors_per_ns = rebuild.done_sectors as f64 / elapsed.max(1.0);
            let min_limit = limits.speed_limit_min as f64 * 2.0 / 1e9;
            if md && sectors_per_ns <= 1.25 * min_limit {
                continue;
            }
            let floor_ns = if md { 1e9 / (limits.speed_limit_max as f64 * 2.0) } else { 0.0 };
            let (rev_ns, surfaces) = (hdd.geometry().rev_ns() as f64, hdd.geometry().surfaces() as f64);
            // (A rebuild started part-way, `start_sector`, has done the sectors after it.)
            let (offset, total) = (member.lba_offset, rebuild.total_sectors);
            let (start, done) = (rebuild.start_sector, rebuild.start_sector + rebuild.done_sectors);
            // Sectors of [from, to) (member sectors) in each zone, with the media time of one.
            let spans = |from: u64, to: u64| -> Vec<(f64, f64)> {
                hdd.geometry()
                    .zones()
                    .iter()
                    .map(|z| {
                        let (a, b) = (z.first_lba.max(offset + from), (z.first_lba + z.sectors).min(offset + to));
                        // A track streams in a revolution, plus the skew the next track's
                        // first sector is rotated by (a head switch per track, a cylinder
                        // switch per cylinder).
                        let spt = z.spec.sectors_per_track as f64;
                        let skew = ((surfaces - 1.0) * z.spec.track_skew_sectors as f64 + z.spec.cylinder_skew_sectors as f64) / surfaces;
                        (b.saturating_sub(a) as f64, rev_ns * (spt + skew) / spt / spt)
                    })
                    .collect()
            };
            let done_spans = spans(start, done);
            let sectors_done: f64 = done_spans.iter().map(|&(n, _)| n).sum();
            if sectors_done <= 0.0 {
                continue;
            }
            let media_done: f64 = done_spans.iter().map(|&(n, media)| n * media).sum();
            let other_ns = ((elapsed - media_done) / sectors_done).max(0.0);
            let left: f64 = spans(done, total).iter().map(|&(n, media)| n * (other_ns + media).max(floor_ns)).sum();
            self.results.rebuilds[index].estimated_duration_ns = Some((elapsed + left).round() as Nanos);
        }
    }
}

/// A stacked array (issue 24 §2), as md over md: no hardware controller, and no rebuild of a
/// lost raid0 half of a raid0+1 (md would need it created again and the outer raid1 resynced).
fn stacked_array(config: &SimConfig, stack: &crate::layout::StackSpec) -> Result<Array> {
    if matches!(config.controller, ControllerConfig::Hardware(_)) {
        return Err(config_error("a stacked level is md over md arrays: use controller md".into()));
    }
    let array = Array::stacked(stack)?;
    let replaces = config.timeline.iter().any(|e| matches!(e.kind, ArrayEventKind::Replace(_)));
    if stack.outer_level == Level::Raid1 && (replaces || config.rebuild.spare) {
        return Err(config_error(format!(
            "raid{}: a replaced drive means creating its raid0 half again and resyncing the outer raid1; that rebuild is not modelled (no --replace or --spare)",
            stack.name()
        )));
    }
    Ok(array)
}

fn is_parity(array: &Array) -> bool {
    matches!(array.level(), Level::Raid4 | Level::Raid5 | Level::Raid6)
}

fn config_error(message: String) -> Error {
    Error::new(ErrorKind::InvalidConfig, message)
}

/// Puts the instance's meter (issue 24) in front of every member when the run has host limits;
/// they apply to cloud volumes only.
fn limit_by_host(config: &SimConfig, drives: Vec<Box<dyn Drive>>) -> Result<(Vec<Box<dyn Drive>>, Option<std::rc::Rc<std::cell::RefCell<crate::sim::instance::HostMeter>>>)> {
    use crate::sim::instance::{HostLimited, HostMeter};
    let Some(limits) = config.host_limits else { return Ok((drives, None)) };
    limits.validate()?;
    if let Some(other) = drives.iter().find(|d| d.info().kind != "volume") {
        return Err(config_error(format!(
            "a host's EBS limits apply to cloud volume members (kind volume); this array's members are kind {}",
            other.info().kind
        )));
    }
    let meter = std::rc::Rc::new(std::cell::RefCell::new(HostMeter::new(limits)));
    let limited = drives.into_iter().map(|d| Box::new(HostLimited::new(d, meter.clone())) as Box<dyn Drive>).collect();
    Ok((limited, Some(meter)))
}

fn build_members(config: &SimConfig, drives: Vec<Box<dyn Drive>>) -> Vec<Member> {
    let mut seek_tables = Vec::new();
    drives
        .into_iter()
        .map(|drive| {
            let mut drive = AnyDrive::from(drive);
            if let AnyDrive::Hdd(hdd) = &mut drive {
                hdd.share_seek_table(&mut seek_tables);
            }
            let (scheduler, nr_requests, depth_cap) = match config.controller {
                ControllerConfig::Md(_) => (
                    sched::AnyScheduler::new(config.scheduler, config.queue_limits),
                    config.queue_limits.nr_requests,
                    config.queues.drive_queue_depth,
                ),
                // Behind a controller the host's scheduler runs on the logical drive
                // (array_queue.rs); each drive's waiting commands are the firmware's, in its
                // order, with no host tag limit; it keeps `commands_per_drive` on the drive.
                ControllerConfig::Hardware(hw) => {
                    let order = match hw.command_order {
                        CommandOrder::Fifo => sched::SchedulerKind::None,
                        CommandOrder::Elevator => sched::SchedulerKind::mq_deadline_default(),
                    };
                    let cap = match (hw.commands_per_drive, config.queues.drive_queue_depth) {
                        (0, d) | (d, 0) => d,
                        (c, d) => c.min(d),
                    };
                    (sched::AnyScheduler::new(order, config.queue_limits), 1 << 30, cap)
                }
            };
            Member::new(scheduler, drive, config.data_offset_sectors, nr_requests, depth_cap)
        })
        .collect()
}

fn build_jobs(config: &SimConfig, array: &Array) -> Result<Vec<JobState>> {
    let mut jobs = Vec::new();
    for (index, job) in config.workload.jobs.iter().enumerate() {
        let job = &resolve_shares(job, array.capacity_bytes())?;
        let region = Region::of(job, array.capacity_bytes()).ok_or_else(|| {
            Error::new(
                ErrorKind::InvalidWorkload,
                format!(
                    "job '{}': its region (offset {} bytes, size {} bytes, {} files) does not fit the array of {} bytes",
                    job.name, job.offset_bytes, job.size_bytes, job.files, array.capacity_bytes()
                ),
            )
        })?;
        jobs.push(JobState::new(job.clone(), region, config.seed, index as u32));
    }
    Ok(jobs)
}

/// Resolves what a job gives as a share of the target (fio `size=N%`) and checks that every
/// clone's region fits with `offset_increment` (each clone works `offset_increment` further on;
/// without a size each gets the room the last one has).
fn resolve_shares(job: &Job, capacity_bytes: u64) -> Result<Job> {
    let mut job = job.clone();
    let fail = |job: &Job, what: String| Err(Error::new(ErrorKind::InvalidWorkload, format!("job '{}': {what}", job.name)));
    let mut room = capacity_bytes.saturating_sub(job.offset_bytes);
    if job.size_percent > 0 {
        let unit = job.block_align_bytes.max(512);
        job.size_bytes = (room as u128 * job.size_percent as u128 / 100) as u64 / unit * unit;
    }
    if job.offset_increment_bytes > 0 && job.threads > 1 {
        // Every clone's region must fit: the last one starts offset_increment × (clones - 1) on.
        let shift = job.offset_increment_bytes.saturating_mul(job.threads as u64 - 1);
        room = room.saturating_sub(shift);
        if room < job.max_block_bytes() {
            let what = format!(
                "offset_increment {} bytes × {} clones goes past the array of {capacity_bytes} bytes",
                job.offset_increment_bytes,
                job.threads - 1
            );
            return fail(&job, what);
        }
        if job.size_bytes == 0 || job.size_bytes > room {
            job.size_bytes = room;
        }
    }
    if job.zone_bytes > 0 && job.zone_skip_bytes > 0 {
        // zonemode=strided: the offsets are drawn over the zones only (see stream::strided),
        // and the zones with their gaps must fit the room.
        let span = if job.size_bytes > 0 { job.size_bytes.min(room) } else { room };
        let zones = (span + job.zone_skip_bytes) / (job.zone_bytes + job.zone_skip_bytes);
        if zones == 0 {
            return fail(&job, "no whole zone fits its region".into());
        }
        job.size_bytes = zones * job.zone_bytes;
    }
    Ok(job)
}
