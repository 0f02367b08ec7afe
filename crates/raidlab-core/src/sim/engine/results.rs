//! What a run measured: per job and direction (fio's read/write/sync groups), per phase of the
//! array's life (optimal, degraded, rebuilding), a time series in 1 s windows, the rebuild,
//! and per member.

use super::config::SimConfig;
use crate::sim::host::HostOp;
use crate::sim::block::MemberStats;
use crate::sim::histogram::{Histogram, SparseHistogram};
use crate::sim::workload::Workload;
use crate::time::Nanos;

const WINDOW_NS: Nanos = 1_000_000_000;

/// One direction of one job (or phase).
#[derive(Clone, Debug, Default, PartialEq)]
pub struct DirectionStats {
    pub ios: u64,
    pub bytes: u64,
    /// Completion latency (issue to completion), ns.
    pub latency: Histogram,
}

impl DirectionStats {
    fn record(&mut self, bytes: u64, latency_ns: Nanos) {
        self.ios += 1;
        self.bytes += bytes;
        self.latency.record(latency_ns);
    }

    /// Adds `other`'s I/Os: the same as recording each of them here.
    fn merge(&mut self, other: &DirectionStats) {
        self.ios += other.ios;
        self.bytes += other.bytes;
        self.latency.merge(&other.latency);
    }
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
    /// When the job's threads started (fio `stonewall` and `startdelay` start jobs later): its
    /// ramp and runtime follow, so `start_ns + ramp_ns + runtime_ns` is when it ended. 0 for a
    /// job that never started.
    pub start_ns: Nanos,
    /// Whether every thread of the job was done when the run ended (false: the run stopped it,
    /// at its time limit or at the bound on simulated time).
    pub finished: bool,
}

/// A stretch of the run with one array state.
#[derive(Clone, Debug, PartialEq)]
pub struct PhaseResult {
    /// `optimal`, `degraded` or `rebuilding`.
    pub name: &'static str,
    pub start_ns: Nanos,
    pub end_ns: Nanos,
    pub read: DirectionStats,
    pub write: DirectionStats,
}

/// One 1 s window of the time series.
#[derive(Clone, Debug, PartialEq)]
pub struct SeriesPoint {
    pub start_ns: Nanos,
    pub read_ios: u64,
    pub write_ios: u64,
    pub latency_ns_p50: Nanos,
    pub latency_ns_p99: Nanos,
    pub rebuild_pct: f64,
    /// Bytes read and written in the second (steady-state bandwidth).
    pub bytes: u64,
    /// sysbench's --report-interval lines: fsyncs completed in the window and the
    /// 95th percentile of its data I/O latencies.
    pub flush_ios: u64,
    pub latency_ns_p95: Nanos,
    /// The second's read and write latencies (ns) of each job, each direction's distribution
    /// as sparse buckets, when the run keeps them (`SimConfig::latency_by_second`: `raidlab
    /// compare` and `plan` report percentiles over the steady state they find afterwards);
    /// empty otherwise.
    pub latency_ns_by_job: Vec<[SparseHistogram; 2]>,
}

/// A rebuild (md recovery) of one member.
#[derive(Clone, Debug, PartialEq)]
pub struct RebuildResult {
    pub member: u32,
    pub start_ns: Nanos,
    /// `None` if the run ended first or the rebuild was aborted.
    pub end_ns: Option<Nanos>,
    /// When the replacement failed mid-rebuild and md dropped its recovery (md_error on the
    /// rebuilding disk: the recovery is interrupted and the slot is failed again).
    pub aborted_ns: Option<Nanos>,
    /// Member sectors rebuilt by this run, from `start_sector`.
    pub done_sectors: u64,
    pub total_sectors: u64,
    /// Where the rebuild started (`RebuildConfig::start_ppm`; 0 for a whole rebuild).
    pub start_sector: u64,
    /// An unfinished rebuild's whole duration, extrapolated with the rebuilt drive's zone
    /// rates: the sectors left weigh by their zone's time per sector, so the slower
    /// inner zones count as they will run. `None` when finished or the drive has no zones.
    pub estimated_duration_ns: Option<Nanos>,
}

/// The array lost data: when, and which members were failed.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct DataLoss {
    pub at_ns: Nanos,
    pub failed: Vec<u32>,
}

