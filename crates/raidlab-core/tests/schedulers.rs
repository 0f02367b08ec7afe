//! Block-layer schedulers: none (FIFO + merging), mq-deadline and CFQ-like, checked against the
//! behaviour the kernel documents (Documentation/block/deadline-iosched.rst,
//! Documentation/block/cfq-iosched.txt) with exact dispatch orders and times.

use std::collections::BTreeMap;

use raidlab_core::device::Op;
use raidlab_core::sim::block::sched::{
    new_scheduler, BlockRequest, Cfq, Dispatch, MqDeadline, NoneScheduler, QueueLimits, Scheduler,
    SchedulerKind,
};
use raidlab_core::time::NANOS_PER_MILLI as MS;
use raidlab_core::{rng::Prng, time::Nanos};
use raidlab_core::ErrorKind;

const US: Nanos = 1_000;

fn limits(max_sectors: u32) -> QueueLimits {
    QueueLimits { nr_requests: 128, max_sectors }
}

fn rq(id: u64, op: Op, sector: u64, sectors: u32) -> BlockRequest {
    BlockRequest { id, op, sector, sectors, thread: 0, sync: true, inserted: 0 }
}

fn rq_t(id: u64, op: Op, sector: u64, sectors: u32, thread: u32, sync: bool) -> BlockRequest {
    BlockRequest { id, op, sector, sectors, thread, sync, inserted: 0 }
}

fn flush(id: u64) -> BlockRequest {
    rq(id, Op::Flush, 0, 0)
}

/// Dispatches until the scheduler returns `None`, all at `now`.
fn drain(s: &mut dyn Scheduler, now: Nanos) -> Vec<(Dispatch, Vec<u64>)> {
    let mut out = Vec::new();
    loop {
        let mut ids = Vec::new();
        match s.dispatch(now, &mut ids) {
            Some(d) => out.push((d, ids)),
            None => return out,
        }
    }
}

fn one(s: &mut dyn Scheduler, now: Nanos) -> Option<(Dispatch, Vec<u64>)> {
    let mut ids = Vec::new();
    s.dispatch(now, &mut ids).map(|d| (d, ids))
}

fn d(op: Op, sector: u64, sectors: u32) -> Dispatch {
    Dispatch { op, sector, sectors }
}

fn all_kinds() -> [SchedulerKind; 3] {
    [SchedulerKind::None, SchedulerKind::mq_deadline_default(), SchedulerKind::cfq_default()]
}

// ---------------------------------------------------------------------------------------------
// Kinds, names, defaults

#[test]
fn kinds_have_linux_names_and_defaults() {
    assert_eq!(
        SchedulerKind::mq_deadline_default(),
        SchedulerKind::MqDeadline {
            read_expire_ns: 500 * MS,
            write_expire_ns: 5000 * MS,
            fifo_batch: 16,
            writes_starved: 2
        }
    );
    assert_eq!(
        SchedulerKind::cfq_default(),
        SchedulerKind::Cfq {
            slice_sync_ns: 100 * MS,
            slice_async_ns: 40 * MS,
            slice_idle_ns: 8 * MS,
            quantum: 8
        }
    );
    for kind in all_kinds() {
        assert_eq!(SchedulerKind::parse(kind.name()).unwrap(), kind);
    }
    assert_eq!(SchedulerKind::None.name(), "none");
    assert_eq!(SchedulerKind::mq_deadline_default().name(), "mq-deadline");
    assert_eq!(SchedulerKind::cfq_default().name(), "cfq");
    assert_eq!(SchedulerKind::parse("noop").unwrap(), SchedulerKind::None);
    assert_eq!(SchedulerKind::parse("Deadline").unwrap(), SchedulerKind::mq_deadline_default());
    let err = SchedulerKind::parse("bfq").unwrap_err();
    assert_eq!(err.kind, ErrorKind::InvalidConfig);
    assert!(err.message.contains("bfq"), "{}", err.message);
    let bad = SchedulerKind::Cfq { slice_sync_ns: 0, slice_async_ns: 1, slice_idle_ns: 0, quantum: 1 };
    assert_eq!(bad.validate().unwrap_err().kind, ErrorKind::InvalidConfig);
    assert!(QueueLimits { nr_requests: 0, max_sectors: 1024 }.validate().is_err());
    assert!(QueueLimits { nr_requests: 1, max_sectors: 4 }.validate().is_err());
    assert!(QueueLimits { nr_requests: 1, max_sectors: 8 }.validate().is_ok());
}

#[test]
#[should_panic(expected = "quantum")]
fn constructor_rejects_invalid_tunables() {
    new_scheduler(
        SchedulerKind::Cfq { slice_sync_ns: 1, slice_async_ns: 1, slice_idle_ns: 0, quantum: 0 },
        limits(64),
    );
}

