//! Drives that misbehave in arrays. A latent sector error under load on a drive
//! without ERC stalls it past the host's 30 s command timeout and md drops it (then recovers
//! onto a spare); with ERC (7 s) the read fails fast, md computes the block from the others,
//! rewrites it and the drive stays. Idle timers put the wake-up in the latency tail.

use raidlab_core::device::behaviour::Behaviour;
use raidlab_core::device::catalog::DriveChoice;
use raidlab_core::device::params::ParamValues;
use raidlab_core::layout::{ArraySpec, Level};
use raidlab_core::rng::Prng;
use raidlab_core::sim::engine::{ArrayEvent, ArrayEventKind, DriveEvent, DriveFaults, SimConfig, SimResult, Simulation};
use raidlab_core::sim::workload::{Job, Workload};
use raidlab_core::time::Nanos;

const S: Nanos = 1_000_000_000;
/// Small members (2 GB) so a recovery finishes within the run.
const CAPACITY_BYTES: f64 = 2e9;

fn job(runtime_s: u64, think_ns: Nanos) -> Job {
    Job {
        name: "randread".into(),
        threads: 4,
        iodepth: 1,
        read_fraction: 1.0,
        random_fraction: 1.0,
        block_sizes: vec![(4096, 1)],
        runtime_ns: runtime_s * S,
        time_based: true,
        block_align_bytes: 4096,
        think_ns,
        ..Job::default()
    }
}

/// md raid5 over four `green-5400` drives with `params` overriding the preset.
/// A run's result and its drive events.
struct Run {
    result: SimResult,
    drive_events: Vec<DriveEvent>,
}

impl std::ops::Deref for Run {
    type Target = SimResult;
    fn deref(&self) -> &SimResult {
        &self.result
    }
}

fn run(params: &[(&str, f64)], timeline: Vec<ArrayEvent>, spare: bool, job: Job, devices: usize) -> Run {
    let mut values: ParamValues = params.iter().map(|&(k, v)| (k.to_string(), v)).collect();
    values.insert("capacity_bytes".into(), CAPACITY_BYTES);
    let choice = DriveChoice::resolve(Some("green-5400"), None, &values).unwrap();
    let behaviour = Behaviour::from_params(&choice.values).unwrap();
    let member_kib = (CAPACITY_BYTES as u64 / 512 - 2048) / 2;
    let mut config = SimConfig {
        seed: 3,
        timeline,
        drive_faults: DriveFaults { command_timeout_ns: 30 * S, behaviours: vec![behaviour; devices] },
        max_time_ns: 600 * S,
        ..SimConfig::new(
            ArraySpec { level: Level::Raid5, layout: None, chunk_kib: 64, member_kib: vec![member_kib; devices] },
            Workload { jobs: vec![job] },
        )
    };
    config.rebuild.spare = spare;
    // Under load md recovers at speed_limit_min; raised (as admins do, sysctl dev.raid) so the
    // spare is rebuilt within the run.
    config.rebuild.speed_limit_min = 100_000;
    let drives = (0..devices).map(|i| choice.build(Prng::derive(3, "drive", i as u64), None)).collect();
    let mut sim = Simulation::new(config, drives).unwrap();
    sim.run_until(Nanos::MAX);
    let drive_events = sim.drive_events().to_vec();
    Run { result: sim.finish(), drive_events }
}

fn latent(member: u32, at_s: u64) -> Vec<ArrayEvent> {
    vec![ArrayEvent { at_ns: at_s * S, kind: ArrayEventKind::LatentError(member) }]
}

fn events(result: &Run) -> Vec<(&'static str, u32)> {
    result.drive_events.iter().map(|e| (e.what, e.member)).collect()
}

#[test]
fn without_erc_a_latent_error_drops_the_drive_at_the_command_timeout_and_the_array_rebuilds() {
    // A sector the drive needs 40 to 120 s for (green-5400: no ERC).
    let result = run(&[("recovery_s_min", 40.0)], latent(1, 2), true, job(200, 0), 4);
    assert_eq!(events(&result), [("latent-error", 1), ("timeout-dropped", 1)]);
    let dropped = result.drive_events[1].at_ns;
    // The next read after 2 s met the sector; the host's timer ran 30 s from its dispatch.
    assert!((32 * S..32 * S + S / 10).contains(&dropped), "dropped at {dropped} ns");
    let names: Vec<_> = result.phases.iter().map(|p| (p.name, p.start_ns)).collect();
    assert_eq!(names.len(), 3, "{names:?} {:?}", result.rebuilds);
    assert_eq!(names[0], ("optimal", 0));
    assert_eq!(names[1], ("rebuilding", dropped), "{names:?}");
    assert_eq!(names[2].0, "optimal", "{names:?}");
    let rebuild = &result.rebuilds[0];
    assert_eq!((rebuild.member, rebuild.start_ns), (1, dropped));
    assert!(rebuild.end_ns.is_some(), "the spare is rebuilt within the run");
    assert!(result.data_loss.is_none());
    // Reads waited behind the stalled drive for the whole timeout.
    let max_ns = result.jobs[0].read.latency.max();
    assert!(max_ns >= 29 * S && max_ns <= 31 * S, "worst read {max_ns} ns");
}

