//! The HDD model against its own analytic expectations and the behaviours a drive shows:
//! QD1 random reads match overhead + seek + half a revolution + transfer; SPTF beats FCFS;
//! read-ahead streams sequential reads at media rate; the write cache acknowledges at once and
//! Flush waits for destage; Lee's fit hits its three points; runs are deterministic; bad
//! parameters are one-line errors naming the parameter.

use raidlab_core::device::hdd::{self, Hdd, HddSpec, SeekSpec, ZoneSpec};
use raidlab_core::device::{Command, Completion, Drive, Op};
use raidlab_core::{rng::Prng, time::Nanos};
use raidlab_core::ErrorKind;

fn spec_with(name: &str, overrides: &[(&str, f64)]) -> HddSpec {
    let mut values = hdd::preset(name).expect("preset");
    for &(k, v) in overrides {
        values.insert(k.to_string(), v);
    }
    HddSpec::from_params(&values).expect("valid spec")
}

fn drive(name: &str, overrides: &[(&str, f64)], seed: u64) -> Hdd {
    Hdd::new(spec_with(name, overrides), Prng::derive(seed, "drive", 0))
}

/// What a closed-loop run produced.
struct Run {
    elapsed: Nanos,
    latencies: Vec<Nanos>,
    completions: Vec<Completion>,
}

impl Run {
    fn iops(&self) -> f64 {
        self.latencies.len() as f64 * 1e9 / self.elapsed as f64
    }
    fn mean_latency_ns(&self) -> f64 {
        self.latencies.iter().sum::<Nanos>() as f64 / self.latencies.len() as f64
    }
}

/// A tiny engine: keeps `depth` commands outstanding, issuing the next one the moment one
/// completes, for `total` commands. `next(i)` gives command i's (op, sector, sectors).
fn closed_loop(
    hdd: &mut Hdd,
    depth: u32,
    total: usize,
    mut next: impl FnMut(u64) -> (Op, u64, u32),
) -> Run {
    assert!(depth <= hdd.queue_depth());
    let mut submitted_at = Vec::with_capacity(total);
    let mut issue = |hdd: &mut Hdd, now: Nanos, submitted_at: &mut Vec<Nanos>| {
        let id = submitted_at.len() as u64;
        let (op, sector, sectors) = next(id);
        submitted_at.push(now);
        hdd.submit(
            now,
            Command {
                id,
                op,
                sector,
                sectors,
            },
        );
    };
    for _ in 0..(depth as usize).min(total) {
        issue(hdd, 0, &mut submitted_at);
    }
    let (mut now, mut latencies, mut completions, mut batch) =
        (0, Vec::new(), Vec::new(), Vec::new());
    while completions.len() < total {
        let t = hdd
            .next_event()
            .expect("commands are outstanding, so the drive has an event");
        assert!(t >= now, "next_event went back in time");
        now = t;
        batch.clear();
        hdd.advance(now, &mut batch);
        for c in &batch {
            let at = submitted_at[c.id as usize];
            assert!(
                c.time >= at && c.time <= now,
                "completion {c:?} outside [{at}, {now}]"
            );
            latencies.push(c.time - at);
            completions.push(*c);
            if submitted_at.len() < total {
                issue(hdd, now, &mut submitted_at);
            }
        }
    }
    Run {
        elapsed: now,
        latencies,
        completions,
    }
}

/// Uniformly random reads of `sectors`, anywhere on the drive.
fn random_reads(
    capacity_sectors: u64,
    sectors: u32,
    seed: u64,
) -> impl FnMut(u64) -> (Op, u64, u32) {
    let mut rng = Prng::derive(seed, "workload", 0);
    move |_| {
        (
            Op::Read,
            rng.below(capacity_sectors - sectors as u64 + 1),
            sectors,
        )
    }
}

fn capacity(hdd: &Hdd) -> u64 {
    hdd.info().capacity_bytes / 512
}