// ---------------------------------------------------------------------------------------------
// none

#[test]
fn none_dispatches_in_arrival_order() {
    let mut s = new_scheduler(SchedulerKind::None, limits(1024));
    s.insert(0, rq(1, Op::Read, 5000, 8));
    s.insert(1, rq(2, Op::Write, 100, 8));
    s.insert(2, flush(3));
    s.insert(3, rq(4, Op::Read, 0, 16));
    s.insert(4, rq(5, Op::Write, 9000, 8));
    assert_eq!(s.queued(), 5);
    let out = drain(s.as_mut(), 10);
    assert_eq!(
        out,
        vec![
            (d(Op::Read, 5000, 8), vec![1]),
            (d(Op::Write, 100, 8), vec![2]),
            (d(Op::Flush, 0, 0), vec![3]),
            (d(Op::Read, 0, 16), vec![4]),
            (d(Op::Write, 9000, 8), vec![5]),
        ]
    );
    assert_eq!(s.queued(), 0);
    assert_eq!(s.next_timer(), None);
}

// ---------------------------------------------------------------------------------------------
// Merging (every scheduler)

#[test]
fn back_and_front_merges_in_every_scheduler() {
    for kind in all_kinds() {
        let name = kind.name();
        // Back merge: 0..8 then 8..16.
        let mut s = new_scheduler(kind, limits(1024));
        s.insert(0, rq(1, Op::Write, 0, 8));
        s.insert(0, rq(2, Op::Write, 8, 8));
        assert_eq!(s.queued(), 1, "{name}: back merge");
        assert_eq!(drain(s.as_mut(), 0), vec![(d(Op::Write, 0, 16), vec![1, 2])], "{name}");

        // Front merge: 8..16 then 0..8; ids come out in sector order.
        let mut s = new_scheduler(kind, limits(1024));
        s.insert(0, rq(1, Op::Read, 8, 8));
        s.insert(0, rq(2, Op::Read, 0, 8));
        assert_eq!(s.queued(), 1, "{name}: front merge");
        assert_eq!(drain(s.as_mut(), 0), vec![(d(Op::Read, 0, 16), vec![2, 1])], "{name}");

        // A request filling the gap joins both neighbours into one.
        let mut s = new_scheduler(kind, limits(1024));
        s.insert(0, rq(1, Op::Write, 0, 8));
        s.insert(0, rq(2, Op::Write, 16, 8));
        assert_eq!(s.queued(), 2);
        s.insert(0, rq(3, Op::Write, 8, 8));
        assert_eq!(s.queued(), 1, "{name}: gap fill joins");
        assert_eq!(drain(s.as_mut(), 0), vec![(d(Op::Write, 0, 24), vec![1, 3, 2])], "{name}");

        // Runs of many small requests, both directions.
        let mut s = new_scheduler(kind, limits(1024));
        for i in 0..32u64 {
            s.insert(0, rq(i, Op::Read, 1000 + 8 * i, 8));
            s.insert(0, rq(100 + i, Op::Write, 5000 - 8 * (i + 1), 8));
        }
        assert_eq!(s.queued(), 2, "{name}: two runs");
        let mut out = drain(s.as_mut(), 0);
        out.sort_by_key(|(d, _)| d.sector);
        let writes: Vec<u64> = (0..32).rev().map(|i| 100 + i).collect();
        assert_eq!(
            out,
            vec![(d(Op::Read, 1000, 256), (0..32).collect()), (d(Op::Write, 5000 - 256, 256), writes)]
        );
    }
}

#[test]
fn merges_respect_max_sectors() {
    for kind in all_kinds() {
        let mut s = new_scheduler(kind, limits(16));
        s.insert(0, rq(1, Op::Write, 0, 8));
        s.insert(0, rq(2, Op::Write, 8, 8));
        s.insert(0, rq(3, Op::Write, 16, 8)); // 0..16 is full: no back merge
        s.insert(0, rq(4, Op::Write, 24, 8)); // merges with 3
        s.insert(0, rq(5, Op::Write, 32, 16)); // 16..32 is full
        assert_eq!(s.queued(), 3, "{}", kind.name());
        let out = drain(s.as_mut(), 0);
        assert_eq!(
            out,
            vec![
                (d(Op::Write, 0, 16), vec![1, 2]),
                (d(Op::Write, 16, 16), vec![3, 4]),
                (d(Op::Write, 32, 16), vec![5])
            ],
            "{}",
            kind.name()
        );
        // A gap fill whose join would exceed the cap merges on one side only.
        let mut s = new_scheduler(kind, limits(16));
        s.insert(0, rq(1, Op::Read, 0, 8));
        s.insert(0, rq(2, Op::Read, 12, 8));
        s.insert(0, rq(3, Op::Read, 8, 4));
        assert_eq!(s.queued(), 2);
        let out = drain(s.as_mut(), 0);
        assert_eq!(
            out,
            vec![(d(Op::Read, 0, 12), vec![1, 3]), (d(Op::Read, 12, 8), vec![2])],
            "{}",
            kind.name()
        );
    }
}

