//! The host's block-layer queue on a hardware controller's logical drive: the host sees one
//! device (e.g. /dev/sda on a PERC), so its scheduler (CFQ's per-process queues, deadline's
//! sorted lists) runs here, once for the array, and `nr_requests` and the driver's per-device
//! queue depth (`host_queue_depth`, the SCSI `cmd_per_lun`/`queue_depth`) bound what the
//! controller is given. The members behind the controller queue in its firmware instead.

use crate::sim::block::sched::{AnyScheduler, BlockRequest, QueueLimits, Scheduler, SchedulerKind};
use crate::time::Nanos;
use std::collections::VecDeque;

pub struct ArrayQueue {
    pub scheduler: AnyScheduler,
    nr_requests: usize,
    /// Host commands the driver may have in the controller at once.
    depth: u32,
    /// Host I/Os dispatched to the controller and not completed.
    pub in_driver: u32,
    /// Driver commands outstanding (a merged dispatch is one command for several host I/Os),
    /// bounded by `depth`; each host I/O's command and each command's host I/Os left.
    commands: u32,
    command_of: std::collections::HashMap<u64, u64>,
    left: std::collections::HashMap<u64, u32>,
    next_command: u64,
    /// Requests waiting for a tag (`nr_requests` full), in arrival order.
    overflow: VecDeque<BlockRequest>,
    pub timer_at: Option<Nanos>,
    merged: Vec<u64>,
}

impl ArrayQueue {
    /// `depth` 0: no per-device limit beyond `nr_requests`.
    pub fn new(kind: SchedulerKind, limits: QueueLimits, depth: u32) -> ArrayQueue {
        ArrayQueue {
            scheduler: AnyScheduler::new(kind, limits),
            nr_requests: limits.nr_requests as usize,
            depth: if depth == 0 { u32::MAX } else { depth },
            in_driver: 0,
            commands: 0,
            command_of: Default::default(),
            left: Default::default(),
            next_command: 0,
            overflow: VecDeque::new(),
            timer_at: None,
            merged: Vec::new(),
        }
    }

    /// Requests holding a tag: queued ones (after merging) and the driver's commands (a bio
    /// merged into a request takes no tag of its own).
    fn tagged(&self) -> usize {
        self.scheduler.queued() + self.commands as usize
    }

    /// Queues a host I/O: into the scheduler if a tag is free, else it waits for one.
    pub fn insert(&mut self, now: Nanos, request: BlockRequest) {
        if self.tagged() >= self.nr_requests || !self.overflow.is_empty() {
            self.overflow.push_back(request);
        } else {
            self.scheduler.insert(now, request);
        }
    }

    fn refill(&mut self, now: Nanos) {
        while !self.overflow.is_empty() && self.tagged() < self.nr_requests {
            let request = self.overflow.pop_front().expect("not empty");
            self.scheduler.insert(now, request);
        }
    }

    /// Appends to `out` the host I/O ids the driver sends to the controller now.
    pub fn dispatch(&mut self, now: Nanos, out: &mut Vec<u64>) {
        self.refill(now);
        while self.commands < self.depth {
            self.merged.clear();
            if self.scheduler.dispatch(now, &mut self.merged).is_none() {
                break;
            }
            self.in_driver += self.merged.len() as u32;
            let command = self.next_command;
            self.next_command += 1;
            self.commands += 1;
            self.left.insert(command, self.merged.len() as u32);
            for &id in &self.merged {
                self.command_of.insert(id, command);
            }
            out.extend_from_slice(&self.merged);
            self.refill(now);
        }
    }

    /// Whether host I/O `id` went to the controller through this queue and is still there.
    pub fn holds(&self, id: u64) -> bool {
        self.command_of.contains_key(&id)
    }

    /// Host I/O `id` the controller had completed.
    pub fn completed(&mut self, now: Nanos, id: u64, thread: u32) {
        assert!(self.in_driver > 0, "completion of a host I/O the driver did not send");
        self.in_driver -= 1;
        let command = self.command_of.remove(&id).expect("a host I/O the driver sent");
        let left = self.left.get_mut(&command).expect("its command");
        *left -= 1;
        if *left == 0 {
            self.left.remove(&command);
            self.commands -= 1;
        }
        self.scheduler.completed(now, thread, true);
    }

    pub fn check(&self) {
        assert!(self.tagged() <= self.nr_requests, "more tags than nr_requests");
        assert!(self.commands <= self.depth, "more driver commands than the device's queue depth");
        assert_eq!(self.commands as usize, self.left.len(), "commands counted");
        assert_eq!(self.in_driver as usize, self.command_of.len(), "host I/Os in the driver counted");
    }
}
