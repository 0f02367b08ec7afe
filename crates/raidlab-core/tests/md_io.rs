//! Acceptance harness of issue 18: every O_DIRECT case recorded from the real Linux 6.1 md driver
//! (`data/md-io/cases.json`, see its README) replayed through the simulator with the same array,
//! md tunables and host load. Member read and write sectors per host sector, and the spread of
//! read sectors over members (sorted largest first), must lie within the range of the recorded
//! runs widened by 0.05 + 10 % (single-thread cases: ±0.01, they are deterministic in md).
//!
//! Cases the model does not match yet are listed in `KNOWN_GAPS`; each is asserted to still
//! miss, so the list can only shrink (a case that starts matching must leave it). Buffered cases
//! need the page cache (issue 19) and the recovery case has no host load: both are skipped and
//! counted.

use raidlab_core::device::{Command, Completion, Drive, DriveInfo, Op};
use raidlab_core::sim::Nanos;
use raidlab_core::layout::{ArraySpec, Layout, Level};
use raidlab_core::device::catalog::DriveChoice;
use raidlab_core::sim::engine::{ControllerConfig, HwConfig, MdConfig, RebuildConfig, SimConfig, SimResult, Simulation};
use raidlab_core::sim::Prng;
use raidlab_core::sim::sched::{QueueLimits, SchedulerKind};
use raidlab_core::sim::workload::{Cursor, Job, Workload};
use serde_json::Value;
use std::collections::{BTreeMap, VecDeque};
use std::path::PathBuf;

/// Cases (by id) the simulator does not match yet, each with why.
const KNOWN_GAPS: &[(&str, &str)] = &[
    ("g1-r5-4x512k-seqw-direct-bs512k-t8", "8 deep: md's raid5d (one CPU) handles heads before the stream fills them; raid5d's CPU time is issue 18 section 2"),
    ("g1-r5-4x512k-seqw-direct-bs1024k-t8", "8 deep: md's raid5d (one CPU) handles heads before the stream fills them; raid5d's CPU time is issue 18 section 2"),
    ("g1-r5-4x512k-seqw-direct-bs1536k-t8", "8 deep: md's raid5d (one CPU) handles heads before the stream fills them; raid5d's CPU time is issue 18 section 2"),
    ("g1-r5-4x64k-seqw-direct-bs1024k-t8", "8 deep: the simulated stream fills every stripe (0 reads), md leaves ~6 % partial; timing (section 2)"),
    ("g1-r5-4x64k-seqw-direct-bs64k-t8", "8 deep: simulated 0.40 reads per host sector, md 0.20-0.32; timing (section 2)"),
    ("g1-r5-4x64k-seqw-direct-bs64k-t8-rep2", "8 deep: simulated 0.40 reads per host sector, md 0.20; timing (section 2)"),
    ("g3-r5-4x512k-seqw-direct-bs1024k-t8-scs4096", "8 deep, 4096 heads: simulated 0.26 reads per host sector, md 0.05-0.15; timing (section 2)"),
    ("g5-r10n2-4x64k-randr-direct-bs16k-t8", "raid10 read balancing (issue 18 section 4)"),
];

/// A member as the recordings had (a virtio-blk disk served by one emulator thread): one
/// command at a time, in order, a fixed cost plus a transfer time per sector.
struct SerialDrive {
    info: DriveInfo,
    queue: VecDeque<(u64, Nanos)>,
    busy_ns: Nanos,
}

const COMMAND_NS: Nanos = SERVICE_US * 1000;
const SERVICE_US: Nanos = 50;
const PER_SECTOR_NS: Nanos = 500;

impl SerialDrive {
    fn boxed(capacity_bytes: u64) -> Box<dyn Drive> {
        let info = DriveInfo { kind: "null", capacity_bytes, rpm: 0, interface: "test".into(), rotational: false };
        Box::new(SerialDrive { info, queue: VecDeque::new(), busy_ns: 0 })
    }
}

impl Drive for SerialDrive {
    fn info(&self) -> &DriveInfo {
        &self.info
    }
    fn queue_depth(&self) -> u32 {
        32
    }
    fn submit(&mut self, now: Nanos, command: Command) {
        let cost = if command.op == Op::Flush { 1_000 } else { COMMAND_NS + PER_SECTOR_NS * command.sectors as u64 };
        let start = self.queue.back().map_or(now, |&(_, end)| end.max(now));
        self.queue.push_back((command.id, start + cost));
        self.busy_ns += cost;
    }
    fn next_event(&self) -> Option<Nanos> {
        self.queue.front().map(|&(_, end)| end)
    }
    fn advance(&mut self, now: Nanos, completed: &mut Vec<Completion>) {
        while let Some(&(id, end)) = self.queue.front() {
            if end > now {
                break;
            }
            self.queue.pop_front();
            completed.push(Completion { id, time: end });
        }
    }
    fn busy_nanos(&self) -> Nanos {
        self.busy_ns
    }
}

