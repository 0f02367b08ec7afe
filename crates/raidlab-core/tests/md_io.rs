//! Acceptance harness of md's member I/O: every O_DIRECT case recorded from the real Linux 6.1 md driver
//! (`data/md-io/cases.json`, see its README) replayed through the simulator with the same array,
//! md tunables and host load. Member read and write sectors per host sector, and the spread of
//! read sectors over members (sorted largest first), must lie within the range of the recorded
//! runs widened by 0.05 + 10 % (single-thread cases: ±0.01, they are deterministic in md).
//!
//! Cases replay on the one model of the recording machine and through the one loader in
//! `common/md_io.rs` (shared with `md_io_mirrors.rs`, which adds the mirrors' request counts and
//! the recovery). Cases the model does not match yet are listed in `KNOWN_GAPS`; each is asserted to still
//! miss, so the list can only shrink (a case that starts matching must leave it). Buffered cases
//! go through the page cache (`md_io_buffered.rs` replays them) and the recovery case has no host
//! load: both are skipped here and counted.

mod common;

use common::md_io::{self, Range};
use common::serial::fingerprint;
use raidlab_core::device::catalog::DriveChoice;
use raidlab_core::layout::{ArraySpec, Layout, Level};
use raidlab_core::rng::Prng;
use raidlab_core::sim::engine::{ControllerConfig, HwConfig, MdConfig, SimConfig, SimResult, Simulation};
use raidlab_core::sim::block::sched::{QueueLimits, SchedulerKind};
use raidlab_core::sim::workload::{Job, Workload};
use serde_json::Value;
use std::collections::BTreeMap;

/// Cases (by id) the simulator does not match yet, each with why.
///
/// Since raid5d's member I/O goes through raid5d's block plug (`Raid5dThreads`), a
/// loop's writes reach the members together and complete together. That closed the 64 KiB
/// streams on 64 KiB chunks (0.50 reads per host sector before, 0.26 now against md's
/// 0.18-0.34; with the VM disk's command times varied by 5-20 % the model gives 0.30-0.33, so
/// the one-vCPU `-rep2` run, 0.204, is matched at the edge of its slack). It also made the two
/// 1 MiB streams 8 deep with 4096 heads gather every stripe, where md pre-read a little in
/// every run; before the plug the model read 0.151 and 0.024 there, inside md's ranges. Their
/// read/host is still inside the slack, but md's spread of reads has nothing to compare with.
/// The model adds all of a bio's heads at one instant; md walks the bio head by head, but every
/// O_DIRECT write runs under `blkdev_write_iter`'s plug, which holds the heads
/// (`release_stripe_plug`) until the writer sleeps waiting for the write (`blk_io_schedule` in
/// `__blkdev_direct_IO_simple`) and its plug is flushed (`raid5_unplug`), so they too reach
/// raid5d together. Tried with the plug (not kept): writers adding
/// their heads 1 or 8 at a time, 0.3-1 µs a head, with raid5d running beside them. The two
/// cases then pre-read (0.01-0.03 and 0.001-0.007), but so do the single-thread 1536 KiB
/// full-stripe writes (0.02-0.10 against md's 0, the same in every run): md splits them at
/// 1 MiB, and raid5d took the first piece's heads, 2/3 full, before the second piece came.
/// On the recording's one vCPU raid5d does not run while a writer submits, which is what the
/// atomic add stands for; the 8-deep cases need the guest's scheduler, which is not modelled.
/// Tried before the plug: host writes ending when raid5d handles the written
/// head, one vCPU shared by the writers and raid5d (gathering all or nothing), and raid5d
/// uniformly slower; with it: raid5d 2x and 5x slower (the 64 KiB streams 0.28 and 0.33, and
/// the 512 KiB-chunk stream with 4096 heads falls to 0.10 and 0.05 against md's 0.30-0.34).
/// Tried with the plug later (not kept; the 8-deep streams of the recorded cases are the
/// measure, 45 of 47 write cases matching now):
/// - Host writes ending in raid5d (`handle_stripe_clean_event`), each handled head costing
///   `handle_stripe`'s overhead: both cases match (0.121, and 0.011 on members 0 and 1 as md's
///   0.83/0.17), but the 512 KiB-chunk streams leave (256 heads 0.34-0.40 against md's
///   0.51-0.72; 4096 heads 0.16-0.21 against 0.30-0.34) and the buffered 4x512K case reads
///   0.16-0.21 (md 0.07-0.09).
/// - With that, the writers' submissions on one CPU (a cost per bio and per page) and raid5d
///   slowed S times, chosen so that the simulated run times match the loadgen's (rms log error
///   0.35-0.45 over 37 cases, 1.47 now): 41-44 of 47; the 64 KiB streams jump between 0.17,
///   0.34, 0.50 and 0.66 as the costs move: regimes the stream locks into, not a trend.
/// - Seeded noise on the VM disk (±10 %) and raid5d's passes (±20 %): these two stay at 0 in
///   every seed; with writes ending in raid5d they match in 4-6 of 6 seeds, the 256-head
///   512 KiB stream in none.
/// - O_DIRECT writes under `blkdev_write_iter`'s plug (block/fops.c holds one around every
///   write, `__blkdev_direct_IO_simple` included), so a write that finds a queued head moves it
///   to the handle list's tail as md does: these two unchanged, the three 64 KiB streams leave
///   (0.33 against md's 0.18-0.34 but spread 0.37/0.37/0.13/0.12).
/// Tried after that (not kept):
/// - One guest CPU shared CFS-like (vruntime, sleeper credit of half of sched_latency, 1 ms
///   wakeup granularity, raid5d yielding at `handle_active_stripes`'s cond_resched) by the
///   writers' submissions and raid5d, with writes ending in raid5d as above, and costs chosen so
///   the simulated run times match the loadgen's (rms log error 0.25 over the 47 write cases,
///   1.3 now): 41-44 of 47, with ±10-50 % seeded jitter on CPU and disk times too. The 64 KiB
///   streams lock into handling every other partial stripe early, so their reads fall on two
///   members (0.50/0.50/0/0 against md's 0.3/0.25/0.23/0.2); the 1 MiB 512 KiB-chunk stream reads
///   0.061 on two members.
/// - O_DIRECT writers adding their heads one by one (0.3-4 µs a head, 1 or 8 at a time, one
///   writer at a time) under `blkdev_write_iter`'s plug, raid5d on its own CPU: the two cases
///   still read 0-0.006; 40-45 of 47. md's partial-chunk reads here (296 and 1320 sectors in
///   run2) show raid5d and a writer interleaving within one stripe, which needs raid5d caught
///   up with its queue when the partner write arrives: in the model raid5d is the bottleneck and
///   always behind, so every stripe is gathered; made idle, it takes every partial stripe.
/// The streams' outcomes are regimes sensitive to every detail of timing; md's runs sit in one
/// regime each. Matching them needs the guest's scheduler (the loadgen threads, the flusher and
/// raid5d on one vCPU, CFS) and comparing the spread over seeds with md's runs.
const KNOWN_GAPS: &[(&str, &str)] = &[
    (
        "g3-r5-4x512k-seqw-direct-bs1024k-t8-scs4096",
        "no reads (md 0.050-0.152 reads per host sector in every run): every stripe gathered",
    ),
    (
        "g3-r5-4x64k-seqw-direct-bs1024k-t8-scs4096",
        "no reads (md 0.001-0.013 in every run): every stripe gathered",
    ),
];