#[test]
fn different_ops_and_flushes_never_merge() {
    for kind in all_kinds() {
        let mut s = new_scheduler(kind, limits(1024));
        s.insert(0, rq(1, Op::Read, 0, 8));
        s.insert(0, rq(2, Op::Write, 8, 8));
        s.insert(0, rq(3, Op::Write, 100, 8));
        s.insert(0, rq(4, Op::Read, 92, 8));
        s.insert(0, flush(5));
        s.insert(0, flush(6));
        assert_eq!(s.queued(), 6, "{}", kind.name());
        let mut out = drain(s.as_mut(), 0);
        assert_eq!(out.len(), 6);
        out.sort_by_key(|(_, ids)| ids[0]);
        assert_eq!(
            out,
            vec![
                (d(Op::Read, 0, 8), vec![1]),
                (d(Op::Write, 8, 8), vec![2]),
                (d(Op::Write, 100, 8), vec![3]),
                (d(Op::Read, 92, 8), vec![4]),
                (d(Op::Flush, 0, 0), vec![5]),
                (d(Op::Flush, 0, 0), vec![6]),
            ]
        );
    }
}

#[test]
fn merge_keeps_the_older_requests_fifo_place() {
    // none: a joined request goes out at the older part's place in the FIFO.
    let mut s = new_scheduler(SchedulerKind::None, limits(1024));
    s.insert(0, rq(1, Op::Write, 16, 8));
    s.insert(0, rq(2, Op::Read, 1000, 8));
    s.insert(0, rq(3, Op::Write, 0, 8));
    s.insert(0, rq(4, Op::Write, 8, 8)); // back-merges into 3, then joins 1 (older: survives)
    assert_eq!(s.queued(), 2);
    assert_eq!(
        drain(s.as_mut(), 0),
        vec![(d(Op::Write, 0, 24), vec![3, 4, 1]), (d(Op::Read, 1000, 8), vec![2])]
    );
}

#[test]
fn merged_request_keeps_the_earlier_deadline() {
    // mq-deadline: a read at 5000 back-merges into read 1 (queued at t=0); the merged request
    // expires at 1's deadline although part of it arrived at 60 ms.
    let kind = SchedulerKind::MqDeadline {
        read_expire_ns: 100 * MS,
        write_expire_ns: 1000 * MS,
        fifo_batch: 1,
        writes_starved: 2,
    };
    let mut s = new_scheduler(kind, limits(1024));
    s.insert(0, rq(1, Op::Read, 4992, 8));
    s.insert(50 * MS, rq(2, Op::Read, 10, 8));
    s.insert(60 * MS, rq(3, Op::Read, 5000, 8)); // back merge into 1
    s.insert(70 * MS, rq(4, Op::Read, 20, 8));
    assert_eq!(s.queued(), 3);
    // At 100 ms the merged request's deadline (1's: 0 + 100 ms) has passed: it goes first
    // although 10 and 20 are lower.
    assert_eq!(one(s.as_mut(), 100 * MS), Some((d(Op::Read, 4992, 16), vec![1, 3])));
}

#[test]
#[should_panic(expected = "still queued")]
fn duplicate_ids_panic() {
    let mut s = new_scheduler(SchedulerKind::None, limits(64));
    s.insert(0, rq(7, Op::Read, 0, 8));
    s.insert(0, rq(7, Op::Read, 100, 8));
}

#[test]
fn oversized_requests_are_queued_alone() {
    // The block layer would have split them; unsplit, they go out as they are and never merge.
    for kind in all_kinds() {
        let mut s = new_scheduler(kind, limits(64));
        s.insert(0, rq(1, Op::Read, 0, 100));
        s.insert(0, rq(2, Op::Read, 100, 8));
        s.insert(0, rq(3, Op::Read, 200, 8));
        s.insert(0, rq(4, Op::Read, 208, 100));
        assert_eq!(s.queued(), 4, "{}", kind.name());
        let out = drain(s.as_mut(), 0);
        assert_eq!(out[0], (d(Op::Read, 0, 100), vec![1]), "{}", kind.name());
        assert_eq!(out[3], (d(Op::Read, 208, 100), vec![4]), "{}", kind.name());
    }
}

