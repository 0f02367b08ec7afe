//! The instance's EBS limits in front of every volume member (sim/instance), and a
//! controller's BBU learn cycle (sim/controller), checked through whole runs with the rooms'
//! `check()` between steps.

use raidlab_core::device::catalog::DriveChoice;
use raidlab_core::device::params::ParamValues;
use raidlab_core::device::Drive;
use raidlab_core::layout::{ArraySpec, Level};
use raidlab_core::rng::Prng;
use raidlab_core::sim::controller::WritePolicy;
use raidlab_core::sim::engine::{ControllerConfig, HwConfig, SimConfig, SimResult, Simulation};
use raidlab_core::sim::instance::{HostLimits, HostReport};
use raidlab_core::sim::workload::{Job, Workload};

const NS: u64 = 1_000_000_000;

fn drives(preset: &str, count: usize) -> Vec<Box<dyn Drive>> {
    let choice = DriveChoice::resolve(Some(preset), None, &ParamValues::new()).expect("a preset");
    (0..count).map(|i| choice.build(Prng::derive(1, "drive", i as u64), Some(false))).collect()
}

fn job(read_fraction: f64, block_bytes: u64, iodepth: u32, seconds: u64) -> Job {
    Job {
        name: "test".into(),
        threads: 1,
        iodepth,
        read_fraction,
        random_fraction: 1.0,
        block_sizes: vec![(block_bytes, 1)],
        runtime_ns: seconds * NS,
        time_based: true,
        size_bytes: 2 << 30,
        block_align_bytes: block_bytes,
        ..Job::default()
    }
}

/// md raid0 over four gp3 volumes (3,000 IOPS each), random 16 KiB reads at depth 128.
fn raid0_gp3(seconds: u64, host: Option<HostLimits>) -> (SimResult, Option<HostReport>) {
    let member_kib = 500 * 1024 * 1024 - 1024;
    let config = SimConfig {
        host_limits: host,
        ..SimConfig::new(ArraySpec { level: Level::Raid0, layout: None, chunk_kib: 256, member_kib: vec![member_kib; 4] },
                         Workload { jobs: vec![job(1.0, 16384, 128, seconds)] })
    };
    let mut sim = Simulation::new(config, drives("ebs-gp3", 4)).expect("valid");
    let mut until = 0;
    while !sim.finished() {
        until += NS / 4;
        sim.run_until(until);
        sim.check();
    }
    let report = sim.host_report();
    (sim.finish(), report)
}

fn iops(result: &SimResult, from_s: usize, to_s: usize) -> f64 {
    let window = &result.series[from_s..to_s];
    window.iter().map(|p| p.read_ios as f64).sum::<f64>() / window.len() as f64
}

#[test]
fn a_host_caps_the_sum_of_its_volumes_and_its_burst_ends_on_budget() {
    let (alone, none) = raid0_gp3(10, None);
    assert!(none.is_none());
    let demand = iops(&alone, 1, 10);
    assert!(demand > 3.6 * 3000.0, "{demand}");
    // A burst of 20,000 IOPS (above the array) for 10 s from a baseline of 4,000: the bucket
    // holds 16,000 x 10 credits and drains at (demand - 4,000) a second.
    let host = HostLimits { baseline_iops: 4000.0, burst_iops: 20000.0, baseline_bytes_s: 1e9, burst_bytes_s: 1e9, burst_s: 10.0, start_balance: 1.0 };
    let (result, sim_report) = raid0_gp3(40, Some(host));
    let budget_s = 16000.0 * 10.0 / (demand - 4000.0);
    let end_s = sim_report.expect("a host report").iops_burst_end_ns.expect("the burst ended") as f64 / NS as f64;
    assert!((end_s - budget_s).abs() < 0.5, "{end_s} vs {budget_s}");
    assert!((iops(&result, 1, budget_s as usize - 1) - demand).abs() < 0.02 * demand);
    assert!((iops(&result, budget_s as usize + 2, 40) - 4000.0).abs() < 0.01 * 4000.0);
}

#[test]
fn host_limits_apply_to_volumes_only() {
    let config = SimConfig {
        host_limits: Some(HostLimits { baseline_iops: 4000.0, burst_iops: 4000.0, baseline_bytes_s: 1e8, burst_bytes_s: 1e8, burst_s: 0.0, start_balance: 1.0 }),
        ..SimConfig::new(ArraySpec { level: Level::Raid0, layout: None, chunk_kib: 64, member_kib: vec![1 << 20; 2] },
                         Workload { jobs: vec![job(1.0, 4096, 4, 1)] })
    };
    let error = Simulation::new(config, drives("cheetah-10k7", 2)).err().expect("refused");
    assert!(error.to_string().contains("cloud volume"), "{error}");
}

#[test]
fn a_learn_cycle_is_a_write_through_phase_with_consistent_controller_state() {
    let hw = HwConfig { cache_bytes: 16 << 20, learn_start_ns: 5 * NS, learn_duration_ns: 10 * NS, ..HwConfig::default() };
    let result = raid5_writes(hw);
    let phases: Vec<_> = result.phases.iter().map(|p| (p.name, p.start_ns / NS, p.end_ns / NS)).collect();
    assert_eq!(phases, vec![("optimal", 0, 5), ("bbu-learn", 5, 15), ("optimal", 15, 25)]);
    let rate = |p: usize| result.phases[p].write.ios as f64 / ((result.phases[p].end_ns - result.phases[p].start_ns) as f64 / NS as f64);
    let through = raid5_writes(HwConfig { learn_duration_ns: 0, write_policy: WritePolicy::WriteThrough, ..hw });
    let through_rate = through.jobs[0].write.ios as f64 / 25.0;
    // The cycle runs at most at the write-through rate (less while the dirty cache destages).
    assert!(rate(1) < 1.05 * through_rate && rate(1) > 0.5 * through_rate, "{} vs {through_rate}", rate(1));
    assert!(rate(0) > 1.5 * through_rate && rate(2) > 1.2 * through_rate, "{} {} {through_rate}", rate(0), rate(2));
    // Without a BBU there is no learn cycle to run.
    let no_bbu = HwConfig { bbu: false, ..hw };
    assert!(no_bbu.validate().is_err());
}

fn raid5_writes(hw: HwConfig) -> SimResult {
    let config = SimConfig {
        controller: ControllerConfig::Hardware(hw),
        data_offset_sectors: 0,
        ..SimConfig::new(ArraySpec { level: Level::Raid5, layout: None, chunk_kib: 64, member_kib: vec![70_000_000; 4] },
                         Workload { jobs: vec![job(0.0, 4096, 32, 25)] })
    };
    let mut sim = Simulation::new(config, drives("cheetah-10k7", 4)).expect("valid");
    let mut until = 0;
    while !sim.finished() {
        until += NS / 10;
        sim.run_until(until);
        sim.check();
    }
    sim.finish()
}