/// The recorded figures of one case over its runs: the range of each compared quantity.
struct Target<'a> {
    runs: Vec<&'a Value>,
    ranges: BTreeMap<String, Range>,
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

fn simulated(result: &SimResult) -> BTreeMap<String, f64> {
    let reads: Vec<u64> = result.members.iter().map(|m| m.read_sectors).collect();
    let writes: Vec<u64> = result.members.iter().map(|m| m.write_sectors).collect();
    let job = &result.jobs[0];
    quantities(&reads, &writes, (job.read.bytes + job.write.bytes) / 512)
}

fn targets(cases: &[Value]) -> (BTreeMap<String, Target<'_>>, Vec<String>) {
    let skipped = md_io::runs_by_id(cases, |case| !md_io::is_direct(case)).into_keys().collect();
    let targets = md_io::runs_by_id(cases, md_io::is_direct)
        .into_iter()
        .map(|(id, runs)| {
            let recorded: Vec<_> = runs.iter().map(|run| recorded(run)).collect();
            let ranges = recorded[0]
                .keys()
                .map(|name| (name.clone(), Range::of(&recorded.iter().map(|r| r[name]).collect::<Vec<_>>())))
                .collect();
            (id, Target { runs, ranges })
        })
        .collect();
    (targets, skipped)
}

