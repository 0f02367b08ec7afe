//! The event queue: events ordered by (time, sequence), so ties resolve in insertion order and
//! a run is a pure function of its inputs.

use crate::sim::Nanos;
use std::cmp::Reverse;
use std::collections::BinaryHeap;

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
}

#[derive(Debug, Default)]
pub struct EventQueue {
    heap: BinaryHeap<Reverse<(Nanos, u64, Event)>>,
    sequence: u64,
}

impl EventQueue {
    pub fn with_capacity(capacity: usize) -> EventQueue {
        EventQueue { heap: BinaryHeap::with_capacity(capacity), sequence: 0 }
    }

    pub fn push(&mut self, time: Nanos, event: Event) {
        self.sequence += 1;
        self.heap.push(Reverse((time, self.sequence, event)));
    }

    pub fn pop(&mut self) -> Option<(Nanos, Event)> {
        self.heap.pop().map(|Reverse((time, _, event))| (time, event))
    }

    pub fn peek_time(&self) -> Option<Nanos> {
        self.heap.peek().map(|Reverse((time, _, _))| *time)
    }

    pub fn is_empty(&self) -> bool {
        self.heap.is_empty()
    }

    /// Events pushed so far (the run's event count).
    pub fn pushed(&self) -> u64 {
        self.sequence
    }
}
