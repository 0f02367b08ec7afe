//! Swarm test (after TigerBeetle's VOPR): hundreds of small random configurations — every
//! level, layouts, failed members, both controllers, every scheduler, every drive family,
//! mixed workloads — each run briefly under the core's assertions. A run must finish without a
//! panic, and its counts must be consistent. A failure prints the seed that reproduces it.

use raidlab_core::device::catalog::{presets, DriveChoice, DriveKind};
use raidlab_core::device::hdd::{HddSpec, ReadAheadBound};
use raidlab_core::layout::{Array, ArraySpec, Layout, Level, ParityAlgorithm};
use raidlab_core::rng::Prng;
use raidlab_core::sim::engine::{ArrayEvent, ArrayEventKind, ControllerConfig, HwConfig, MdConfig, RebuildConfig, SimConfig, Simulation};
use raidlab_core::sim::block::sched::{QueueLimits, SchedulerKind};
use raidlab_core::sim::workload::{Cursor, Distribution, FsyncScope, Job, MixChoice, Workload};

const RUNS: u64 = 300;

fn pick<T: Copy>(rng: &mut Prng, items: &[T]) -> T {
    items[rng.below(items.len() as u64) as usize]
}

fn array(rng: &mut Prng, member_kib: u64) -> ArraySpec {
    let level = pick(rng, &[Level::Raid0, Level::Raid1, Level::Raid4, Level::Raid5, Level::Raid6, Level::Raid10]);
    let devices = match level {
        Level::Raid0 => 1 + rng.below(6) as usize,
        Level::Raid6 => 4 + rng.below(5) as usize,
        _ => 2 + rng.below(6) as usize,
    };
    let layout = match level {
        Level::Raid5 => Some(Layout::Parity(pick(rng, &ParityAlgorithm::ALL[..6]))),
        Level::Raid6 => Some(Layout::Parity(pick(rng, &ParityAlgorithm::ALL))),
        Level::Raid10 => Some(Layout::parse(level, pick(rng, &["n2", "f2", "o2", "n3", "o3"])).unwrap()),
        _ => None,
    };
    let chunk_kib = 1 << (2 + rng.below(8));
    ArraySpec { level, layout, chunk_kib, member_kib: vec![member_kib; devices] }
}

/// A hardware controller with random policies, firmware limits and ceilings.
fn hw_config(rng: &mut Prng) -> HwConfig {
    use raidlab_core::sim::controller::{CommandOrder, MirrorReads, ReadAheadPolicy, WritePolicy};
    let base = HwConfig { cache_bytes: (1 + rng.below(64)) << 20, bbu: rng.chance(0.7), read_ahead: rng.chance(0.5), ..HwConfig::default() };
    if rng.chance(0.5) {
        return base;
    }
    let high = pick(rng, &[0.0, 0.1, 0.5, 0.9]);
    HwConfig {
        write_policy: pick(rng, &[WritePolicy::WriteBack, WritePolicy::WriteThrough, WritePolicy::AlwaysWriteBack]),
        read_ahead_policy: pick(rng, &[ReadAheadPolicy::None, ReadAheadPolicy::Always, ReadAheadPolicy::Adaptive]),
        mirror_reads: pick(rng, &[MirrorReads::Nearest, MirrorReads::Primary, MirrorReads::RoundRobin, MirrorReads::LeastOutstanding]),
        destage_start_fraction: high,
        destage_stop_fraction: high * pick(rng, &[0.0, 0.5, 1.0]),
        commands_per_drive: pick(rng, &[0, 1, 2, 8]),
        commands_total: pick(rng, &[0, 1, 4, 16]),
        command_order: pick(rng, &[CommandOrder::Fifo, CommandOrder::Elevator]),
        host_queue_depth: pick(rng, &[0, 1, 8, 64]),
        command_iops: pick(rng, &[0, 2_000, 100_000]),
        host_link_bytes_per_second: pick(rng, &[0, 200_000_000]),
        channels: pick(rng, &[0, 1, 2]),
        channel_bytes_per_second: pick(rng, &[0, 320_000_000]),
        xor_bytes_per_second: pick(rng, &[0, 300_000_000]),
        cache_memory_bytes_per_second: pick(rng, &[0, 800_000_000]),
        // (A write must fit the write share: 8 MiB × 0.1 holds the largest block here.)
        read_cache_fraction: if base.cache_bytes >= 8 << 20 { pick(rng, &[0.0, 0.3, 0.9]) } else { 0.0 },
        ..base
    }
}

