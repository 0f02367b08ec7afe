//! What a run measured: per job and direction (fio's read/write/sync groups), per member.

use super::config::SimConfig;
use super::host::HostOp;
use super::members::MemberStats;
use crate::sim::histogram::Histogram;
use crate::sim::workload::Workload;
use crate::sim::Nanos;

/// One direction of one job.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct DirectionStats {
    pub ios: u64,
    pub bytes: u64,
    /// Completion latency (issue to completion), ns.
    pub latency: Histogram,
}

#[derive(Clone, Debug, PartialEq)]
pub struct JobResult {
    pub name: String,
    pub read: DirectionStats,
    pub write: DirectionStats,
    /// Flushes (fio `sync`, sysbench fsyncs).
    pub flush: DirectionStats,
    /// Measured interval: from the end of ramp to the end of the run.
    pub runtime_ns: Nanos,
    pub ramp_ns: Nanos,
}

#[derive(Clone, Debug, PartialEq)]
pub struct SimResult {
    pub jobs: Vec<JobResult>,
    pub members: Vec<MemberStats>,
    pub end_ns: Nanos,
    pub events: u64,
    /// Set when the run stopped at a bound before the workload ended.
    pub truncated: Option<String>,
    pub seed: u64,
}

pub struct Recorder {
    jobs: Vec<JobResult>,
}

impl Recorder {
    pub fn new(workload: &Workload) -> Recorder {
        let jobs = workload
            .jobs
            .iter()
            .map(|job| JobResult {
                name: job.name.clone(),
                read: DirectionStats::default(),
                write: DirectionStats::default(),
                flush: DirectionStats::default(),
                runtime_ns: 0,
                ramp_ns: job.ramp_ns,
            })
            .collect();
        Recorder { jobs }
    }

    /// Records a completed host I/O unless it was issued during the job's ramp.
    pub fn record(&mut self, job: u32, op: HostOp, bytes: u64, issued_at: Nanos, completed_at: Nanos) {
        let result = &mut self.jobs[job as usize];
        if issued_at < result.ramp_ns {
            return;
        }
        assert!(completed_at >= issued_at);
        let direction = match op {
            HostOp::Read => &mut result.read,
            HostOp::Write => &mut result.write,
            HostOp::Flush => &mut result.flush,
        };
        direction.ios += 1;
        direction.bytes += bytes;
        direction.latency.record(completed_at - issued_at);
    }

    pub fn finish(
        mut self,
        config: &SimConfig,
        end_ns: Nanos,
        members: Vec<MemberStats>,
        events: u64,
        truncated: Option<String>,
    ) -> SimResult {
        for job in &mut self.jobs {
            job.runtime_ns = end_ns.saturating_sub(job.ramp_ns);
        }
        SimResult { jobs: self.jobs, members, end_ns, events, truncated, seed: config.seed }
    }
}
