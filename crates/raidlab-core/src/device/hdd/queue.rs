//! The tagged command queue: commands waiting for the mechanism, and the policies that pick
//! the next one (FCFS, SSTF by cylinder distance, SPTF by the model's own positioning time:
//! Seltzer, Chen & Ousterhout 1990; Jacobson & Wilkes 1991; Worthington, Ganger & Patt 1994).

use super::geometry::Location;
use super::mech::{HeadPos, Mechanics, Target};
use super::spec::QueuePolicy;
use crate::device::Command;
use crate::time::Nanos;

/// A host command that needs the media (a read miss or a write-through write).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Pending {
    pub id: u64,
    pub write: bool,
    pub lba: u64,
    pub sectors: u32,
    /// Arrival order, for FCFS and ties.
    pub seq: u64,
    pub arrival: Nanos,
    /// When the controller has processed the command (arrival + overhead).
    pub eligible: Nanos,
    /// For writes: when all data has crossed the interface; media writing cannot start before.
    pub data_ready: Nanos,
    /// Precomputed at arrival so selection and service do no zone lookups.
    pub target: Target,
    pub location: Location,
}

/// Why a command waits outside the mechanism's queue.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Wait {
    /// A read whose data the current read-ahead will bring in.
    ReadAhead,
    /// A cached write waiting for buffer space.
    Space,
    /// A write held until an earlier Flush completes (ordered semantics).
    BehindFlush,
    /// A Flush waiting for the dirty set to drain.
    Flush,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Parked {
    pub command: Command,
    pub seq: u64,
    pub arrival: Nanos,
    pub wait: Wait,
}

/// A command whose completion time is known (possibly still in the future).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Done {
    pub time: Nanos,
    pub seq: u64,
    pub id: u64,
}

impl Done {
    /// Completion order: by time, then arrival (`seq` is unique, so no two keys are equal).
    #[inline(always)]
    fn key(&self) -> (Nanos, u64) {
        (self.time, self.seq)
    }
}

/// Adds `entry` to `done`, kept sorted by (time, seq) descending so the earliest is last.
/// Usually the new completion is the earliest and is pushed. Otherwise its place is found by
/// binary search: a flush that drains the write cache completes the parked flushes and admits
/// the writes held behind them at one instant, each later than all before it, which a
/// swap-by-swap walk from the end paid for with a pass over the whole list each.
#[inline]
pub fn insert_done(done: &mut Vec<Done>, entry: Done) {
    let key = entry.key();
    if done.last().is_none_or(|last| last.key() > key) {
        done.push(entry);
    } else {
        let at = done.partition_point(|d| d.key() > key);
        done.insert(at, entry);
    }
}

/// Moves the parked commands waiting for `wait` to the end of `into`, in the order they were
/// parked, leaving the others in theirs: one pass, where finding and removing them one at a
/// time moved the rest of the list once for each.
pub fn unpark(parked: &mut Vec<Parked>, wait: Wait, into: &mut Vec<Parked>) {
    parked.retain(|p| {
        let keep = p.wait != wait;
        if !keep {
            into.push(*p);
        }
        keep
    });
}

/// Commands waiting for the mechanism, with the earliest eligibility time cached because the
/// event loop asks for it several times per command. Commands stay in their slot while queued;
/// `order` lists the slots by their first sector's angle on the platter (packed `angle << 32 |
/// slot`, so moving one is moving a word), for SPTF to visit them by rotational distance.
#[derive(Clone, Debug)]
pub struct CommandQueue {
    slots: Vec<Pending>,
    free: Vec<u32>,
    order: Vec<u64>,
    first_eligible: Option<Nanos>,
    /// No queued command is shorter (a bound: lowered on push, reset once the queue empties).
    fewest_sectors: u32,
    /// The oldest queued command's arrival (`Nanos::MAX` when empty).
    oldest_arrival: Nanos,
    /// Per slot, the queued command of the same direction that ends where this one starts
    /// ([`NO_SLOT`] if none): the one before it in a sequential stream.
    before: Vec<u32>,
    /// Queued commands by a hash of their first sector, and of the sector after their last: a
    /// zero count proves no queued command starts (ends) there, so a random command's push and
    /// take skip the search for its stream neighbours.
    starts: Box<[u16; BUCKETS]>,
    ends: Box<[u16; BUCKETS]>,
}

/// No slot: a command with no queued command before it in a stream.
const NO_SLOT: u32 = u32::MAX;

/// Buckets of [`CommandQueue::starts`] and [`CommandQueue::ends`] (a power of two).
const BUCKETS: usize = 1024;

