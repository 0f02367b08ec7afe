//! The hardware RAID controller's room (sim/controller): its state stays consistent
//! through a run (`Simulation::check` between steps), and its mechanisms bite: firmware
//! commands per drive, a shared Ultra320 channel, the processor's command rate, and write
//! policies.

use raidlab_core::device::catalog::DriveChoice;
use raidlab_core::device::params::ParamValues;
use raidlab_core::device::Drive;
use raidlab_core::layout::{ArraySpec, Level};
use raidlab_core::rng::Prng;
use raidlab_core::sim::controller::{CommandOrder, WritePolicy};
use raidlab_core::sim::engine::{ControllerConfig, HwConfig, SimConfig, SimResult, Simulation};
use raidlab_core::sim::block::sched::{QueueLimits, SchedulerKind};
use raidlab_core::sim::workload::{Job, Workload};

fn drives(preset: &str, count: usize) -> Vec<Box<dyn Drive>> {
    let choice = DriveChoice::resolve(Some(preset), None, &ParamValues::new()).expect("a preset");
    (0..count).map(|i| choice.build(Prng::derive(1, "drive", i as u64), Some(false))).collect()
}

fn job(read_fraction: f64, random: bool, block_bytes: u64, threads: u32, iodepth: u32, seconds: u64) -> Job {
    Job {
        name: "test".into(),
        threads,
        iodepth,
        read_fraction,
        random_fraction: if random { 1.0 } else { 0.0 },
        block_sizes: vec![(block_bytes, 1)],
        runtime_ns: seconds * 1_000_000_000,
        time_based: true,
        size_bytes: 8 << 30,
        block_align_bytes: block_bytes,
        ..Job::default()
    }
}

fn config(level: Level, devices: usize, member_kib: u64, job: Job, hw: HwConfig) -> SimConfig {
    SimConfig {
        seed: 7,
        data_offset_sectors: 0,
        controller: ControllerConfig::Hardware(hw),
        scheduler: SchedulerKind::mq_deadline_default(),
        queue_limits: QueueLimits { nr_requests: 128, max_sectors: 2560 },
        max_time_ns: 60_000_000_000,
        max_events: 50_000_000,
        ..SimConfig::new(ArraySpec { level, layout: None, chunk_kib: 64, member_kib: vec![member_kib; devices] }, Workload { jobs: vec![job] })
    }
}

fn run(config: SimConfig, preset: &str) -> SimResult {
    let count = config.array.member_kib.len();
    Simulation::new(config, drives(preset, count)).expect("valid").run()
}

const CHEETAH_KIB: u64 = 70_000_000;

#[test]
fn the_controller_state_checks_hold_through_a_loaded_raid5_run() {
    let hw = HwConfig {
        cache_bytes: 8 << 20,
        destage_start_fraction: 0.5,
        destage_stop_fraction: 0.2,
        commands_per_drive: 4,
        commands_total: 16,
        command_order: CommandOrder::Elevator,
        host_queue_depth: 32,
        command_iops: 20_000,
        channels: 2,
        channel_bytes_per_second: 320_000_000,
        xor_bytes_per_second: 400_000_000,
        cache_memory_bytes_per_second: 1_000_000_000,
        host_link_bytes_per_second: 1_000_000_000,
        ..HwConfig::default()
    };
    let config = config(Level::Raid5, 6, CHEETAH_KIB, job(0.3, true, 16384, 64, 1, 3), hw);
    let mut sim = Simulation::new(config, drives("cheetah-10k7", 6)).expect("valid");
    let mut until = 0;
    while !sim.finished() {
        until += 50_000_000;
        sim.run_until(until);
        sim.check();
    }
    let result = sim.finish();
    assert!(result.jobs[0].write.ios > 1000 && result.jobs[0].read.ios > 500, "the run did work");
}

#[test]
fn two_commands_per_drive_read_less_than_sixty_four() {
    let iops = |per_drive| {
        let hw = HwConfig { commands_per_drive: per_drive, ..HwConfig::default() };
        let result = run(config(Level::Raid0, 4, CHEETAH_KIB, job(1.0, true, 16384, 128, 1, 3), hw), "cheetah-10k7");
        result.jobs[0].read.ios
    };
    let (two, sixty_four) = (iops(2), iops(64));
    assert!((two as f64) < 0.8 * sixty_four as f64, "2 per drive {two} vs 64 per drive {sixty_four}");
}

#[test]
fn drives_sharing_an_ultra320_channel_read_at_most_320_mb_s() {
    let bandwidth = |channels| {
        let hw = HwConfig { channels, channel_bytes_per_second: 320_000_000, ..HwConfig::default() };
        let result = run(config(Level::Raid0, 4, 30_000_000, job(1.0, false, 65536, 1, 32, 2), hw), "x25e-slc");
        result.jobs[0].read.bytes as f64 / 2.0 / 1e6
    };
    let (shared, own) = (bandwidth(1), bandwidth(0));
    assert!(shared <= 325.0 && shared > 250.0, "one Ultra320 channel: {shared} MB/s");
    assert!(own > 600.0, "a link per drive: {own} MB/s");
    assert!(bandwidth(2) > 1.6 * shared, "two channels carry about twice one");
}

#[test]
fn the_processor_caps_host_commands_per_second() {
    let hw = HwConfig { command_iops: 5_000, ..HwConfig::default() };
    let result = run(config(Level::Raid0, 4, 30_000_000, job(1.0, true, 4096, 32, 4, 2), hw), "x25e-slc");
    let iops = result.jobs[0].read.ios as f64 / 2.0;
    assert!(iops <= 5_050.0 && iops > 4_500.0, "{iops} IOPS against a 5000 IOPS processor");
}

#[test]
fn write_through_and_always_write_back_follow_the_policy_not_the_battery() {
    let writes = |policy, bbu| {
        let hw = HwConfig { write_policy: policy, bbu, ..HwConfig::default() };
        run(config(Level::Raid5, 4, CHEETAH_KIB, job(0.0, true, 4096, 4, 1, 2), hw), "cheetah-10k7").jobs[0].write.ios
    };
    let back = writes(WritePolicy::WriteBack, true);
    let no_bbu = writes(WritePolicy::WriteBack, false);
    let through = writes(WritePolicy::WriteThrough, true);
    let forced = writes(WritePolicy::AlwaysWriteBack, false);
    assert!(back > 3 * no_bbu, "write-back {back} vs without a BBU {no_bbu}");
    assert_eq!(no_bbu, through, "write-back without a BBU falls back to write-through");
    assert_eq!(forced, back, "always-write-back ignores the missing battery");
}

#[test]
fn a_read_share_of_the_cache_serves_re_reads() {
    let iops = |fraction| {
        let hw = HwConfig { cache_bytes: 64 << 20, read_cache_fraction: fraction, ..HwConfig::default() };
        let mut small = job(1.0, true, 16384, 16, 1, 2);
        small.size_bytes = 16 << 20; // fits the 32 MiB read share
        let config = config(Level::Raid5, 4, CHEETAH_KIB, small, hw);
        let mut sim = Simulation::new(config, drives("cheetah-10k7", 4)).expect("valid");
        sim.run_until(1_000_000_000);
        sim.check();
        sim.run_until(u64::MAX);
        sim.finish().jobs[0].read.ios
    };
    let (none, half) = (iops(0.0), iops(0.5));
    assert!(half > 5 * none, "re-reads from a 32 MiB read share {half} vs none {none}");
}