#[test]
fn with_erc_the_read_is_rebuilt_from_parity_and_rewritten_and_the_drive_stays() {
    let result = run(&[("erc_read_s", 7.0)], latent(1, 2), true, job(60, 0), 4);
    // md's aligned read failed after 7 s; its retry through the stripe cache met the sector
    // again (another 7 s); then the block was computed, written back and read back.
    let what = events(&result);
    assert_eq!(what, [("latent-error", 1), ("read-error", 1), ("retry", 1), ("read-error", 1), ("corrected", 1)]);
    let times: Vec<Nanos> = result.drive_events.iter().map(|e| e.at_ns).collect();
    assert!((9 * S..9 * S + S / 10).contains(&times[1]), "first error at {}", times[1]);
    assert!(times[3] - times[2] >= 7 * S && times[3] - times[2] < 7 * S + S / 10, "second error 7 s on");
    assert!(times[4] > times[3] && times[4] < times[3] + S, "corrected at {}", times[4]);
    let names: Vec<_> = result.phases.iter().map(|p| p.name).collect();
    assert_eq!(names, ["optimal"], "never degraded");
    assert!(result.rebuilds.is_empty());
    let max_ns = result.jobs[0].read.latency.max();
    assert!((14 * S..15 * S).contains(&max_ns), "the failed read took two recoveries: {max_ns} ns");
}

#[test]
fn parked_heads_put_the_wake_in_the_latency_tail() {
    // One read every 10 s per thread: the drives idle past the 8 s idle3 timer between them.
    let parked = run(&[("idle_park_s", 8.0), ("park_wake_ms", 500.0)], Vec::new(), false, job(60, 10 * S), 4);
    let awake = run(&[], Vec::new(), false, job(60, 10 * S), 4);
    let (p, a) = (parked.jobs[0].read.latency.max(), awake.jobs[0].read.latency.max());
    assert!(a < 50_000_000, "without parking the worst read is a seek: {a} ns");
    assert!(p >= 500_000_000 && p < 550_000_000, "with parking it waits for the heads: {p} ns");
    assert!(parked.drive_events.is_empty());
}

#[test]
fn a_run_without_behaviour_is_unchanged() {
    let plain = run(&[], Vec::new(), false, job(5, 0), 4);
    let mut values = ParamValues::new();
    values.insert("capacity_bytes".into(), CAPACITY_BYTES);
    // The same run with no behaviours given at all (every member at the declared defaults).
    let choice = DriveChoice::resolve(Some("green-5400"), None, &values).unwrap();
    let member_kib = (CAPACITY_BYTES as u64 / 512 - 2048) / 2;
    let config = SimConfig {
        seed: 3,
        max_time_ns: 600 * S,
        ..SimConfig::new(
            ArraySpec { level: Level::Raid5, layout: None, chunk_kib: 64, member_kib: vec![member_kib; 4] },
            Workload { jobs: vec![job(5, 0)] },
        )
    };
    let drives = (0..4).map(|i| choice.build(Prng::derive(3, "drive", i as u64), None)).collect();
    let bare = Simulation::new(config, drives).unwrap().run();
    assert_eq!(plain.result, bare);
}

