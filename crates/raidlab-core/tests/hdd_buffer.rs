//! Drive behaviours DiskSim's validated models need, each off for presets: zero-latency
//! access, read-ahead bounds, read segments shared with write data, and a negative write settle.
//! One command at a time, as the validation traces issue them.

use raidlab_core::device::hdd::{self, Hdd, HddSpec, ReadAheadBound};
use raidlab_core::device::{Command, Completion, Drive, Op};
use raidlab_core::{rng::Prng, time::Nanos};
use raidlab_core::ErrorKind;

/// A 7200 rpm drive (8 333 333 ns per revolution) with an interface so fast that transfers to
/// the host cost nothing, so service times show the mechanics and the buffer alone.
fn base() -> HddSpec {
    let mut values = hdd::preset("nearline-7200").expect("preset");
    values.insert("interface_mb_s".into(), 100_000.0);
    values.insert("write_cache".into(), 0.0);
    let mut spec = HddSpec::from_params(&values).expect("valid spec");
    spec.queue_depth = 1;
    spec
}

/// Serves one command arriving at `at`; returns its service time.
fn serve(drive: &mut Hdd, at: Nanos, op: Op, sector: u64, sectors: u32) -> Nanos {
    drive.submit(at, Command { id: at, op, sector, sectors });
    let mut done: Vec<Completion> = Vec::new();
    loop {
        let t = drive.next_event().expect("a command is outstanding");
        drive.advance(t, &mut done);
        if let Some(c) = done.iter().find(|c| c.id == at) {
            return c.time - at;
        }
    }
}

fn rev_ns(spec: &HddSpec) -> Nanos {
    spec.rev_ns()
}

fn track_sectors(spec: &HddSpec) -> u32 {
    spec.zones[0].sectors_per_track
}

#[test]
fn zero_latency_reads_of_a_whole_track_take_one_revolution_wherever_the_heads_land() {
    let mut spec = base();
    spec.cache_segments = 0;
    spec.read_ahead_sectors = 0;
    let (rev, spt) = (rev_ns(&spec), track_sectors(&spec));
    let sector_ns = rev / spt as u64 + 1;
    let overhead = (spec.overhead_ms_read * 1e6).round() as Nanos;
    let times = |zero_latency: bool| -> Vec<Nanos> {
        let mut s = spec.clone();
        s.buffer.zero_latency_reads = zero_latency;
        let mut drive = Hdd::new(s, Prng::derive(3, "drive", 0));
        let mut now = 0;
        let mut prng = Prng::new(9);
        (0..200)
            .map(|_| {
                // Track 0 every time: no seek after the first, the heads land at random angles.
                let t = serve(&mut drive, now, Op::Read, 0, spt);
                now += t + 1_000_000 + prng.below(rev);
                t
            })
            .skip(1)
            .collect()
    };
    let (zero, plain) = (times(true), times(false));
    // The sectors read before the wrap go to the host after the last one: at most a track
    // at 5.12 ns a sector here.
    let tail_ns = spt as u64 * 6;
    for &t in &zero {
        assert!(t >= overhead + rev && t <= overhead + rev + sector_ns + tail_ns, "zero-latency read took {t} ns");
    }
    // Without it the drive waits for sector 0, on average half a revolution more.
    let mean = |v: &[Nanos]| v.iter().sum::<Nanos>() as f64 / v.len() as f64;
    let extra = (mean(&plain) - mean(&zero)) / rev as f64;
    assert!((0.4..0.6).contains(&extra), "plain reads took {extra} revolutions longer on average");
}

#[test]
fn next_track_read_ahead_stops_at_the_end_of_the_track() {
    let mut spec = base();
    spec.cache_segments = 2;
    spec.cache_segment_sectors = 16_384;
    spec.read_ahead_sectors = 16_384;
    // As DiskSim's validated drives: a hit after read-ahead stopped does not restart it.
    spec.buffer.read_ahead_on_idle_hit = false;
    let spt = track_sectors(&spec) as u64;
    let run = |bound: ReadAheadBound| -> (u64, u64) {
        let mut s = spec.clone();
        s.buffer.read_ahead_bound = bound;
        let mut drive = Hdd::new(s, Prng::derive(3, "drive", 0));
        serve(&mut drive, 0, Op::Read, 0, 8);
        // Long after: the end of track 0, then the start of track 1.
        serve(&mut drive, 100_000_000, Op::Read, spt - 8, 8);
        let on_track = drive.stats().read_hits;
        serve(&mut drive, 200_000_000, Op::Read, spt, 8);
        (on_track, drive.stats().read_hits - on_track)
    };
    assert_eq!(run(ReadAheadBound::NextTrack), (1, 0));
    assert_eq!(run(ReadAheadBound::Track), (1, 0));
    assert_eq!(run(ReadAheadBound::Cylinder), (1, 1));
    assert_eq!(run(ReadAheadBound::Count), (1, 1));
    // Count and Track also stop after read_ahead_sectors.
    let mut short = spec.clone();
    short.read_ahead_sectors = 100;
    short.buffer.read_ahead_bound = ReadAheadBound::Track;
    let mut drive = Hdd::new(short, Prng::derive(3, "drive", 0));
    serve(&mut drive, 0, Op::Read, 0, 8);
    serve(&mut drive, 100_000_000, Op::Read, 100, 8);
    assert_eq!(drive.stats().read_hits, 1);
    serve(&mut drive, 200_000_000, Op::Read, 200, 8);
    assert_eq!(drive.stats().read_hits, 1);
}

