//! The drive's bound on how long its reordering passes a command over (drive.rs
//! `COMMAND_AGE_LIMIT_NS`, 1 s): a command that has waited that long is served next, past a
//! full write cache's destaging and past SPTF's nearer commands, not when those stop.

use raidlab_core::device::hdd::{self, Hdd, HddSpec};
use raidlab_core::device::{Command, Completion, Drive, Op};
use raidlab_core::{rng::Prng, time::Nanos};

const READ_ID: u64 = u64::MAX;

fn nearline() -> (Hdd, u64) {
    let values = hdd::preset("nearline-7200").expect("preset");
    let spec = HddSpec::from_params(&values).expect("valid spec");
    assert!(spec.write_cache && spec.queue_depth == 32);
    let far = spec.capacity_sectors - (1 << 20);
    (Hdd::new(spec, Prng::derive(1, "drive", 0)), far)
}

/// Keeps 31 commands from `next` outstanding on nearline-7200 from time 0 (each completion
/// replaced by the next), and sends one 4 KiB read near the end of the disk at `read_at`.
/// Returns how long that read waited and how many other commands completed by then.
fn far_read_behind(read_at: Nanos, mut next: impl FnMut(u64) -> (Op, u64, u32)) -> (Nanos, u64) {
    let (mut drive, far) = nearline();
    let mut send = |drive: &mut Hdd, now: Nanos, id: u64| {
        let (op, sector, sectors) = next(id);
        drive.submit(now, Command { id, op, sector, sectors });
    };
    for id in 0..31 {
        send(&mut drive, 0, id);
    }
    let (mut read_sent, mut served) = (false, 0u64);
    let mut done: Vec<Completion> = Vec::new();
    loop {
        let next_event = drive.next_event().expect("work outstanding");
        let t = if read_sent { next_event } else { next_event.min(read_at) };
        if !read_sent && t == read_at {
            drive.submit(read_at, Command { id: READ_ID, op: Op::Read, sector: far, sectors: 8 });
            read_sent = true;
        }
        drive.advance(t, &mut done);
        for c in done.drain(..) {
            if c.id == READ_ID {
                return (c.time - read_at, served);
            }
            send(&mut drive, c.time, 31 + served);
            served += 1;
        }
        assert!(t < 60_000_000_000, "the far read was never served");
    }
}

#[test]
fn a_read_waits_at_most_about_a_second_behind_a_full_write_cache() {
    // Sequential 1 MiB writes: by 5 s the 192 MiB write cache is full (the host offers writes
    // far faster than the platters take them), so every free moment of the arm goes to
    // destaging, until the read is a second old.
    let (waited, writes) = far_read_behind(5_000_000_000, |id| (Op::Write, id * 2048, 2048));
    assert!(writes > 1000, "the write stream ran: {writes} MiB acknowledged");
    assert!((1_000_000_000..1_100_000_000).contains(&waited), "the read waited {waited} ns");
}

#[test]
fn shortest_positioning_first_serves_a_far_read_once_it_is_a_second_old() {
    // Random 4 KiB reads within the first GiB: SPTF always has a nearer command than the far one.
    let mut prng = Prng::new(5);
    let (waited, served) = far_read_behind(500_000_000, |_| (Op::Read, prng.below(1 << 21) / 8 * 8, 8));
    assert!(served > 200, "the near reads went on: {served}");
    assert!((1_000_000_000..1_050_000_000).contains(&waited), "the far read waited {waited} ns");
}
