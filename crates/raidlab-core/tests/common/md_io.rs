//! The one model of the machine `data/md-io/cases.json` was recorded on (see its README), and
//! the one loader of its cases, shared by `tests/md_io.rs` (sectors and read spreads of every
//! O_DIRECT case) and `tests/md_io_mirrors.rs` (mirror request counts and recoveries): a case
//! replays the same way whichever file compares it.
//!
//! The environment, from the README and the recordings:
//! - Members: virtio-blk disks (`VmDisk`): rotational to md (virtio_blk.c in 6.1 does not set
//!   QUEUE_FLAG_NONROT, so raid1's read_balance goes by head distance), behind mq-deadline with
//!   `max_sectors_kb` 1280 and `nr_requests` 256 (the README's member queue; `sched-none` runs are
//!   extra runs of the same case and only widen its range).
//! - The host side: one emulated vCPU (no KVM) runs the load generator, md, raid5d and the block
//!   layer, and it, not the disks, sets the pace: every case costs 100-500 µs of it per host I/O
//!   whatever the depth (loadgen `secs / ios`). The simulator has no guest CPU, so random loads of
//!   many threads are offered at the rate the loadgen reached (`paced_iops`), spread over their
//!   threads: each thread's arrival times decide md's pending counts (raid1/10 read balance).
//!   A sequential stream N deep is the loadgen's N threads sharing one cursor, each closed loop
//!   at depth 1: md held N of its requests at once, and how many of them meet in a stripe head
//!   is what decides its pre-reads; offered at the average rate instead, the fast virtual disks
//!   finish each write before the next arrives and the depth is lost. They are N threads, not
//!   one thread N deep, because md tells them apart: a thread asleep for a free stripe head
//!   holds back only its own next write. Single-thread loads are closed loop at depth 1.

use super::serial::SerialDisk;
use raidlab_core::device::{Drive, DriveInfo};
use raidlab_core::layout::{ArraySpec, Layout, Level};
use raidlab_core::sim::engine::{ControllerConfig, MdConfig, SimConfig, SimResult, Simulation};
use raidlab_core::sim::block::sched::{QueueLimits, SchedulerKind};
use raidlab_core::sim::workload::{Cursor, Job, Workload};
use raidlab_core::time::Nanos;
use serde_json::Value;
use std::collections::BTreeMap;

/// The recording VM's virtio-blk disk as the simulator sees it: one command at a time per disk,
/// FCFS (one QEMU thread serves it from the host's page cache, `cache=unsafe`), a fixed time per
/// command plus a transfer time per sector: 100 µs + 0.5 µs per sector.
/// - Bounded above by the data: a 64 KiB read at depth 1 on raid10 took 231-279 µs end to end,
///   guest CPU included (loadgen secs / ios of g5-r10n2-4x64k-seqr-direct-bs64k-t1), so one
///   128-sector command must cost less: here 164 µs (1.1 µs per sector would be 241 µs alone).
/// - The command cost stands for the emulated guest's virtqueue kick and completion interrupt
///   (TCG, no KVM: each an emulated exit). What it decides is md's pending counts under the
///   paced random reads: the raid10 read spread stays inside md's range for a 16 KiB command of
///   85 µs or more (swept: 50-150 µs per command, 0.5-1.1 µs per sector), and leaves it at 66 µs.
pub struct VmDisk;

pub const VM_COMMAND_NS: Nanos = 100_000;
pub const VM_PER_SECTOR_NS: Nanos = 500;

impl VmDisk {
    pub fn boxed(capacity_bytes: u64) -> Box<dyn Drive> {
        let info = DriveInfo { kind: "vm", capacity_bytes, rpm: 0, interface: "virtio".into(), rotational: true };
        SerialDisk::boxed(info, VM_COMMAND_NS, VM_PER_SECTOR_NS)
    }
}

pub fn load_cases() -> Vec<Value> {
    let path = concat!(env!("CARGO_MANIFEST_DIR"), "/../../data/md-io/cases.json");
    let text = std::fs::read_to_string(path).expect("data/md-io/cases.json");
    match serde_json::from_str(&text).expect("cases.json is JSON") {
        Value::Array(cases) => cases,
        _ => panic!("cases.json holds a list of cases"),
    }
}