#[test]
fn writes_sharing_the_read_segments_evict_read_data_and_leave_theirs_readable() {
    let mut spec = base();
    spec.cache_segments = 2;
    spec.cache_segment_sectors = 64;
    spec.read_ahead_sectors = 0;
    // Two reads fill both segments, then a write elsewhere; which data can later reads hit?
    let run = |shared: bool, readable: bool| -> (bool, bool) {
        let mut s = spec.clone();
        s.buffer.writes_share_segments = shared;
        s.buffer.read_hits_on_write_data = readable;
        let mut drive = Hdd::new(s, Prng::derive(3, "drive", 0));
        serve(&mut drive, 0, Op::Read, 1000, 8);
        serve(&mut drive, 50_000_000, Op::Read, 2_000_000, 8);
        serve(&mut drive, 100_000_000, Op::Write, 500_000, 8);
        let hits = |d: &Hdd| d.stats().read_hits;
        let before = hits(&drive);
        serve(&mut drive, 150_000_000, Op::Read, 1000, 8);
        let read_data_kept = hits(&drive) > before;
        let before = hits(&drive);
        serve(&mut drive, 200_000_000, Op::Read, 500_000, 8);
        (read_data_kept, hits(&drive) > before)
    };
    assert_eq!(run(false, false), (true, false));
    assert_eq!(run(true, true), (false, true));
    assert_eq!(run(true, false), (false, false));
}

#[test]
fn a_negative_write_settle_shortens_writes_but_may_not_undo_a_head_switch() {
    let mut spec = base();
    spec.cache_segments = 0;
    spec.read_ahead_sectors = 0;
    let mean_write = |settle_ms: f64| -> f64 {
        let mut s = spec.clone();
        s.write_settle_ms = settle_ms;
        let mut drive = Hdd::new(s, Prng::derive(3, "drive", 0));
        let mut prng = Prng::new(5);
        let (mut now, mut total) = (0, 0);
        for i in 0..400u64 {
            let lba = prng.below(spec.capacity_sectors - 8);
            let t = serve(&mut drive, now, Op::Write, lba, 8);
            total += t;
            now += t + 3_000_000 + i;
        }
        total as f64 / 400.0
    };
    // Same arrivals; a settle 0.3 ms shorter makes the average write quicker by roughly that.
    let (slow, fast) = (mean_write(0.2), mean_write(-0.1));
    assert!(fast < slow, "{fast} ns vs {slow} ns");
    let mut bad = spec.clone();
    bad.write_settle_ms = -(bad.head_switch_ms + 0.01);
    let err = bad.validate().expect_err("settle below -head_switch");
    assert_eq!(err.kind, ErrorKind::InvalidDevice);
    assert!(err.message.starts_with("write_settle_ms = ") && !err.message.contains('\n'));
}

/// Service times of the same commands at the same arrival times on two drives.
fn paired(a: HddSpec, b: HddSpec, op: Op, sectors: u32) -> Vec<(Nanos, Nanos)> {
    let (mut x, mut y) = (Hdd::new(a, Prng::derive(3, "drive", 0)), Hdd::new(b, Prng::derive(3, "drive", 0)));
    let mut prng = Prng::new(21);
    let capacity = x.geometry().capacity_sectors();
    let mut now = 0;
    (0..100)
        .map(|_| {
            let lba = prng.below(capacity - sectors as u64);
            let pair = (serve(&mut x, now, op, lba, sectors), serve(&mut y, now, op, lba, sectors));
            now += 100_000_000;
            pair
        })
        .collect()
}

#[test]
fn bus_overheads_add_to_read_misses_exactly_where_the_drive_reconnects_and_completes() {
    let mut plain = base();
    plain.cache_segments = 0;
    plain.read_ahead_sectors = 0;
    // A slow interface, so the transfer (not the media) decides when the read completes.
    plain.interface_mb_s = 2.0;
    let mut bus = plain.clone();
    bus.bus.reselect_ms = 0.3;
    bus.bus.data_prep_ms = 0.05;
    bus.bus.read_completion_ms = 0.02;
    for (a, b) in paired(plain, bus, Op::Read, 16) {
        assert_eq!(b - a, 370_000, "reselect + data preparation + completion");
    }
}

#[test]
fn write_through_writes_wait_for_their_data_the_minimum_seek_and_the_reconnection() {
    let mut plain = base();
    plain.cache_segments = 0;
    plain.read_ahead_sectors = 0;
    let mut bus = plain.clone();
    bus.bus.write_mb_s = Some(1.0); // 0.512 ms a sector: 64 sectors take 32.8 ms to come in
    bus.bus.write_start_sectors = 0;
    bus.bus.reselect_ms = 0.2;
    bus.bus.write_completion_ms = 0.05;
    for (a, b) in paired(plain.clone(), bus, Op::Write, 64) {
        let overhead = (plain.overhead_ms_write * 1e6) as Nanos;
        // All data first (32.768 ms), then at most a seek and a revolution, then 0.25 ms.
        assert!(b >= overhead + 32_768_000 + 250_000 && b > a, "{b} ns");
    }
    // A write to the track the heads are on needs no positioning, only rotation (under one
    // revolution, 8.3 ms), unless the drive pads its positioning to a minimum (9 ms here).
    let mut padded = plain.clone();
    padded.bus.min_write_seek_ms = 9.0;
    let [a, b] = [plain, padded].map(|s| {
        let mut drive = Hdd::new(s, Prng::derive(3, "drive", 0));
        let first = serve(&mut drive, 0, Op::Write, 0, 8);
        serve(&mut drive, first + 1_000_000, Op::Write, 8, 8)
    });
    assert!(a < 8_400_000 && b >= 9_000_000, "plain {a} ns, padded {b} ns");
}
