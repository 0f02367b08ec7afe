//! The block layer's part of a run: each member's scheduler dispatching to its drive, the
//! drive's wake-ups, and its completions handed to the RAID kind.

use super::BlockEvent;
use crate::device::Drive;
use crate::sim::block::sched::Scheduler;
use crate::sim::engine::events::Event;
use crate::sim::engine::Simulation;

impl Simulation {
    pub(crate) fn block_event(&mut self, event: BlockEvent) {
        match event {
            BlockEvent::DriveWake { member } => self.drive_wake(member),
            BlockEvent::SchedulerTimer { member } => {
                let m = &mut self.block.members[member as usize];
                if m.timer_at == Some(self.now) {
                    m.timer_at = None;
                    self.kick(member);
                }
            }
        }
    }

    /// Dispatches what the member's scheduler releases and re-arms its wake-ups.
    pub(crate) fn kick(&mut self, member: u32) {
        let now = self.now;
        let mut budget = self.kind_command_budget();
        let m = &mut self.block.members[member as usize];
        m.dispatch(now, &mut budget);
        let next = m.drive.next_event();
        if next != m.wake_at {
            if let Some(time) = next {
                assert!(time >= now, "drive event in the past");
                self.events.push(time, Event::Block(BlockEvent::DriveWake { member }));
            }
            m.wake_at = next;
        }
        // Only CFQ sets timers: the others are not asked after every dispatch.
        if !m.scheduler.sets_timers() {
            debug_assert_eq!(m.scheduler.next_timer(), None, "a scheduler that sets no timers");
            return;
        }
        let timer = m.scheduler.next_timer();
        if timer != m.timer_at {
            if let Some(time) = timer {
                self.events.push(time.max(now), Event::Block(BlockEvent::SchedulerTimer { member }));
            }
            m.timer_at = timer.map(|t| t.max(now));
        }
    }

    pub(crate) fn drive_wake(&mut self, member: u32) {
        if self.block.members[member as usize].wake_at != Some(self.now) {
            return; // stale: the drive's next event moved
        }
        self.block.members[member as usize].wake_at = None;
        let count = self.block.members[member as usize].advance(self.now);
        for index in 0..count {
            // Read in place: completing a block never advances a drive (only this wake-up
            // does), so the member's list of finished ids stays as it is until the loop ends.
            let id = self.block.members[member as usize].done[index];
            if !self.block.members[member as usize].faulted.is_empty() {
                if let Some(fault) = self.block.members[member as usize].fault_of(id) {
                    self.block_faulted(member, id, fault);
                    continue;
                }
            }
            self.kind_block_done(member, id);
        }
        self.kick(member);
        // A controller's total command limit: commands freed here may start on other drives.
        if count > 0 && self.kind_shares_commands() {
            for other in 0..self.block.members.len() as u32 {
                if other != member && self.block.members[other as usize].has_waiting() {
                    self.kick(other);
                }
            }
        }
    }

}
