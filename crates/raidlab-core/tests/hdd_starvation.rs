//! How long the drive's scheduling may pass a command over: SPTF's nearer commands until it is
//! 1 s old (drive.rs `COMMAND_AGE_LIMIT_NS`); a full write cache's destaging only until the
//! destage under way ends (forced destages and host commands take turns); a sequential stream's
//! later commands never (they wait for the stream's first).

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
fn a_read_waits_one_destage_behind_a_full_write_cache_not_a_second() {
    // Sequential 1 MiB writes: by 5 s the 192 MiB write cache is full (the host offers writes
    // far faster than the platters take them) and writes wait for room, so the arm must destage.
    // The far read goes after the destage under way: that and its own ~full-stroke access, a
    // few tens of ms. It used to wait behind every destage until it was 1 s old (a QD1 reader
    // beside a random writer got 1 read a second).
    let (waited, writes) = far_read_behind(5_000_000_000, |id| (Op::Write, id * 2048, 2048));
    assert!(writes > 1000, "the write stream ran: {writes} MiB acknowledged");
    assert!((10_000_000..40_000_000).contains(&waited), "the read waited {waited} ns");
}

#[test]
fn shortest_positioning_first_serves_a_far_read_once_it_is_a_second_old() {
    // Random 4 KiB reads within the first GiB: SPTF always has a nearer command than the far one.
    let mut prng = Prng::new(5);
    let (waited, served) = far_read_behind(500_000_000, |_| (Op::Read, prng.below(1 << 21) / 8 * 8, 8));
    assert!(served > 200, "the near reads went on: {served}");
    assert!((1_000_000_000..1_050_000_000).contains(&waited), "the far read waited {waited} ns");
}

/// Keeps `depth` sequential commands of `sectors` outstanding on `preset` (write cache as
/// given) for `n` completions; returns the completion order and the longest latency.
fn sequential_stream(preset: &str, write_cache: bool, op: Op, depth: u64, sectors: u32, n: u64) -> (Vec<u64>, Nanos) {
    let mut values = hdd::preset(preset).expect("preset");
    for (name, value) in values.iter_mut() {
        if *name == "write_cache" {
            *value = if write_cache { 1.0 } else { 0.0 };
        }
    }
    let mut drive = Hdd::new(HddSpec::from_params(&values).expect("valid spec"), Prng::derive(1, "drive", 0));
    let mut arrival = vec![0; (n + depth) as usize];
    for id in 0..depth {
        drive.submit(0, Command { id, op, sector: id * sectors as u64, sectors });
    }
    let (mut order, mut longest, mut done) = (Vec::new(), 0, Vec::new());
    let mut next = depth;
    while (order.len() as u64) < n {
        let t = drive.next_event().expect("work outstanding");
        drive.advance(t, &mut done);
        for c in done.drain(..) {
            order.push(c.id);
            longest = longest.max(c.time - arrival[c.id as usize]);
            arrival[next as usize] = c.time;
            drive.submit(c.time, Command { id: next, op, sector: next * sectors as u64, sectors });
            next += 1;
        }
    }
    (order, longest)
}

#[test]
fn a_sequential_stream_is_served_in_order_without_a_command_left_behind() {
    // 16 queued 1 MiB writes with the write cache off: each takes ~15 ms of media time, so a
    // command waits ~240 ms behind the 15 before it. SPTF alone once started the stream at a
    // later command that was rotationally nearer and left the first ones behind the head until
    // they were a second old (p99 1.02 s); a stream's first command is now the only candidate.
    let (order, longest) = sequential_stream("cheetah-10k7", false, Op::Write, 16, 2048, 300);
    assert!(order.windows(2).all(|w| w[0] < w[1]), "out of order: {:?}", &order[..20]);
    assert!(longest < 300_000_000, "a write waited {longest} ns");
    // Reads 4 deep: the same, served from the platter and the read-ahead in turn.
    let (order, longest) = sequential_stream("nearline-7200", true, Op::Read, 4, 2048, 500);
    assert!(order.windows(2).all(|w| w[0] < w[1]), "out of order: {:?}", &order[..20]);
    assert!(longest < 50_000_000, "a read waited {longest} ns");
}
