//! Buffered sequential I/O through the page cache (target: a 16 GiB buffered sequential run
//! simulates in at most 5 s). One file of 16 GiB written in 8 KiB `write()`
//! calls then fsynced (fio `rw=write bs=8k size=16g end_fsync=1`, direct=0), and read back in
//! 8 KiB calls, on md raid5 of four nearline-7200 drives with 8 GiB of page cache (so the
//! writes pass the dirty limits and are throttled, and the reads miss: the file is twice RAM,
//! as bonnie++ sizes it). Each iteration is one whole run; criterion reports its wall time.

use criterion::{criterion_group, criterion_main, BatchSize, Criterion};
use raidlab_core::device::catalog::DriveChoice;
use raidlab_core::device::Drive;
use raidlab_core::layout::{ArraySpec, Level};
use raidlab_core::rng::Prng;
use raidlab_core::sim::engine::{ControllerConfig, MdConfig, SimConfig, Simulation};
use raidlab_core::sim::pagecache::PageCacheConfig;
use raidlab_core::sim::block::sched::{QueueLimits, SchedulerKind};
use raidlab_core::sim::workload::{Job, Workload};

const FILE_BYTES: u64 = 16 << 30;

fn config(write: bool) -> SimConfig {
    let job = Job {
        name: if write { "write".into() } else { "read".into() },
        read_fraction: if write { 0.0 } else { 1.0 },
        block_sizes: vec![(8192, 1)],
        size_bytes: FILE_BYTES,
        block_align_bytes: 4096,
        fsync_end: write,
        buffered: true,
        ..Job::default()
    };
    SimConfig {
        seed: 1,
        data_offset_sectors: 264_192,
        controller: ControllerConfig::Md(MdConfig::default()),
        scheduler: SchedulerKind::mq_deadline_default(),
        queue_limits: QueueLimits { nr_requests: 128, max_sectors: 2560 },
        max_time_ns: 3_600_000_000_000,
        max_events: u64::MAX,
        page_cache: PageCacheConfig { ram_bytes: 8 << 30, ..PageCacheConfig::default() },
        ..SimConfig::new(ArraySpec { level: Level::Raid5, layout: None, chunk_kib: 512, member_kib: vec![64 << 20; 4] }, Workload { jobs: vec![job] })
    }
}

fn drives() -> Vec<Box<dyn Drive>> {
    let drive = DriveChoice::resolve(Some("nearline-7200"), None, &Default::default()).unwrap();
    (0..4).map(|i| drive.build(Prng::derive(1, "drive", i), None)).collect()
}

fn bench_buffered(c: &mut Criterion) {
    let mut group = c.benchmark_group("pagecache");
    for (name, write) in [("buffered_seq_write_16g_8k_raid5_4x_nearline", true), ("buffered_seq_read_16g_8k_raid5_4x_nearline", false)] {
        let result = Simulation::new(config(write), drives()).unwrap().run();
        let job = &result.jobs[0];
        let bytes = job.read.bytes + job.write.bytes;
        eprintln!("{name}: {} host I/Os, {:.1} MB/s simulated, {} events", job.read.ios + job.write.ios, bytes as f64 / (job.runtime_ns as f64 / 1e9) / 1e6, result.events);
        group.bench_function(name, |b| {
            b.iter_batched(|| (config(write), drives()), |(config, drives)| Simulation::new(config, drives).unwrap().run(), BatchSize::PerIteration)
        });
    }
    group.finish();
}

criterion_group! {
    name = benches;
    config = Criterion::default().sample_size(10).measurement_time(std::time::Duration::from_secs(20));
    targets = bench_buffered
}
criterion_main!(benches);
