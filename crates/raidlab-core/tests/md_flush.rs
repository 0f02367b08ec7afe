//! Replays the fsync cases of `data/md-flush/cases.json` (member flushes recorded from the real
//! Linux 6.1 md driver, see its README) through the simulator: md coalesces concurrent flushes
//! (`md_flush_request`: one flush in flight per array, the next covers every request that
//! waited), so N threads that each fsync after K writes cost the members fewer flushes than
//! fsyncs.
//!
//! Two figures per case, each within the recorded runs' range widened by 0.05 + 10 % of the
//! bound (single-thread cases: ±0.01, they are deterministic):
//! - member flushes per host fsync (the figure the model is about);
//! - member data write requests per host write (the recorded write_ios less the flushes: the
//!   kernel counts md's empty REQ_PREFLUSH bio as a write as well as a flush), which nothing
//!   in the flush model was chosen by.
//!
//! The machine is the md-io one (`common/md_io.rs`: virtio disks of 100 µs a command plus
//! 0.5 µs a sector, one at a time); a flush is a command like any other there (a virtqueue
//! round trip; QEMU's `cache=unsafe` makes the flush itself free), so it costs the 100 µs too.
//! Host threads run closed loop at depth 1 with an fsync after every K of their own writes
//! (fio `fsync=K`, the recorder's fsyncgen). (Offered instead at the rate the recorded runs
//! reached, Poisson, as md-io's paced random loads are, 11 of the 18 flush figures match
//! against closed loop's 13: the paced threads meet far less often than md's did.)
//!
//! Figures in `KNOWN_GAPS` are asserted to still miss (the list may only shrink): the VM's one
//! vCPU, which the simulator does not model, sets their pace. The 16-thread cases were recorded
//! after the replay was written, so nothing was tuned to them: they match and miss in the same families (raid1
//! and raid10 at K = 1, raid10 at K = 100 match; raid1 at K = 100 and raid5 miss).

/// (case, figure, why) known to miss. May only shrink.
const KNOWN_GAPS: &[(&str, &str, &str)] = &[
    // Closed-loop threads on FCFS disks that serve every write on both mirrors stay in step:
    // all reach their 100th write in one round and their fsyncs meet. The guest's scheduler on
    // its one vCPU spreads md's threads apart (0.77-1.11 recorded; simulated 0.06 and 0.25).
    ("raid1-2-t32-k100", "flushes", "closed-loop threads stay in step on a mirror"),
    ("raid1-2-t8-k100", "flushes", "closed-loop threads stay in step on a mirror"),
    // Held out (16 threads, recorded after this replay was written): 1.0 recorded, 0.125.
    ("raid1-2-t16-k100", "flushes", "closed-loop threads stay in step on a mirror"),
    // raid5's writes cost the guest's vCPU most (raid5d's rmw and xor; 470 µs a write and fsync
    // at 8 threads against 175 µs on raid1), so its fsyncs arrive spread out and meet less
    // often than the simulator's, whose disks alone set the pace (0.19-0.50 recorded at 32
    // threads, 0.66-0.99 at 8; simulated 0.08 and 0.33; 0.36 against 0.78-1.15 at K = 100).
    ("raid5-4-t32-k1", "flushes", "the guest's vCPU paces raid5's writes"),
    ("raid5-4-t8-k1", "flushes", "the guest's vCPU paces raid5's writes"),
    ("raid5-4-t32-k100", "flushes", "the guest's vCPU paces raid5's writes"),
    // Held out (16 threads): 0.98 recorded at K = 1, simulated 0.16; 1.0 at K = 100, 0.70.
    ("raid5-4-t16-k1", "flushes", "the guest's vCPU paces raid5's writes"),
    ("raid5-4-t16-k100", "flushes", "the guest's vCPU paces raid5's writes"),
];

mod common;

use common::md_io::{Range, VM_COMMAND_NS, VM_PER_SECTOR_NS};
use common::serial::SerialDisk;
use raidlab_core::device::{Drive, DriveInfo};
use raidlab_core::layout::{ArraySpec, Layout, Level, StackSpec};
use raidlab_core::sim::engine::{ControllerConfig, HwConfig, MdConfig, SimConfig, SimResult, Simulation};
use raidlab_core::sim::block::sched::{QueueLimits, SchedulerKind};
use raidlab_core::sim::workload::{FsyncScope, Job, Workload};
use serde_json::Value;
use std::collections::BTreeMap;

fn load_cases() -> Vec<Value> {
    let path = concat!(env!("CARGO_MANIFEST_DIR"), "/../../data/md-flush/cases.json");
    let text = std::fs::read_to_string(path).expect("data/md-flush/cases.json");
    serde_json::from_str::<Vec<Value>>(&text).expect("a list of cases")
}

