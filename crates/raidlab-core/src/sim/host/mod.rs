//! The host: jobs of threads that issue I/O as fio or sysbench would (`jobs`), fio's stream
//! options (`stream`), `flow` groups, and the threads' part of a run (`threads`).

pub(crate) mod flow;
pub(crate) mod jobs;
pub(crate) mod stream;
pub(crate) mod threads;

pub use jobs::HostOp;
pub(crate) use threads::HostIo;

/// The job of host I/O the kernel makes (the page cache's bios), not one of the workload's.
pub(crate) const KERNEL_JOB: u32 = u32::MAX;

/// The host's events.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub(crate) enum HostEvent {
    /// An open-loop arrival for a thread.
    Arrival { job: u32, thread: u32 },
    /// A job's `startdelay` ended (or its stonewall group began): its threads start.
    JobStart { job: u32 },
    /// A thread's `thinktime` pause ended.
    Resume { job: u32, thread: u32 },
    /// A cache (a controller's, or the page cache) acknowledges host I/O `host_io`.
    CacheAck { host_io: u32 },
}

use crate::error::Result;
use crate::layout::Array;
use crate::sim::engine::slab::Slab;
use crate::sim::engine::SimConfig;
use crate::sim::offsets::Region;
use crate::sim::steady::SteadyState;
use crate::sim::workload::Job;
use jobs::JobState;

/// The host's state in a run: its jobs and their threads, the host I/Os in flight, fio's flow
/// groups and steady-state criterion.
pub(crate) struct HostRoom {
    pub(crate) jobs: Vec<JobState>,
    /// Host I/Os in flight: a job's, or a page-cache bio (`KERNEL_JOB`).
    pub(crate) ios: Slab<HostIo>,
    /// fio `flow` groups.
    pub(crate) flows: flow::Flows,
    /// fio's steady-state criterion (the first job's that sets one): the run ends once met.
    pub(crate) steady: SteadyState,
}

impl HostRoom {
    /// Each job with its region (the page cache's files).
    pub(crate) fn regions(&self) -> Vec<(Job, Region)> {
        self.jobs.iter().map(|j| (j.job.clone(), j.region)).collect()
    }

    /// The flow groups of the jobs (at the start of the run).
    pub(crate) fn new_flows(&self) -> flow::Flows {
        flow::Flows::new(&self.jobs)
    }

    /// The jobs of the configured workload, each with its region of `array`.
    pub(crate) fn new(config: &SimConfig, array: &Array) -> Result<HostRoom> {
        Ok(HostRoom {
            jobs: threads::build_jobs(config, array)?,
            ios: Slab::with_capacity(4096),
            flows: flow::Flows::default(),
            steady: config.workload.jobs.iter().map(|j| j.steady).find(|s| s.enabled()).unwrap_or_default(),
        })
    }
}
