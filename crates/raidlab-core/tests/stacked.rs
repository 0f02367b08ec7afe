//! Stacked md arrays end to end: raid1+0, raid5+0, raid6+0 and raid0+1 run,
//! random 4 KiB writes cost what each inner md's rule says, data loss is decided by the stack,
//! an inner array rebuilds its own member, and the reliability chain of the stack matches the
//! closed form of independent pairs.

mod common;

use common::serial::SerialDisk;
use raidlab_core::device::{Drive, DriveInfo};
use raidlab_core::layout::{Array, ArraySpec, Layout, Level, StackSpec};
use raidlab_core::reliability::{analyze, Inputs, RepairPolicy};
use raidlab_core::sim::engine::{ArrayEvent, ArrayEventKind, SimConfig, SimResult, Simulation};
use raidlab_core::sim::block::sched::SchedulerKind;
use raidlab_core::sim::workload::{Job, Workload};

/// 1 GiB members: small enough for a rebuild to finish in a test.
const MEMBER_KIB: u64 = 1 << 20;

fn serial_drive() -> Box<dyn Drive> {
    let info = DriveInfo { kind: "null", capacity_bytes: 8 << 30, rpm: 0, interface: "test".into(), rotational: true };
    SerialDisk::boxed(info, 5_000_000, 5_000)
}

fn random_4k_writes() -> Job {
    Job {
        name: "w".into(),
        iodepth: 4,
        read_fraction: 0.0,
        random_fraction: 1.0,
        block_sizes: vec![(4096, 1)],
        runtime_ns: 3_000_000_000,
        time_based: true,
        block_align_bytes: 4096,
        ..Job::default()
    }
}

/// 1000 random 4 KiB writes over 1 GiB, each block once (fio's random map): every one completes,
/// and almost none shares a row held in an inner stripe cache with another.
fn counted_4k_writes() -> Job {
    Job { runtime_ns: 0, time_based: false, size_bytes: 1 << 30, number_ios: 1000, ..random_4k_writes() }
}

fn stack(name: &str, devices: u32, inner_devices: u32) -> StackSpec {
    StackSpec::from_counts(name, devices, inner_devices, None, 64, 128, MEMBER_KIB).unwrap()
}

fn config(stack: StackSpec, jobs: Vec<Job>) -> SimConfig {
    let devices = stack.sets as usize * stack.inner.member_kib.len();
    let physical = ArraySpec { member_kib: vec![MEMBER_KIB; devices], ..stack.inner.clone() };
    SimConfig {
        seed: 3,
        scheduler: SchedulerKind::None,
        max_time_ns: 600_000_000_000,
        stack: Some(stack),
        ..SimConfig::new(physical, Workload { jobs })
    }
}

fn run(config: SimConfig) -> SimResult {
    let drives = (0..config.array.member_kib.len()).map(|_| serial_drive()).collect();
    Simulation::new(config, drives).unwrap().run()
}

/// (member reads, member writes) per host write.
fn cost(result: &SimResult) -> (f64, f64) {
    let host = result.jobs[0].write.ios as f64;
    assert!(host > 100.0, "the run wrote {host} times");
    let reads: u64 = result.members.iter().map(|m| m.read_ios).sum();
    let writes: u64 = result.members.iter().map(|m| m.write_ios).sum();
    (reads as f64 / host, writes as f64 / host)
}

#[test]
fn each_stacked_level_runs_and_random_4k_writes_cost_what_the_inner_md_rule_says() {
    // raid1+0: each write goes to both drives of one pair, nothing is read.
    let (reads, writes) = cost(&run(config(stack("1+0", 4, 0), vec![counted_4k_writes()])));
    assert_eq!((reads, writes), (0.0, 2.0));
    // raid0+1: one write to each raid0 half.
    let (reads, writes) = cost(&run(config(stack("0+1", 4, 0), vec![counted_4k_writes()])));
    assert_eq!((reads, writes), (0.0, 2.0));
    // raid5+0 over two raid5 of 5: each inner md's stripe cache picks read-modify-write (2 < 3):
    // 2 reads, 2 writes; a write whose row another write left in the cache reads less (about 1 %
    // of them over 1 GiB with 256 heads per inner array).
    let (reads, writes) = cost(&run(config(stack("5+0", 10, 5), vec![counted_4k_writes()])));
    assert!((1.97..=2.0).contains(&reads) && writes == 2.0, "raid5+0: {reads} reads, {writes} writes");
    // raid6+0 over two raid6 of 4: reconstruct-write reads the row's other data block (1 < 3).
    let (reads, writes) = cost(&run(config(stack("6+0", 8, 4), vec![counted_4k_writes()])));
    assert!((0.97..=1.0).contains(&reads) && writes == 3.0, "raid6+0: {reads} reads, {writes} writes");
}