/// The runs of each case, by the case's id less its run suffix.
fn runs_by_case(cases: &[Value]) -> BTreeMap<String, Vec<&Value>> {
    let mut by_case: BTreeMap<String, Vec<&Value>> = BTreeMap::new();
    for case in cases {
        let id = case["id"].as_str().unwrap();
        let name = id.rsplit_once("-run").map_or(id, |(name, _)| name);
        by_case.entry(name.to_string()).or_default().push(case);
    }
    by_case
}

fn array_of(case: &Value) -> ArraySpec {
    let devices = case["devices"].as_u64().unwrap() as usize;
    // 256 MiB members less md 1.2's data offset (1 MiB, as the md-io replays) and a margin.
    let member_kib = 256 * 1024 - 2048;
    let (level, layout) = match case["level"].as_str().unwrap() {
        "raid1" => (Level::Raid1, None),
        "raid5" => (Level::Raid5, Some(Layout::parse(Level::Raid5, "left-symmetric").unwrap())),
        "raid10" => (Level::Raid10, Some(Layout::parse(Level::Raid10, "n2").unwrap())),
        other => panic!("level {other}"),
    };
    ArraySpec { level, layout, chunk_kib: case["chunk_kib"].as_u64().unwrap_or(64), member_kib: vec![member_kib; devices] }
}

fn job_of(case: &Value, region_bytes: u64) -> Job {
    let load = &case["load"];
    let bytes = load["bytes"].as_u64().unwrap();
    Job {
        name: case["id"].as_str().unwrap().into(),
        threads: load["threads"].as_u64().unwrap() as u32,
        iodepth: 1,
        read_fraction: 0.0,
        random_fraction: 1.0,
        block_sizes: vec![(bytes, 1)],
        size_bytes: region_bytes / bytes * bytes,
        block_align_bytes: bytes,
        number_ios: load["writes_per_thread"].as_u64().unwrap(),
        fsync_every: load["fsync_every"].as_u64().unwrap() as u32,
        fsync_scope: FsyncScope::Thread,
        ..Job::default()
    }
}

fn virtio_disks(count: usize, capacity_bytes: u64) -> Vec<Box<dyn Drive>> {
    let info = DriveInfo { kind: "vm", capacity_bytes, rpm: 0, interface: "virtio".into(), rotational: true };
    // The md-io machine's virtio disk, with a flush costing a command (see the module comment).
    (0..count).map(|_| SerialDisk::with_flush(info.clone(), VM_COMMAND_NS, VM_PER_SECTOR_NS, VM_COMMAND_NS)).collect()
}

fn simulate(case: &Value) -> SimResult {
    let array = array_of(case);
    let capacity_bytes = (array.member_kib[0] + 4096) * 1024;
    let array_bytes = raidlab_core::layout::Array::new(&array).unwrap().capacity_bytes();
    let job = job_of(case, array_bytes - (2 << 20));
    let config = SimConfig {
        seed: 1,
        data_offset_sectors: 2048,
        controller: ControllerConfig::Md(MdConfig::default()),
        scheduler: SchedulerKind::mq_deadline_default(),
        queue_limits: QueueLimits { nr_requests: 256, max_sectors: 2560 },
        max_time_ns: 3_600_000_000_000,
        max_events: 200_000_000,
        ..SimConfig::new(array, Workload { jobs: vec![job] })
    };
    let drives = virtio_disks(config.array.member_kib.len(), capacity_bytes);
    let result = Simulation::new(config, drives).expect("a valid case").run();
    assert!(result.truncated.is_none(), "run truncated: {:?}", result.truncated);
    result
}

/// (member flushes per host fsync, member data write requests per host write), averaged over
/// the members, of a recorded run.
fn recorded_figures(run: &Value) -> (f64, f64) {
    let members = run["members"].as_array().unwrap();
    let (fsyncs, writes) = (run["load"]["host_fsyncs"].as_f64().unwrap(), run["load"]["host_writes"].as_f64().unwrap());
    let flushes: f64 = members.iter().map(|m| m["flush_ios"].as_f64().unwrap()).sum::<f64>() / members.len() as f64;
    let data: f64 = members.iter().map(|m| m["write_ios"].as_f64().unwrap() - m["flush_ios"].as_f64().unwrap()).sum::<f64>()
        / members.len() as f64;
    (flushes / fsyncs, data / writes)
}