fn cases() -> Vec<Value> {
    let path = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../data/md-io/cases.json");
    let text = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    serde_json::from_str::<Value>(&text).unwrap().as_array().unwrap().clone()
}

/// The recorded figures of one case (over its runs): ranges of each compared quantity.
#[derive(Default)]
struct Target {
    first: Option<Value>,
    runs: u32,
    /// Per quantity name: (min, max) over the runs.
    ranges: BTreeMap<String, (f64, f64)>,
}

/// The compared quantities of one run (recorded or simulated), by name.
fn quantities(read_sectors: &[u64], write_sectors: &[u64], host_sectors: u64) -> BTreeMap<String, f64> {
    let host = host_sectors as f64;
    let reads: u64 = read_sectors.iter().sum();
    let writes: u64 = write_sectors.iter().sum();
    let mut q = BTreeMap::new();
    q.insert("read/host".to_string(), reads as f64 / host);
    q.insert("write/host".to_string(), writes as f64 / host);
    let mut shares: Vec<f64> =
        read_sectors.iter().map(|&r| if reads == 0 { 0.0 } else { r as f64 / reads as f64 }).collect();
    shares.sort_by(|a, b| b.partial_cmp(a).unwrap());
    for (rank, share) in shares.into_iter().enumerate() {
        q.insert(format!("read share #{rank}"), share);
    }
    q
}

fn recorded(case: &Value) -> BTreeMap<String, f64> {
    let members = case["members"].as_array().unwrap();
    let field = |name: &str| members.iter().map(|m| m[name].as_u64().unwrap_or(0)).collect::<Vec<_>>();
    let host = case["derived"]["host_sectors"].as_u64().unwrap();
    quantities(&field("read_sectors"), &field("write_sectors"), host)
}

fn level_of(case: &Value) -> Level {
    match case["level"].as_u64().unwrap() {
        0 => Level::Raid0,
        1 => Level::Raid1,
        4 => Level::Raid4,
        5 => Level::Raid5,
        6 => Level::Raid6,
        10 => Level::Raid10,
        other => panic!("level {other}"),
    }
}

/// Member data size: md's array size over the data each member carries.
fn member_kib(case: &Value, level: Level, devices: u64) -> u64 {
    let size_bytes: u64 = case["md_before"]["size"].as_str().unwrap().parse().unwrap();
    let member_bytes = match level {
        Level::Raid1 => size_bytes,
        Level::Raid4 | Level::Raid5 => size_bytes / (devices - 1),
        Level::Raid6 => size_bytes / (devices - 2),
        Level::Raid10 => size_bytes * 2 / devices,
        Level::Raid0 => size_bytes / devices,
    };
    member_bytes / 1024
}

fn md_config(case: &Value) -> MdConfig {
    let mut md = MdConfig::default();
    let sysfs = |name: &str| -> Option<u64> {
        let tuned = case["tunables"].get(name).and_then(Value::as_u64);
        tuned.or_else(|| case["md_before"].get(name).and_then(Value::as_str).and_then(|s| s.parse().ok()))
    };
    if let Some(entries) = sysfs("stripe_cache_size") {
        md.stripe_cache_entries = entries as u32;
    }
    md
}

/// The load generator's run as one fio-shaped job: `seq` shares one cursor (one job at
/// iodepth N), `rand` is N threads each at depth 1 over `region` bytes, `count` I/Os in all.
fn job_of(load: &Value) -> Job {
    let threads = load["threads"].as_u64().unwrap() as u32;
    let bs = load["bs"].as_u64().unwrap();
    let write = load["op"].as_str().unwrap() == "write";
    let mut job = Job {
        name: "md-io".into(),
        read_fraction: if write { 0.0 } else { 1.0 },
        block_sizes: vec![(bs, 1)],
        block_align_bytes: bs,
        ..Job::default()
    };
    if load["pattern"].as_str().unwrap() == "seq" {
        job.iodepth = threads;
        job.cursor = Cursor::Shared;
        job.io_bytes = load["bytes"].as_u64().unwrap();
        job.size_bytes = job.io_bytes;
    } else {
        job.threads = threads;
        job.random_fraction = 1.0;
        job.size_bytes = load["region"].as_u64().unwrap();
        job.total_ios = load["count"].as_u64().unwrap();
    }
    job
}