// ---------------------------------------------------------------------------------------------
// mq-deadline

#[test]
fn deadline_sorts_by_sector_within_a_batch_and_wraps() {
    let mut s = new_scheduler(SchedulerKind::mq_deadline_default(), limits(1024));
    s.insert(0, rq(1, Op::Read, 100, 8));
    s.insert(0, rq(2, Op::Read, 10, 8));
    s.insert(0, rq(3, Op::Read, 50, 8));
    assert_eq!(one(s.as_mut(), 0), Some((d(Op::Read, 10, 8), vec![2])));
    // New arrivals: 60 is ahead of the head (at 18), 5 is behind it.
    s.insert(1, rq(4, Op::Read, 5, 8));
    s.insert(1, rq(5, Op::Read, 60, 8));
    let order: Vec<u64> = drain(s.as_mut(), 1).into_iter().map(|(d, _)| d.sector).collect();
    assert_eq!(order, vec![50, 60, 100, 5]);
}

#[test]
fn deadline_serves_an_expired_read_at_the_next_batch() {
    // A far read waits while a sequential stream keeps the elevator busy below it; it is served
    // at the first batch start after read_expire (batches of 16 start at 0, 16, 32, ... ms).
    let run = |read_expire_ns| {
        let kind = SchedulerKind::MqDeadline {
            read_expire_ns,
            write_expire_ns: 5000 * MS,
            fifo_batch: 16,
            writes_starved: 2,
        };
        let mut s = new_scheduler(kind, limits(1024));
        s.insert(0, rq(0, Op::Read, 1 << 30, 8));
        for step in 0..1000u64 {
            let now = step * MS;
            s.insert(now, rq(step + 1, Op::Read, step * 8, 8));
            let (dispatch, ids) = one(s.as_mut(), now).expect("something to dispatch");
            if ids == [0] {
                assert_eq!(dispatch, d(Op::Read, 1 << 30, 8));
                return Some(now);
            }
        }
        None
    };
    assert_eq!(run(500 * MS), Some(512 * MS));
    assert_eq!(run(100 * MS), Some(112 * MS));
    assert_eq!(run(512 * MS), Some(512 * MS), "expired when now == fifo_time (time_after_eq)");
    assert_eq!(run(10_000 * MS), None, "unexpired, the far read starves behind the stream");
}

#[test]
fn deadline_prefers_reads_but_serves_writes_after_writes_starved_batches() {
    let kind = SchedulerKind::MqDeadline {
        read_expire_ns: 500 * MS,
        write_expire_ns: 5000 * MS,
        fifo_batch: 2,
        writes_starved: 2,
    };
    let mut s = new_scheduler(kind, limits(1024));
    for i in 0..10u64 {
        // Interleaved arrival; spaced so nothing merges; reads inserted in descending sectors.
        s.insert(0, rq(100 + i, Op::Write, 100_000 + 100 * i, 8));
        s.insert(0, rq(i, Op::Read, 1000 * (10 - i), 8));
    }
    let out = drain(s.as_mut(), 0);
    let ops: String = out.iter().map(|(d, _)| if d.op == Op::Read { 'R' } else { 'W' }).collect();
    assert_eq!(ops, "RRRRWWRRRRWWRRWWWWWW");
    let reads: Vec<u64> = out.iter().filter(|(d, _)| d.op == Op::Read).map(|(d, _)| d.sector).collect();
    assert_eq!(reads, (1..=10).map(|k| 1000 * k).collect::<Vec<_>>(), "reads in ascending sectors");
    let writes: Vec<u64> = out.iter().filter(|(d, _)| d.op == Op::Write).map(|(d, _)| d.sector).collect();
    assert_eq!(writes, (0..10).map(|i| 100_000 + 100 * i).collect::<Vec<_>>());
}

#[test]
fn deadline_writes_starved_counts_read_batches_like_the_kernel() {
    // `dd->starved++ >= writes_starved`: 1 alternates batches, 0 lets writes always win.
    let ops = |writes_starved| {
        let kind = SchedulerKind::MqDeadline {
            read_expire_ns: 500 * MS,
            write_expire_ns: 5000 * MS,
            fifo_batch: 1,
            writes_starved,
        };
        let mut s = new_scheduler(kind, limits(1024));
        for i in 0..3u64 {
            s.insert(0, rq(i, Op::Read, 1000 * i, 8));
            s.insert(0, rq(10 + i, Op::Write, 100_000 + 1000 * i, 8));
        }
        drain(s.as_mut(), 0).iter().map(|(d, _)| if d.op == Op::Read { 'R' } else { 'W' }).collect::<String>()
    };
    assert_eq!(ops(1), "RWRWRW");
    assert_eq!(ops(0), "WWWRRR");
    assert_eq!(ops(3), "RRRWWW");
}

