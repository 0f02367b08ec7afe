//! The one workload spec the engine runs, whatever the user wrote it in (fio job file, sysbench
//! options, preset): the Python front parses those into this shape.

use crate::error::{Error, ErrorKind, Result};
use crate::sim::Nanos;

/// How random offsets are distributed over the region (fio `random_distribution`).
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Distribution {
    Uniform,
    /// Zipf with exponent theta (> 0, != 1 handled too).
    Zipf { theta: f64 },
    /// Pareto with shape h in (0, 1): fio's `pareto:h`.
    Pareto { h: f64 },
    /// Normal around the middle of the region, standard deviation in % of the region.
    Normal { stddev_pct: f64 },
}

/// Whether sequential I/O shares one cursor across threads (sysbench) or has one per thread (fio).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Cursor {
    PerThread,
    Shared,
}

/// How the read/write choice is made.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum MixChoice {
    /// A coin flip per I/O with the read fraction (fio).
    Random,
    /// sysbench's deterministic rule: read when (reads+1)/(writes+1) < ratio.
    Ratio,
}

/// Which flush and over what scope.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum FsyncScope {
    /// fio: the thread flushes after every N of its own writes.
    Thread,
    /// sysbench: every N requests (all threads, reads too) a round of one fsync per file.
    AllFiles,
}

/// One job: a group of identical threads.
#[derive(Clone, Debug, PartialEq)]
pub struct Job {
    pub name: String,
    pub threads: u32,
    pub iodepth: u32,
    pub read_fraction: f64,
    pub random_fraction: f64,
    /// (bytes, weight) pairs; weights are relative.
    pub block_sizes: Vec<(u64, u32)>,
    pub offset_bytes: u64,
    /// 0 means "to the end of the target".
    pub size_bytes: u64,
    pub files: u32,
    pub cursor: Cursor,
    pub distribution: Distribution,
    pub mix: MixChoice,
    /// 0 = closed loop.
    pub rate_iops: u64,
    pub poisson_arrivals: bool,
    /// 0 = never.
    pub fsync_every: u32,
    pub fsync_scope: FsyncScope,
    pub fsync_end: bool,
    pub runtime_ns: Nanos,
    pub ramp_ns: Nanos,
    pub time_based: bool,
    /// Per-thread cap on I/Os (0 = none).
    pub number_ios: u64,
    /// Cap on I/Os across the job's threads (0 = none).
    pub total_ios: u64,
    /// Per-thread cap on bytes (0 = none; without time_based a job stops after `size` bytes).
    pub io_bytes: u64,
    pub block_align_bytes: u64,
}

impl Default for Job {
    /// fio's defaults for a job without options (one thread at depth 1 reading 4 KiB blocks
    /// sequentially through the whole target, once), as `fio --name=job` would run it.
    fn default() -> Job {
        Job {
            name: "job".into(),
            threads: 1,
            iodepth: 1,
            read_fraction: 1.0,
            random_fraction: 0.0,
            block_sizes: vec![(4096, 1)],
            offset_bytes: 0,
            size_bytes: 0,
            files: 1,
            cursor: Cursor::PerThread,
            distribution: Distribution::Uniform,
            mix: MixChoice::Random,
            rate_iops: 0,
            poisson_arrivals: false,
            fsync_every: 0,
            fsync_scope: FsyncScope::Thread,
            fsync_end: false,
            runtime_ns: 0,
            ramp_ns: 0,
            time_based: false,
            number_ios: 0,
            total_ios: 0,
            io_bytes: 0,
            block_align_bytes: 4096,
        }
    }
}

impl Job {
    /// Checks the job against the core's limits; errors are one line.
    pub fn validate(&self) -> Result<()> {
        let fail = |message: String| Err(Error::new(ErrorKind::InvalidWorkload, format!("job '{}': {message}", self.name)));
        if self.threads == 0 || self.threads > 65_536 {
            return fail(format!("threads must be 1 to 65536, got {}", self.threads));
        }
        if self.iodepth == 0 || self.iodepth > 65_536 {
            return fail(format!("iodepth must be 1 to 65536, got {}", self.iodepth));
        }
        if !(0.0..=1.0).contains(&self.read_fraction) || !(0.0..=1.0).contains(&self.random_fraction) {
            return fail("read and random fractions must be between 0 and 1".into());
        }
        if self.block_sizes.is_empty() || self.block_sizes.iter().all(|&(_, w)| w == 0) {
            return fail("no block size".into());
        }
        for &(bytes, _) in &self.block_sizes {
            if bytes == 0 || bytes % 512 != 0 || bytes > 64 << 20 {
                return fail(format!("block size {bytes} must be a multiple of 512 up to 64 MiB"));
            }
        }
        if self.block_align_bytes == 0 || self.block_align_bytes % 512 != 0 {
            return fail(format!("block alignment {} must be a multiple of 512", self.block_align_bytes));
        }
        if self.files == 0 {
            return fail("files must be at least 1".into());
        }
        if self.rate_iops > 100_000_000 {
            return fail(format!("rate_iops {} is beyond what raidlab simulates", self.rate_iops));
        }
        Ok(())
    }

    pub fn max_block_bytes(&self) -> u64 {
        self.block_sizes.iter().map(|&(b, _)| b).max().expect("validated")
    }
}

/// A whole workload: jobs run concurrently.
#[derive(Clone, Debug, PartialEq)]
pub struct Workload {
    pub jobs: Vec<Job>,
}

impl Workload {
    pub fn validate(&self) -> Result<()> {
        if self.jobs.is_empty() {
            return Err(Error::new(ErrorKind::InvalidWorkload, "the workload has no jobs"));
        }
        self.jobs.iter().try_for_each(Job::validate)
    }

    /// Stop time: the longest job runtime plus ramp (0 when no job is time-limited).
    pub fn time_limit_ns(&self) -> Nanos {
        self.jobs.iter().filter(|j| j.runtime_ns > 0).map(|j| j.runtime_ns + j.ramp_ns).max().unwrap_or(0)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_default_job_is_fios_and_valid() {
        let job = Job::default();
        job.validate().unwrap();
        assert_eq!((job.threads, job.iodepth, job.read_fraction, job.random_fraction), (1, 1, 1.0, 0.0));
        assert_eq!((job.block_sizes.as_slice(), job.time_based), (&[(4096, 1)][..], false));
    }
}