/// The bucket of a sector: a multiplicative (Fibonacci) hash, so that sectors aligned to large
/// powers of two (1 MiB commands, chunk-aligned member I/O) spread over the buckets too.
#[inline(always)]
fn bucket(sector: u64) -> usize {
    (sector.wrapping_mul(0x9E37_79B9_7F4A_7C15) >> (64 - BUCKETS.trailing_zeros())) as usize
}

impl CommandQueue {
    pub fn with_capacity(capacity: usize) -> CommandQueue {
        CommandQueue {
            slots: Vec::with_capacity(capacity),
            free: Vec::with_capacity(capacity),
            order: Vec::with_capacity(capacity),
            first_eligible: None,
            fewest_sectors: u32::MAX,
            oldest_arrival: Nanos::MAX,
            before: Vec::with_capacity(capacity),
            starts: Box::new([0; BUCKETS]),
            ends: Box::new([0; BUCKETS]),
        }
    }
    pub fn len(&self) -> usize {
        self.order.len()
    }
    pub fn is_empty(&self) -> bool {
        self.order.is_empty()
    }
    /// Queued commands with their slots, in angle order.
    pub fn iter(&self) -> impl Iterator<Item = (usize, &Pending)> + '_ {
        self.order.iter().map(|&key| {
            let slot = key as u32 as usize;
            (slot, &self.slots[slot])
        })
    }
    /// Earliest time any queued command becomes eligible.
    pub fn first_eligible(&self) -> Option<Nanos> {
        debug_assert_eq!(self.first_eligible, self.iter().map(|(_, p)| p.eligible).min());
        self.first_eligible
    }
    /// A lower bound on every queued command's length in sectors (`u32::MAX` when empty).
    pub fn fewest_sectors(&self) -> u32 {
        debug_assert!(self.iter().all(|(_, p)| p.sectors >= self.fewest_sectors));
        self.fewest_sectors
    }
    /// Position in angle order of the oldest eligible command if it arrived `age_limit` or
    /// longer before `t` (the firmware's bound on how long reordering may pass a command over).
    /// Most calls answer from the oldest arrival without looking at the queue.
    pub fn starved(&self, t: Nanos, age_limit: Nanos) -> Option<usize> {
        debug_assert_eq!(self.oldest_arrival, self.iter().map(|(_, p)| p.arrival).min().unwrap_or(Nanos::MAX));
        if t < self.oldest_arrival.saturating_add(age_limit) {
            return None;
        }
        self.order
            .iter()
            .enumerate()
            .map(|(position, &key)| (position, &self.slots[key as u32 as usize]))
            .filter(|(_, p)| p.eligible <= t && t >= p.arrival.saturating_add(age_limit))
            .min_by_key(|(_, p)| (p.arrival, p.seq))
            .map(|(position, _)| position)
    }
    /// The queued command of `pending`'s direction that ends where it starts, if any.
    fn stream_before(&self, pending: &Pending) -> u32 {
        if self.ends[bucket(pending.lba)] == 0 {
            return NO_SLOT;
        }
        self.order
            .iter()
            .map(|&key| key as u32)
            .find(|&slot| {
                let o = &self.slots[slot as usize];
                o.write == pending.write && o.lba + o.sectors as u64 == pending.lba
            })
            .unwrap_or(NO_SLOT)
    }

    /// Whether the command in `slot` waits for the command before it in its sequential stream,
    /// which is queued and eligible at `t`: only a stream's first command is a candidate
    /// (DiskSim's ioqueue "Sequential stream scheme", `ioqueue_seqstream_head`), so reordering
    /// does not start a stream past its first command and leave that behind the head. (A
    /// follower still goes first when its predecessor is not eligible yet, or has aged out.)
    #[inline(always)]
    fn follows(&self, slot: usize, t: Nanos) -> bool {
        let before = self.before[slot];
        // The kept link against a search of the whole queue (the buckets only skip searches).
        debug_assert_eq!(before != NO_SLOT, {
            let p = &self.slots[slot];
            self.iter().any(|(_, o)| o.write == p.write && o.lba + o.sectors as u64 == p.lba)
        }, "slot {slot}'s stream link");
        before != NO_SLOT && self.slots[before as usize].eligible <= t
    }

    pub fn push(&mut self, pending: Pending) {
        self.oldest_arrival = self.oldest_arrival.min(pending.arrival);
        self.fewest_sectors = self.fewest_sectors.min(pending.sectors);
        self.first_eligible = Some(
            self.first_eligible
                .map_or(pending.eligible, |e| e.min(pending.eligible)),
        );
        let slot = match self.free.pop() {
            Some(slot) => {
                self.slots[slot as usize] = pending;
                slot
            }
            None => {
                self.slots.push(pending);
                self.before.push(NO_SLOT);
                u32::try_from(self.slots.len() - 1).expect("queue slots fit u32")
            }
        };
        self.before[slot as usize] = self.stream_before(&pending);
        let end = pending.lba + pending.sectors as u64;
        if self.starts[bucket(end)] > 0 {
            for &key in &self.order {
                let other = key as u32;
                let o = &self.slots[other as usize];
                if o.write == pending.write && o.lba == end && self.before[other as usize] == NO_SLOT {
                    self.before[other as usize] = slot;
                }
            }
        }
        self.starts[bucket(pending.lba)] += 1;
        self.ends[bucket(end)] += 1;
        let key = (pending.target.angle as u64) << 32 | slot as u64;
        let at = self.order.partition_point(|&k| k < key);
        self.order.insert(at, key);
    }
    /// Removes the command at `position` in angle order, as [`select`] names it (so taking
    /// it needs no search; policies break ties by `seq`, never by position).
    pub fn take(&mut self, position: usize) -> Pending {
        let slot = self.order.remove(position) as u32;
        let taken = self.slots[slot as usize];
        self.free.push(slot);
        let end = taken.lba + taken.sectors as u64;
        self.starts[bucket(taken.lba)] -= 1;
        self.ends[bucket(end)] -= 1;
        // The commands that came after it in a stream lead their streams now (or follow
        // another queued command that ends where they start).
        if self.starts[bucket(end)] > 0 {
            for i in 0..self.order.len() {
                let other = self.order[i] as u32 as usize;
                if self.before[other] == slot {
                    let follower = self.slots[other];
                    self.before[other] = self.stream_before(&follower);
                }
            }
        }
        // The command taken may have been the earliest eligible or the oldest (usually both:
        // eligibility is arrival plus the controller's overhead): one pass finds the new ones.
        if self.first_eligible == Some(taken.eligible) || self.oldest_arrival == taken.arrival {
            let (mut eligible, mut arrival) = (Nanos::MAX, Nanos::MAX);
            for (_, p) in self.iter() {
                (eligible, arrival) = (eligible.min(p.eligible), arrival.min(p.arrival));
            }
            self.first_eligible = (eligible < Nanos::MAX).then_some(eligible);
            self.oldest_arrival = arrival;
        }
        if self.order.is_empty() {
            self.fewest_sectors = u32::MAX;
        }
        taken
    }
}