#[test]
fn deadline_expired_write_starts_the_write_batch() {
    // When writes get their batch, an expired write FIFO head goes first even if it is not next
    // in sector order.
    let kind = SchedulerKind::MqDeadline {
        read_expire_ns: 500 * MS,
        write_expire_ns: 10 * MS,
        fifo_batch: 4,
        writes_starved: 0,
    };
    let mut s = new_scheduler(kind, limits(1024));
    s.insert(0, rq(1, Op::Write, 9000, 8));
    s.insert(5 * MS, rq(2, Op::Write, 100, 8));
    s.insert(5 * MS, rq(3, Op::Write, 200, 8));
    let order: Vec<u64> = drain(s.as_mut(), 20 * MS).into_iter().map(|(d, _)| d.sector).collect();
    assert_eq!(order, vec![9000, 100, 200], "expired head first, then wrap in sector order");
    s.insert(21 * MS, rq(4, Op::Write, 9000, 8));
    s.insert(21 * MS, rq(5, Op::Write, 100, 8));
    s.insert(21 * MS, rq(6, Op::Write, 200, 8));
    let order: Vec<u64> = drain(s.as_mut(), 22 * MS).into_iter().map(|(d, _)| d.sector).collect();
    assert_eq!(order, vec![9000, 100, 200], "unexpired: ahead of 208 first, then wrap");
}

#[test]
fn deadline_dispatches_flushes_first() {
    let mut s = new_scheduler(SchedulerKind::mq_deadline_default(), limits(1024));
    s.insert(0, rq(1, Op::Read, 100, 8));
    s.insert(0, rq(2, Op::Write, 200, 8));
    s.insert(0, flush(3));
    s.insert(0, flush(4));
    let out = drain(s.as_mut(), 0);
    let ids: Vec<u64> = out.iter().map(|(_, ids)| ids[0]).collect();
    assert_eq!(ids, vec![3, 4, 1, 2]);
    assert_eq!(out[0].0, d(Op::Flush, 0, 0));
}

// ---------------------------------------------------------------------------------------------
// CFQ

#[test]
fn cfq_idles_for_the_threads_next_sequential_request() {
    let mut s = Cfq::new(SchedulerKind::cfq_default(), limits(1024));
    s.insert(0, rq_t(1, Op::Read, 0, 8, 1, true));
    s.insert(0, rq_t(2, Op::Read, 1_000_000, 8, 2, true));
    assert_eq!(one(&mut s, 0), Some((d(Op::Read, 0, 8), vec![1])));
    assert_eq!(s.active_thread(), Some(1));
    // Thread 1's queue is empty but its request is in flight: wait for it, do not switch.
    assert_eq!(one(&mut s, 0), None);
    assert!(!s.idling());
    assert_eq!(s.next_timer(), Some(100 * MS), "slice end, as thread 2 waits");
    // The request completes at 2 ms: idle for slice_idle.
    s.completed(2 * MS, 1, true);
    assert!(s.idling());
    assert_eq!(s.next_timer(), Some(2 * MS + 8 * MS));
    assert_eq!(one(&mut s, 2 * MS), None);
    assert_eq!(one(&mut s, 9 * MS), None, "thread 2 is held back during the idle window");
    // Thread 1's next sequential request arrives during idling: dispatched at once.
    s.insert(9 * MS, rq_t(3, Op::Read, 8, 8, 1, true));
    assert_eq!(one(&mut s, 9 * MS), Some((d(Op::Read, 8, 8), vec![3])));
    assert!(!s.idling());
    assert_eq!(one(&mut s, 9 * MS), None);
    s.completed(11 * MS, 1, true);
    assert_eq!(s.next_timer(), Some(19 * MS));
    assert_eq!(one(&mut s, 18 * MS), None);
    s.check_invariants();
    // Idle window over without a request: thread 2's turn.
    assert_eq!(one(&mut s, 19 * MS), Some((d(Op::Read, 1_000_000, 8), vec![2])));
    assert_eq!(s.active_thread(), Some(2));
    s.check_invariants();
}

#[test]
fn cfq_without_slice_idle_switches_at_once() {
    let kind =
        SchedulerKind::Cfq { slice_sync_ns: 100 * MS, slice_async_ns: 40 * MS, slice_idle_ns: 0, quantum: 8 };
    let mut s = new_scheduler(kind, limits(1024));
    s.insert(0, rq_t(1, Op::Read, 0, 8, 1, true));
    s.insert(0, rq_t(2, Op::Read, 1_000_000, 8, 2, true));
    let ids: Vec<u64> = drain(s.as_mut(), 0).into_iter().map(|(_, ids)| ids[0]).collect();
    assert_eq!(ids, vec![1, 2]);
}