fn simulate(case: &Value) -> SimResult {
    let level = level_of(case);
    let devices = case["devices"].as_u64().unwrap();
    let layout = case["layout"].as_str().map(|name| Layout::parse(level, name).unwrap());
    let member_kib = member_kib(case, level, devices);
    let missing = case["degraded_missing"].as_u64().unwrap_or(0) as u32;
    let failed = (devices as u32 - missing..devices as u32).collect();
    let config = SimConfig {
        seed: 1,
        array: ArraySpec {
            level,
            layout,
            chunk_kib: case["chunk_kib"].as_u64().unwrap_or(64),
            member_kib: vec![member_kib; devices as usize],
        },
        data_offset_sectors: 2048,
        failed,
        controller: ControllerConfig::Md(md_config(case)),
        scheduler: SchedulerKind::None,
        // The recorded members' max_sectors_kb 1280 and nr_requests 256 (README).
        queue_limits: QueueLimits { nr_requests: 256, max_sectors: 2560 },
        workload: Workload { jobs: vec![job_of(&case["load"])] },
        max_time_ns: 3_600_000_000_000,
        max_events: 200_000_000,
        timeline: vec![],
        rebuild: RebuildConfig::default(),
    };
    let drives = (0..devices).map(|_| SerialDrive::boxed((member_kib + 4096) * 1024)).collect();
    Simulation::new(config, drives).unwrap().run()
}

fn simulated(result: &SimResult) -> BTreeMap<String, f64> {
    let reads: Vec<u64> = result.members.iter().map(|m| m.read_sectors).collect();
    let writes: Vec<u64> = result.members.iter().map(|m| m.write_sectors).collect();
    let job = &result.jobs[0];
    quantities(&reads, &writes, (job.read.bytes + job.write.bytes) / 512)
}

/// Whether `value` lies in the recorded range widened by the slack.
fn within(value: f64, (low, high): (f64, f64), single_thread: bool) -> bool {
    let (low, high) = if single_thread { (low - 0.01, high + 0.01) } else { (low - 0.05 - 0.1 * low, high + 0.05 + 0.1 * high) };
    (low..=high).contains(&value)
}

fn targets() -> (BTreeMap<String, Target>, Vec<String>) {
    let mut targets: BTreeMap<String, Target> = BTreeMap::new();
    let mut skipped = Vec::new();
    for case in cases() {
        let id = case["id"].as_str().unwrap().to_string();
        let mode = case["load"]["mode"].as_str().unwrap_or("none");
        if mode != "direct" {
            if !skipped.contains(&id) {
                skipped.push(id);
            }
            continue;
        }
        let target = targets.entry(id).or_default();
        target.runs += 1;
        for (name, value) in recorded(&case) {
            let range = target.ranges.entry(name).or_insert((value, value));
            *range = (range.0.min(value), range.1.max(value));
        }
        target.first.get_or_insert(case);
    }
    (targets, skipped)
}

#[test]
fn md_member_io_matches_the_recorded_cases() {
    let (targets, skipped) = targets();
    let mut failures = Vec::new();
    let mut still_failing = Vec::new();
    println!("{:<48} {:<14} {:>17} {:>9}  verdict", "case", "quantity", "real (range)", "sim");
    for (id, target) in &targets {
        let case = target.first.as_ref().unwrap();
        let single = case["load"]["threads"].as_u64() == Some(1);
        let sim = simulated(&simulate(case));
        let mut ok = true;
        for (name, &range) in &target.ranges {
            let value = sim.get(name).copied().unwrap_or(f64::NAN);
            let pass = within(value, range, single);
            ok &= pass;
            let real = format!("{:.3}-{:.3}", range.0, range.1);
            println!("{id:<48} {name:<14} {real:>17} {value:>9.3}  {}", if pass { "ok" } else { "MISS" });
        }
        let known = KNOWN_GAPS.iter().any(|(gap, _)| gap == id);
        match (ok, known) {
            (true, true) => failures.push(format!("{id} matches now: remove it from KNOWN_GAPS")),
            (false, false) => failures.push(format!("{id} does not match")),
            (false, true) => still_failing.push(id.clone()),
            (true, false) => {}
        }
    }
    for (gap, _) in KNOWN_GAPS {
        assert!(targets.contains_key(*gap), "KNOWN_GAPS names {gap}, not an O_DIRECT case");
    }
    println!(
        "{} cases: {} match, {} known gaps, {} skipped (buffered: page cache, issue 19; recovery: no host load): {skipped:?}",
        targets.len() + skipped.len(),
        targets.len() - still_failing.len() - failures.len(),
        still_failing.len(),
        skipped.len()
    );
    assert!(failures.is_empty(), "{failures:#?}");
}

