//! Host threads as fio runs them: stonewall groups, start delays, open and closed loops, think
//! time and flow, and what a thread does when its I/O completes.

use super::HostEvent;
use super::jobs::{HostIntent, HostOp, JobState};
use crate::error::{Error, ErrorKind, Result};
use crate::layout::Array;
use crate::sim::engine::config::SimConfig;
use crate::sim::engine::events::Event;
use crate::sim::engine::Simulation;
use crate::sim::offsets::Region;
use crate::sim::workload::Job;
use crate::time::Nanos;
use crate::SECTOR_BYTES;

pub(crate) struct HostIo {
    pub(crate) job: u32,
    pub(crate) thread: u32,
    pub(crate) op: HostOp,
    pub(crate) sector: u64,
    pub(crate) sectors: u64,
    pub(crate) issued_at: Nanos,
}

impl Simulation {
    pub(crate) fn host_event(&mut self, event: HostEvent) {
        match event {
            HostEvent::Arrival { job, thread } => self.arrival(job, thread),
            HostEvent::JobStart { job } => self.launch(job),
            HostEvent::Resume { job, thread } => self.resume(job, thread),
            HostEvent::CacheAck { host_io } => self.host_complete(host_io),
        }
    }

    /// Host I/O `id` completes at `at` (a cache acknowledges it; the layers below call this as
    /// a bio's end_io is called).
    pub(crate) fn complete_host_at(&mut self, at: Nanos, id: u32) {
        self.events.push(at, Event::Host(HostEvent::CacheAck { host_io: id }));
    }

    /// The first stonewall group starts.
    pub(crate) fn start_jobs(&mut self) {
        if let Some(first) = self.host.jobs.iter().map(|j| j.job.group).min() {
            self.begin_group(first);
        }
    }

    /// Starts the jobs of stonewall group `group` (fio `stonewall`): each after its own
    /// `startdelay` (fio's `startdelay` counts from when the job may start).
    pub(crate) fn begin_group(&mut self, group: u32) {
        for job in 0..self.host.jobs.len() as u32 {
            let state = &self.host.jobs[job as usize];
            if state.job.group != group {
                continue;
            }
            if state.job.start_delay_ns > 0 {
                self.events.push(self.now + state.job.start_delay_ns, Event::Host(HostEvent::JobStart { job }));
            } else {
                self.launch(job);
            }
        }
    }

    /// A job's threads start issuing.
    pub(crate) fn launch(&mut self, job: u32) {
        self.host.jobs[job as usize].launch(self.now);
        let state = &self.host.jobs[job as usize];
        self.results.start_job(job, self.now, state.deadline_ns);
        for thread in 0..self.host.jobs[job as usize].job.threads {
            if self.host.jobs[job as usize].job.open_loop() {
                // fio's usec_for_io (io_u.c): a linear rate issues its first I/O at once (no
                // bytes are due yet); a Poisson process waits its first exponential gap.
                let first = if self.host.jobs[job as usize].job.poisson_arrivals {
                    self.host.jobs[job as usize].next_arrival(thread as usize, self.now)
                } else {
                    self.now
                };
                self.events.push(first, Event::Host(HostEvent::Arrival { job, thread }));
            } else {
                self.issue(job, thread);
            }
        }
        self.after_issue(job);
    }

    /// After a job's threads may have finished: the next stonewall group starts once every
    /// job of this one has.
    pub(crate) fn after_issue(&mut self, job: u32) {
        if !self.host.jobs[job as usize].check_finished() {
            return;
        }
        for (waiting_job, waiting_thread) in self.host.flows.leave(&self.host.jobs[job as usize]) {
            self.events.push(self.now, Event::Host(HostEvent::Resume { job: waiting_job, thread: waiting_thread }));
        }
        let group = self.host.jobs[job as usize].job.group;
        if self.host.jobs.iter().any(|j| j.job.group == group && !j.finished) {
            return;
        }
        if let Some(next) = self.host.jobs.iter().map(|j| j.job.group).filter(|&g| g > group).min() {
            self.begin_group(next);
        }
    }

    /// A thread ahead of its flow share waits: `flow_sleep`, or until the flow moves on (and
    /// at the latest until its runtime ends).
    #[inline(never)]
    pub(crate) fn hold_for_flow(&mut self, job: u32, thread: u32) {
        let state = &mut self.host.jobs[job as usize];
        state.hold(thread as usize);
        if state.job.flow_sleep_ns > 0 {
            self.events.push(self.now + state.job.flow_sleep_ns, Event::Host(HostEvent::Resume { job, thread }));
            return;
        }
        let deadline = state.deadline_ns;
        self.host.flows.wait(&self.host.jobs[job as usize], job, thread);
        if deadline < Nanos::MAX {
            self.events.push(deadline.max(self.now), Event::Host(HostEvent::Resume { job, thread }));
        }
    }

