//! fio's stream options in the engine: directed checks of what each does to the
//! I/O, and a small swarm of random combinations under the core's assertions (a failure names
//! the seed).

mod common;

use common::serial::SerialDisk;
use raidlab_core::device::catalog::DriveChoice;
use raidlab_core::device::{Drive, DriveInfo};
use raidlab_core::layout::{ArraySpec, Level};
use raidlab_core::rng::Prng;
use raidlab_core::sim::engine::{ControllerConfig, MdConfig, SimConfig, SimResult, Simulation};
use raidlab_core::sim::block::sched::{QueueLimits, SchedulerKind};
use raidlab_core::sim::workload::{Job, Workload};

/// 100 µs per command plus 1 ns per sector, one at a time: easy arithmetic.
fn serial(count: usize) -> Vec<Box<dyn Drive>> {
    let info = DriveInfo { kind: "null", capacity_bytes: 8 << 30, rpm: 0, interface: "test".into(), rotational: true };
    (0..count).map(|_| SerialDisk::boxed(info.clone(), 100_000, 1)).collect()
}

fn config(level: Level, devices: usize, jobs: Vec<Job>) -> SimConfig {
    SimConfig {
        seed: 5,
        data_offset_sectors: 2048,
        controller: ControllerConfig::Md(MdConfig::default()),
        scheduler: SchedulerKind::None,
        queue_limits: QueueLimits { nr_requests: 128, max_sectors: 2560 },
        max_time_ns: 10_000_000_000,
        max_events: 10_000_000,
        ..SimConfig::new(ArraySpec { level, layout: None, chunk_kib: 64, member_kib: vec![4 << 20; devices] }, Workload { jobs })
    }
}

fn run(level: Level, devices: usize, jobs: Vec<Job>) -> SimResult {
    Simulation::new(config(level, devices, jobs), serial(devices)).unwrap().run()
}

fn reads(runtime_ns: u64) -> Job {
    Job {
        name: "r".into(),
        random_fraction: 1.0,
        runtime_ns,
        time_based: true,
        ..Job::default()
    }
}

#[test]
fn thinktime_adds_its_pause_to_every_io() {
    // raid1 reads at depth 1: 100 µs + 8 ns each; with 150 µs of think time, 250 µs each.
    let plain = run(Level::Raid1, 2, vec![reads(100_000_000)]);
    let think = run(Level::Raid1, 2, vec![Job { think_ns: 150_000, ..reads(100_000_000) }]);
    let per_io = |r: &SimResult| r.jobs[0].runtime_ns as f64 / r.jobs[0].read.ios as f64;
    assert!((per_io(&plain) - 100_008.0).abs() < 200.0, "{}", per_io(&plain));
    assert!((per_io(&think) - per_io(&plain) - 150_000.0).abs() < 200.0, "{}", per_io(&think));
}

#[test]
fn stonewall_groups_run_in_turn_and_each_job_is_timed_from_its_start() {
    let second = Job { name: "second".into(), group: 1, ..reads(30_000_000) };
    let result = run(Level::Raid1, 2, vec![reads(30_000_000), second]);
    assert_eq!(result.jobs[0].runtime_ns, 30_000_000);
    assert_eq!(result.jobs[1].runtime_ns, 30_000_000);
    assert!(result.end_ns >= 60_000_000 && result.end_ns < 60_300_000, "end {}", result.end_ns);
    // The second group starts once the first one's last I/O completed.
    assert_eq!(result.jobs[0].start_ns, 0);
    assert!((30_000_000..30_300_000).contains(&result.jobs[1].start_ns), "start {}", result.jobs[1].start_ns);
}

#[test]
fn startdelay_moves_the_start_and_the_deadline() {
    let late = Job { name: "late".into(), start_delay_ns: 20_000_000, ..reads(30_000_000) };
    let result = run(Level::Raid1, 2, vec![reads(30_000_000), late]);
    assert_eq!(result.end_ns, 50_000_000);
    assert_eq!(result.jobs[1].runtime_ns, 30_000_000);
    assert_eq!(result.jobs[1].start_ns, 20_000_000);
}

#[test]
fn verify_reads_back_exactly_what_was_written() {
    let job = Job {
        read_fraction: 0.0,
        random_fraction: 1.0,
        size_bytes: 4 << 20,
        io_bytes: 1 << 20,
        verify: true,
        ..Job::default()
    };
    let result = run(Level::Raid5, 4, vec![job]);
    assert_eq!(result.jobs[0].write.ios, 256);
    assert_eq!(result.jobs[0].read.ios, 256);
    assert_eq!(result.jobs[0].read.bytes, result.jobs[0].write.bytes);
}

#[test]
fn rate_in_bytes_spaces_arrivals_by_the_mean_block() {
    let job = Job { rate_bytes_per_s: 4096 * 1000, ..reads(1_000_000_000) };
    let result = run(Level::Raid1, 2, vec![job]);
    let ios = result.jobs[0].read.ios;
    assert!((999..=1000).contains(&ios), "{ios} I/Os at 1000 a second");
}

#[test]
fn flow_weights_set_the_ratio_of_ios() {
    let a = Job { name: "a".into(), flow_weight: 1, ..reads(100_000_000) };
    let b = Job { name: "b".into(), flow_weight: 3, ..reads(100_000_000) };
    let result = run(Level::Raid1, 2, vec![a, b]);
    let ratio = result.jobs[1].read.ios as f64 / result.jobs[0].read.ios as f64;
    assert!((ratio - 3.0).abs() < 0.05, "ratio {ratio}");
}

