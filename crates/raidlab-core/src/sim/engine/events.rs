//! The event queue: events ordered by (time, sequence), so ties resolve in insertion order and
//! a run is a pure function of its inputs.

use crate::time::Nanos;

#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum Event {
    /// A drive may have finished work: advance it.
    DriveWake { member: u32 },
    /// A scheduler asked to be polled (CFQ idling ended).
    SchedulerTimer { member: u32 },
    /// An open-loop arrival for a thread.
    Arrival { job: u32, thread: u32 },
    /// A controller acknowledges a host I/O absorbed by its cache.
    CacheAck { host_io: u32 },
    /// A member fails or is replaced.
    ArrayChange { kind: super::config::ArrayEventKind },
    /// A throttled rebuild may issue again.
    RebuildTimer,
    /// md's raid5d handles the stripe heads queued for it.
    Raid5d,
    /// raid5d's pass finished handling its heads: their member I/O leaves md.
    Raid5dDone,
    /// The host queue on a controller's logical drive asked to be polled (CFQ idling ended).
    ArrayQueueTimer,
    /// A block's data has crossed a controller's shared device bus.
    BlockDone { block: u64 },
    /// A controller's destage finished its parity work (XOR engine, cache memory).
    DestageDone { destage: u64 },
    /// The page cache's flusher wakes (kupdate, every dirty_writeback_centisecs).
    PageCacheTimer,
    /// A job's `startdelay` ended (or its stonewall group began): its threads start.
    JobStart { job: u32 },
    /// A thread's `thinktime` pause ended.
    Resume { job: u32, thread: u32 },
    /// Issue 24: a controller's BBU starts (true) or ends (false) its learn cycle.
    BbuLearn { start: bool },

    // ---- issue 24 §2: the raid5d of each inner raid4/5/6 array of a stack ----
    /// Inner array `set`'s raid5d handles its queued stripe heads.
    InnerRaid5d { set: u32 },
    /// Inner array `set`'s raid5d pass finished handling its heads.
    InnerRaid5dDone { set: u32 },
}

/// A min-heap of events keyed by `(time, sequence)` packed into one `u128`, so each comparison
/// is a single wide compare; four children per node halve the levels a binary heap walks. Keys
/// are unique (the sequence is), so the pop order is fully determined.
#[derive(Debug, Default)]
pub struct EventQueue {
    heap: Vec<Entry>,
    sequence: u64,
}

#[derive(Clone, Copy, Debug)]
struct Entry {
    key: u128,
    event: Event,
}

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
        EventQueue { heap: Vec::with_capacity(capacity), sequence: 0 }
    }

    /// Inlined: `kick` pushes a drive wake-up after most dispatches and completions.
    #[inline]
    pub fn push(&mut self, time: Nanos, event: Event) {
        self.sequence += 1;
        let entry = Entry { key: ((time as u128) << 64) | self.sequence as u128, event };
        let mut i = self.heap.len();
        self.heap.push(entry);
        while i > 0 {
            let parent = (i - 1) / ARITY;
            if self.heap[parent].key <= entry.key {
                break;
            }
            self.heap[i] = self.heap[parent];
            i = parent;
        }
        self.heap[i] = entry;
    }

    pub fn pop(&mut self) -> Option<(Nanos, Event)> {
        let last = self.heap.pop()?;
        let top = if self.heap.is_empty() {
            last
        } else {
            let top = self.heap[0];
            let len = self.heap.len();
            let mut i = 0;
            loop {
                let first = i * ARITY + 1;
                if first >= len {
                    break;
                }
                let child = first + least(&self.heap[first..(first + ARITY).min(len)]);
                if self.heap[child].key >= last.key {
                    break;
                }
                self.heap[i] = self.heap[child];
                i = child;
            }
            self.heap[i] = last;
            top
        };
        Some(((top.key >> 64) as Nanos, top.event))
    }

    pub fn peek_time(&self) -> Option<Nanos> {
        self.heap.first().map(|e| (e.key >> 64) as Nanos)
    }

    pub fn is_empty(&self) -> bool {
        self.heap.is_empty()
    }

    /// Events pushed so far (the run's event count).
    pub fn pushed(&self) -> u64 {
        self.sequence
    }
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
            4 => (0..3u32).prop_map(|member| Event::DriveWake { member }),
            1 => (0..3u32).prop_map(|member| Event::SchedulerTimer { member }),
            1 => (0..4u32).prop_map(|host_io| Event::CacheAck { host_io }),
        ]
    }

    fn step() -> impl Strategy<Value = Step> {
        prop_oneof![
            // Small delays so that equal times (ordered by sequence) are common.
            3 => (0..4u64, event()).prop_map(|(delay, event)| Step::Push { delay, event }),
            2 => Just(Step::Pop),
        ]
    }

    proptest! {
        /// The queue pops exactly what a sorted list of (time, sequence) keys would.
        #[test]
        fn pops_in_time_then_push_order(steps in prop::collection::vec(step(), 0..200)) {
            let mut queue = EventQueue::with_capacity(8);
            let mut reference: Vec<(Nanos, u64, Event)> = Vec::new();
            let mut now = 0;
            for step in steps {
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
            }
        }
    }
}