/// Position in angle order (for [`CommandQueue::take`]) of the command the policy serves
/// next if the arm is free at `t`, among those the controller has finished processing (ties
/// go to the earliest arrival). `None` if none is eligible yet. One loop per policy keeps
/// SPTF's loop, the simulator's hottest, branch-lean.
pub fn select(
    policy: QueuePolicy,
    queue: &CommandQueue,
    t: Nanos,
    pos: &HeadPos,
    mech: &Mechanics,
) -> Option<usize> {
    match policy {
        QueuePolicy::Fcfs => best_by(queue, t, |_| 0),
        QueuePolicy::Sstf => best_by(queue, t, |p| {
            pos.cylinder.abs_diff(p.target.cylinder) as Nanos
        }),
        QueuePolicy::Sptf => sptf(queue, t, pos, mech),
    }
}

/// SPTF by rotational distance. Whatever the seek, a command's first sector comes under the head
/// at a time congruent to its rotational distance from the head's angle now, so that distance is
/// a lower bound on its positioning time. Visiting commands by growing rotational distance (in
/// angle order from the head's angle, wrapping once), the search stops at the first whose bound
/// exceeds the best time found: every later one's does too (a tie needs an equal time, so a
/// strictly later bound rules it out). The same choice as costing every command, with fewer
/// costed.
fn sptf(queue: &CommandQueue, t: Nanos, pos: &HeadPos, mech: &Mechanics) -> Option<usize> {
    let angle_t = mech.angle_at(t);
    let rev = mech.rev() as u32;
    // Costs are delays from `t`: the same order as the times, with `t` out of the loop.
    let mut best = Best::new();
    let split = queue.order.partition_point(|&k| ((k >> 32) as u32) < angle_t);
    let (behind, ahead) = queue.order.split_at(split);
    // Two plain loops (a `for` over a chain of the halves tests which half on every item).
    // Each half knows its rotational distance as one addition to the angle: `angle − angle_t`
    // ahead of the head, `angle + rev − angle_t` behind it (wrapping arithmetic ahead).
    let halves = [(split, ahead, angle_t.wrapping_neg()), (0, behind, rev - angle_t)];
    'search: for (first, half, bias) in halves {
        for (i, &key) in half.iter().enumerate() {
            let (angle, slot) = ((key >> 32) as u32, key as u32 as usize);
            let rotation = angle.wrapping_add(bias);
            debug_assert!(rotation < rev);
            if rotation as Nanos > best.cost {
                break 'search;
            }
            let p = &queue.slots[slot];
            if p.eligible <= t {
                // Specialised for reads, which have their data (`data_ready` is `eligible`)
                // and no write settle: most queued commands when writes are cached.
                let delay = if p.write {
                    mech.delay(angle_t, pos, &p.target, true, p.data_ready.saturating_sub(t))
                } else {
                    debug_assert!(p.data_ready <= t);
                    mech.delay(angle_t, pos, &p.target, false, 0)
                };
                // A command that continues a queued one's stream waits for it (checked only
                // for a command that would be chosen: few are, and fewer follow another).
                if best.beats(delay, p.seq) && !queue.follows(slot, t) {
                    best.offer(first + i, p.seq, delay);
                }
            }
        }
    }
    best.index()
}