    /// A thread's think pause ended (fio `thinktime`).
    #[inline(never)]
    pub(crate) fn resume(&mut self, job: u32, thread: u32) {
        self.host.jobs[job as usize].resume(thread as usize);
        self.issue(job, thread);
        self.after_issue(job);
    }


    #[inline(never)]
    pub(crate) fn arrival(&mut self, job: u32, thread: u32) {
        let state = &mut self.host.jobs[job as usize];
        let t = thread as usize;
        if state.threads[t].done {
            return;
        }
        state.threads[t].backlog += 1;
        let next = state.next_arrival(t, self.now);
        if next <= self.stop_ns {
            self.events.push(next, Event::Host(HostEvent::Arrival { job, thread }));
        }
        self.issue(job, thread);
        self.after_issue(job);
    }

    /// Issues I/O for a thread while it has room (depth, and backlog for open loop).
    pub(crate) fn issue(&mut self, job: u32, thread: u32) {
        if self.now >= self.stop_ns {
            return;
        }
        loop {
            let state = &mut self.host.jobs[job as usize];
            let open_loop = state.job.open_loop();
            if !state.may_issue(thread as usize) || (open_loop && state.threads[thread as usize].backlog == 0) {
                return;
            }
            if self.host.flows.ahead(state, state.threads[thread as usize].flow_issued) && !state.threads[thread as usize].done {
                self.hold_for_flow(job, thread);
                return;
            }
            let state = &mut self.host.jobs[job as usize];
            let Some(intent) = state.next(thread as usize, self.now) else {
                if state.take_pause(thread as usize) {
                    let at = self.now + state.job.think_ns;
                    self.events.push(at, Event::Host(HostEvent::Resume { job, thread }));
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
                for (waiting_job, waiting_thread) in self.host.flows.issued(&self.host.jobs[job as usize]) {
                    self.events.push(self.now, Event::Host(HostEvent::Resume { job: waiting_job, thread: waiting_thread }));
                }
            }
            self.submit_host(job, thread, intent);
        }
    }

    pub(crate) fn submit_host(&mut self, job: u32, thread: u32, intent: HostIntent) {
        let sector = intent.offset_bytes / SECTOR_BYTES;
        let sectors = intent.bytes / SECTOR_BYTES;
        assert!(intent.op == HostOp::Flush || (sectors > 0 && intent.bytes % SECTOR_BYTES == 0));
        let io = HostIo { job, thread, op: intent.op, sector, sectors, issued_at: self.now };
        let id = self.host.ios.insert(io);
        if self.pagecache.cache.is_some() && self.host.jobs[job as usize].job.buffered {
            self.buffered_submit(id);
        } else {
            self.route_host(id);
        }
    }


    pub(crate) fn host_complete(&mut self, id: u32) {
        // Behind a controller, the I/Os the host queue sent (a job's O_DIRECT I/O or a page-cache
        // bio; not a buffered I/O the page cache served) free their tag.
        let via_queue = self.hw.queue.as_ref().is_some_and(|queue| queue.holds(id as u64));
        if self.host.ios.get(id).job == super::KERNEL_JOB {
            self.results.host_done(self.now);
            if via_queue {
                self.array_queue_done(id, self.host.ios.get(id).thread);
            }
            self.page_cache_bio_done(id);
            return;
        }
        let io = self.host.ios.remove(id);
        // (A buffered I/O went to the page cache, not to the array: route_host never saw it.)
        if self.pagecache.cache.is_none() || !self.host.jobs[io.job as usize].job.buffered {
            self.results.host_done(self.now);
        }
        let pct = self.rebuild_pct();
        let seconds = self.results.seconds();
        self.results.close_windows(self.now, pct);
        if self.host.steady.enabled()
            && self.results.seconds() > seconds
            && self.results.steady_at.is_none()
            && self.results.steady_check(&self.host.steady, self.now)
        {
            // fio ends a job that reached steady state (steadystate.c): the run stops here.
            self.stop_ns = self.stop_ns.min(self.now);
        }
        if self.now <= self.stop_ns {
            let bytes = io.sectors * SECTOR_BYTES;
            self.results.record(io.job, io.op, bytes, io.issued_at, self.now);
        }
        self.host.jobs[io.job as usize].completed(io.thread as usize, io.op);
        if via_queue {
            self.array_queue_done(id, io.thread);
        }
        self.issue(io.job, io.thread);
        self.after_issue(io.job);
    }

}

pub(crate) fn build_jobs(config: &SimConfig, array: &Array) -> Result<Vec<JobState>> {
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