#[test]
fn md_member_io_matches_the_recorded_cases() {
    let cases = md_io::load_cases();
    let (targets, skipped) = targets(&cases);
    let mut failures = Vec::new();
    let mut still_failing = Vec::new();
    println!("{:<48} {:<14} {:>17} {:>9}  verdict", "case", "quantity", "real (range)", "sim");
    for (id, target) in &targets {
        let single = md_io::is_single_thread(target.runs[0]);
        let sim = simulated(&md_io::simulate_host_case(&target.runs));
        let mut ok = true;
        for (name, &range) in &target.ranges {
            // A model that read nothing has no spread of reads to compare, which is a match only
            // where md also read nothing in some run (its read/host is compared as usual).
            if name.starts_with("read share") && sim["read/host"] == 0.0 && target.ranges["read/host"].low == 0.0 {
                println!("{id:<48} {name:<14} {:>17} {:>9}  (no reads)", format!("{:.3}-{:.3}", range.low, range.high), "-");
                continue;
            }
            let value = sim.get(name).copied().unwrap_or(f64::NAN);
            let pass = range.widened(single).contains(value);
            ok &= pass;
            let real = format!("{:.3}-{:.3}", range.low, range.high);
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
    for (gap, why) in KNOWN_GAPS {
        assert!(targets.contains_key(*gap), "KNOWN_GAPS names {gap}, not an O_DIRECT case");
        println!("known gap {gap}: {why}");
    }
    println!(
        "{} cases: {} match, {} known gaps, {} skipped (buffered: md_io_buffered.rs; recovery: no host load): {skipped:?}",
        targets.len() + skipped.len(),
        targets.len() - still_failing.len() - failures.len(),
        still_failing.len(),
        skipped.len()
    );
    assert!(failures.is_empty(), "{failures:#?}");
}

/// Member requests per host write after merging (`/sys/block/*/stat` write_ios and read_ios) of
/// the single-thread raid5 streams whose counts md repeated exactly in every run (member
/// scheduler mq-deadline; the `sched-none` runs had none): raid5d issues a 4 KiB bio per head
/// and member, and only its block plug (`Raid5dThreads`) merges a loop's bios into md's
/// requests. Without it a 1536 KiB full-stripe write on 4×512K came out as 64 write requests,
/// where md issued 4 (one per member); with it, every such case is md's count.
#[test]
fn single_thread_streams_reach_the_members_in_mds_requests() {
    let cases = md_io::load_cases();
    let streams = md_io::runs_by_id(&cases, |c| {
        md_io::is_direct(c) && md_io::is_single_thread(c) && c["load"]["pattern"] == "seq" && c["level"] == 5 && c["run"] != "sched-none"
    });
    let per_host = |run: &Value, field: &str| {
        let ios: u64 = run["members"].as_array().unwrap().iter().map(|m| m[field].as_u64().unwrap_or(0)).sum();
        ios as f64 / run["derived"]["host_ios"].as_f64().unwrap()
    };
    let mut compared = 0;
    for (id, runs) in &streams {
        let (writes, reads): (Vec<f64>, Vec<f64>) = runs.iter().map(|r| (per_host(r, "write_ios"), per_host(r, "read_ios"))).unzip();
        if writes.iter().any(|w| *w != writes[0]) || reads.iter().any(|r| *r != reads[0]) {
            continue; // md's own counts moved between runs (timing): nothing exact to compare
        }
        let result = md_io::simulate_host_case(runs);
        let host = result.jobs[0].write.ios as f64;
        let requests = |f: fn(&raidlab_core::sim::engine::MemberStats) -> u64| result.members.iter().map(f).sum::<u64>() as f64 / host;
        let sim_writes = requests(|m| m.write_ios - m.write_merges);
        let sim_reads = requests(|m| m.read_ios - m.read_merges);
        println!("{id:<44} write requests/host md {:.2} sim {sim_writes:.2}, read md {:.2} sim {sim_reads:.2}", writes[0], reads[0]);
        assert!((sim_writes - writes[0]).abs() <= 0.01, "{id}: {sim_writes:.2} write requests per host write, md {:.2}", writes[0]);
        assert!((sim_reads - reads[0]).abs() <= 0.01, "{id}: {sim_reads:.2} read requests per host write, md {:.2}", reads[0]);
        compared += 1;
    }
    assert!(compared >= 8, "{compared} streams with exact counts");
}

/// The recording machine's disk (`common::md_io::VmDisk`) is no slower than the recordings allow:
/// one 64 KiB read at depth 1 took the loadgen 231-279 µs end to end on raid10 n2, guest CPU
/// included, so the disk's 128-sector command must take less than the fastest run.
#[test]
fn the_recording_machines_disk_fits_the_depth_one_timing() {
    let cases = md_io::load_cases();
    let runs = md_io::runs_by_id(&cases, |c| c["id"] == "g5-r10n2-4x64k-seqr-direct-bs64k-t1");
    let fastest_ns = runs.values().flatten().map(|run| {
        let loadgen = &run["load"]["loadgen"];
        let secs: f64 = loadgen["secs"].as_str().unwrap().parse().unwrap();
        secs * 1e9 / loadgen["ios"].as_str().unwrap().parse::<f64>().unwrap()
    });
    let fastest_ns = fastest_ns.fold(f64::INFINITY, f64::min);
    let command_ns = md_io::VM_COMMAND_NS + 128 * md_io::VM_PER_SECTOR_NS;
    assert!((200_000.0..240_000.0).contains(&fastest_ns), "recorded {fastest_ns} ns per 64 KiB read");
    assert!((command_ns as f64) < fastest_ns, "a 64 KiB command takes {command_ns} ns");
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
        "level": level, "layout": layout, "id": format!("synthetic-raid{level}-{devices}"), "run": "run1", "devices": devices, "chunk_kib": 64, "degraded_missing": 0,
        "tunables": {}, "md_before": {"size": (member_bytes * data_copies).to_string(), "stripe_cache_size": "256"},
        "load": {"op": "write", "mode": "direct", "bs": 4096, "threads": 16, "pattern": "rand",
                 "count": 3000, "region": member_bytes * data_copies,
                 // Paced as the recorded 16-thread random writes ran (~5000 host I/O/s).
                 "loadgen": {"ios": "3000", "secs": "0.6"}},
    })
}