/// The runs of every case that `keep` accepts, by case id (one case, several recordings).
pub fn runs_by_id(cases: &[Value], keep: impl Fn(&Value) -> bool) -> BTreeMap<String, Vec<&Value>> {
    let mut by_id: BTreeMap<String, Vec<&Value>> = BTreeMap::new();
    for case in cases.iter().filter(|c| keep(c)) {
        by_id.entry(case["id"].as_str().unwrap().to_string()).or_default().push(case);
    }
    by_id
}

pub fn is_recovery(case: &Value) -> bool {
    case["load"]["op"].as_str().is_some_and(|op| op.starts_with("rebuild"))
}

pub fn is_direct(case: &Value) -> bool {
    case["load"]["mode"] == "direct"
}

/// Single-thread O_DIRECT loads and recoveries are deterministic in md (README).
pub fn is_single_thread(case: &Value) -> bool {
    case["load"]["threads"].as_u64() == Some(1)
}

pub fn level_of(case: &Value) -> Level {
    match case["level"].as_u64().expect("level") {
        0 => Level::Raid0,
        1 => Level::Raid1,
        4 => Level::Raid4,
        5 => Level::Raid5,
        6 => Level::Raid6,
        10 => Level::Raid10,
        other => panic!("level {other}"),
    }
}

/// The array of a case, with members sized to md's data area (md's array size over the data
/// each member carries).
pub fn array_of(case: &Value) -> ArraySpec {
    let level = level_of(case);
    let devices = case["devices"].as_u64().unwrap();
    let size_kib: u64 = case["md_before"]["size"].as_str().unwrap().parse::<u64>().unwrap() / 1024;
    let layout_name = case["layout"].as_str();
    let member_kib = match level {
        Level::Raid0 => size_kib / devices,
        Level::Raid1 => size_kib,
        Level::Raid10 => {
            let copies: u64 = layout_name.unwrap()[1..].parse().unwrap();
            size_kib * copies / devices
        }
        Level::Raid4 | Level::Raid5 => size_kib / (devices - 1),
        Level::Raid6 => size_kib / (devices - 2),
    };
    ArraySpec {
        level,
        layout: layout_name.map(|name| Layout::parse(level, name).unwrap()),
        chunk_kib: case["chunk_kib"].as_u64().unwrap_or(64),
        member_kib: vec![member_kib; devices as usize],
    }
}

/// md's tunables of a case: the value set for it, else md's sysfs as found.
pub fn md_config(case: &Value) -> MdConfig {
    let mut md = MdConfig::default();
    let sysfs = |name: &str| -> Option<u64> {
        let tuned = case["tunables"].get(name).and_then(Value::as_u64);
        tuned.or_else(|| case["md_before"].get(name).and_then(Value::as_str).and_then(|s| s.parse().ok()))
    };
    if let Some(entries) = sysfs("stripe_cache_size") {
        md.stripe_cache_size = entries as u32;
    }
    md
}

/// The members a case ran without: `degraded_missing` of them, from the last slot.
pub fn missing_members(case: &Value) -> Vec<u32> {
    let devices = case["devices"].as_u64().unwrap() as u32;
    let missing = case["degraded_missing"].as_u64().unwrap_or(0) as u32;
    (devices - missing..devices).collect()
}

fn loadgen_rate(run: &Value) -> f64 {
    let loadgen = &run["load"]["loadgen"];
    let ios: f64 = loadgen["ios"].as_str().unwrap().parse().unwrap();
    let secs: f64 = loadgen["secs"].as_str().unwrap().parse().unwrap();
    ios / secs
}

/// The host I/O rate the loadgen reached on the recording VM's one vCPU, averaged over the
/// case's runs on that machine (`smp2` runs had 2 vCPUs, a different machine: their ranges
/// count, their pace does not).
pub fn paced_iops(runs: &[&Value]) -> u64 {
    let one_cpu: Vec<f64> = runs.iter().filter(|r| r["run"] != "smp2").map(|r| loadgen_rate(r)).collect();
    let rates = if one_cpu.is_empty() { runs.iter().map(|r| loadgen_rate(r)).collect() } else { one_cpu };
    (rates.iter().sum::<f64>() / rates.len() as f64).round() as u64
}

