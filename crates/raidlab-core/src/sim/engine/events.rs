//! The event queue: events ordered by (time, sequence), so ties resolve in insertion order and
//! a run is a pure function of its inputs. Each event belongs to a room (its layer), which
//! declares it and handles it; `Simulation::handle` hands it over.

use crate::sim::block::BlockEvent;
use crate::sim::controller::ControllerEvent;
use crate::sim::host::HostEvent;
use crate::sim::md::MdEvent;
use crate::sim::pagecache::PageCacheEvent;
use crate::sim::raid::RaidEvent;
use crate::time::Nanos;
use std::cell::Cell;

#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub(crate) enum Event {
    Host(HostEvent),
    PageCache(PageCacheEvent),
    /// Failures and rebuilds, every RAID kind's.
    Raid(RaidEvent),
    Md(MdEvent),
    Controller(ControllerEvent),
    Block(BlockEvent),
}

// The queue moves events about on every push and pop: grouping them by room must not make
// them larger than the one-level enum they were (a tag and a u64).
const _: () = assert!(std::mem::size_of::<Event>() == 16);

/// The pending events, keyed by `(time, sequence)` packed into one `u128` (so each
/// comparison is a single wide compare). Keys are unique (the sequence is), so the pop order is
/// fully determined.
///
/// A run usually has a handful of events pending (the raid benchmarks average 7.5), so the
/// earliest ones are kept in a short vector sorted latest first (`near`): popping is taking
/// its last entry, and pushing is one step of an insertion sort from the end, where the next
/// events sit (raid5d's, pushed for now, land there at once). The 4-ary heap this replaced
/// cost about twice the instructions per event at that size (raid5 benchmark: ~210). Beyond
/// [`NEAR`] pending events the latest of them overflow into a 4-ary min-heap (`far`), so a run
/// with many (open-loop arrivals of many threads) pays a heap's logarithm rather than moving
/// long vectors. Invariant: every key in `far` is above every key in `near`, so the least key
/// is `near`'s last, or `far`'s root once `near` is empty.
#[derive(Debug, Default)]
pub struct EventQueue {
    near: Vec<Entry>,
    far: Vec<Entry>,
    sequence: u64,
}

#[derive(Clone, Copy, Debug)]
struct Entry {
    key: u128,
    event: Event,
}

/// Events kept sorted in `near` before the latest overflow into the heap.
const NEAR: usize = 16;

const ARITY: usize = 4;

/// Offset of the least key among up to [`ARITY`] siblings. A full set is compared as a
/// tournament of selects, which compile without branches: which sibling wins is a coin toss.
#[inline(always)]
fn least(siblings: &[Entry]) -> usize {
    if let [a, b, c, d] = siblings {
        let (ab, kab) = if b.key < a.key { (1, b.key) } else { (0, a.key) };
        let (cd, kcd) = if d.key < c.key { (3, d.key) } else { (2, c.key) };
        return if kcd < kab { cd } else { ab };
    }
    let mut best = 0;
    for (i, e) in siblings.iter().enumerate().skip(1) {
        if e.key < siblings[best].key {
            best = i;
        }
    }
    best
}

impl EventQueue {
    pub fn with_capacity(capacity: usize) -> EventQueue {
        EventQueue { near: Vec::with_capacity(NEAR + 1), far: Vec::with_capacity(capacity), sequence: 0 }
    }

    /// Forced inline (the bench profile's fat LTO kept it a call): `kick` pushes a drive
    /// wake-up after most dispatches and completions.
    #[inline(always)]
    pub fn push(&mut self, time: Nanos, event: Event) {
        self.sequence += 1;
        let entry = Entry { key: ((time as u128) << 64) | self.sequence as u128, event };
        if self.far.first().is_some_and(|root| root.key < entry.key) {
            heap_push(&mut self.far, entry);
            return;
        }
        // Insertion sort from the end: entries with lower keys move up one place. Walked as
        // pairs of cells (a slot and the one below it), whose indices need no bounds checks.
        self.near.push(entry);
        let cells = Cell::from_mut(self.near.as_mut_slice()).as_slice_of_cells();
        let mut at = cells.len() - 1;
        for pair in cells.windows(2).rev() {
            let below = pair[0].get();
            if below.key > entry.key {
                break;
            }
            pair[1].set(below);
            at -= 1;
        }
        cells[at].set(entry);
        if cells.len() > NEAR {
            self.overflow();
        }
    }

    /// `near` holds one event too many: its latest, below every key in `far`, becomes the
    /// heap's root. Out of line, as the heap's own steps are, to keep `push` short.
    #[cold]
    #[inline(never)]
    fn overflow(&mut self) {
        let latest = self.near.remove(0);
        heap_push(&mut self.far, latest);
    }

    #[inline]
    pub fn pop(&mut self) -> Option<(Nanos, Event)> {
        if self.near.is_empty() {
            self.refill();
        }
        let top = self.near.pop()?;
        Some(((top.key >> 64) as Nanos, top.event))
    }

