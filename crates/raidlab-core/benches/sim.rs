//! Simulator throughput: simulated host I/Os per wall second on one core (target: at least
//! one million; README.md, "Performance"). Workload: 6-drive raid5 and raid10, 16 KiB random 60/40,
//! 128 threads, Cheetah 10K.7 preset with SPTF command queueing, md, mq-deadline.
//!
//! Each iteration runs 20 simulated seconds; the benchmark reports host I/Os per iteration as
//! its throughput element, so criterion's "elem/s" is host I/Os per wall second. Only the
//! simulation is timed: the six drives are built once (construction fits each seek curve over
//! every cylinder) and cloned fresh for each iteration, with the configuration, outside the
//! timed region (`iter_batched`), so the figure is simulation speed, not setup cost. (The
//! engine makes the six share one seek table, as it does for `raidlab sim`.)

use criterion::{criterion_group, criterion_main, BatchSize, Criterion, Throughput};
use raidlab_core::device::hdd::Hdd;
use raidlab_core::device::Drive;
use raidlab_core::device::catalog::DriveChoice;
use raidlab_core::device::params::ParamValues;
use raidlab_core::layout::{ArraySpec, Level};
use raidlab_core::rng::Prng;
use raidlab_core::sim::engine::{ControllerConfig, MdConfig, SimConfig, SimResult, Simulation};
use raidlab_core::sim::block::sched::{QueueLimits, SchedulerKind};
use raidlab_core::sim::workload::{Job, Workload};

fn config(level: Level) -> (SimConfig, DriveChoice) {
    let mut params = ParamValues::new();
    params.insert("queue_policy".into(), 2.0); // SPTF
    let drive = DriveChoice::resolve(Some("cheetah-10k7"), None, &params).unwrap();
    let member_kib = drive.capacity_bytes() / 1024 - 132 * 1024;
    let job = Job {
        name: "bench".into(),
        threads: 128,
        read_fraction: 0.6,
        random_fraction: 1.0,
        block_sizes: vec![(16384, 1)],
        size_bytes: 32 << 30,
        runtime_ns: 20_000_000_000,
        time_based: true,
        block_align_bytes: 16384,
        ..Job::default()
    };
    let config = SimConfig {
        seed: 1,
        data_offset_sectors: 264_192,
        controller: ControllerConfig::Md(MdConfig::default()),
        scheduler: SchedulerKind::mq_deadline_default(),
        queue_limits: QueueLimits { nr_requests: 128, max_sectors: 2560 },
        max_time_ns: 60_000_000_000,
        max_events: u64::MAX,
        ..SimConfig::new(ArraySpec { level, layout: None, chunk_kib: 64, member_kib: vec![member_kib; 6] }, Workload { jobs: vec![job] })
    };
    (config, drive)
}

/// The six drives, built as `raidlab sim` builds them.
fn prototypes(drive: &DriveChoice) -> Vec<Hdd> {
    (0..6)
        .map(|i| {
            let built = drive.build(Prng::derive(1, "drive", i), None);
            (*built).as_any().downcast_ref::<Hdd>().expect("an HDD preset").clone()
        })
        .collect()
}

fn drives(prototypes: &[Hdd]) -> Vec<Box<dyn Drive>> {
    prototypes.iter().map(|hdd| Box::new(hdd.clone()) as Box<dyn Drive>).collect()
}

fn run(config: &SimConfig, prototypes: &[Hdd]) -> SimResult {
    Simulation::new(config.clone(), drives(prototypes)).unwrap().run()
}

fn host_ios(result: &SimResult) -> u64 {
    result.jobs.iter().map(|j| j.read.ios + j.write.ios).sum()
}

fn bench_sim(c: &mut Criterion) {
    let mut group = c.benchmark_group("sim");
    for (name, level) in [("raid5_6x_cheetah_sptf_128t", Level::Raid5), ("raid10_6x_cheetah_sptf_128t", Level::Raid10)] {
        let (config, drive) = config(level);
        let prototypes = prototypes(&drive);
        let ios = host_ios(&run(&config, &prototypes));
        group.throughput(Throughput::Elements(ios));
        group.bench_function(name, |b| {
            b.iter_batched(
                || (config.clone(), drives(&prototypes)),
                |(config, drives)| Simulation::new(config, drives).unwrap().run(),
                BatchSize::PerIteration,
            )
        });
    }
    group.finish();
}

criterion_group! {
    name = benches;
    config = Criterion::default().sample_size(10).measurement_time(std::time::Duration::from_secs(5));
    targets = bench_sim
}
criterion_main!(benches);