#[test]
fn qd1_random_reads_match_the_first_order_formula() {
    for name in ["cheetah-10k7", "nearline-7200"] {
        let mut hdd = drive(name, &[], 1);
        let estimate = hdd.expected_qd1_random_read(32);
        let cap = capacity(&hdd);
        let run = closed_loop(&mut hdd, 1, 20_000, random_reads(cap, 32, 2));
        let sim_iops = run.iops();
        let formula_iops = estimate.iops();
        // The data-sheet formula: uniform-cylinder mean seek instead of LBA-weighted.
        let simple = estimate.service_ns - estimate.seek_ns + estimate.seek_uniform_cylinders_ns;
        println!(
            "{name}: QD1 16 KiB random read: sim {sim_iops:.1} IOPS (mean {:.3} ms), formula {formula_iops:.1} IOPS \
             ({estimate:?}), data-sheet formula {:.1} IOPS",
            run.mean_latency_ns() / 1e6,
            1e9 / simple
        );
        assert!(
            (sim_iops / formula_iops - 1.0).abs() < 0.05,
            "{name}: {sim_iops} vs {formula_iops}"
        );
        assert!(
            (sim_iops * simple / 1e9 - 1.0).abs() < 0.05,
            "{name}: data-sheet formula"
        );
        assert_eq!(
            hdd.stats().media_ops,
            20_000,
            "random reads over the whole disk all miss"
        );
    }
}

#[test]
fn sptf_beats_fcfs_and_fcfs_is_flat_with_depth() {
    let iops = |policy: f64, depth: u32| {
        let mut hdd = drive("cheetah-10k7", &[("queue_policy", policy)], 3);
        let cap = capacity(&hdd);
        closed_loop(&mut hdd, depth, 4000, random_reads(cap, 8, 4)).iops()
    };
    let (fcfs1, fcfs32) = (iops(0.0, 1), iops(0.0, 32));
    let (sstf32, sptf32) = (iops(1.0, 32), iops(2.0, 32));
    let sptf4 = iops(2.0, 4);
    println!("cheetah-10k7 4 KiB random reads: FCFS QD1 {fcfs1:.1}, FCFS QD32 {fcfs32:.1}, SSTF QD32 {sstf32:.1}, SPTF QD4 {sptf4:.1}, SPTF QD32 {sptf32:.1} IOPS");
    assert!(
        (fcfs32 / fcfs1 - 1.0).abs() < 0.05,
        "FCFS should not gain from depth"
    );
    assert!(sptf32 > 1.5 * fcfs32, "SPTF {sptf32} vs FCFS {fcfs32}");
    assert!(
        sstf32 > 1.1 * fcfs32 && sptf32 > sstf32,
        "SSTF sits between FCFS and SPTF"
    );
    assert!(
        sptf4 > fcfs1 && sptf4 < sptf32,
        "SPTF gains grow with depth"
    );
}

#[test]
fn sequential_reads_stream_from_read_ahead_at_media_rate() {
    let mut hdd = drive("cheetah-10k7", &[], 5);
    let requests = 512u64;
    let run = closed_loop(&mut hdd, 1, requests as usize, |i| (Op::Read, i * 128, 128));
    let bytes = (requests * 128 * 512) as f64;
    let rate = bytes / (run.elapsed as f64 / 1e9);
    // Outer zone: a cylinder's tracks plus the skew gaps between them, per revolution each.
    let geo = hdd.geometry();
    let zone = &geo.zones()[0].spec;
    let (spt, surfaces) = (zone.sectors_per_track as f64, geo.surfaces() as f64);
    let raw = spt * 512.0 / (geo.rev_ns() as f64 / 1e9);
    let per_cylinder = surfaces * spt
        + (surfaces - 1.0) * zone.track_skew_sectors as f64
        + zone.cylinder_skew_sectors as f64;
    let expected = raw * surfaces * spt / per_cylinder;
    let stats = hdd.stats();
    println!(
        "sequential 64 KiB QD1: {:.1} MB/s (raw outer {:.1}, with skews {:.1}), {stats:?}",
        rate / 1e6,
        raw / 1e6,
        expected / 1e6
    );
    assert_eq!(stats.media_ops, 1, "only the first read misses");
    assert_eq!(stats.read_hits, requests - 1);
    assert!(rate > 0.97 * expected && rate < raw, "{rate} vs {expected}");
}

