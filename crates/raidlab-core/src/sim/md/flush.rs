//! md's flush coalescing: host flushes (an fsync's empty REQ_PREFLUSH bio) at an md array.
//!
//! Linux 6.1 (drivers/md/md.c) keeps at most one flush of its own in flight per array:
//! - `md_flush_request` notes the request's arrival (`req_start`) and sleeps while a flush is in
//!   flight (`mddev->flush_bio`), unless a flush that started after it arrived has completed
//!   (`ktime_before(req_start, mddev->prev_flush_start)`): then it is done without a flush.
//!   Otherwise it becomes `flush_bio` and `submit_flushes` sends one empty REQ_PREFLUSH bio to
//!   every live member, noting the start (`mddev->start_flush`).
//! - When every member's flush has completed (`md_end_flush`), `md_submit_flush_data` sets
//!   `prev_flush_start` to that start, clears `flush_bio` and wakes the sleepers: those that
//!   arrived before the flush started complete with it; of the others (they arrived while it was
//!   in flight) the first starts the next flush, and it covers all of them, since they all
//!   arrived before it started.
//! So a flush covers the request that started it and every request that waited for the one
//! before it. raid1, raid10 and raid5 all send a REQ_PREFLUSH bio through `md_flush_request`
//! (raid1_make_request, raid10_make_request; raid5_make_request when `log_handle_flush_request`
//! has no journal or PPL to take it). A data bio with REQ_PREFLUSH waits the same way and then
//! goes on without the flag (`md_submit_flush_data` → `md_handle_request`, or at once when a
//! later-started flush covered it); the simulator's hosts send empty flushes only (fsync).
//!
//! A stack: the outer array's flush reaches each inner array as one flush at a time (the outer
//! waits for all of them before its next), so an inner array's coalescing never has two to
//! join, and the outer array's flush reaching every physical member is the whole effect.
//! A hardware controller's flushes do not come here (controller/front.rs: its cache answers them).

use crate::sim::engine::Simulation;
use crate::sim::raid::Owner;
use crate::time::Nanos;

/// One md array's flush state (`mddev->flush_bio` and the requests asleep in
/// `md_flush_request`).
#[derive(Default)]
pub(crate) struct MdFlushState {
    /// A flush is in flight to the members.
    in_flight: bool,
    /// When it started (`mddev->start_flush`).
    started_at: Nanos,
    /// Host flushes the in-flight flush completes: the one that started it and those that
    /// waited for the flush before it, in arrival order.
    covered: Vec<u32>,
    /// Host flushes that arrived while it was in flight: the next flush covers them.
    waiting: Vec<u32>,
    /// md flushes sent to the members, and host flushes they completed (the check's sums).
    flushes_sent: u64,
    host_flushes_done: u64,
}

impl MdFlushState {
    /// A host flush arrives at `now` (`md_flush_request`): whether it starts a flush now.
    /// One arriving while a flush is in flight waits for the next, even in the nanosecond the
    /// flush started: it came after it (md's `req_start` would be the later time), and a flush
    /// sent before a write completed does not make that write durable.
    fn arrive(&mut self, host_io: u32, now: Nanos) -> bool {
        if self.in_flight {
            assert!(!self.covered.is_empty(), "a flush in flight covers its own request");
            assert!(now >= self.started_at, "arrivals come in time order");
            self.waiting.push(host_io);
            return false;
        }
        assert!(self.covered.is_empty() && self.waiting.is_empty(), "nobody waits on an idle array");
        self.in_flight = true;
        self.started_at = now;
        self.covered.push(host_io);
        self.flushes_sent += 1;
        true
    }

    /// The in-flight flush completed on every member (`md_submit_flush_data`): the host
    /// flushes it covered go to `done`; returns whether the next flush starts for the waiters.
    fn complete(&mut self, now: Nanos, done: &mut Vec<u32>) -> bool {
        assert!(self.in_flight, "a flush completed that was not in flight");
        assert!(now >= self.started_at, "a flush completes after it started");
        assert!(!self.covered.is_empty(), "a flush covers at least the request that started it");
        done.clear();
        done.append(&mut self.covered);
        self.host_flushes_done += done.len() as u64;
        std::mem::swap(&mut self.covered, &mut self.waiting);
        self.in_flight = !self.covered.is_empty();
        if self.in_flight {
            self.flushes_sent += 1;
            self.started_at = now;
        }
        self.in_flight
    }