/// Random arrays (levels, md or a controller, ERC or none, short and long recoveries and
/// timeouts, idle timers) with latent errors, failures and replacements at random times: the
/// engine's invariants hold (its assertions, and `check` between steps) and every run ends.
#[test]
fn a_swarm_of_misbehaving_arrays_keeps_the_engine_invariants() {
    use raidlab_core::layout::Layout;
    use raidlab_core::sim::engine::{ControllerConfig, HwConfig};
    let mut rng = Prng::new(24);
    let shapes: [(Level, Option<&str>, usize); 6] = [
        (Level::Raid1, None, 2),
        (Level::Raid5, None, 4),
        (Level::Raid6, None, 5),
        (Level::Raid10, Some("n2"), 4),
        (Level::Raid10, Some("f2"), 4),
        (Level::Raid0, None, 3),
    ];
    let (mut drops, mut corrected, mut losses) = (0, 0, 0);
    for case in 0..48u64 {
        let (level, layout, devices) = shapes[rng.below(shapes.len() as u64) as usize];
        let recovery_min = rng.below(40) as f64;
        let mut values: ParamValues = [
            ("capacity_bytes", CAPACITY_BYTES),
            ("erc_read_s", if rng.chance(0.5) { 0.0 } else { 7.0 }),
            ("recovery_s_min", recovery_min),
            ("recovery_s_max", recovery_min + rng.below(80) as f64),
            ("idle_park_s", if rng.chance(0.3) { 1.0 } else { 0.0 }),
        ]
        .iter()
        .map(|&(k, v)| (k.to_string(), v))
        .collect();
        values.insert("park_wake_ms".into(), 300.0);
        values.insert("ure_per_bit".into(), if rng.chance(0.3) { 1e-7 } else { 0.0 });
        let choice = DriveChoice::resolve(Some("green-5400"), None, &values).unwrap();
        let behaviour = Behaviour::from_params(&choice.values).unwrap();
        let mut timeline = Vec::new();
        for _ in 0..1 + rng.below(3) {
            let member = rng.below(devices as u64) as u32;
            timeline.push(ArrayEvent { at_ns: rng.below(20) * S, kind: ArrayEventKind::LatentError(member) });
        }
        if rng.chance(0.3) {
            let member = rng.below(devices as u64) as u32;
            let at = rng.below(30) * S;
            timeline.push(ArrayEvent { at_ns: at, kind: ArrayEventKind::Fail(member) });
            timeline.push(ArrayEvent { at_ns: at + rng.below(10) * S + 1, kind: ArrayEventKind::Replace(member) });
        }
        timeline.sort();
        let member_kib = (CAPACITY_BYTES as u64 / 512 - 2048) / 2;
        let mut job = job(40, if rng.chance(0.3) { 2 * S } else { 0 });
        job.read_fraction = [1.0, 0.7, 0.3][rng.below(3) as usize];
        let controller = if rng.chance(0.25) { ControllerConfig::Hardware(HwConfig::default()) } else { ControllerConfig::Md(Default::default()) };
        let mut config = SimConfig {
            seed: case,
            timeline,
            controller,
            drive_faults: DriveFaults { command_timeout_ns: [5, 30][rng.below(2) as usize] * S, behaviours: vec![behaviour; devices] },
            max_time_ns: 600 * S,
            ..SimConfig::new(
                ArraySpec { level, layout: layout.map(|l| Layout::parse(level, l).unwrap()), chunk_kib: 64, member_kib: vec![member_kib; devices] },
                Workload { jobs: vec![job] },
            )
        };
        config.rebuild.spare = rng.chance(0.5);
        config.rebuild.speed_limit_min = 100_000;
        let drives = (0..devices).map(|i| choice.build(Prng::derive(case, "drive", i as u64), None)).collect();
        let mut sim = Simulation::new(config, drives).unwrap();
        // (In steps of simulated time: the next event may be further than a step away.)
        let mut until = 0;
        while !sim.finished() {
            until += S;
            sim.run_until(until);
            sim.check();
        }
        let what: Vec<&str> = sim.drive_events().iter().map(|e| e.what).collect();
        drops += what.iter().filter(|&&w| w == "timeout-dropped").count();
        corrected += what.iter().filter(|&&w| w == "corrected").count();
        let result = sim.finish();
        losses += result.data_loss.is_some() as usize;
        assert!(result.jobs[0].read.ios + result.jobs[0].write.ios > 0, "case {case}: no I/O");
    }
    // The swarm exercised both outcomes (and some arrays, raid0 among them, were lost).
    assert!(drops >= 5 && corrected >= 5 && losses >= 1, "drops {drops}, corrected {corrected}, losses {losses}");
}

#[test]
fn a_drive_pulled_while_it_recovers_takes_its_commands_with_it() {
    // No ERC, a 40-120 s recovery from about 2 s; the admin fails it at 5 s and replaces it at 6 s.
    let timeline = vec![
        ArrayEvent { at_ns: 2 * S, kind: ArrayEventKind::LatentError(1) },
        ArrayEvent { at_ns: 5 * S, kind: ArrayEventKind::Fail(1) },
        ArrayEvent { at_ns: 6 * S, kind: ArrayEventKind::Replace(1) },
    ];
    let result = run(&[("recovery_s_min", 40.0)], timeline, false, job(60, 0), 4);
    assert_eq!(events(&result), [("latent-error", 1)], "no timeout: the drive left before it");
    let names: Vec<_> = result.phases.iter().map(|p| (p.name, p.start_ns)).collect();
    assert_eq!(&names[..3], [("optimal", 0), ("degraded", 5 * S), ("rebuilding", 6 * S)]);
    // The reads the stalled drive held were served from the others when it was replaced.
    let max_ns = result.jobs[0].read.latency.max();
    assert!((3 * S..5 * S).contains(&max_ns), "worst read {max_ns} ns");
}

#[test]
fn an_error_rate_draws_unreadable_sectors_that_md_corrects() {
    // 1e-7 per bit read: a 4 KiB read meets one with P = 3.3e-3; a minute of reads meets several
    // (each stalls its member for two 7 s recoveries).
    let result = run(&[("erc_read_s", 7.0), ("ure_per_bit", 1e-7)], Vec::new(), false, job(60, 0), 4);
    let what = events(&result);
    let corrected = what.iter().filter(|e| e.0 == "corrected").count();
    let errors = what.iter().filter(|e| e.0 == "read-error").count();
    assert!(corrected >= 2 && errors >= corrected, "{what:?}");
    assert!(!what.iter().any(|e| e.0 == "latent-error" || e.0 == "timeout-dropped"), "{what:?}");
    assert_eq!(result.phases.len(), 1);
    let again = run(&[("erc_read_s", 7.0), ("ure_per_bit", 1e-7)], Vec::new(), false, job(60, 0), 4);
    assert_eq!((events(&again), &again.result), (what, &result.result), "seeded");
}