/// The least (cost, seq) offered so far.
struct Best {
    index: usize,
    cost: Nanos,
    seq: u64,
}

impl Best {
    fn new() -> Best {
        Best { index: usize::MAX, cost: Nanos::MAX, seq: u64::MAX }
    }
    /// Whether (cost, seq) is less than the best so far.
    #[inline(always)]
    fn beats(&self, cost: Nanos, seq: u64) -> bool {
        cost < self.cost || (cost == self.cost && seq < self.seq)
    }
    #[inline(always)]
    fn offer(&mut self, index: usize, seq: u64, cost: Nanos) {
        if self.beats(cost, seq) {
            (self.index, self.cost, self.seq) = (index, cost, seq);
        }
    }
    fn index(&self) -> Option<usize> {
        (self.index != usize::MAX).then_some(self.index)
    }
}

#[inline(always)]
fn best_by(queue: &CommandQueue, t: Nanos, cost: impl Fn(&Pending) -> Nanos) -> Option<usize> {
    let mut best = Best::new();
    for (position, (slot, p)) in queue.iter().enumerate() {
        if p.eligible <= t {
            let c = cost(p);
            if best.beats(c, p.seq) && !queue.follows(slot, t) {
                best.offer(position, p.seq, c);
            }
        }
    }
    best.index()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::device::Op;
    use crate::rng::Prng;

    /// The swap-by-swap insertion `insert_done` replaces: the reference order.
    fn insert_by_swaps(done: &mut Vec<Done>, entry: Done) {
        done.push(entry);
        let mut at = done.len() - 1;
        while at > 0 && done[at - 1].key() < entry.key() {
            done.swap(at - 1, at);
            at -= 1;
        }
    }

    #[test]
    fn completions_come_out_earliest_first_as_the_swap_walk_ordered_them() {
        let mut rng = Prng::derive(7, "insert_done", 0);
        for round in 0..200u64 {
            let (mut fast, mut reference) = (Vec::new(), Vec::new());
            for seq in 0..(round % 64) {
                // Few distinct times, so equal times (ordered by seq) are common, as when a
                // drained cache completes many commands at one instant.
                let entry = Done { time: rng.below(8) * 1000, seq, id: seq + 100 };
                insert_done(&mut fast, entry);
                insert_by_swaps(&mut reference, entry);
                if rng.below(4) == 0 {
                    assert_eq!(fast.pop(), reference.pop());
                }
            }
            assert_eq!(fast, reference, "round {round}");
            assert!(fast.windows(2).all(|w| w[0].key() > w[1].key()), "descending: {fast:?}");
        }
    }

    fn parked(seq: u64, wait: Wait) -> Parked {
        let command = Command { id: seq, op: Op::Write, sector: seq * 8, sectors: 8 };
        Parked { command, seq, arrival: seq, wait }
    }

    #[test]
    fn unparking_takes_one_kind_in_parked_order_and_keeps_the_rest_in_theirs() {
        let waits = [Wait::Flush, Wait::BehindFlush, Wait::Space, Wait::Flush, Wait::BehindFlush, Wait::Flush];
        let mut list: Vec<Parked> = waits.iter().enumerate().map(|(i, &w)| parked(i as u64, w)).collect();
        let mut taken = vec![parked(99, Wait::ReadAhead)];
        unpark(&mut list, Wait::Flush, &mut taken);
        assert_eq!(taken.iter().map(|p| p.seq).collect::<Vec<_>>(), [99, 0, 3, 5]);
        assert_eq!(list.iter().map(|p| p.seq).collect::<Vec<_>>(), [1, 2, 4]);
        taken.clear();
        unpark(&mut list, Wait::ReadAhead, &mut taken);
        assert!(taken.is_empty());
        assert_eq!(list.len(), 3);
    }
}