#[derive(Clone, Debug, PartialEq)]
pub struct SimResult {
    pub jobs: Vec<JobResult>,
    pub phases: Vec<PhaseResult>,
    pub series: Vec<SeriesPoint>,
    pub rebuilds: Vec<RebuildResult>,
    pub data_loss: Option<DataLoss>,
    pub members: Vec<MemberStats>,
    pub end_ns: Nanos,
    pub events: u64,
    /// Set when the run stopped at a bound before the workload ended.
    pub truncated: Option<String>,
    pub seed: u64,
    /// When fio's steady-state criterion (`ss`) was met and the run ended.
    pub steady_state_ns: Option<Nanos>,
    /// Time with at least one host I/O in flight on the array device (its %util in
    /// `iostat -x`).
    pub host_busy_ns: Nanos,
}

/// One thing a member's behaviour did, in time order.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct DriveEvent {
    pub at_ns: Nanos,
    pub member: u32,
    /// `latent-error` (scripted), `read-error` (the drive reported it), `retry` (md re-reads),
    /// `corrected` (md rewrote the sector and read it back), `timeout-dropped` (md failed the
    /// member after the host's command timer expired).
    pub what: &'static str,
}

pub struct Recorder {
    jobs: Vec<JobResult>,
    /// Each job's reads and writes in the open phase. An I/O is recorded once, here, and
    /// counted into its job and its phase when the phase closes: recording into both as it
    /// completes touched two histograms per I/O, and four (read and write, job and phase) do
    /// not stay in the L1 cache together.
    open: Vec<[DirectionStats; 2]>,
    /// Per job: whether it runs to a time limit, and its last completion.
    timed: Vec<bool>,
    last_completion: Vec<Nanos>,
    /// Per job: when it started and when its runtime ends (fio's stonewall, startdelay).
    starts: Vec<(Nanos, Nanos)>,
    /// Host I/Os in flight, since when, and the busy time so far (the array's %util).
    host_in_flight: u64,
    host_busy_since: Nanos,
    host_busy_ns: Nanos,
    phases: Vec<PhaseResult>,
    series: Vec<SeriesPoint>,
    /// When steady state was reached (fio `ss`).
    pub steady_at: Option<Nanos>,
    window_latencies: Vec<Nanos>,
    /// The open second's read and write latencies of each job, kept apart when the run asks
    /// for each second's distributions (`keep_latency_by_second`); empty otherwise.
    window_by_job: Vec<[Vec<Nanos>; 2]>,
    window: SeriesPoint,
    pub rebuilds: Vec<RebuildResult>,
    pub data_loss: Option<DataLoss>,
}

fn empty_window(start_ns: Nanos) -> SeriesPoint {
    SeriesPoint {
        start_ns,
        read_ios: 0,
        write_ios: 0,
        latency_ns_p50: 0,
        latency_ns_p99: 0,
        rebuild_pct: 0.0,
        flush_ios: 0,
        latency_ns_p95: 0,
        bytes: 0,
        latency_ns_by_job: Vec::new(),
    }
}