    /// Moves the earliest events of `far` (up to half of [`NEAR`]) into the empty `near`, so
    /// that a queue back to a few events pops from the short vector again rather than from
    /// the heap (a run's end, far ahead, would otherwise keep the heap's root forever).
    #[inline(never)]
    fn refill(&mut self) {
        debug_assert!(self.near.is_empty());
        for _ in 0..self.far.len().min(NEAR / 2) {
            let next = heap_pop(&mut self.far).expect("counted");
            self.near.push(next);
        }
        // Popped earliest first; `near` is kept latest first.
        self.near.reverse();
    }

    pub fn peek_time(&self) -> Option<Nanos> {
        self.near.last().or(self.far.first()).map(|e| (e.key >> 64) as Nanos)
    }

    pub fn is_empty(&self) -> bool {
        self.near.is_empty() && self.far.is_empty()
    }

    /// Events pushed so far (the run's event count).
    pub fn pushed(&self) -> u64 {
        self.sequence
    }

    /// Panics unless `near` is sorted latest first, `far` is a heap, and every key in `far`
    /// is above every key in `near`.
    #[cfg(test)]
    fn check(&self) {
        assert!(self.near.len() <= NEAR);
        assert!(self.near.windows(2).all(|w| w[0].key > w[1].key), "near sorted latest first");
        assert!((1..self.far.len()).all(|i| self.far[(i - 1) / ARITY].key < self.far[i].key), "far a heap");
        if let (Some(latest), Some(root)) = (self.near.first(), self.far.first()) {
            assert!(latest.key < root.key, "far above near");
        }
    }
}

/// Adds `entry` to the 4-ary min-heap `heap`.
#[inline(never)]
fn heap_push(heap: &mut Vec<Entry>, entry: Entry) {
    let mut i = heap.len();
    heap.push(entry);
    while i > 0 {
        let parent = (i - 1) / ARITY;
        if heap[parent].key <= entry.key {
            break;
        }
        heap[i] = heap[parent];
        i = parent;
    }
    heap[i] = entry;
}

/// Takes the least entry of the 4-ary min-heap `heap`.
fn heap_pop(heap: &mut Vec<Entry>) -> Option<Entry> {
    let last = heap.pop()?;
    if heap.is_empty() {
        return Some(last);
    }
    let top = heap[0];
    let len = heap.len();
    let mut i = 0;
    loop {
        let first = i * ARITY + 1;
        if first >= len {
            break;
        }
        let child = first + least(&heap[first..(first + ARITY).min(len)]);
        if heap[child].key >= last.key {
            break;
        }
        heap[i] = heap[child];
        i = child;
    }
    heap[i] = last;
    Some(top)
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    /// One step of a random schedule: push an event at `now + delay`, or pop.
    #[derive(Clone, Debug)]
    enum Step {
        Push { delay: u64, event: Event },
        Pop,
    }

    fn event() -> impl Strategy<Value = Event> {
        prop_oneof![
            4 => (0..3u32).prop_map(|member| Event::Block(BlockEvent::DriveWake { member })),
            1 => (0..3u32).prop_map(|member| Event::Block(BlockEvent::SchedulerTimer { member })),
            1 => (0..4u32).prop_map(|host_io| Event::Host(HostEvent::CacheAck { host_io })),
        ]
    }

    fn step() -> impl Strategy<Value = Step> {
        prop_oneof![
            // Small delays so that equal times (ordered by sequence) are common.
            3 => (0..4u64, event()).prop_map(|(delay, event)| Step::Push { delay, event }),
            // Now and then one far ahead (as a run's end is), which overflows into the heap.
            1 => (1000..1004u64, event()).prop_map(|(delay, event)| Step::Push { delay, event }),
            3 => Just(Step::Pop),
        ]
    }

    proptest! {
        /// The queue pops exactly what a sorted list of (time, sequence) keys would, through
        /// the steps and then until it is empty.
        #[test]
        fn pops_in_time_then_push_order(steps in prop::collection::vec(step(), 0..300)) {
            let mut queue = EventQueue::with_capacity(8);
            let mut reference: Vec<(Nanos, u64, Event)> = Vec::new();
            let mut now = 0;
            let drain = std::iter::repeat_n(Step::Pop, steps.len());
            for step in steps.into_iter().chain(drain) {
                match step {
                    Step::Push { delay, event } => {
                        queue.push(now + delay, event);
                        reference.push((now + delay, queue.pushed(), event));
                    }
                    Step::Pop => {
                        reference.sort_by_key(|&(time, seq, _)| std::cmp::Reverse((time, seq)));
                        let expected = reference.pop().map(|(time, _, event)| (time, event));
                        prop_assert_eq!(queue.peek_time(), expected.map(|(time, _)| time));
                        prop_assert_eq!(queue.pop(), expected);
                        now = expected.map_or(now, |(time, _)| time);
                    }
                }
                prop_assert_eq!(queue.is_empty(), reference.is_empty());
                queue.check();
            }
        }
    }
}
