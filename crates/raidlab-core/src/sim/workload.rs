//! The one workload spec the engine runs, whatever the user wrote it in (fio job file, sysbench
//! options, preset): the Python front parses those into this shape.

use crate::error::{Error, ErrorKind, Result};
use crate::time::Nanos;

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

    // ---- fio steady state ----
    /// fio `ss`, `ss_dur`, `ss_ramp`: end the run once steady state is reached.
    pub steady: crate::sim::steady::SteadyState,
    // Buffered I/O (the page cache, `sim::pagecache`).
    /// Through the host's page cache (fio `direct=0`, sysbench without O_DIRECT); false is
    /// O_DIRECT. The core's default job is direct (its tests model the array); the Python front
    /// end sets fio's own default, buffered.
    pub buffered: bool,
    /// The file's cached pages are dropped before the job starts (fio `invalidate=1`, its
    /// default); false keeps them: the job starts with its region in the cache.
    pub invalidate: bool,
    // -- fio options that shape the I/O stream; the defaults change nothing --
    /// fio `startdelay`: the job's threads start this long after the job itself may start.
    pub start_delay_ns: Nanos,
    /// fio `stonewall`/`wait_for_previous`: the jobs of group g start once every job of the
    /// groups before it has finished (backend.c `run_threads` waits for the running jobs).
    pub group: u32,
    /// fio `thinktime` (µs there): after every `think_blocks` completed I/Os the thread lets
    /// its queue drain (`io_u_quiesce`) and then pauses this long (backend.c `handle_thinktime`).
    pub think_ns: Nanos,
    pub think_blocks: u32,
    /// fio `rate`: per-thread bandwidth cap in bytes/s (0 = none); arrivals are spaced by the
    /// mean block size over the rate, as fio's `usec_for_io` spaces them by bytes.
    pub rate_bytes_per_s: u64,
    /// fio `loops`: the size-bounded job runs this many passes (1 = once).
    pub loops: u32,
    /// fio `offset_increment`: clone t works at `offset + t × offset_increment`.
    pub offset_increment_bytes: u64,
    /// fio `iodepth_low` (0 = keep the queue full): once the queue is full, refill it only
    /// after it drained to this many I/Os in flight.
    pub iodepth_low: u32,
    /// fio `size=N%` (0 = unused): the region is N % of the target after `offset`.
    pub size_percent: u32,
    /// fio `verify`/`do_verify`: once a thread has written its size, it reads back every block
    /// it wrote, in the order written (backend.c `do_verify`, io_u.c `log_io_piece` keeps a
    /// FIFO for sequential or non-overwriting jobs).
    pub verify: bool,
    /// fio `rw=read:N` / `rw=write:-N`: after each sequential I/O the position moves on by
    /// this many more bytes (negative: back), wrapping in the region (io_u.c `get_next_seq_offset`).
    pub seq_skip_bytes: i64,
    /// fio `zonemode=strided`: I/O covers `zone_bytes`, then skips `zone_skip_bytes` (0 = off);
    /// offsets are drawn over the zones and laid out with the gaps.
    pub zone_bytes: u64,
    pub zone_skip_bytes: u64,
    /// fio `random_distribution=zoned`/`zoned_abs`: (share of accesses, first byte, end byte)
    /// per zone; byte ranges are fractions of the region in millionths unless `zones_absolute`.
    pub zones: Vec<(f64, u64, u64)>,
    pub zones_absolute: bool,
    /// fio `zonemode=zbd` on a regular device (zbd.c `init_zone_info` emulates empty
    /// sequential-write zones of `zonesize`): random writes go to the write pointer of the zone
    /// they land in, or of an open zone once `max_open_zones` are open (0 = off).
    pub zbd_zone_bytes: u64,
    pub zbd_max_open_zones: u32,
    /// fio `bs=r,w`/`bssplit=r,w`: the writes' own (bytes, weight) mix (empty = `block_sizes`).
    pub write_block_sizes: Vec<(u64, u32)>,
    /// fio `flow`/`flow_id`/`flow_sleep` (host/flow.rs): the job's weight in its flow (0 =
    /// none) and how long a thread ahead of its share pauses (0: until the flow moves on).
    pub flow_id: u32,
    pub flow_weight: u32,
    pub flow_sleep_ns: Nanos,
    /// fio `file_service_type` for sequential I/O over `files` > 1 (per-thread cursor):
    /// 0 = `sequential` (one file after another), 1 = `roundrobin` (fio's default), 2 =
    /// `random`; the thread moves on after `file_service_ios` I/Os (fio's `:N`, default 1),
    /// keeping a position per file (file.c `get_next_file_rr`/`get_next_file_rand`).
    pub file_service: u8,
    pub file_service_ios: u32,
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
            steady: Default::default(),
            buffered: false,
            invalidate: true,
            start_delay_ns: 0,
            group: 0,
            think_ns: 0,
            think_blocks: 1,
            rate_bytes_per_s: 0,
            loops: 1,
            offset_increment_bytes: 0,
            iodepth_low: 0,
            size_percent: 0,
            verify: false,
            seq_skip_bytes: 0,
            zone_bytes: 0,
            zone_skip_bytes: 0,
            zones: Vec::new(),
            zones_absolute: false,
            zbd_zone_bytes: 0,
            zbd_max_open_zones: 0,
            write_block_sizes: Vec::new(),
            flow_id: 0,
            flow_weight: 0,
            flow_sleep_ns: 0,
            file_service: 0,
            file_service_ios: 1,
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
        if !self.write_block_sizes.is_empty() && self.write_block_sizes.iter().all(|&(_, w)| w == 0) {
            return fail("no write block size".into());
        }
        for &(bytes, _) in self.block_sizes.iter().chain(&self.write_block_sizes) {
            if bytes == 0 || bytes % 512 != 0 || bytes > 64 << 20 {
                return fail(format!("block size {bytes} must be a multiple of 512 up to 64 MiB"));
            }
        }
        if self.block_align_bytes == 0 || self.block_align_bytes % 512 != 0 {
            return fail(format!("block alignment {} must be a multiple of 512", self.block_align_bytes));
        }
        if self.files == 0 || self.files > MAX_FILES {
            return fail(format!("files must be 1 to {MAX_FILES}, got {}", self.files));
        }
        if self.rate_iops > 100_000_000 {
            return fail(format!("rate_iops {} is beyond what raidlab simulates", self.rate_iops));
        }
        if !self.zones.is_empty() {
            let total: f64 = self.zones.iter().map(|z| z.0).sum();
            if self.zones.iter().any(|z| !(z.0 >= 0.0) || z.2 <= z.1) || (total - 1.0).abs() > 1e-6 {
                return fail("zoned distribution: shares must add up to 1 and every zone must be non-empty".into());
            }
        }
        if (self.zone_bytes > 0 && self.zone_bytes < self.max_block_bytes())
            || (self.zbd_zone_bytes > 0 && self.zbd_zone_bytes < self.max_block_bytes())
        {
            return fail("zonesize must hold at least one block".into());
        }
        if self.think_blocks == 0 || self.loops == 0 || self.loops > 1_000_000 {
            return fail("thinktime_blocks and loops must be at least 1 (loops at most 1000000)".into());
        }
        if self.size_percent > 100 || (self.iodepth_low > 0 && self.iodepth_low >= self.iodepth) {
            return fail(format!("size_percent must be at most 100 and iodepth_low below iodepth {}", self.iodepth));
        }
        Ok(())
    }

    /// Arrivals follow a rate (fio `rate`/`rate_iops`) rather than completions.
    pub fn open_loop(&self) -> bool {
        self.rate_iops > 0 || self.rate_bytes_per_s > 0
    }

    /// The mean gap between arrivals of one thread, ns: the tighter of the I/O and byte caps.
    pub fn arrival_gap_ns(&self) -> f64 {
        let by_ios = if self.rate_iops > 0 { 1e9 / self.rate_iops as f64 } else { 0.0 };
        let by_bytes = if self.rate_bytes_per_s > 0 {
            let total: u64 = self.block_sizes.iter().map(|&(_, w)| w as u64).sum();
            let mean: f64 = self.block_sizes.iter().map(|&(b, w)| b as f64 * w as f64).sum::<f64>() / total as f64;
            mean * 1e9 / self.rate_bytes_per_s as f64
        } else {
            0.0
        };
        by_ios.max(by_bytes)
    }

    pub fn max_block_bytes(&self) -> u64 {
        self.block_sizes.iter().chain(&self.write_block_sizes).map(|&(b, _)| b).max().expect("validated")
    }
}