#[test]
fn write_cache_acknowledges_at_once_and_flush_waits_for_destage() {
    let writes = 200usize;
    let mut hdd = drive("cheetah-10k7", &[], 6);
    let cap = capacity(&hdd);
    let mut rng = Prng::derive(7, "workload", 0);
    let run = closed_loop(&mut hdd, 1, writes, |_| {
        (Op::Write, rng.below(cap / 8) * 8, 8)
    });
    let worst = *run.latencies.iter().max().unwrap();
    assert!(worst < 200_000, "cached 4 KiB writes take {worst} ns");
    let dirty = hdd.dirty_sectors();
    assert!(
        dirty > 0,
        "background destage cannot keep up with cached writes"
    );
    let flush_at = run.elapsed;
    hdd.submit(
        flush_at,
        Command {
            id: 1000,
            op: Op::Flush,
            sector: 0,
            sectors: 0,
        },
    );
    let mut done = Vec::new();
    while done.is_empty() {
        let t = hdd.next_event().unwrap();
        hdd.advance(t, &mut done);
    }
    let flush_ns = done[0].time - flush_at;
    let stats = hdd.stats().clone();
    println!(
        "cached writes: worst {worst} ns; flush of {dirty} sectors took {:.1} ms; {stats:?}",
        flush_ns as f64 / 1e6
    );
    assert_eq!(hdd.dirty_sectors(), 0);
    assert_eq!(stats.destaged_sectors, writes as u64 * 8);
    // Each random extent needs at least a minimum seek plus some rotation; be generous.
    assert!(
        flush_ns as f64 > dirty as f64 / 8.0 * 1e6,
        "flush returned after {flush_ns} ns"
    );

    let mut through = drive("cheetah-10k7", &[("write_cache", 0.0)], 6);
    let mut rng = Prng::derive(7, "workload", 0);
    let run = closed_loop(&mut through, 1, writes, |_| {
        (Op::Write, rng.below(cap / 8) * 8, 8)
    });
    println!(
        "write-through 4 KiB random writes: mean {:.2} ms",
        run.mean_latency_ns() / 1e6
    );
    assert!(
        run.mean_latency_ns() > 5e6,
        "write-through writes must reach the media"
    );
}

#[test]
fn adjacent_dirty_writes_coalesce_and_dirty_data_serves_reads() {
    let mut hdd = drive("raptor-wd1500adfd", &[], 8);
    let run = closed_loop(&mut hdd, 1, 256, |i| (Op::Write, 10_000 + i * 8, 8));
    assert_eq!(run.latencies.len(), 256);
    let destages = hdd.stats().destages;
    let now = run.elapsed;
    // Data still in the buffer is read from it (a hit) rather than from the media.
    let hits_before = hdd.stats().read_hits;
    hdd.submit(
        now,
        Command {
            id: 999,
            op: Op::Read,
            sector: 10_000 + 255 * 8,
            sectors: 8,
        },
    );
    let mut done = Vec::new();
    while done.is_empty() {
        let t = hdd.next_event().unwrap();
        hdd.advance(t, &mut done);
    }
    println!(
        "256 sequential 4 KiB writes: {destages} destages so far, {:?}",
        hdd.stats()
    );
    assert!(
        destages < 32,
        "sequential dirty data must go out in long extents, got {destages} destages"
    );
    assert_eq!(hdd.stats().read_hits, hits_before + 1);
}

#[test]
fn lee_fit_reproduces_its_three_points() {
    for p in hdd::PRESETS {
        let spec = p.spec();
        let SeekSpec::ThreePoint {
            single_ms,
            average_ms,
            full_stroke_ms,
        } = spec.seek
        else {
            panic!()
        };
        let hdd = Hdd::new(spec.clone(), Prng::new(1));
        let curve = hdd.seek_curve();
        let n = curve.cylinders();
        assert_eq!(curve.ms(1), single_ms, "{}", p.name);
        assert!(
            (curve.ms(n - 1) - full_stroke_ms).abs() < 1e-9,
            "{}: full stroke {}",
            p.name,
            curve.ms(n - 1)
        );
        // The mean of the rounded nanosecond seeks is within rounding of the data-sheet average.
        let mean = hdd.mean_seek_ns();
        assert!(
            (mean - average_ms * 1e6).abs() < 1.0,
            "{}: mean {mean} ns vs {average_ms} ms",
            p.name
        );
        assert!(
            (1..n).step_by(997).all(|d| curve.ms(d) <= curve.ms(d + 1)),
            "{}: increasing",
            p.name
        );
    }
}

#[test]
fn same_seed_same_times_different_seed_different_times() {
    let run = |seed: u64| {
        let mut hdd = drive("nearline-7200", &[("queue_depth", 8.0)], seed);
        let cap = capacity(&hdd);
        let mut rng = Prng::derive(11, "workload", 0);
        let mixed = move |i: u64| match i % 50 {
            49 => (Op::Flush, 0, 0),
            k if k % 3 == 0 => (Op::Write, rng.below(cap - 64), 1 + rng.below(64) as u32),
            _ => (Op::Read, rng.below(cap - 256), 1 + rng.below(256) as u32),
        };
        closed_loop(&mut hdd, 8, 3000, mixed).completions
    };
    let a = run(21);
    assert_eq!(a, run(21), "same seed must give identical completions");
    assert_ne!(
        a,
        run(22),
        "a different seed draws a different platter phase"
    );
}