fn job(rng: &mut Prng) -> Job {
    let block = 512 * (1 + rng.below(256));
    let sysbench = rng.chance(0.3);
    Job {
        name: "swarm".into(),
        threads: 1 + rng.below(16) as u32,
        iodepth: 1 + rng.below(8) as u32,
        read_fraction: rng.below(11) as f64 / 10.0,
        random_fraction: pick(rng, &[0.0, 0.5, 1.0]),
        block_sizes: vec![(block, 3), (4096, 1)],
        size_bytes: pick(rng, &[0, 64 << 20, 1 << 30]),
        files: if sysbench { 1 + rng.below(16) as u32 } else { 1 },
        cursor: if sysbench { Cursor::Shared } else { Cursor::PerThread },
        distribution: pick(rng, &[Distribution::Uniform, Distribution::Zipf { theta: 1.1 }, Distribution::Pareto { h: 0.3 }, Distribution::Normal { stddev_pct: 10.0 }]),
        mix: if sysbench { MixChoice::Ratio } else { MixChoice::Random },
        rate_iops: if rng.chance(0.2) { 100 + rng.below(2000) } else { 0 },
        poisson_arrivals: rng.chance(0.5),
        fsync_every: pick(rng, &[0, 0, 1, 16]),
        fsync_scope: if sysbench { FsyncScope::AllFiles } else { FsyncScope::Thread },
        runtime_ns: 5_000_000 + rng.below(25_000_000),
        ramp_ns: pick(rng, &[0, 5_000_000]),
        time_based: true,
        block_align_bytes: 512,
        ..Job::default()
    }
}

/// The preset's HDD with the behaviours imported DiskSim drives switch on, chosen at random:
/// buffer policies, host-link overheads and a negative write settle.
fn disksim_like(rng: &mut Prng, drive: &DriveChoice) -> HddSpec {
    let mut spec = HddSpec::from_params(&drive.values).unwrap();
    let b = &mut spec.buffer;
    b.writes_share_segments = rng.chance(0.5);
    b.read_hits_on_write_data = rng.chance(0.5);
    b.read_ahead_bound = pick(rng, &[ReadAheadBound::Count, ReadAheadBound::Track, ReadAheadBound::Cylinder, ReadAheadBound::NextTrack]);
    b.read_ahead_on_idle_hit = rng.chance(0.5);
    b.read_free_blocks = rng.chance(0.5);
    b.zero_latency_reads = rng.chance(0.5);
    b.zero_latency_writes = rng.chance(0.5);
    let bus = &mut spec.bus;
    bus.write_mb_s = rng.chance(0.5).then(|| 5.0 + rng.below(300) as f64);
    bus.data_prep_ms = rng.below(100) as f64 / 1000.0;
    bus.reselect_ms = rng.below(300) as f64 / 1000.0;
    bus.read_disconnect_ms = [rng.below(50) as f64 / 1000.0, rng.below(50) as f64 / 1000.0];
    bus.read_completion_ms = rng.below(100) as f64 / 1000.0;
    bus.write_completion_ms = rng.below(100) as f64 / 1000.0;
    bus.write_start_sectors = pick(rng, &[0, 1, 10]);
    bus.min_write_seek_ms = pick(rng, &[0.0, 0.6]);
    if rng.chance(0.3) {
        spec.write_settle_ms = -spec.head_switch_ms / 2.0;
    }
    spec
}

/// Failures and replacements during the run, some of which lose the array (drawn from their own
/// generator, so the rest of a seed's configuration is what it was before timelines).
fn timeline(seed: u64, devices: u32) -> (Vec<ArrayEvent>, RebuildConfig) {
    let mut rng = Prng::derive(seed, "timeline", 0);
    let rebuild = RebuildConfig { spare: rng.chance(0.3), ..RebuildConfig::default() };
    if rng.chance(0.5) {
        return (vec![], RebuildConfig::default());
    }
    let mut events: Vec<ArrayEvent> = (0..1 + rng.below(4))
        .map(|_| {
            let member = rng.below(devices as u64) as u32;
            let kind = if rng.chance(0.7) { ArrayEventKind::Fail(member) } else { ArrayEventKind::Replace(member) };
            ArrayEvent { at_ns: rng.below(30_000_000), kind }
        })
        .collect();
    events.sort();
    (events, rebuild)
}