/// A whole workload: jobs run concurrently.
#[derive(Clone, Debug, PartialEq)]
pub struct Workload {
    pub jobs: Vec<Job>,
}

/// Most jobs a workload may have: each holds five latency histograms (about 60 KB each) for
/// itself and more per phase, so 1024 jobs take a few hundred MB.
pub const MAX_JOBS: usize = 1024;
/// Most threads over all jobs (fio numjobs summed; each has its own issuer state and PRNG).
pub const MAX_THREADS_TOTAL: u64 = 65_536;
/// Most host I/Os a workload may keep outstanding at once: Σ threads × iodepth over its jobs.
/// Each outstanding I/O holds a few hundred bytes of engine state (host I/O, array operation,
/// member block requests), so the cap keeps a run under about 1 GB (4096 × 65536 would need
/// about 90 GB).
pub const MAX_OUTSTANDING_IOS: u64 = 1 << 20;
/// Most files one job may split its region into.
pub const MAX_FILES: u32 = 1 << 20;

impl Workload {
    pub fn validate(&self) -> Result<()> {
        let fail = |message: String| Err(Error::new(ErrorKind::InvalidWorkload, message));
        if self.jobs.is_empty() {
            return fail("the workload has no jobs".into());
        }
        if self.jobs.len() > MAX_JOBS {
            return fail(format!("the workload has {} jobs, more than the limit of {MAX_JOBS}", self.jobs.len()));
        }
        self.jobs.iter().try_for_each(Job::validate)?;
        let threads: u64 = self.jobs.iter().map(|j| j.threads as u64).sum();
        if threads > MAX_THREADS_TOTAL {
            return fail(format!("the workload runs {threads} threads (numjobs summed over its jobs), more than the limit of {MAX_THREADS_TOTAL}"));
        }
        let outstanding = self.outstanding_ios();
        if outstanding > MAX_OUTSTANDING_IOS {
            return fail(format!(
                "the workload keeps up to {outstanding} host I/Os outstanding (numjobs × iodepth summed over its jobs), more than the limit of {MAX_OUTSTANDING_IOS}"
            ));
        }
        Ok(())
    }