#[test]
fn track_switch_costs_exactly_the_skew() {
    // A DiskSim-shaped spec: explicit zones and a measured seek table.
    let zones = vec![
        ZoneSpec {
            first_cylinder: 0,
            last_cylinder: 99,
            sectors_per_track: 300,
            track_skew_sectors: 40,
            cylinder_skew_sectors: 60,
            first_sector_offset: 0,
            sparing: Default::default(),
        },
        ZoneSpec {
            first_cylinder: 101,
            last_cylinder: 199,
            sectors_per_track: 200,
            track_skew_sectors: 30,
            cylinder_skew_sectors: 45,
            first_sector_offset: 7,
            sparing: Default::default(),
        },
    ];
    let mut spec = spec_with("cheetah-10k7", &[]);
    spec.zones = zones;
    spec.surfaces = 2;
    spec.capacity_sectors = 100 * 2 * 300 + 99 * 2 * 200;
    spec.seek = SeekSpec::Table(vec![(1, 1.0), (10, 2.0), (100, 5.0), (199, 8.0)]);
    spec.queue_depth = 4;
    spec.cache_segments = 0;
    spec.read_ahead_sectors = 0;
    let rev = spec.rev_ns();
    let overhead = 100_000; // overhead_ms_read of the preset
    for (sectors, gaps) in [(300u32, 0u64), (600, 40)] {
        let mut hdd = Hdd::new(spec.clone(), Prng::new(9));
        let phase = hdd.phase_ns();
        hdd.submit(
            0,
            Command {
                id: 0,
                op: Op::Read,
                sector: 0,
                sectors,
            },
        );
        let mut done = Vec::new();
        while done.is_empty() {
            let t = hdd.next_event().unwrap();
            hdd.advance(t, &mut done);
        }
        // Heads start on track 0; wait for sector 0 (angle 0), read whole tracks, and lose only
        // the skew (in sector times) at the head switch; the last sector then crosses the bus.
        let wait = (rev - (overhead + phase) % rev) % rev;
        let skew_ns = gaps * rev / 300;
        let tracks = sectors as u64 / 300;
        let iface = 1600; // 512 B at 320 MB/s
        let expected = overhead + wait + tracks * rev + skew_ns + iface;
        assert!(
            done[0].time.abs_diff(expected) <= 1,
            "{sectors} sectors: {} vs {expected}",
            done[0].time
        );
    }
    let hdd = Hdd::new(spec, Prng::new(9));
    let loc = hdd.geometry().locate(100 * 2 * 300 + 200 + 5);
    assert_eq!(
        (loc.cylinder, loc.head, loc.sector, loc.slot),
        (101, 1, 5, 5 + 30 + 7)
    );
}

#[test]
fn bad_parameters_are_one_line_errors_naming_the_parameter() {
    let cases: &[(&[(&str, f64)], &str)] = &[
        (&[("rpm", 0.0)], "rpm"),
        (&[("rpms", 7200.0)], "rpms"),
        (
            &[("sectors_per_track_inner", 5000.0)],
            "sectors_per_track_inner",
        ),
        (&[("capacity_bytes", 1e12 + 1.0)], "capacity_bytes"),
        (&[("cylinders", 1000.0)], "capacity_bytes"),
        (&[("seek_ms_average", 20.0)], "seek_ms_average"),
        (&[("seek_ms_average", 1.0)], "seek_ms_average"),
        (&[("surfaces", 2.5)], "surfaces"),
        (&[("queue_policy", 3.0)], "queue_policy"),
        (&[("read_ahead_kib", 4096.0)], "read_ahead_kib"),
        (&[("cache_segments", 64.0)], "cache_segments"),
        (&[("write_cache", 0.5)], "write_cache"),
    ];
    for &(overrides, name) in cases {
        let mut values = hdd::preset("green-5400").unwrap();
        for &(k, v) in overrides {
            values.insert(k.to_string(), v);
        }
        let err = HddSpec::from_params(&values).expect_err(name);
        assert_eq!(err.kind, ErrorKind::InvalidDevice, "{overrides:?}");
        assert!(err.message.contains(name), "{overrides:?}: {}", err.message);
        assert!(!err.message.contains('\n'));
    }
}