#[test]
fn size_percent_and_offset_increment_are_resolved_against_the_array() {
    // Sequential reads of 10 % of a 4 GiB raid1, once: 4 GiB / 10 / 4 KiB I/Os.
    let job = Job { size_percent: 10, block_sizes: vec![(1 << 20, 1)], block_align_bytes: 1 << 20, ..Job::default() };
    let result = run(Level::Raid1, 2, vec![job]);
    let expected = (4u64 << 30) / 10 >> 20; // whole 1 MiB blocks in a tenth of 4 GiB
    assert!(result.jobs[0].read.ios.abs_diff(expected) <= 1, "{} vs {expected}", result.jobs[0].read.ios);
    let clones = Job { threads: 4, offset_increment_bytes: 2 << 30, size_bytes: 1 << 20, ..Job::default() };
    let error = Simulation::new(config(Level::Raid1, 2, vec![clones]), serial(2)).err().expect("past the end");
    assert!(error.message.contains("offset_increment"), "{}", error.message);
}

fn random_stream_job(rng: &mut Prng) -> Job {
    let block = 4096 * (1 + rng.below(4));
    let mut job = Job {
        name: "s".into(),
        threads: 1 + rng.below(4) as u32,
        iodepth: 1 + rng.below(8) as u32,
        read_fraction: rng.below(11) as f64 / 10.0,
        random_fraction: [0.0, 0.5, 1.0][rng.below(3) as usize],
        block_sizes: vec![(block, 1)],
        block_align_bytes: 4096,
        size_bytes: [0, 64 << 20][rng.below(2) as usize],
        runtime_ns: 2_000_000 + rng.below(10_000_000),
        time_based: rng.chance(0.7),
        ..Job::default()
    };
    if rng.chance(0.3) {
        job.think_ns = rng.below(200_000);
        job.think_blocks = 1 + rng.below(4) as u32;
    }
    if rng.chance(0.2) {
        job.rate_bytes_per_s = (1 + rng.below(100)) << 20;
    }
    job.start_delay_ns = if rng.chance(0.2) { rng.below(3_000_000) } else { 0 };
    job.group = rng.below(2) as u32;
    job.loops = 1 + rng.below(2) as u32;
    job.iodepth_low = if job.iodepth > 1 && rng.chance(0.3) { rng.below(job.iodepth as u64) as u32 } else { 0 };
    job.verify = rng.chance(0.2);
    job.seq_skip_bytes = if rng.chance(0.2) { [-8192, 4096][rng.below(2) as usize] } else { 0 };
    if rng.chance(0.2) {
        job.zones = vec![(0.7, 0, 100_000), (0.3, 100_000, 1_000_000)];
    }
    if rng.chance(0.2) {
        job.zbd_zone_bytes = 16 << 20;
        job.zbd_max_open_zones = rng.below(4) as u32;
    }
    if rng.chance(0.2) {
        job.zone_bytes = 1 << 20;
        job.zone_skip_bytes = 3 << 20;
    }
    if rng.chance(0.2) {
        job.write_block_sizes = vec![(65536, 1)];
    }
    if rng.chance(0.3) {
        job.flow_weight = 1 + rng.below(4) as u32;
        job.flow_sleep_ns = [0, 100_000][rng.below(2) as usize];
    }
    if rng.chance(0.2) {
        job.offset_increment_bytes = 128 << 20;
    }
    if rng.chance(0.3) {
        job.files = 1 + rng.below(8) as u32;
        job.file_service = rng.below(3) as u8;
        job.file_service_ios = 1 + rng.below(3) as u32;
    }
    job
}

#[test]
fn a_swarm_of_stream_options_runs_under_the_cores_assertions() {
    let drive = DriveChoice::resolve(Some("nvme-tlc"), None, &Default::default()).unwrap();
    for seed in 0..120 {
        let outcome = std::panic::catch_unwind(|| {
            let mut rng = Prng::new(seed);
            let level = [Level::Raid0, Level::Raid1, Level::Raid5, Level::Raid6, Level::Raid10][rng.below(5) as usize];
            let devices = if level == Level::Raid6 { 4 } else { 2 + rng.below(3) as usize };
            let jobs = (0..1 + rng.below(3)).map(|_| random_stream_job(&mut rng)).collect();
            let mut cfg = config(level, devices, jobs);
            cfg.seed = seed;
            cfg.max_time_ns = 200_000_000;
            cfg.max_events = 400_000;
            let drives = (0..devices).map(|i| drive.build(Prng::derive(seed, "drive", i as u64), None)).collect();
            let result = Simulation::new(cfg, drives).unwrap_or_else(|e| panic!("seed {seed}: {e}")).run();
            for job in &result.jobs {
                assert_eq!(job.read.latency.count(), job.read.ios, "seed {seed}");
                assert_eq!(job.write.latency.count(), job.write.ios, "seed {seed}");
            }
        });
        assert!(outcome.is_ok(), "stream swarm failed; reproduce with seed {seed}");
    }
}

#[test]
fn roundrobin_file_service_interleaves_the_files_sequential_streams() {
    // Four files, sequential 1 MiB reads: fio's default roundrobin visits file 0, 1, 2, 3, 0, ...
    // each at its own position, so every member I/O is a fresh seek on the serial disk and the
    // same bytes come back as with one file after another.
    let base = Job { files: 4, size_bytes: 64 << 20, block_sizes: vec![(1 << 20, 1)], block_align_bytes: 1 << 20, ..Job::default() };
    let one_by_one = run(Level::Raid1, 2, vec![base.clone()]);
    let rr = run(Level::Raid1, 2, vec![Job { file_service: 1, ..base }]);
    assert_eq!(rr.jobs[0].read.ios, 64);
    assert_eq!(rr.jobs[0].read.bytes, one_by_one.jobs[0].read.bytes);
}