impl Recorder {
    pub fn new(workload: &Workload, phase: &'static str) -> Recorder {
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
                start_ns: 0,
                finished: false,
            })
            .collect();
        let first = PhaseResult { name: phase, start_ns: 0, end_ns: 0, read: Default::default(), write: Default::default() };
        Recorder {
            timed: workload.jobs.iter().map(|j| j.time_based || j.runtime_ns > 0).collect(),
            last_completion: vec![0; workload.jobs.len()],
            starts: vec![(Nanos::MAX, Nanos::MAX); workload.jobs.len()],
            host_in_flight: 0,
            host_busy_since: 0,
            host_busy_ns: 0,
            open: vec![Default::default(); workload.jobs.len()],
            jobs,
            phases: vec![first],
            series: Vec::new(),
            steady_at: None,
            window_latencies: Vec::new(),
            window_by_job: Vec::new(),
            window: empty_window(0),
            rebuilds: Vec::new(),
            data_loss: None,
        }
    }

    /// Keeps each second's read and write latency distributions of each job in the series
    /// (`SeriesPoint::latency_ns_by_job`).
    pub fn keep_latency_by_second(&mut self) {
        self.window_by_job = vec![Default::default(); self.jobs.len()];
    }

    /// Starts a new phase at `now` if the array's state changed.
    pub fn phase(&mut self, now: Nanos, name: &'static str) {
        let current = self.phases.last_mut().expect("a phase is open");
        if current.name == name {
            return;
        }
        current.end_ns = now;
        self.close_phase();
        let next = PhaseResult { name, start_ns: now, end_ns: now, read: Default::default(), write: Default::default() };
        self.phases.push(next);
    }

    /// Counts the open phase's I/Os into their jobs and the phase, and starts the next from zero.
    fn close_phase(&mut self) {
        let phase = self.phases.last_mut().expect("a phase is open");
        for (job, open) in self.jobs.iter_mut().zip(&mut self.open) {
            let [read, write] = std::mem::take(open);
            job.read.merge(&read);
            job.write.merge(&write);
            phase.read.merge(&read);
            phase.write.merge(&write);
        }
    }

    /// Records a completed host I/O unless it was issued during the job's ramp.
    /// A job's threads started at `start_ns` (its ramp counts from here) and stop issuing at
    /// `deadline_ns` (`Nanos::MAX` without a runtime): fio times each job from its own start.
    pub fn start_job(&mut self, job: u32, start_ns: Nanos, deadline_ns: Nanos) {
        self.starts[job as usize] = (start_ns, deadline_ns);
    }

    /// A host I/O entered the array device.
    pub fn host_issued(&mut self, now: Nanos) {
        if self.host_in_flight == 0 {
            self.host_busy_since = now;
        }
        self.host_in_flight += 1;
    }

    /// A host I/O left the array device.
    pub fn host_done(&mut self, now: Nanos) {
        assert!(self.host_in_flight > 0, "a host completion without a host I/O");
        self.host_in_flight -= 1;
        if self.host_in_flight == 0 {
            self.host_busy_ns += now - self.host_busy_since;
        }
    }

    pub fn record(&mut self, job: u32, op: HostOp, bytes: u64, issued_at: Nanos, completed_at: Nanos) {
        self.last_completion[job as usize] = completed_at;
        let result = &mut self.jobs[job as usize];
        if issued_at < self.starts[job as usize].0.saturating_add(result.ramp_ns) {
            return;
        }
        assert!(completed_at >= issued_at);
        let latency = completed_at - issued_at;
        let [read, write] = &mut self.open[job as usize];
        match op {
            HostOp::Read => {
                read.record(bytes, latency);
                self.window.read_ios += 1;
                self.window.bytes += bytes;
            }
            HostOp::Write => {
                write.record(bytes, latency);
                self.window.write_ios += 1;
                self.window.bytes += bytes;
            }
            HostOp::Flush => {
                result.flush.record(bytes, latency);
                self.window.flush_ios += 1;
            }
        }
        if op != HostOp::Flush {
            self.window_latencies.push(latency);
            if let Some(by_direction) = self.window_by_job.get_mut(job as usize) {
                by_direction[(op == HostOp::Write) as usize].push(latency);
            }
        }
    }

    /// Seconds recorded in the series so far.
    pub fn seconds(&self) -> usize {
        self.series.len()
    }

    /// Checks fio's steady-state criterion on the seconds after its ramp; records `now` as the
    /// time it was met.
    #[inline(never)]
    pub fn steady_check(&mut self, ss: &crate::sim::steady::SteadyState, now: Nanos) -> bool {
        let window: Vec<f64> = self
            .series
            .iter()
            .filter(|p| p.start_ns >= ss.ramp_ns)
            .map(|p| if ss.bandwidth() { p.bytes as f64 } else { (p.read_ios + p.write_ios) as f64 })
            .collect();
        let attained = ss.attained(&window);
        if attained {
            self.steady_at = Some(now);
        }
        attained
    }

    /// Closes every 1 s window that ended by `now`, stamping the rebuild progress.
    pub fn close_windows(&mut self, now: Nanos, rebuild_pct: f64) {
        while now >= self.window.start_ns + WINDOW_NS {
            let start = self.window.start_ns;
            let mut point = std::mem::replace(&mut self.window, empty_window(start + WINDOW_NS));
            point.rebuild_pct = rebuild_pct;
            if !self.window_latencies.is_empty() {
                let (p50, p95, p99) = window_percentiles(&mut self.window_latencies);
                (point.latency_ns_p50, point.latency_ns_p95, point.latency_ns_p99) = (p50, p95, p99);
                self.window_latencies.clear();
            }
            point.latency_ns_by_job = self.window_by_job.iter_mut().map(|by_direction| {
                by_direction.each_mut().map(|values| {
                    let sparse = SparseHistogram::of(values);
                    values.clear();
                    sparse
                })
            }).collect();
            self.series.push(point);
        }
    }

    pub fn finish(
        mut self,
        config: &SimConfig,
        end_ns: Nanos,
        finished: &[bool],
        members: Vec<MemberStats>,
        events: u64,
        truncated: Option<String>,
    ) -> SimResult {
        for (index, job) in self.jobs.iter_mut().enumerate() {
            // A job that ends by count or size ran until its last completion (fio's runtime);
            // background work after it (destage, rebuild) does not stretch it.
            let (start, deadline) = self.starts[index];
            let end = if self.timed[index] { end_ns.min(deadline) } else { self.last_completion[index].min(end_ns) };
            job.runtime_ns = end.saturating_sub(start.saturating_add(job.ramp_ns));
            job.start_ns = if start == Nanos::MAX { 0 } else { start };
            job.finished = finished[index];
        }
        self.phases.last_mut().expect("a phase is open").end_ns = end_ns;
        self.close_phase();
        self.phases.retain(|p| p.end_ns > p.start_ns);
        SimResult {
            jobs: self.jobs,
            phases: self.phases,
            series: self.series,
            rebuilds: self.rebuilds,
            data_loss: self.data_loss,
            members,
            end_ns,
            events,
            truncated,
            seed: config.seed,
            steady_state_ns: self.steady_at,
            host_busy_ns: self.host_busy_ns
                + if self.host_in_flight > 0 { end_ns.saturating_sub(self.host_busy_since) } else { 0 },
        }
    }
}