#[test]
fn cfq_switches_threads_when_the_slice_expires() {
    let mut s = Cfq::new(SchedulerKind::cfq_default(), limits(1024));
    for i in 0..15u64 {
        s.insert(0, rq_t(i, Op::Read, 100 * i, 8, 1, true));
        s.insert(0, rq_t(100 + i, Op::Read, 1_000_000 + 100 * i, 8, 2, true));
    }
    // Each request takes 10 ms; the next dispatch follows its completion.
    let mut threads = Vec::new();
    let mut times = Vec::new();
    let mut now = 0;
    let mut last: Option<u32> = None;
    while threads.len() < 30 {
        if let Some(thread) = last.take() {
            s.completed(now, thread, true);
        }
        match one(&mut s, now) {
            Some((_, ids)) => {
                let thread = if ids[0] < 100 { 1 } else { 2 };
                threads.push(thread);
                times.push(now);
                last = Some(thread);
                now += 10 * MS;
            }
            None => {
                let wake = s.next_timer().unwrap_or_else(|| panic!("no timer at {now}: {threads:?}"));
                assert!(wake > now);
                now = wake;
            }
        }
        s.check_invariants();
    }
    let expected: Vec<u32> = [vec![1; 10], vec![2; 10], vec![1; 5], vec![2; 5]].concat();
    assert_eq!(threads, expected);
    // Thread 1 runs out at 250 ms (its 5th request of the second slice completes): CFQ idles
    // 8 ms for it before thread 2 continues.
    assert_eq!(times[24], 240 * MS);
    assert_eq!(times[25], 258 * MS);
    assert_eq!(s.queued(), 0);
    s.completed(now, 2, true);
    assert_eq!(one(&mut s, now), None);
}

#[test]
fn cfq_quantum_limits_dispatch_only_with_other_queues_waiting() {
    let mut s = Cfq::new(SchedulerKind::cfq_default(), limits(1024));
    for i in 0..20u64 {
        s.insert(0, rq_t(i, Op::Read, 100 * i, 8, 1, true));
    }
    s.insert(0, rq_t(99, Op::Read, 1 << 20, 8, 2, true));
    assert_eq!(drain(&mut s, 0).len(), 8, "quantum 8 with thread 2 waiting");
    assert_eq!(s.next_timer(), Some(100 * MS));
    s.completed(MS, 1, true);
    assert_eq!(drain(&mut s, MS).len(), 1, "one completion, one more dispatch");

    let mut s = Cfq::new(SchedulerKind::cfq_default(), limits(1024));
    for i in 0..20u64 {
        s.insert(0, rq_t(i, Op::Read, 100 * i, 8, 1, true));
    }
    assert_eq!(drain(&mut s, 0).len(), 20, "the sole busy queue is not limited");
}

#[test]
fn cfq_async_queue_is_shared_and_sync_queues_are_per_thread() {
    let mut s = new_scheduler(SchedulerKind::cfq_default(), limits(1024));
    // Async writes from two threads merge (one shared queue).
    s.insert(0, rq_t(1, Op::Write, 0, 8, 1, false));
    s.insert(0, rq_t(2, Op::Write, 8, 8, 2, false));
    // Sync writes of two threads do not (separate queues).
    s.insert(0, rq_t(3, Op::Write, 100, 8, 1, true));
    s.insert(0, rq_t(4, Op::Write, 108, 8, 2, true));
    assert_eq!(s.queued(), 3);
    // The async queue became busy first: its slice runs first and, never idling, ends as soon
    // as it is empty. Thread 1's sync queue then idles after its request...
    assert_eq!(one(s.as_mut(), 0), Some((d(Op::Write, 0, 16), vec![1, 2])));
    assert_eq!(one(s.as_mut(), 0), Some((d(Op::Write, 100, 8), vec![3])));
    assert_eq!(one(s.as_mut(), 0), None);
    s.completed(MS, 1, true);
    assert_eq!(one(s.as_mut(), MS), None);
    // ... and thread 2 follows after the idle window.
    assert_eq!(one(s.as_mut(), 9 * MS), Some((d(Op::Write, 108, 8), vec![4])));
    s.completed(10 * MS, 1, false);
    s.completed(10 * MS, 2, false);
}