#[test]
fn raid5_0_sequential_writes_fill_whole_stripes_in_each_inner_stripe_cache() {
    // Inner raid5 of 5 with 64 KiB chunks: 256 KiB of data a stripe. Sequential 256 KiB writes:
    let sequential = Job {
        random_fraction: 0.0,
        block_sizes: vec![(256 << 10, 1)],
        block_align_bytes: 256 << 10,
        size_bytes: 256 << 20,
        number_ios: 0,
        ..counted_4k_writes()
    };
    let spec = |outer_chunk_kib| StackSpec::from_counts("5+0", 10, 5, None, 64, outer_chunk_kib, MEMBER_KIB).unwrap();
    // With a 256 KiB outer chunk each write is one full stripe of one inner array: its stripe
    // cache writes data and parity and reads nothing (5 member pages per 4 data pages).
    let aligned = run(config(spec(256), vec![sequential.clone()]));
    let (reads, writes) = cost(&aligned);
    assert_eq!(reads, 0.0, "{writes} member writes per host write");
    let written: u64 = aligned.members.iter().map(|m| m.write_sectors).sum();
    assert_eq!(written, 1024 * 512 * 5 / 4);
    // With a 128 KiB outer chunk each write is two half stripes, one in each inner array; the
    // next write brings the other halves while the first wait in the caches (md delays a head
    // that would pre-read while others are active), so the stripes still go out whole.
    let (reads, _) = cost(&run(config(spec(128), vec![sequential])));
    assert_eq!(reads, 0.0);
}

#[test]
fn buffered_writes_on_a_stack_reach_the_inner_stripe_caches_as_whole_stripes() {
    // 64 MiB written through the page cache in 1 MiB calls, then fsync, on raid5+0 (two raid5
    // of 5, 64 KiB chunks, 256 KiB outer chunk): the writeback (split by the outer raid0 and
    // sent to each inner array under the writer's plug) fills whole inner stripes, so nothing
    // is pre-read (measured: 0), and every written page reaches the members before the fsync
    // completes (1.25 member sectors per host sector: 5 pages per 4 of data).
    let job = Job {
        read_fraction: 0.0,
        random_fraction: 0.0,
        block_sizes: vec![(1 << 20, 1)],
        block_align_bytes: 1 << 20,
        size_bytes: 64 << 20,
        fsync_end: true,
        buffered: true,
        ..counted_4k_writes()
    };
    let spec = StackSpec::from_counts("5+0", 10, 5, None, 64, 256, MEMBER_KIB).unwrap();
    let result = run(config(spec, vec![Job { number_ios: 0, ..job }]));
    assert!(result.truncated.is_none() && result.data_loss.is_none());
    assert_eq!(result.jobs[0].flush.ios, 1, "the fsync completed");
    let host = result.jobs[0].write.bytes / 512;
    assert_eq!(host, 64 << 11);
    let reads: u64 = result.members.iter().map(|m| m.read_sectors).sum();
    let writes: u64 = result.members.iter().map(|m| m.write_sectors).sum();
    // Whole stripes: 5 member pages per 4 data pages.
    assert!(writes >= host * 5 / 4, "{writes} member sectors written for {host}");
    assert!((reads as f64) < 0.05 * host as f64, "{reads} pre-read sectors for {host} written");
}

#[test]
fn reads_of_raid1_0_are_balanced_over_both_drives_of_each_pair() {
    let reads = Job { read_fraction: 1.0, iodepth: 8, ..random_4k_writes() };
    let result = run(config(stack("1+0", 4, 0), vec![reads]));
    let per_member: Vec<u64> = result.members.iter().map(|m| m.read_ios).collect();
    let total: u64 = per_member.iter().sum();
    assert!(total >= result.jobs[0].read.ios && total <= result.jobs[0].read.ios + 8, "one member read per host read");
    // md's raid1 read_balance spreads a deep random load over both mirrors of each pair.
    for &ios in &per_member {
        assert!(ios * 8 > total, "member reads {per_member:?}");
    }
}

fn with_failures(mut config: SimConfig, failures: &[(u64, u32)]) -> SimConfig {
    config.timeline = failures.iter().map(|&(at_ns, m)| ArrayEvent { at_ns, kind: ArrayEventKind::Fail(m) }).collect();
    config
}