/// The index of the p-th percentile (nearest rank) among `len` sorted values.
fn percentile_rank(len: usize, p: f64) -> usize {
    let rank = ((p / 100.0) * len as f64).ceil().max(1.0) as usize - 1;
    rank.min(len - 1)
}

/// The exact p-th percentile (nearest rank) of a window's latencies.
#[cfg(test)]
fn nth_percentile(values: &mut [Nanos], p: f64) -> Nanos {
    *values.select_nth_unstable(percentile_rank(values.len(), p)).1
}

/// The exact 50th, 95th and 99th percentiles (nearest rank) of a window's latencies (not empty).
/// `select_nth_unstable` leaves the values below the one it places before it and those above
/// after it, so the k-th smallest of the whole is the (k − r − 1)-th of the part after a placed
/// rank r: the 99th is selected among those above the median, the 95th among those between
/// the two. The same values as three selections over the whole window, for half the work.
fn window_percentiles(values: &mut [Nanos]) -> (Nanos, Nanos, Nanos) {
    let n = values.len();
    let (r50, r95, r99) = (percentile_rank(n, 50.0), percentile_rank(n, 95.0), percentile_rank(n, 99.0));
    debug_assert!(r50 <= r95 && r95 <= r99);
    let p50 = *values.select_nth_unstable(r50).1;
    let p99 = if r99 == r50 { p50 } else { *values[r50 + 1..].select_nth_unstable(r99 - r50 - 1).1 };
    let p95 = match r95 {
        r if r == r50 => p50,
        r if r == r99 => p99,
        r => *values[r50 + 1..r99].select_nth_unstable(r - r50 - 1).1,
    };
    (p50, p95, p99)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::rng::Prng;

    /// The three nested selections give what three selections over the whole window give,
    /// on windows of every size up to 300 with values drawn from small ranges (many ties).
    #[test]
    fn window_percentiles_match_whole_window_selections() {
        let mut prng = Prng::new(11);
        for len in 1..300usize {
            let spread = [3, 50, 1_000_000][len % 3];
            let values: Vec<Nanos> = (0..len).map(|_| prng.below(spread)).collect();
            let whole = |p| nth_percentile(&mut values.clone(), p);
            let (p50, p95, p99) = window_percentiles(&mut values.clone());
            assert_eq!((p50, p95, p99), (whole(50.0), whole(95.0), whole(99.0)), "{len} values");
        }
    }
}