fn run_one(seed: u64) {
    let mut rng = Prng::new(seed);
    let all = presets();
    let preset = all[rng.below(all.len() as u64) as usize].name;
    let mut drive = DriveChoice::resolve(Some(preset), None, &Default::default()).unwrap();
    if drive.kind == DriveKind::Hdd && rng.chance(0.4) {
        drive = DriveChoice::from_hdd_spec(disksim_like(&mut rng, &drive)).unwrap();
    }
    let member_kib = (drive.capacity_bytes() / 1024).min(64 << 20);
    let mut spec = array(&mut rng, member_kib);
    let layout_ok = Array::new(&spec).is_ok();
    if !layout_ok {
        spec = ArraySpec { level: Level::Raid5, layout: None, chunk_kib: 64, member_kib: vec![member_kib; 4] };
    }
    let array = Array::new(&spec).unwrap();
    let failed: Vec<u32> = if rng.chance(0.3) { vec![rng.below(array.devices() as u64) as u32] } else { vec![] };
    let failed = if array.loses_data(&failed) { vec![] } else { failed };
    let controller = if rng.chance(0.3) {
        ControllerConfig::Hardware(hw_config(&mut rng))
    } else {
        ControllerConfig::Md(MdConfig { stripe_cache_size: pick(&mut rng, &[17, 64, 256]), ..MdConfig::default() })
    };
    let scheduler = pick(&mut rng, &[SchedulerKind::None, SchedulerKind::mq_deadline_default(), SchedulerKind::cfq_default()]);
    let workload = Workload { jobs: (0..1 + rng.below(2)).map(|_| job(&mut rng)).collect() };
    let (timeline, rebuild) = timeline(seed, array.devices());
    let config = SimConfig {
        seed,
        data_offset_sectors: 2048,
        failed,
        controller,
        scheduler,
        queue_limits: QueueLimits { nr_requests: pick(&mut rng, &[4, 64, 128]), max_sectors: pick(&mut rng, &[256, 2560]) },
        max_time_ns: 1_000_000_000,
        max_events: 300_000,
        timeline,
        rebuild,
        ..SimConfig::new(spec, workload)
    };
    let write_cache = matches!(config.controller, ControllerConfig::Hardware(_)).then_some(false);
    let drives = (0..array.devices()).map(|i| drive.build(Prng::derive(seed, "drive", i as u64), write_cache)).collect();
    // A battery-backed controller cache may absorb every write of a short run.
    let absorbs_writes = matches!(config.controller, ControllerConfig::Hardware(HwConfig { bbu: true, .. }));
    let mut sim = Simulation::new(config, drives).unwrap_or_else(|e| panic!("seed {seed}: {e}"));
    // Step through the run checking the queues and the controller's state.
    let mut until = 0;
    while !sim.finished() {
        until += 100_000_000;
        sim.run_until(until);
        sim.check();
    }
    let result = sim.finish();
    for job in &result.jobs {
        assert_eq!(job.read.latency.count(), job.read.ios, "seed {seed}");
        assert_eq!(job.write.latency.count(), job.write.ios, "seed {seed}");
    }
    if let Some(loss) = &result.data_loss {
        assert_eq!(result.end_ns, loss.at_ns, "seed {seed}: the run ends at the loss");
        assert!(array.loses_data(&loss.failed), "seed {seed}: a verdict for a survivable set");
    }
    let member_ios: u64 = result.members.iter().map(|m| m.read_ios + m.write_ios + m.flush_ios).sum();
    let host_ios: u64 = result.jobs.iter().map(|j| j.read.ios + j.write.ios).sum();
    assert!(host_ios == 0 || member_ios > 0 || absorbs_writes, "seed {seed}: host I/O without member I/O");
}

#[test]
fn swarm_of_random_configurations() {
    for seed in 0..RUNS {
        let outcome = std::panic::catch_unwind(|| run_one(seed));
        assert!(outcome.is_ok(), "swarm run failed; reproduce with seed {seed}");
    }
}