    /// Every host flush is covered by at most one md flush, and no md flush covers none.
    pub(crate) fn check(&self) {
        assert!(self.waiting.is_empty() || self.in_flight, "waiters only behind a flush in flight");
        assert_eq!(self.in_flight, !self.covered.is_empty(), "a flush in flight covers its starter");
        assert!(self.host_flushes_done >= self.flushes_sent - self.in_flight as u64, "every finished flush covered a host flush");
    }
}

impl Simulation {
    /// A host flush at an md array (`md_flush_request`): it starts a flush to every live
    /// member, or waits for the next one.
    pub(crate) fn md_flush_request(&mut self, host_io: u32) {
        if self.md.flush.arrive(host_io, self.now) {
            self.md_submit_flushes(host_io);
        }
    }

    /// `submit_flushes`: one flush to every live member (plan_flush), on behalf of the host
    /// flush that started it (its thread is the one the member schedulers see).
    fn md_submit_flushes(&mut self, host_io: u32) {
        let thread = self.host.ios.get(host_io).thread;
        self.raid.plan_scratch.clear();
        self.plan_flush();
        self.submit_planned(Owner::MdFlush, thread, true);
    }

    /// Every member finished the flush (`md_end_flush` → `md_submit_flush_data`): the next
    /// flush starts for the waiters, then the covered host flushes complete (a host thread
    /// that flushes again at once arrives after the next flush started, so it waits for the
    /// one after).
    pub(crate) fn md_flush_done(&mut self) {
        let mut done = std::mem::take(&mut self.md.flush_done_scratch);
        if self.md.flush.complete(self.now, &mut done) {
            let starter = self.md.flush.covered[0];
            self.md_submit_flushes(starter);
        }
        for &host_io in &done {
            self.host_complete(host_io);
        }
        done.clear();
        self.md.flush_done_scratch = done;
    }
}

#[cfg(test)]
mod tests {
    use super::MdFlushState;

    /// The rule as a slow reference, over (start, end) times of md's flushes in order: a
    /// request at time `a` is covered by the first flush that starts after `a`; with none, it
    /// starts one when the last ends if that is still in flight at `a`, else at `a` itself.
    fn reference(arrivals: &[u64], duration: u64) -> (u64, Vec<u64>) {
        let mut flushes: Vec<(u64, u64)> = Vec::new();
        let mut completions = Vec::new();
        for &a in arrivals {
            let end = match flushes.iter().find(|&&(start, _)| start > a) {
                Some(&(_, end)) => end,
                None => {
                    let start = flushes.last().map_or(a, |&(_, end)| if end > a { end } else { a });
                    flushes.push((start, start + duration));
                    start + duration
                }
            };
            completions.push(end);
        }
        (flushes.len() as u64, completions)
    }

    /// Drives MdFlushState with the same arrivals, a flush taking `duration`.
    fn modelled(arrivals: &[u64], duration: u64) -> (u64, Vec<u64>) {
        let mut state = MdFlushState::default();
        let mut completions = vec![0; arrivals.len()];
        let mut end_at: Option<u64> = None;
        let mut done = Vec::new();
        let mut next = 0;
        loop {
            // Arrivals before the in-flight flush's end go first; one at its end comes after
            // the completion, as a thread the completion woke would.
            if next < arrivals.len() && end_at.map_or(true, |end| arrivals[next] < end) {
                let now = arrivals[next];
                if state.arrive(next as u32, now) {
                    end_at = Some(now + duration);
                }
                next += 1;
            } else if let Some(end) = end_at {
                let again = state.complete(end, &mut done);
                for &id in &done {
                    completions[id as usize] = end;
                }
                end_at = again.then_some(end + duration);
            } else {
                break;
            }
            state.check();
        }
        (state.flushes_sent, completions)
    }

    #[test]
    fn coalescing_matches_the_reference_on_random_arrivals() {
        let mut seed = 0x5eed_u64;
        for case in 0..500 {
            let count = 1 + case % 40;
            let mut arrivals = Vec::new();
            let mut t = 0;
            for _ in 0..count {
                seed = seed.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
                t += (seed >> 33) % 30;
                arrivals.push(t);
            }
            let duration = 1 + case as u64 % 25;
            assert_eq!(modelled(&arrivals, duration), reference(&arrivals, duration), "case {case}: {arrivals:?}");
        }
    }

    #[test]
    fn a_lone_flush_is_one_md_flush_and_overlapping_ones_share_the_next() {
        // One at 0 (flush 0-10); three during it share one flush (10-20); one after is alone.
        let (sent, completions) = modelled(&[0, 2, 5, 9, 25], 10);
        assert_eq!(sent, 3);
        assert_eq!(completions, vec![10, 20, 20, 20, 35]);
    }
}
