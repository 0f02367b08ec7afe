//! The tagged command queue: commands waiting for the mechanism, and the policies that pick
//! the next one (FCFS, SSTF by cylinder distance, SPTF by the model's own positioning time:
//! Seltzer, Chen & Ousterhout 1990; Jacobson & Wilkes 1991; Worthington, Ganger & Patt 1994).

use super::geometry::Location;
use super::mech::{HeadPos, Mechanics, Target};
use super::spec::QueuePolicy;
use crate::device::Command;
use crate::sim::Nanos;

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

/// Commands waiting for the mechanism, with the earliest eligibility time cached because the
/// event loop asks for it several times per command.
#[derive(Clone, Debug, Default)]
pub struct CommandQueue {
    items: Vec<Pending>,
    first_eligible: Option<Nanos>,
}

impl CommandQueue {
    pub fn with_capacity(capacity: usize) -> CommandQueue {
        CommandQueue {
            items: Vec::with_capacity(capacity),
            first_eligible: None,
        }
    }
    pub fn len(&self) -> usize {
        self.items.len()
    }
    pub fn is_empty(&self) -> bool {
        self.items.is_empty()
    }
    pub fn items(&self) -> &[Pending] {
        &self.items
    }
    /// Earliest time any queued command becomes eligible.
    pub fn first_eligible(&self) -> Option<Nanos> {
        debug_assert_eq!(
            self.first_eligible,
            self.items.iter().map(|p| p.eligible).min()
        );
        self.first_eligible
    }
    pub fn push(&mut self, pending: Pending) {
        self.first_eligible = Some(
            self.first_eligible
                .map_or(pending.eligible, |e| e.min(pending.eligible)),
        );
        self.items.push(pending);
    }
    /// Removes command `index` (order is not kept: policies order by `seq`, not position).
    pub fn take(&mut self, index: usize) -> Pending {
        let taken = self.items.swap_remove(index);
        if self.first_eligible == Some(taken.eligible) {
            self.first_eligible = self.items.iter().map(|p| p.eligible).min();
        }
        taken
    }
}

/// Index of the command the policy serves next if the arm is free at `t`, among those the
/// controller has finished processing (ties go to the earliest arrival). `None` if none is
/// eligible yet. One loop per policy keeps SPTF's loop, the simulator's hottest, branch-lean.
pub fn select(
    policy: QueuePolicy,
    queue: &[Pending],
    t: Nanos,
    pos: &HeadPos,
    mech: &Mechanics,
) -> Option<usize> {
    match policy {
        QueuePolicy::Fcfs => best_by(queue, t, |_| 0),
        QueuePolicy::Sstf => best_by(queue, t, |p| {
            pos.cylinder.abs_diff(p.target.cylinder) as Nanos
        }),
        QueuePolicy::Sptf => {
            // Every candidate is costed in full: with the seek tabulated that is a few integer
            // operations, cheaper than branching on a bound whose outcome is a coin toss.
            let angle_t = mech.angle_at(t);
            best_by(queue, t, |p| {
                mech.positioned(t, angle_t, pos, &p.target, p.write, p.data_ready)
            })
        }
    }
}

#[inline(always)]
fn best_by(queue: &[Pending], t: Nanos, cost: impl Fn(&Pending) -> Nanos) -> Option<usize> {
    let (mut best, mut best_cost, mut best_seq) = (usize::MAX, Nanos::MAX, u64::MAX);
    for (i, p) in queue.iter().enumerate() {
        if p.eligible > t {
            continue;
        }
        let c = cost(p);
        if c < best_cost || (c == best_cost && p.seq < best_seq) {
            (best, best_cost, best_seq) = (i, c, p.seq);
        }
    }
    (best != usize::MAX).then_some(best)
}
