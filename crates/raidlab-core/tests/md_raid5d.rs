//! raid5d's CPU: md raid5/6 on NVMe members tops out at what raid5d
//! and its `group_thread_cnt` workers can handle, not at the drives; on HDD arrays the CPU is
//! far faster than the disks and results barely move. Run with `--nocapture` for the figures
//! recorded in bench/README.md.

use raidlab_core::device::catalog::DriveChoice;
use raidlab_core::layout::{ArraySpec, Level};
use raidlab_core::sim::engine::{ControllerConfig, MdConfig, SimConfig, SimResult, Simulation};
use raidlab_core::sim::md::Raid5dCpu;
use raidlab_core::sim::block::sched::{QueueLimits, SchedulerKind};
use raidlab_core::sim::workload::{Job, Workload};
use raidlab_core::rng::Prng;

const DEVICES: usize = 6;

fn run(preset: &str, level: Level, job: Job, md: MdConfig) -> SimResult {
    let drive = DriveChoice::resolve(Some(preset), None, &Default::default()).unwrap();
    let member_kib = (drive.capacity_bytes() / 1024 - 132 * 1024).min(64 << 20);
    let config = SimConfig {
        seed: 1,
        data_offset_sectors: 264_192,
        controller: ControllerConfig::Md(md),
        scheduler: SchedulerKind::mq_deadline_default(),
        queue_limits: QueueLimits { nr_requests: 256, max_sectors: 2560 },
        max_time_ns: 60_000_000_000,
        max_events: u64::MAX,
        ..SimConfig::new(ArraySpec { level, layout: None, chunk_kib: 512, member_kib: vec![member_kib; DEVICES] }, Workload { jobs: vec![job] })
    };
    let drives = (0..DEVICES).map(|i| drive.build(Prng::derive(1, "drive", i as u64), None)).collect();
    Simulation::new(config, drives).unwrap().run()
}

/// Sequential 1 MiB writes, one stream 32 deep, for `runtime_ns` simulated.
fn seq_writes(runtime_ns: u64) -> Job {
    Job {
        name: "seqw".into(),
        threads: 1,
        iodepth: 32,
        read_fraction: 0.0,
        random_fraction: 0.0,
        block_sizes: vec![(1 << 20, 1)],
        runtime_ns,
        time_based: true,
        block_align_bytes: 1 << 20,
        ..Job::default()
    }
}

fn write_mb_s(result: &SimResult) -> f64 {
    let job = &result.jobs[0];
    job.write.bytes as f64 / (job.runtime_ns as f64 / 1e9) / 1e6
}

/// The ceiling raid5d's threads put on full-stripe writes: data bytes of a 4 KiB row over
/// its handling time, times the threads.
fn ceiling_mb_s(cpu: &Raid5dCpu, level: Level, threads: u64) -> f64 {
    let data = (DEVICES as u64 - if level == Level::Raid6 { 2 } else { 1 }) * 4096;
    let rate = if level == Level::Raid6 { cpu.gen_bytes_per_second } else { cpu.xor_bytes_per_second };
    let ns = cpu.head_overhead_ns as f64
        + data as f64 * 1e9 / cpu.copy_bytes_per_second as f64
        + data as f64 * 1e9 / rate as f64;
    data as f64 / ns * 1e3 * threads as f64
}

#[test]
fn md_on_nvme_is_capped_by_raid5d_and_worker_threads_raise_the_cap() {
    for level in [Level::Raid5, Level::Raid6] {
        let free = write_mb_s(&run("nvme-tlc", level, seq_writes(50_000_000), MdConfig { raid5d_cpu: Raid5dCpu::FREE, ..MdConfig::default() }));
        let mut last = 0.0;
        for threads in [0u32, 2, 4] {
            let md = MdConfig { group_thread_cnt: threads, stripe_cache_size: 4096, ..MdConfig::default() };
            let got = write_mb_s(&run("nvme-tlc", level, seq_writes(50_000_000), md));
            let cap = ceiling_mb_s(&md.raid5d_cpu, level, 1 + threads as u64);
            println!("{level:?} 6 x nvme-tlc, 1 MiB sequential writes 32 deep: group_thread_cnt {threads}: {got:.0} MB/s (raid5d ceiling {cap:.0} MB/s, free CPU {free:.0} MB/s)");
            assert!(got <= cap * 1.02, "{level:?} gtc {threads}: {got} MB/s above raid5d's ceiling {cap}");
            if cap < free * 0.8 {
                assert!(got >= cap * 0.85, "{level:?} gtc {threads}: {got} MB/s, raid5d's ceiling {cap} not reached");
            }
            assert!(got > last * 1.3 || cap > free, "{level:?} gtc {threads}: {got} MB/s, not above {last}");
            last = got;
        }
        assert!(free > 2.0 * ceiling_mb_s(&Raid5dCpu::SERVER, level, 1), "{level:?}: the drives are not the cap ({free} MB/s)");
        let md = MdConfig { skip_copy: true, stripe_cache_size: 4096, ..MdConfig::default() };
        let no_copy = write_mb_s(&run("nvme-tlc", level, seq_writes(50_000_000), md));
        let alone = ceiling_mb_s(&Raid5dCpu::SERVER, level, 1);
        println!("{level:?} 6 x nvme-tlc, group_thread_cnt 0, skip_copy 1: {no_copy:.0} MB/s");
        assert!(no_copy > 1.3 * alone, "{level:?}: skip_copy gave {no_copy} MB/s");
    }
}

#[test]
fn hdd_arrays_barely_notice_raid5d() {
    let job = Job {
        name: "rand".into(),
        threads: 64,
        read_fraction: 0.6,
        random_fraction: 1.0,
        block_sizes: vec![(16384, 1)],
        runtime_ns: 2_000_000_000,
        time_based: true,
        block_align_bytes: 16384,
        ..Job::default()
    };
    let free = run("cheetah-10k7", Level::Raid5, job.clone(), MdConfig { raid5d_cpu: Raid5dCpu::FREE, ..MdConfig::default() });
    let server = run("cheetah-10k7", Level::Raid5, job, MdConfig::default());
    let ios = |r: &SimResult| (r.jobs[0].read.ios + r.jobs[0].write.ios) as f64;
    let change = ios(&server) / ios(&free) - 1.0;
    println!("raid5 6 x cheetah-10k7, 16 KiB random 60/40 64 threads: {} host I/O free CPU, {} server CPU ({:+.2} %)", ios(&free), ios(&server), change * 100.0);
    assert!(change.abs() < 0.01, "HDD raid5 moved {change} with raid5d's CPU");
}