#[test]
fn two_failures_in_one_raid1_pair_lose_data_and_in_two_pairs_do_not() {
    let same_pair = run(with_failures(config(stack("1+0", 4, 0), vec![random_4k_writes()]), &[(500_000_000, 0), (1_000_000_000, 1)]));
    let loss = same_pair.data_loss.expect("a data-loss verdict");
    assert_eq!((loss.at_ns, loss.failed), (1_000_000_000, vec![0, 1]));
    let two_pairs = run(with_failures(config(stack("1+0", 4, 0), vec![random_4k_writes()]), &[(500_000_000, 0), (1_000_000_000, 2)]));
    assert!(two_pairs.data_loss.is_none());
    assert_eq!(two_pairs.end_ns, 3_000_000_000);
    // The survivors carry on: each pair's surviving drive takes every write of its pair.
    let (reads, writes) = cost(&two_pairs);
    assert_eq!(reads, 0.0);
    assert!(writes > 1.0 && writes < 2.0, "{writes}");
    // raid5+0 loses data only when one inner raid5 loses two; raid0+1 when both halves lose one.
    let raid50 = |failed: &[(u64, u32)]| run(with_failures(config(stack("5+0", 8, 4), vec![random_4k_writes()]), failed)).data_loss;
    assert!(raid50(&[(500_000_000, 1), (900_000_000, 6)]).is_none());
    assert!(raid50(&[(500_000_000, 5), (900_000_000, 6)]).is_some());
    let raid01 = |failed: &[(u64, u32)]| run(with_failures(config(stack("0+1", 4, 0), vec![random_4k_writes()]), failed)).data_loss;
    assert!(raid01(&[(500_000_000, 0), (900_000_000, 1)]).is_none());
    assert!(raid01(&[(500_000_000, 0), (900_000_000, 3)]).is_some());
}

#[test]
fn a_degraded_pair_is_rebuilt_by_its_own_raid1_from_its_partner() {
    let mut cfg = config(stack("1+0", 4, 0), Vec::new());
    cfg.failed = vec![3];
    cfg.timeline = vec![ArrayEvent { at_ns: 0, kind: ArrayEventKind::Replace(3) }];
    let result = run(cfg);
    let rebuild = &result.rebuilds[0];
    assert!(rebuild.end_ns.is_some(), "the rebuild finished");
    // raid1 recovery of the inner pair: read from drive 2, write drive 3; the other pair idles.
    let sectors = |m: usize| (result.members[m].read_sectors, result.members[m].write_sectors);
    assert_eq!(sectors(2), (rebuild.total_sectors, 0));
    assert_eq!(sectors(3), (0, rebuild.total_sectors));
    assert_eq!((sectors(0), sectors(1)), ((0, 0), (0, 0)));
    // The inner raid1 holds its whole member (less nothing: raid1 has no chunk rounding).
    assert_eq!(rebuild.total_sectors, MEMBER_KIB * 2);
}

#[test]
fn a_degraded_inner_raid5_is_rebuilt_by_its_own_recovery_from_its_own_survivors() {
    let mut cfg = config(stack("5+0", 8, 4), Vec::new());
    cfg.failed = vec![5];
    cfg.timeline = vec![ArrayEvent { at_ns: 0, kind: ArrayEventKind::Replace(5) }];
    let result = run(cfg);
    let rebuild = &result.rebuilds[0];
    assert!(rebuild.end_ns.is_some(), "the rebuild finished");
    // raid5 recovery of inner array 1 (drives 4-7): every survivor of that array read whole,
    // drive 5 written whole; inner array 0 (drives 0-3) idles.
    let sectors = |m: usize| (result.members[m].read_sectors, result.members[m].write_sectors);
    for survivor in [4, 6, 7] {
        assert_eq!(sectors(survivor), (rebuild.total_sectors, 0));
    }
    assert_eq!(sectors(5), (0, rebuild.total_sectors));
    assert!((0..4).all(|m| sectors(m) == (0, 0)));
    // The inner raid5 uses its whole members, rounded down to its 64 KiB chunk.
    assert_eq!(rebuild.total_sectors, MEMBER_KIB * 2 / 128 * 128);
}

fn mttdl_hours(array: &Array, lambda: f64, mu: f64) -> f64 {
    let inputs = Inputs {
        mttf_hours: 1.0 / lambda,
        repair_hours: 1.0 / mu,
        policy: RepairPolicy::Parallel,
        trials: 0,
        ..Inputs::defaults()
    };
    analyze(array, &inputs).unwrap().mttdl_hours
}

