//! md's throttle on its recovery (`md_do_sync`, drivers/md/md.c): after each window of sync
//! I/O it estimates its speed (KiB/s per device, from marks taken every 3 s over about 30 s,
//! with md's `+1` second). Above `speed_limit_max` it sleeps 500 ms; above `speed_limit_min` it
//! waits for its in-flight windows to drain whenever the members saw other I/O
//! (`is_mddev_idle`). raid4/5/6 recovery goes through stripe heads in bursts. The windows
//! themselves, failures and replacements are every kind's (`raid/rebuild.rs`).

use crate::sim::engine::Simulation;
use crate::sim::raid::rebuild::{SyncHeads, Wait, STRIPE_SECTORS, WINDOW_SECTORS};
use crate::time::Nanos;

/// md takes a speed mark every 3 s and keeps 10 (SYNC_MARK_STEP, SYNC_MARKS).
const MARK_STEP_NS: Nanos = 3_000_000_000;
const MARKS: usize = 10;
/// md sleeps this long when above speed_limit_max.
const OVER_MAX_SLEEP_NS: Nanos = 500_000_000;
/// md's idleness threshold in sectors (`is_mddev_idle`).
const IDLE_SECTORS: u64 = 64;

impl Simulation {
    /// md's current sync speed in KiB/s per device (md_do_sync's `currspeed`).
    pub(crate) fn rebuild_speed_kib_s(&mut self) -> u64 {
        let now = self.now;
        let state = self.raid.rebuild.as_mut().expect("rebuilding");
        let last = state.marks.back().expect("a mark").0;
        if now >= last + MARK_STEP_NS {
            state.marks.push_back((now, state.done_sectors));
            if state.marks.len() > MARKS {
                state.marks.pop_front();
            }
        }
        let (mark_time, mark_done) = *state.marks.front().expect("a mark");
        let elapsed_s = (now - mark_time) / 1_000_000_000;
        (state.done_sectors - mark_done) / 2 / (elapsed_s + 1) + 1
    }

    /// md's `is_mddev_idle`: did the members see more than 64 sectors of other I/O since the
    /// last time they were found busy? (md only moves its reference point when busy.)
    ///
    /// Modelling choice: foreground I/O in flight also counts as busy. md checks after every
    /// 128 KiB of *issued* sync I/O, and issuing blocks on the stripe cache and bitmap while
    /// foreground I/O runs, so on a loaded array completions land between checks; the engine
    /// issues windows in zero time and would otherwise never see them.
    pub(crate) fn rebuild_members_idle(&mut self) -> bool {
        let seen = self.raid.foreground_sectors;
        let state = self.raid.rebuild.as_ref().expect("rebuilding");
        let foreground_in_flight = self.raid.ops.len() as u64 > state.in_flight as u64;
        let state = self.raid.rebuild.as_mut().expect("rebuilding");
        if seen - state.foreground_seen > IDLE_SECTORS {
            state.foreground_seen = seen;
            return false;
        }
        !foreground_in_flight
    }

    /// Applies md's throttle; false when the rebuild must wait.
    pub(crate) fn md_rebuild_throttle(&mut self) -> bool {
        let in_flight = self.raid.rebuild.as_ref().expect("rebuilding").in_flight > 0;
        match self.md_sync_check(in_flight) {
            None => true,
            Some(wait) => {
                self.rebuild_wait(wait);
                false
            }
        }
    }

    /// md_do_sync's check after a window of issued sync I/O: None to go on, or what to wait for
    /// (`sync_in_flight`: sync requests are in flight, `recovery_active` > 0).
    pub(crate) fn md_sync_check(&mut self, sync_in_flight: bool) -> Option<Wait> {
        let speed = self.rebuild_speed_kib_s();
        let limits = self.config.rebuild;
        if speed <= limits.speed_limit_min {
            return None;
        }
        if speed > limits.speed_limit_max {
            return Some(Wait::Until(self.now + OVER_MAX_SLEEP_NS));
        }
        if !self.rebuild_members_idle() && sync_in_flight {
            return Some(Wait::Drain);
        }
        None
    }

    /// md raid4/5/6: the sync thread takes every free head, stripe by stripe, checking its speed
    /// after each window; raid5d handles the stripes it finds together and the member queue
    /// merges their reads into one request up to its `max_sectors`. A check that says wait ends
    /// the burst (the burst's stripes are in flight when md waits for them).
    pub(crate) fn rebuild_burst(&mut self, heads: SyncHeads) {
        let max_request = (self.config.queue_limits.max_sectors as u64 / STRIPE_SECTORS).max(1) * STRIPE_SECTORS;
        let state = self.raid.rebuild.as_ref().expect("rebuilding");
        let cap = ((heads.total - heads.used) * STRIPE_SECTORS).min(max_request).min(state.end_sector - state.next_sector);
        let mut burst = 0;
        let mut wait = None;
        loop {
            let state = self.raid.rebuild.as_mut().expect("rebuilding");
            debug_assert!(state.unchecked_sectors < WINDOW_SECTORS, "checked before the burst");
            let step = (cap - burst).min(WINDOW_SECTORS - state.unchecked_sectors);
            burst += step;
            state.unchecked_sectors += step;
            if burst == cap {
                break;
            }
            state.unchecked_sectors = 0;
            wait = self.md_sync_check(true);
            if wait.is_some() {
                break;
            }
        }
        let unchecked = self.raid.rebuild.as_ref().expect("rebuilding").unchecked_sectors;
        self.rebuild_issue(burst);
        // (rebuild_issue counts a request's sectors as issued since the last check; the burst
        // already did, check by check.)
        self.raid.rebuild.as_mut().expect("rebuilding").unchecked_sectors = unchecked;
        if let Some(wait) = wait {
            self.rebuild_wait(wait);
        }
    }
}