/// A synthetic case in the recordings' shape: `count` random 4 KiB O_DIRECT writes from 16
/// threads over a region large enough that rows almost never meet in the stripe cache.
fn random_write_case(level: u64, layout: &str, devices: u64, member_bytes: u64) -> Value {
    let data_copies = match level {
        5 => devices - 1,
        6 => devices - 2,
        10 => devices / 2,
        _ => unreachable!(),
    };
    serde_json::json!({
        "level": level, "layout": layout, "devices": devices, "chunk_kib": 64, "degraded_missing": 0,
        "tunables": {}, "md_before": {"size": (member_bytes * data_copies).to_string(), "stripe_cache_size": "256"},
        "load": {"op": "write", "mode": "direct", "bs": 4096, "threads": 16, "pattern": "rand",
                 "count": 3000, "region": member_bytes * data_copies},
    })
}

#[test]
fn small_random_writes_keep_md_accounting() {
    // Member reads + writes per 4 KiB write (issue 18): raid5 2 + 2, raid6 on >= 6 members
    // 3 + 3 and on 4 members 1 + 3 (rcw reads the one other data page), raid10 n2 0 + 2.
    let cases = [
        (5, "left-symmetric", 4, 2.0, 2.0),
        (5, "left-symmetric", 6, 2.0, 2.0),
        (6, "left-symmetric", 6, 3.0, 3.0),
        (6, "left-symmetric", 8, 3.0, 3.0),
        (6, "left-symmetric", 4, 1.0, 3.0),
        (10, "n2", 4, 0.0, 2.0),
    ];
    for (level, layout, devices, reads, writes) in cases {
        let case = random_write_case(level, layout, devices, 4 << 30);
        let sim = simulated(&simulate(&case));
        let (r, w) = (sim["read/host"], sim["write/host"]);
        assert!((r - reads).abs() < 0.02 && (w - writes).abs() < 0.02, "raid{level} on {devices}: {r} + {w}");
    }
}

/// FNV-1a of a result's debug text (as tests/engine.rs pins its run).
fn fingerprint(result: &SimResult) -> u64 {
    let text = format!("{result:?}");
    text.bytes().fold(0xcbf2_9ce4_8422_2325u64, |h, b| (h ^ b as u64).wrapping_mul(0x0100_0000_01b3))
}

fn pinned_run(level: Level, layout: Option<&str>, controller: ControllerConfig) -> u64 {
    let drive = DriveChoice::resolve(Some("cheetah-10k7"), None, &Default::default()).unwrap();
    let job = Job {
        name: "pin".into(),
        threads: 8,
        iodepth: 2,
        read_fraction: 0.5,
        random_fraction: 0.7,
        block_sizes: vec![(16384, 1), (131072, 1)],
        runtime_ns: 300_000_000,
        time_based: true,
        block_align_bytes: 4096,
        ..Job::default()
    };
    let config = SimConfig {
        seed: 11,
        array: ArraySpec {
            level,
            layout: layout.map(|l| Layout::parse(level, l).unwrap()),
            chunk_kib: 64,
            member_kib: vec![drive.capacity_bytes() / 1024 - 2048; 6],
        },
        data_offset_sectors: 2048,
        failed: vec![],
        controller,
        scheduler: SchedulerKind::mq_deadline_default(),
        queue_limits: QueueLimits { nr_requests: 64, max_sectors: 2560 },
        workload: Workload { jobs: vec![job] },
        max_time_ns: 10_000_000_000,
        max_events: 50_000_000,
        timeline: vec![],
        rebuild: RebuildConfig::default(),
    };
    let drives = (0..6).map(|i| drive.build(Prng::derive(config.seed, "drive", i), None)).collect();
    fingerprint(&Simulation::new(config, drives).unwrap().run())
}


/// Runs the md stripe cache must leave byte for byte as they were (pinned from the commit
/// before it, re-pinned once when MemberStats gained read_merges/write_merges: with those two
/// fields taken out of the Debug text the old values still hold; raid1/raid10 are left unpinned,
/// their read balancing changed with md's nr_pending counting writes).
#[test]
fn runs_without_md_parity_are_unchanged() {
    let md = ControllerConfig::Md(MdConfig::default());
    let hw = ControllerConfig::Hardware(HwConfig::default());
    assert_eq!(pinned_run(Level::Raid0, None, md), 17791776641154526057, "raid0 under md");
    assert_eq!(pinned_run(Level::Raid5, None, hw), 2912434286494361408, "raid5 behind the controller");
    assert_eq!(pinned_run(Level::Raid6, None, hw), 10848120410836575129, "raid6 behind the controller");
}