#[test]
fn small_random_writes_keep_md_accounting() {
    // Member reads + writes per 4 KiB write (md's rmw/rcw rules): raid5 2 + 2, raid6 on >= 6 members
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
        let sim = simulated(&md_io::simulate_host_case(&[&case]));
        let (r, w) = (sim["read/host"], sim["write/host"]);
        assert!((r - reads).abs() < 0.02 && (w - writes).abs() < 0.02, "raid{level} on {devices}: {r} + {w}");
    }
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
        data_offset_sectors: 2048,
        controller,
        scheduler: SchedulerKind::mq_deadline_default(),
        queue_limits: QueueLimits { nr_requests: 64, max_sectors: 2560 },
        max_time_ns: 10_000_000_000,
        max_events: 50_000_000,
        ..SimConfig::new(ArraySpec {
            level,
            layout: layout.map(|l| Layout::parse(level, l).unwrap()),
            chunk_kib: 64,
            member_kib: vec![drive.capacity_bytes() / 1024 - 2048; 6],
        }, Workload { jobs: vec![job] })
    };
    let drives = (0..6).map(|i| drive.build(Prng::derive(config.seed, "drive", i), None)).collect();
    fingerprint(&Simulation::new(config, drives).unwrap().run())
}


/// Runs the md stripe cache must leave byte for byte as they were (pinned from the commit before
/// it, re-pinned once when MemberStats gained read_merges/write_merges: with those two fields taken
/// out of the Debug text the old values still hold; raid1/raid10 are left unpinned, their read
/// balancing changed with md's nr_pending counting writes). Re-pinned for the hardware controller
/// (were 17791776641154526057, 2912434286494361408, 10848120410836575129): the result's Debug text
/// gained SeriesPoint::bytes, steady_state_ns and estimated_duration_ns; with those taken out the
/// old values still hold (16 commands in flight never fill a queue, so the controller's own queues
/// and the host queue on its logical drive change nothing here). Re-pinned again for fio's stream
/// options and the md fidelity work (were 8642490386406219211, 12910599201704340492,
/// 11491789720008222299): more reported fields (MemberStats read_area/write_area, SeriesPoint
/// flush_ios/latency_ns_p95, SimResult host_busy_ns, RebuildResult start_sector); with every field
/// added then taken out of the merged code's Debug text, the values before hold. Job start times
/// (were 11289507716910177579, 5602969525903871917, 6599118809412580155): JobResult gained
/// start_ns; with it taken out the old values hold. In-order sequential streams (raid0 was
/// 3104099683180974475): the drive serves a sequential stream's commands in order (`hdd/queue.rs`,
/// DiskSim's sequential stream scheme); the raid0 run's 30 % sequential share moves a few reads by
/// one latency bucket (read latency sum 4384.2 ms -> 4383.7 ms over the same 155 reads, the same
/// maximum), nothing else; behind the controller its destage stops serving a queued command before
/// the one it continues, and the 0.3 s runs shift by a few commands (raid5 157 -> 156 reads, mean
/// 28.3 -> 28.1 ms; raid6 150 -> 141 reads, 29.4 -> 30.7 ms, 169 -> 151 cached writes). Job
/// completion (were 5128997558555372020, 12435532017135400202, 10866560993266607922): JobResult
/// gained `finished` (whether the job's threads were done when the run ended); with it taken out of
/// the Debug text the old values hold.
#[test]
fn runs_without_md_parity_are_unchanged() {
    let md = ControllerConfig::Md(MdConfig::default());
    let hw = ControllerConfig::Hardware(HwConfig::default());
    assert_eq!(pinned_run(Level::Raid0, None, md), 7204331571746237919, "raid0 under md");
    assert_eq!(pinned_run(Level::Raid5, None, hw), 10820588733738281995, "raid5 behind the controller");
    assert_eq!(pinned_run(Level::Raid6, None, hw), 3326243288281803331, "raid6 behind the controller");
}