/// The loadgen's load as a job of N threads each at depth 1: `seq` = one cursor they share
/// (fio: numjobs N over one file with a shared offset), `rand` = each its own generator over
/// `region` (fio numjobs N); `ios` requests in all.
/// Random loads of several threads are offered at `paced_iops` (see the module's comment).
pub fn job_of(case: &Value, paced_iops: u64) -> Job {
    let load = &case["load"];
    let bs = load["bs"].as_u64().unwrap();
    let threads = load["threads"].as_u64().unwrap() as u32;
    let ios: u64 = load["loadgen"]["ios"].as_str().unwrap().parse().unwrap();
    let random = load["pattern"] == "rand";
    Job {
        name: case["id"].as_str().unwrap().into(),
        threads,
        iodepth: 1,
        read_fraction: if load["op"] == "read" { 1.0 } else { 0.0 },
        random_fraction: if random { 1.0 } else { 0.0 },
        block_sizes: vec![(bs, 1)],
        size_bytes: if random { load["region"].as_u64().unwrap() } else { ios * bs },
        cursor: Cursor::Shared,
        total_ios: ios,
        block_align_bytes: bs,
        rate_iops: if threads > 1 && random { paced_iops / threads as u64 } else { 0 },
        // The guest's scheduler interleaves the loadgen's threads with md and the block layer
        // on the one vCPU: arrivals at the achieved rate, not on a fixed beat.
        poisson_arrivals: true,
        ..Job::default()
    }
}

pub fn base_config(case: &Value, workload: Workload) -> SimConfig {
    SimConfig {
        seed: 1,
        data_offset_sectors: 2048,
        failed: missing_members(case),
        controller: ControllerConfig::Md(md_config(case)),
        scheduler: SchedulerKind::mq_deadline_default(),
        // Member queues as recorded: nr_requests 256, max_sectors_kb 1280.
        queue_limits: QueueLimits { nr_requests: 256, max_sectors: 2560 },
        max_time_ns: 3_600_000_000_000,
        max_events: 200_000_000,
        ..SimConfig::new(array_of(case), workload)
    }
}

pub fn run(config: SimConfig) -> SimResult {
    let capacity_bytes = (config.array.member_kib[0] + 4096) * 1024;
    let drives = (0..config.array.member_kib.len()).map(|_| VmDisk::boxed(capacity_bytes)).collect();
    let result = Simulation::new(config, drives).expect("a valid case").run();
    assert!(result.truncated.is_none(), "run truncated: {:?}", result.truncated);
    result
}

/// A host-load case replayed on the recording machine; every host I/O completes.
pub fn simulate_host_case(runs: &[&Value]) -> SimResult {
    let case = runs[0];
    let job = job_of(case, paced_iops(runs));
    let total = job.total_ios;
    let result = run(base_config(case, Workload { jobs: vec![job] }));
    let job = &result.jobs[0];
    assert_eq!(job.read.ios + job.write.ios, total, "{}: every host I/O completed", case["id"]);
    result
}

/// One recorded figure's range over the runs of a case.
#[derive(Clone, Copy, Debug)]
pub struct Range {
    pub low: f64,
    pub high: f64,
}

impl Range {
    pub fn of(values: &[f64]) -> Range {
        let low = values.iter().copied().fold(f64::INFINITY, f64::min);
        let high = values.iter().copied().fold(f64::NEG_INFINITY, f64::max);
        Range { low, high }
    }
    /// The acceptance slack: ±0.01 for deterministic cases (md repeats them exactly), else 0.05 + 10 % of
    /// the bound.
    pub fn widened(self, exact: bool) -> Range {
        if exact {
            Range { low: self.low - 0.01, high: self.high + 0.01 }
        } else {
            Range { low: self.low - 0.05 - 0.1 * self.low.abs(), high: self.high + 0.05 + 0.1 * self.high.abs() }
        }
    }
    pub fn contains(self, value: f64) -> bool {
        value >= self.low && value <= self.high
    }
}