#[test]
fn presets_describe_themselves() {
    assert_eq!(
        hdd::PRESET_NAMES,
        [
            "cheetah-10k7",
            "raptor-wd1500adfd",
            "green-5400",
            "green-5400-idle3",
            "nearline-7200"
        ]
    );
    for name in hdd::PRESET_NAMES {
        let p = hdd::preset_info(name).unwrap();
        let hdd = Hdd::new(p.spec(), Prng::new(0));
        let info = hdd.info();
        assert_eq!(
            (info.kind, info.rpm, info.capacity_bytes),
            ("hdd", p.rpm(), p.capacity_bytes())
        );
        assert_eq!(info.interface, p.interface);
        assert!(info.rotational && !p.source.is_empty() && !p.description.is_empty());
    }
    assert!(hdd::preset("no-such-drive").is_none());
}

/// Advances `hdd` to `t`, asserting every completion it reports is due exactly then (the drive
/// may defer its arm's work, but never past a completion it causes).
fn advance_on_time(hdd: &mut Hdd, t: Nanos, done: &mut Vec<Completion>, name: &str) {
    let before = done.len();
    hdd.advance(t, done);
    assert!(done[before..].iter().all(|c| c.time == t), "{name}: a completion missed its time");
}

/// Open-loop chaos: random arrivals at arbitrary times (not only at events), mixed sizes,
/// sequential runs, overlapping writes, flushes, every policy and both write-cache settings.
/// Every command must complete exactly once, never before it was submitted, and the drive
/// must never exceed its depth or stall with work outstanding.
#[test]
fn random_open_loop_traffic_completes_every_command() {
    for (case, name) in hdd::PRESET_NAMES.iter().cycle().take(12).enumerate() {
        let (policy, cache) = ((case % 3) as f64, ((case / 3) % 2) as f64);
        let mut hdd = drive(
            name,
            &[
                ("queue_policy", policy),
                ("write_cache", cache),
                ("queue_depth", 8.0),
            ],
            case as u64,
        );
        let cap = capacity(&hdd);
        let mut rng = Prng::derive(case as u64, "chaos", 0);
        let (mut now, mut next_lba, mut submitted, mut done) = (0u64, 0u64, Vec::new(), Vec::new());
        let mut outstanding = 0u32;
        for id in 0..3000u64 {
            now += rng.below(if case % 2 == 0 { 3_000_000 } else { 30_000_000 });
            // Catch up to `now` through events, as an engine would; every completion comes out
            // at exactly the time `next_event` named.
            while let Some(t) = hdd.next_event().filter(|&t| t <= now) {
                advance_on_time(&mut hdd, t, &mut done, name);
            }
            advance_on_time(&mut hdd, now, &mut done, name);
            outstanding = submitted.len() as u32 - done.len() as u32;
            if outstanding == hdd.queue_depth() {
                continue;
            }
            let sectors = 1 + rng.below(512) as u32;
            let op = match rng.below(20) {
                0 => Op::Flush,
                1..=7 => Op::Write,
                _ => Op::Read,
            };
            // Reads often continue a stream (read-ahead hits); writes sometimes land in it.
            let stream = rng.chance(if op == Op::Read { 0.6 } else { 0.2 });
            let sector = if stream {
                next_lba
            } else {
                rng.below(cap - 512)
            };
            if op == Op::Read && stream {
                next_lba = (sector + sectors as u64) % (cap - 1024);
            }
            let sectors = if op == Op::Flush { 0 } else { sectors };
            hdd.submit(
                now,
                Command {
                    id,
                    op,
                    sector,
                    sectors,
                },
            );
            submitted.push((id, now));
        }
        while let Some(t) = hdd.next_event() {
            advance_on_time(&mut hdd, t, &mut done, name);
            now = now.max(t);
        }
        let mut ids: Vec<u64> = done.iter().map(|c| c.id).collect();
        ids.sort_unstable();
        ids.dedup();
        assert_eq!(
            ids.len(),
            submitted.len(),
            "{name} case {case}: lost or repeated completions ({outstanding} were out)"
        );
        for c in &done {
            let at = submitted.iter().find(|s| s.0 == c.id).unwrap().1;
            assert!(c.time >= at, "{name}: completion before submit");
        }
        // Destage that completes no command runs lazily: bring the drive a minute on.
        let later = now + 60_000_000_000;
        hdd.run_to(later);
        assert_eq!(hdd.dirty_sectors(), 0, "{name}: idle drive left dirty data");
        assert!(hdd.busy_nanos() <= later);
    }
}