#[test]
fn cfq_flushes_bypass_idling() {
    let mut s = Cfq::new(SchedulerKind::cfq_default(), limits(1024));
    s.insert(0, rq_t(1, Op::Read, 0, 8, 1, true));
    assert!(one(&mut s, 0).is_some());
    s.completed(MS, 1, true);
    assert!(s.idling());
    s.insert(2 * MS, rq_t(2, Op::Flush, 0, 0, 2, true));
    assert_eq!(one(&mut s, 2 * MS), Some((d(Op::Flush, 0, 0), vec![2])));
    assert!(s.idling(), "the flush did not end thread 1's idle window");
    s.completed(3 * MS, 2, true);
    s.check_invariants();
}

#[test]
#[should_panic(expected = "nothing in flight")]
fn cfq_completion_without_dispatch_panics() {
    let mut s = Cfq::new(SchedulerKind::cfq_default(), limits(1024));
    s.insert(0, rq_t(1, Op::Read, 0, 8, 1, true));
    s.completed(1, 1, true);
}

// ---------------------------------------------------------------------------------------------
// A small closed-loop engine: threads, a drive with several command slots, scheduler timers.
// Checks every id is dispatched exactly once inside a contiguous command, invariants hold, and
// the same seed gives the same trace.

#[derive(Clone, Copy)]
struct Issued {
    op: Op,
    sector: u64,
    sectors: u32,
    thread: u32,
    sync: bool,
}

type Trace = Vec<(Nanos, Dispatch, Vec<u64>)>;

fn simulate<S: Scheduler>(s: &mut S, check: impl Fn(&S), seed: u64, total: u64) -> Trace {
    const THREADS: u32 = 6;
    const DEPTH: usize = 4;
    const NR_REQUESTS: usize = 64;
    let mut rng = Prng::new(seed);
    let mut trace = Vec::new();
    let mut issued: BTreeMap<u64, Issued> = BTreeMap::new();
    let mut dispatched_ids = std::collections::BTreeSet::new();
    let mut next_issue: Vec<Option<Nanos>> = (0..THREADS).map(|t| Some(t as Nanos * US)).collect();
    let mut cursor: Vec<u64> = (0..THREADS as u64).map(|t| t << 24).collect();
    let mut in_drive: Vec<(Nanos, u64, Vec<u64>)> = Vec::new(); // (done, seq, ids)
    let mut head = 0u64;
    let mut now = 0;
    let mut next_id = 0u64;
    let mut seq = 0u64;
    let mut steps = 0u64;
    let mut completed_ids = 0u64;
    loop {
        steps += 1;
        assert!(steps < 50 * total + 10_000, "simulation does not progress");
        // Completions due.
        in_drive.sort_by_key(|&(done, seq, _)| (done, seq));
        while in_drive.first().is_some_and(|&(done, _, _)| done <= now) {
            let (_, _, ids) = in_drive.remove(0);
            for id in ids {
                let r = issued[&id];
                s.completed(now, r.thread, r.sync);
                completed_ids += 1;
                next_issue[r.thread as usize] = Some(now + 20 * US);
            }
        }
        // Threads issue (one outstanding each), unless the queue is full.
        for t in 0..THREADS {
            if next_issue[t as usize].is_some_and(|at| at <= now)
                && s.queued() < NR_REQUESTS
                && next_id < total
            {
                next_issue[t as usize] = None;
                let op = match rng.below(100) {
                    0..=2 => Op::Flush,
                    3..=64 => Op::Read,
                    _ => Op::Write,
                };
                let (sector, sectors) = if op == Op::Flush {
                    (0, 0)
                } else if rng.chance(0.6) {
                    (cursor[t as usize], 8)
                } else {
                    (rng.below(1 << 28) & !7, 8 * (1 + rng.below(16) as u32))
                };
                cursor[t as usize] = sector + sectors as u64;
                let sync = op != Op::Write || rng.chance(0.5);
                let r = Issued { op, sector, sectors, thread: t, sync };
                issued.insert(next_id, r);
                s.insert(
                    now,
                    BlockRequest { id: next_id, op, sector, sectors, thread: t, sync, inserted: now },
                );
                // Async writes return at once (page cache): the thread moves on.
                if op == Op::Write && !sync {
                    next_issue[t as usize] = Some(now + 5 * US);
                }
                next_id += 1;
            }
        }
        // Fill the drive.
        while in_drive.len() < DEPTH {
            let mut ids = Vec::new();
            let Some(dispatch) = s.dispatch(now, &mut ids) else { break };
            // The command covers its ids contiguously, in order, all of one op.
            let mut at = dispatch.sector;
            for id in &ids {
                assert!(dispatched_ids.insert(*id), "id {id} dispatched twice");
                let r = issued[id];
                assert_eq!((r.op, r.sector), (dispatch.op, at), "id {id} in {dispatch:?}");
                at += r.sectors as u64;
            }
            assert_eq!(at, dispatch.sector + dispatch.sectors as u64, "command length");
            assert!(dispatch.sectors <= 256);
            let service = 100 * US + dispatch.sector.abs_diff(head) / 4096 + dispatch.sectors as u64 * 200;
            head = dispatch.sector + dispatch.sectors as u64;
            in_drive.push((now + service, seq, ids.clone()));
            seq += 1;
            trace.push((now, dispatch, ids));
        }
        if steps & 15 == 0 {
            check(s);
        }
        if next_id == total && completed_ids == total {
            assert_eq!(s.queued(), 0);
            break;
        }
        // Advance to the next event.
        let candidates = [
            in_drive.iter().map(|&(done, _, _)| done).min(),
            s.next_timer(),
            next_issue.iter().flatten().copied().filter(|_| next_id < total).min(),
        ];
        let next = candidates.into_iter().flatten().filter(|&t| t > now).min();
        now = next
            .unwrap_or_else(|| panic!("stuck at {now}: queued {}, in drive {}", s.queued(), in_drive.len()));
    }
    check(s);
    assert_eq!(dispatched_ids.len() as u64, total);
    trace
}

