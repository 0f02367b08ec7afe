//! The drive's bound on how long its reordering passes a command over: with the write cache
//! full and a stream of writes waiting for space, a read far from the heads is served once it
//! has waited a second (drive.rs `COMMAND_AGE_LIMIT_NS`), not when the writes stop.

use raidlab_core::device::hdd::{self, Hdd, HddSpec};
use raidlab_core::device::{Command, Completion, Drive, Op};
use raidlab_core::{rng::Prng, time::Nanos};

const MIB_SECTORS: u32 = 2048;
const READ_ID: u64 = u64::MAX;

/// nearline-7200 with its write cache on, kept 31 sequential 1 MiB writes deep from time 0;
/// one 4 KiB read near the end of the disk arrives at `read_at`. Returns when the read
/// completed and the sequential writes acknowledged by then.
fn read_behind_a_write_stream(read_at: Nanos) -> (Nanos, u64) {
    let values = hdd::preset("nearline-7200").expect("preset");
    let spec = HddSpec::from_params(&values).expect("valid spec");
    assert!(spec.write_cache && spec.queue_depth == 32);
    let far = spec.capacity_sectors - (1 << 20);
    let mut drive = Hdd::new(spec, Prng::derive(1, "drive", 0));
    let mut next_sector = 0u64;
    let mut submit_write = |drive: &mut Hdd, now: Nanos| {
        drive.submit(now, Command { id: next_sector, op: Op::Write, sector: next_sector, sectors: MIB_SECTORS });
        next_sector += MIB_SECTORS as u64;
    };
    for _ in 0..31 {
        submit_write(&mut drive, 0);
    }
    let (mut read_sent, mut writes_done) = (false, 0u64);
    let mut done: Vec<Completion> = Vec::new();
    loop {
        let next = drive.next_event().expect("work outstanding");
        let t = if read_sent { next } else { next.min(read_at) };
        if !read_sent && t == read_at {
            drive.submit(read_at, Command { id: READ_ID, op: Op::Read, sector: far, sectors: 8 });
            read_sent = true;
        }
        drive.advance(t, &mut done);
        for c in done.drain(..) {
            if c.id == READ_ID {
                return (c.time, writes_done);
            }
            writes_done += 1;
            submit_write(&mut drive, c.time);
        }
        assert!(t < 60_000_000_000, "the read was never served");
    }
}

#[test]
fn a_read_waits_at_most_about_a_second_behind_a_full_write_cache() {
    // By 5 s the 192 MiB write cache is full (the host offers writes far faster than the
    // platters take them), so every free moment of the arm goes to destaging.
    let read_at = 5_000_000_000;
    let (done_at, writes) = read_behind_a_write_stream(read_at);
    let waited = done_at - read_at;
    assert!(writes > 1000, "the write stream ran: {writes} MiB acknowledged");
    // Destaging goes first until the read is a second old, then the read is served next.
    assert!((1_000_000_000..1_100_000_000).contains(&waited), "the read waited {waited} ns");
}

/// nearline-7200 kept 31 random 4 KiB reads deep within its first GiB from time 0 (its SPTF
/// queue always has a nearer command than the far one); one read near the end of the disk
/// arrives at `read_at`. Returns how long it waited and how many near reads completed first.
fn far_read_among_near_reads(read_at: Nanos) -> (Nanos, u64) {
    let values = hdd::preset("nearline-7200").expect("preset");
    let spec = HddSpec::from_params(&values).expect("valid spec");
    let far = spec.capacity_sectors - (1 << 20);
    let mut drive = Hdd::new(spec, Prng::derive(1, "drive", 0));
    let mut prng = Prng::new(5);
    let mut near = |drive: &mut Hdd, now: Nanos, id: u64| {
        let sector = prng.below(1 << 21) / 8 * 8;
        drive.submit(now, Command { id, op: Op::Read, sector, sectors: 8 });
    };
    for id in 0..31 {
        near(&mut drive, 0, id);
    }
    let (mut read_sent, mut served, mut next_id) = (false, 0u64, 31u64);
    let mut done: Vec<Completion> = Vec::new();
    loop {
        let next = drive.next_event().expect("work outstanding");
        let t = if read_sent { next } else { next.min(read_at) };
        if !read_sent && t == read_at {
            drive.submit(read_at, Command { id: READ_ID, op: Op::Read, sector: far, sectors: 8 });
            read_sent = true;
        }
        drive.advance(t, &mut done);
        for c in done.drain(..) {
            if c.id == READ_ID {
                return (c.time - read_at, served);
            }
            served += 1;
            near(&mut drive, c.time, next_id);
            next_id += 1;
        }
        assert!(t < 60_000_000_000, "the far read was never served");
    }
}

#[test]
fn shortest_positioning_first_serves_a_far_read_once_it_is_a_second_old() {
    let (waited, served) = far_read_among_near_reads(500_000_000);
    assert!(served > 200, "the near reads went on: {served}");
    assert!((1_000_000_000..1_050_000_000).contains(&waited), "the far read waited {waited} ns");
}