    /// Host I/Os the workload may have in flight at once: Σ threads × iodepth.
    pub fn outstanding_ios(&self) -> u64 {
        self.jobs.iter().map(|j| j.threads as u64 * j.iodepth as u64).sum()
    }

    /// Stop time: the longest job runtime plus ramp and start delay (0 when no job is
    /// time-limited, or when jobs run in groups: a later group starts when an earlier ends).
    pub fn time_limit_ns(&self) -> Nanos {
        if self.jobs.iter().any(|j| j.group > 0) {
            return 0;
        }
        self.jobs
            .iter()
            .filter(|j| j.runtime_ns > 0)
            .map(|j| j.runtime_ns + j.ramp_ns + j.start_delay_ns)
            .max()
            .unwrap_or(0)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn allocations_sized_by_the_workload_are_bounded_with_errors_naming_the_limit() {
        let job = |threads, iodepth| Job { threads, iodepth, ..Job::default() };
        let check = |w: Workload, needle: &str| {
            let message = w.validate().unwrap_err().message;
            assert!(message.contains(needle), "'{needle}' not in: {message}");
        };
        check(Workload { jobs: vec![job(4096, 65536)] }, "up to 268435456 host I/Os outstanding (numjobs × iodepth summed over its jobs), more than the limit of 1048576");
        check(Workload { jobs: vec![job(1024, 512), job(1024, 512), job(1, 1)] }, "up to 1048577 host I/Os");
        check(Workload { jobs: vec![job(1, 1); MAX_JOBS + 1] }, "1025 jobs, more than the limit of 1024");
        check(Workload { jobs: vec![job(65_536, 1), job(1, 1)] }, "65537 threads");
        check(Workload { jobs: vec![Job { files: MAX_FILES + 1, ..Job::default() }] }, "files must be 1 to 1048576");
        Workload { jobs: vec![job(1024, 512), job(1024, 512)] }.validate().unwrap();
        Workload { jobs: vec![job(1, 1); MAX_JOBS] }.validate().unwrap();
    }

    #[test]
    fn the_default_job_is_fios_and_valid() {
        let job = Job::default();
        job.validate().unwrap();
        assert_eq!((job.threads, job.iodepth, job.read_fraction, job.random_fraction), (1, 1, 1.0, 0.0));
        assert_eq!((job.block_sizes.as_slice(), job.time_based), (&[(4096, 1)][..], false));
    }
}