fn lim() -> QueueLimits {
    QueueLimits { nr_requests: 64, max_sectors: 256 }
}

#[test]
fn random_workloads_are_consistent_and_deterministic() {
    let run_none =
        |seed| simulate(&mut NoneScheduler::new(lim()), NoneScheduler::check_invariants, seed, 3000);
    let run_deadline = |seed| {
        let kind = SchedulerKind::MqDeadline {
            read_expire_ns: 5 * MS,
            write_expire_ns: 20 * MS,
            fifo_batch: 16,
            writes_starved: 2,
        };
        simulate(&mut MqDeadline::new(kind, lim()), MqDeadline::check_invariants, seed, 3000)
    };
    let run_cfq = |seed, kind| simulate(&mut Cfq::new(kind, lim()), Cfq::check_invariants, seed, 3000);
    let cfq_fast =
        SchedulerKind::Cfq { slice_sync_ns: 10 * MS, slice_async_ns: 4 * MS, slice_idle_ns: MS, quantum: 2 };

    for seed in [1, 2] {
        assert_eq!(run_none(seed), run_none(seed));
        assert_eq!(run_deadline(seed), run_deadline(seed));
        assert_eq!(run_cfq(seed, SchedulerKind::cfq_default()), run_cfq(seed, SchedulerKind::cfq_default()));
        assert_eq!(run_cfq(seed, cfq_fast), run_cfq(seed, cfq_fast));
    }
    assert_ne!(run_none(1), run_none(2), "different seeds differ");
    // The schedulers really reorder: the three traces differ for one workload.
    let orders = [run_none(3), run_deadline(3), run_cfq(3, SchedulerKind::cfq_default())]
        .map(|t| t.into_iter().map(|(_, _, ids)| ids).collect::<Vec<_>>());
    assert_ne!(orders[0], orders[1]);
    assert_ne!(orders[0], orders[2]);
    assert_ne!(orders[1], orders[2]);
}

#[test]
fn large_queues_stay_fast() {
    // 80k requests through a queue of ~4000: merging and dispatch are O(log n), so this takes
    // well under a second even unoptimised.
    // CFQ without idling: with idling, the active thread's stream (a request every 16 us on
    // average) would keep the disk for its whole slice, by design.
    let cfq =
        SchedulerKind::Cfq { slice_sync_ns: 100 * MS, slice_async_ns: 40 * MS, slice_idle_ns: 0, quantum: 8 };
    for kind in [SchedulerKind::None, SchedulerKind::mq_deadline_default(), cfq] {
        let mut s = new_scheduler(kind, QueueLimits { nr_requests: 4096, max_sectors: 1024 });
        let mut rng = Prng::new(7);
        let mut ids = Vec::new();
        let mut dispatched = 0u64;
        let mut in_flight: Vec<u64> = Vec::new();
        let mut thread_of = Vec::new();
        for id in 0..80_000u64 {
            let now = id * US;
            let thread = rng.below(16) as u32;
            thread_of.push(thread);
            let op = if rng.chance(0.5) { Op::Read } else { Op::Write };
            s.insert(now, rq_t(id, op, rng.below(1 << 30) & !7, 8, thread, true));
            if s.queued() >= 4000 {
                for done in in_flight.drain(..) {
                    s.completed(now, thread_of[done as usize], true);
                }
                for _ in 0..64 {
                    ids.clear();
                    if s.dispatch(now, &mut ids).is_some() {
                        dispatched += ids.len() as u64;
                        in_flight.extend_from_slice(&ids);
                    }
                }
            }
        }
        assert!(dispatched > 70_000, "{}: {dispatched}", kind.name());
    }
}
