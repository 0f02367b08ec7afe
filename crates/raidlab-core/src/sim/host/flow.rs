//! fio's `flow` (fio-3.33 flow.c `flow_threshold_exceeded`): the threads of the jobs that share
//! a `flow_id` keep their I/O counts in the ratio of their `flow` weights. Before each I/O a
//! thread compares its share of the flow's I/Os with its share of the weights; ahead of its
//! share, it waits (`flow_sleep` µs, or, with none, until another thread of the flow issues:
//! fio retries at once, so it goes on as soon as the counts let it).

use std::collections::BTreeMap;

use super::jobs::JobState;

#[derive(Debug, Default)]
struct Group {
    /// I/Os issued by every thread of the flow.
    issued: u64,
    /// The flow weights of all its threads (fio adds each thread's `flow` to the total).
    total_weight: u64,
    /// Threads waiting for another thread of the flow to issue: (job, thread).
    waiting: Vec<(u32, u32)>,
}

#[derive(Debug, Default)]
pub struct Flows {
    groups: BTreeMap<u32, Group>,
}

impl Flows {
    pub fn new(jobs: &[JobState]) -> Flows {
        let mut groups: BTreeMap<u32, Group> = BTreeMap::new();
        for state in jobs.iter().filter(|s| s.job.flow_weight > 0) {
            groups.entry(state.job.flow_id).or_default().total_weight +=
                state.job.flow_weight as u64 * state.job.threads as u64;
        }
        Flows { groups }
    }

    /// Whether a thread that has issued `own` I/Os of the flow is ahead of its weight's share.
    pub fn ahead(&self, state: &JobState, own: u64) -> bool {
        let job = &state.job;
        if job.flow_weight == 0 {
            return false;
        }
        let group = &self.groups[&job.flow_id];
        if group.issued == 0 {
            return false;
        }
        // own / issued > weight / total, in integers.
        own as u128 * group.total_weight as u128 > job.flow_weight as u128 * group.issued as u128
    }

    /// Counts one I/O of the flow; returns the threads that waited for it.
    pub fn issued(&mut self, state: &JobState) -> Vec<(u32, u32)> {
        if state.job.flow_weight == 0 {
            return Vec::new();
        }
        let group = self.groups.get_mut(&state.job.flow_id).expect("a flow of a job");
        group.issued += 1;
        std::mem::take(&mut group.waiting)
    }

    /// A thread waits for another thread of its flow to issue.
    pub fn wait(&mut self, state: &JobState, job: u32, thread: u32) {
        let group = self.groups.get_mut(&state.job.flow_id).expect("a flow of a job");
        if !group.waiting.contains(&(job, thread)) {
            group.waiting.push((job, thread));
        }
    }

    /// A finished job leaves its flow (flow.c `flow_exit_job`: its I/Os and weight no longer
    /// count); returns the threads that waited.
    pub fn leave(&mut self, state: &JobState) -> Vec<(u32, u32)> {
        let job = &state.job;
        if job.flow_weight == 0 {
            return Vec::new();
        }
        let group = self.groups.get_mut(&job.flow_id).expect("a flow of a job");
        let own: u64 = state.threads.iter().map(|t| t.flow_issued).sum();
        group.issued -= own.min(group.issued);
        group.total_weight -= (job.flow_weight as u64 * job.threads as u64).min(group.total_weight);
        std::mem::take(&mut group.waiting)
    }
}