#[test]
fn raid1_0_reliability_is_the_closed_form_of_pairs_and_beats_raid0_1() {
    let (lambda, mu) = (1.0 / 1_000_000.0, 1.0 / 24.0);
    let raid10 = Array::stacked(&stack("1+0", 4, 0)).unwrap();
    // Two pairs, each drive failing at λ and each failed drive repaired at μ (the 3-state chain:
    // no failure → one pair degraded → both pairs degraded; a pair losing both drives is loss):
    //   T_B = (1 + μ/4λ + λ/(μ+λ)) / (3λ − 2λμ/(μ+λ)),   MTTDL = 1/4λ + T_B.
    let t_b = (1.0 + mu / (4.0 * lambda) + lambda / (mu + lambda)) / (3.0 * lambda - 2.0 * lambda * mu / (mu + lambda));
    let closed = 1.0 / (4.0 * lambda) + t_b;
    let got = mttdl_hours(&raid10, lambda, mu);
    assert!((got / closed - 1.0).abs() < 1e-9, "{got} vs {closed}");
    // md's own raid10 n2 on 4 drives has the same pairs.
    let md_raid10 = Array::new(&ArraySpec {
        level: Level::Raid10,
        layout: Some(Layout::parse(Level::Raid10, "n2").unwrap()),
        chunk_kib: 64,
        member_kib: vec![MEMBER_KIB; 4],
    })
    .unwrap();
    assert!((mttdl_hours(&md_raid10, lambda, mu) / got - 1.0).abs() < 1e-9);
    // raid0+1: the first failure takes a whole half out, and either drive of the other half
    // then loses data, so about half the mean time to data loss (μ/8λ² against μ/4λ²).
    let raid01 = Array::stacked(&stack("0+1", 4, 0)).unwrap();
    let ratio = mttdl_hours(&raid01, lambda, mu) / got;
    assert!(ratio > 0.45 && ratio < 0.55, "raid0+1 / raid1+0 MTTDL = {ratio}");
}

/// Random stacks, workloads and failures under the core's assertions, checking the queues and
/// every inner stripe cache between steps. A failure names the seed that reproduces it.
#[test]
fn swarm_of_random_stacks() {
    use raidlab_core::rng::Prng;
    let (mut losses, mut rebuilds, mut host_total) = (0, 0, 0u64);
    for seed in 0..40u64 {
        let mut rng = Prng::derive(seed, "stacked-swarm", 0);
        let (name, devices, inner) = [("1+0", 6, 0), ("1+0", 6, 3), ("5+0", 6, 3), ("5+0", 8, 4), ("6+0", 8, 4), ("0+1", 4, 0), ("0+1", 6, 0)]
            [rng.below(7) as usize];
        let chunk = [16, 64, 512][rng.below(3) as usize];
        let outer_chunk = [32, 128, 256][rng.below(3) as usize];
        let spec = StackSpec::from_counts(name, devices, inner, None, chunk, outer_chunk, MEMBER_KIB).unwrap();
        let block = [4096u64, 16384, 65536, 262144][rng.below(4) as usize];
        let job = Job {
            read_fraction: [0.0, 0.5, 1.0][rng.below(3) as usize],
            random_fraction: if rng.chance(0.5) { 1.0 } else { 0.0 },
            block_sizes: vec![(block, 1)],
            block_align_bytes: block,
            iodepth: 1 + rng.below(16) as u32,
            runtime_ns: 800_000_000,
            ..random_4k_writes()
        };
        let mut cfg = config(spec, vec![job]);
        cfg.max_events = 400_000;
        let first = rng.below(devices as u64) as u32;
        let second = rng.below(devices as u64) as u32;
        cfg.timeline = vec![ArrayEvent { at_ns: 100_000_000, kind: ArrayEventKind::Fail(first) }];
        if second != first {
            cfg.timeline.push(ArrayEvent { at_ns: 300_000_000, kind: ArrayEventKind::Fail(second) });
        } else if name != "0+1" {
            cfg.timeline.push(ArrayEvent { at_ns: 200_000_000, kind: ArrayEventKind::Replace(first) });
        }
        let array = Array::stacked(cfg.stack.as_ref().unwrap()).unwrap();
        let outcome = std::panic::catch_unwind(|| {
            let drives = (0..devices).map(|_| serial_drive()).collect();
            let mut sim = Simulation::new(cfg, drives).unwrap();
            let mut until = 0;
            while !sim.finished() {
                until += 50_000_000;
                sim.run_until(until);
                sim.check();
            }
            sim.finish()
        });
        let result = outcome.unwrap_or_else(|_| panic!("stacked swarm run failed; reproduce with seed {seed}"));
        let lost = second != first && array.loses_data(&[first, second]);
        assert_eq!(result.data_loss.is_some(), lost, "seed {seed}: {name} failing {first} then {second}");
        let host: u64 = result.jobs.iter().map(|j| j.read.ios + j.write.ios).sum();
        assert!(host > 0, "seed {seed}: no host I/O");
        (losses, rebuilds, host_total) = (losses + lost as u32, rebuilds + result.rebuilds.len() as u32, host_total + host);
    }
    // The swarm reaches what it is for: losses, inner rebuilds, and real traffic.
    assert!(losses >= 5 && rebuilds >= 2 && host_total > 4_000, "{losses} losses, {rebuilds} rebuilds, {host_total} host I/Os");
}