fn simulated_figures(result: &SimResult) -> (f64, f64) {
    let job = &result.jobs[0];
    let members = &result.members;
    let count = members.len() as f64;
    let flushes = members.iter().map(|m| m.flush_ios as f64).sum::<f64>() / count;
    let data = members.iter().map(|m| m.write_ios as f64).sum::<f64>() / count;
    (flushes / job.flush.ios as f64, data / job.write.ios as f64)
}

#[test]
fn member_flushes_and_writes_per_host_fsync_match_md() {
    let cases = load_cases();
    let mut misses = Vec::new();
    for (name, runs) in runs_by_case(&cases) {
        let exact = runs[0]["load"]["threads"].as_u64() == Some(1);
        let recorded: Vec<(f64, f64)> = runs.iter().map(|r| recorded_figures(r)).collect();
        let flush_range = Range::of(&recorded.iter().map(|f| f.0).collect::<Vec<_>>()).widened(exact);
        let write_range = Range::of(&recorded.iter().map(|f| f.1).collect::<Vec<_>>()).widened(exact);
        let result = simulate(runs[0]);
        let (flushes, writes) = simulated_figures(&result);
        let job = &result.jobs[0];
        let total = runs[0]["load"]["host_writes"].as_u64().unwrap();
        assert_eq!(job.write.ios, total, "{name}: every write completed");
        eprintln!("{name}: flushes/fsync {flushes:.4} in {flush_range:?}; data writes/write {writes:.4} in {write_range:?}");
        for (figure, value, range) in [("flushes", flushes, flush_range), ("writes", writes, write_range)] {
            let gap = KNOWN_GAPS.iter().any(|&(case, known, _)| case == name && known == figure);
            if range.contains(value) == gap {
                let state = if gap { "now matches: take it off KNOWN_GAPS" } else { "outside" };
                misses.push(format!("{name}: {figure} {value:.4} {state} {range:?}"));
            }
        }
    }
    assert!(misses.is_empty(), "{}", misses.join("\n"));
}

/// 8 threads writing 16 KiB at random, each fsyncing after every write, 100 writes each.
fn fsync_every_write(controller: ControllerConfig, stack: Option<StackSpec>, devices: usize) -> SimResult {
    let member_kib = 64 * 1024;
    let array = ArraySpec { level: Level::Raid1, layout: None, chunk_kib: 64, member_kib: vec![member_kib; devices] };
    let job = Job {
        name: "fsync".into(),
        threads: 8,
        iodepth: 1,
        read_fraction: 0.0,
        random_fraction: 1.0,
        block_sizes: vec![(16384, 1)],
        size_bytes: 32 << 20,
        block_align_bytes: 16384,
        number_ios: 100,
        fsync_every: 1,
        fsync_scope: FsyncScope::Thread,
        ..Job::default()
    };
    let config = SimConfig { seed: 1, controller, stack, ..SimConfig::new(array, Workload { jobs: vec![job] }) };
    let drives = virtio_disks(devices, (member_kib + 4096) * 1024);
    let result = Simulation::new(config, drives).expect("a valid run").run();
    assert!(result.truncated.is_none());
    assert_eq!(result.jobs[0].flush.ios, 800, "every fsync completed");
    result
}

/// Every md flush reaches every member once, and md's flushes are fewer than the fsyncs but at
/// least one per round of the 8 threads.
fn assert_coalesced(result: &SimResult) {
    let flushes = result.members[0].flush_ios;
    assert!(result.members.iter().all(|m| m.flush_ios == flushes), "one flush to every member per md flush");
    assert!(flushes < 800 && flushes >= 100, "{flushes} md flushes for 800 fsyncs of 8 threads");
}

#[test]
fn md_sends_concurrent_fsyncs_to_the_members_as_fewer_flushes() {
    assert_coalesced(&fsync_every_write(ControllerConfig::Md(MdConfig::default()), None, 2));
}

#[test]
fn a_stack_flushes_every_physical_member_once_per_outer_flush() {
    // raid1+0 of 2 mirrors: the outer raid0's flush reaches both inner arrays one at a time, so
    // they have nothing to join and every physical member sees the outer array's count.
    let stack = StackSpec::from_counts("1+0", 4, 2, None, 64, 64, 64 * 1024).unwrap();
    assert_coalesced(&fsync_every_write(ControllerConfig::Md(MdConfig::default()), Some(stack), 4));
}

#[test]
fn a_controller_without_a_write_back_cache_flushes_the_members_for_every_fsync() {
    let hw = ControllerConfig::Hardware(HwConfig { bbu: false, ..HwConfig::default() });
    let result = fsync_every_write(hw, None, 2);
    assert!(result.members.iter().all(|m| m.flush_ios == 800), "{:?}", result.members.iter().map(|m| m.flush_ios).collect::<Vec<_>>());
}
