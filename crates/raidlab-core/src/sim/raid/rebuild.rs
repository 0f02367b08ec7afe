//! Failures, replacements and rebuilds during a run, for every RAID kind: a member fails (data
//! is lost once the array cannot serve), a replacement is recovered sequentially in sync
//! windows, each window planned as member I/O, and the replacement is in sync below the first
//! window still in flight. How fast the windows go out is the kind's rule: md throttles itself
//! (`md/resync.rs`), a hardware controller gives the rebuild a share of the member commands
//! (`controller/rebuild.rs`).

use super::RaidEvent;
use crate::sim::engine::config::{ArrayEventKind, ControllerConfig};
use crate::sim::engine::events::Event;
use crate::sim::engine::results::{DataLoss, RebuildResult};
use crate::sim::engine::Simulation;
use crate::sim::raid::Owner;
use crate::layout::Level;
use crate::plan::{Planner, RmwLevel};
use crate::time::Nanos;
use std::collections::VecDeque;

/// md's sync window: 32 pages (md.c `window`), 128 KiB: md_do_sync checks its speed after
/// every window's worth of sync I/O it issued.
pub(crate) const WINDOW_SECTORS: u64 = 256;
/// raid1 and raid10 sync requests: `RESYNC_BLOCK_SIZE` (64 KiB, raid1-10.c) each, one r1bio /
/// r10bio of `RESYNC_PAGES` pages per call of raid1_sync_request / raid10_sync_request.
pub(crate) const MIRROR_SYNC_REQUEST_SECTORS: u64 = 128;
/// raid1 lets `RESYNC_DEPTH` (32, raid1.c) sync requests into a barrier bucket at once
/// (raise_barrier waits while `barrier[idx] >= RESYNC_DEPTH`).
pub(crate) const RAID1_RESYNC_DEPTH: u32 = 32;
/// raid10's `RESYNC_DEPTH` is 32 MiB of sync requests (raid10.c: `32*1024*1024 /
/// RESYNC_BLOCK_SIZE` = 512), checked the same way by its raise_barrier.
pub(crate) const RAID10_RESYNC_DEPTH: u32 = 512;
/// Everything else (raid4/5/6 and hardware controllers): 128 KiB requests, this many at once.
pub(crate) const PARITY_WINDOWS_IN_FLIGHT: u32 = 8;
pub(crate) const OTHER_WINDOWS_IN_FLIGHT: u32 = 16;
/// raid4/5/6 recovery under md: `raid5_sync_request` takes one stripe head per 4 KiB stripe
/// (STRIPE_SECTORS); when none is free it waits in `raid5_get_active_stripe` (until fewer than
/// 3/4 of the heads are active, `is_inactive_blocked`) and then sleeps one jiffy
/// (`schedule_timeout_uninterruptible(1)`, "make sure we don't swamp the stripe cache"), so the
/// sync thread refills the cache in bursts. raid5d issues a burst's reads under its plug, where
/// the member queue merges the 4 KiB reads up to its `max_sectors`.
pub(crate) const STRIPE_SECTORS: u64 = 8;
/// One jiffy: Debian's kernels are built with HZ=250 (CONFIG_HZ_250), 4 ms.
pub(crate) const JIFFY_NS: Nanos = 4_000_000;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Wait {
    None,
    /// Until every in-flight window has completed (md: `recovery_active == 0`).
    Drain,
    /// Until a time (md's 500 ms sleep).
    Until(Nanos),
    /// Until the host has had its share of member commands (controllers).
    Credit,
    /// md raid4/5/6: until a stripe head is free (fewer than 3/4 of them active).
    Head,
}

/// The stripe heads md's raid4/5/6 recovery holds: `total` (`stripe_cache_size`), `used` by
/// sync requests in flight. Recovery's heads are counted apart from host writes' (the cache is
/// shared in md; not modelled).
#[derive(Clone, Copy, Debug)]
pub(crate) struct SyncHeads {
    pub(crate) total: u64,
    pub(crate) used: u64,
}

pub struct RebuildState {
    pub(crate) target: u32,
    pub(crate) next_sector: u64,
    /// Where this rebuild started (`RebuildConfig::start_ppm`); `done_sectors` count from here.
    pub(crate) start_sector: u64,
    pub(crate) end_sector: u64,
    pub(crate) done_sectors: u64,
    pub(crate) in_flight: u32,
    pub(crate) max_in_flight: u32,
    /// Sectors per sync request.
    pub(crate) request_sectors: u64,
    /// Sync sectors issued since md_do_sync last checked its speed.
    pub(crate) unchecked_sectors: u64,
    pub(crate) wait: Wait,
    pub(crate) marks: VecDeque<(Nanos, u64)>,
    pub(crate) foreground_seen: u64,
    /// First sectors of the windows in flight, in issue (so sector) order.
    pub(crate) windows: VecDeque<u64>,
    pub(crate) result_index: usize,
    pub(crate) last_window_issued: Nanos,
    /// Host member commands completed when the controller last let a window out.
    pub(crate) foreground_ios_seen: u64,
    /// md raid4/5/6: sync requests are stripe heads, issued in bursts (see STRIPE_SECTORS).
    pub(crate) heads: Option<SyncHeads>,
}

impl RebuildState {
    pub fn progress_pct(&self) -> f64 {
        100.0 * (self.start_sector + self.done_sectors) as f64 / self.end_sector.max(1) as f64
    }

    /// The replacement is in sync below this member sector: every window before it is done.
    fn in_sync_below(&self) -> u64 {
        self.windows.front().copied().unwrap_or(self.next_sector)
    }
}

impl Simulation {
    pub(crate) fn raid_event(&mut self, event: RaidEvent) {
        match event {
            RaidEvent::ArrayChange { kind } => self.array_change(kind),
            RaidEvent::RebuildTimer => self.rebuild_timer(),
        }
    }

    pub(crate) fn schedule_timeline(&mut self) {
        for event in self.config.timeline.clone() {
            self.events.push(event.at_ns, Event::Raid(RaidEvent::ArrayChange { kind: event.kind }));
        }
        if self.config.rebuild.spare {
            if let Some(&member) = self.raid.failed.first() {
                self.events.push(0, Event::Raid(RaidEvent::ArrayChange { kind: ArrayEventKind::Replace(member) }));
            }
        }
    }

    pub(crate) fn array_change(&mut self, kind: ArrayEventKind) {
        match kind {
            ArrayEventKind::Fail(member) => self.fail_member(member),
            ArrayEventKind::Replace(member) => self.replace_member(member),
            ArrayEventKind::LatentError(member) => self.latent_error(member),
        }
        self.note_phase();
    }

    fn fail_member(&mut self, member: u32) {
        if self.recorder_data_loss() {
            return;
        }
        if self.raid.rebuild.as_ref().is_some_and(|r| r.target == member) {
            self.abort_rebuild();
            return;
        }
        if self.raid.failed.contains(&member) {
            return;
        }
        self.raid.failed.push(member);
        let array = self.raid.planner.array().clone();
        if array.loses_data(&self.raid.failed) {
            let failed = self.raid.failed.clone();
            self.results.data_loss = Some(DataLoss { at_ns: self.now, failed });
            self.stop_ns = self.now;
            return;
        }
        self.replan();
        if self.config.rebuild.spare && self.raid.rebuild.is_none() {
            self.replace_member(member);
        }
    }

    /// The replacement being rebuilt failed: md's recovery of it is lost and its slot is failed
    /// again (it never left `failed`), so the array serves degraded until another replace. The
    /// windows still in flight complete as stale I/O (`rebuild_window_done` tells them by index).
    fn abort_rebuild(&mut self) {
        let state = self.raid.rebuild.take().expect("rebuilding");
        self.results.rebuilds[state.result_index].aborted_ns = Some(self.now);
        self.raid.planner.set_recovering(None);
        self.replan();
    }

    fn replace_member(&mut self, member: u32) {
        if !self.raid.failed.contains(&member) || self.raid.rebuild.is_some() || self.recorder_data_loss() {
            return;
        }
        self.drive_replaced(member);
        let end_sector = self.raid.planner.array().member_used_sectors(member);
        // A sampled rebuild starts part-way, on a 1 MiB boundary (a multiple of every sync
        // request and stripe size).
        let start_sector = (end_sector as u128 * self.config.rebuild.start_ppm as u128 / 1_000_000) as u64 / 2048 * 2048;
        let (request_sectors, max_in_flight) = self.sync_request_shape();
        self.results.rebuilds.push(RebuildResult {
            member,
            start_ns: self.now,
            end_ns: None,
            done_sectors: 0,
            total_sectors: end_sector,
            start_sector,
            estimated_duration_ns: None,
            aborted_ns: None,
        });
        self.raid.planner.set_recovering(Some((member, start_sector)));
        self.raid.rebuild = Some(RebuildState {
            target: member,
            next_sector: start_sector,
            start_sector,
            end_sector,
            done_sectors: 0,
            in_flight: 0,
            max_in_flight,
            request_sectors,
            // md checks after a window's worth; the first request here checks at once, as
            // the engine has always done for 128 KiB windows.
            unchecked_sectors: WINDOW_SECTORS,
            wait: Wait::None,
            marks: VecDeque::from([(self.now, 0)]),
            foreground_seen: self.raid.foreground_sectors,
            windows: VecDeque::with_capacity(max_in_flight.min(64) as usize),
            result_index: self.results.rebuilds.len() - 1,
            last_window_issued: self.now,
            foreground_ios_seen: self.raid.foreground_ios,
            heads: self.sync_heads(),
        });
        self.rebuild_pump();
    }

    /// Sync request size and how many md lets out at once, per personality.
    fn sync_request_shape(&self) -> (u64, u32) {
        // (In a stack the failed member's inner array runs the recovery: its personality's shape.)
        let array = self.raid.planner.array().rebuild_array();
        match (self.config.controller, array.level()) {
            (ControllerConfig::Md(_), Level::Raid1) => (MIRROR_SYNC_REQUEST_SECTORS, RAID1_RESYNC_DEPTH),
            (ControllerConfig::Md(_), Level::Raid10) => (MIRROR_SYNC_REQUEST_SECTORS, RAID10_RESYNC_DEPTH),
            // Bounded by the stripe heads instead (SyncHeads).
            (ControllerConfig::Md(_), _) if array.stripe(0).is_some() => (WINDOW_SECTORS, u32::MAX),
            _ if array.stripe(0).is_some() => (WINDOW_SECTORS, PARITY_WINDOWS_IN_FLIGHT),
            _ => (WINDOW_SECTORS, OTHER_WINDOWS_IN_FLIGHT),
        }
    }

    /// md raid4/5/6 recovers through stripe heads; mirrors and controllers do not.
    fn sync_heads(&self) -> Option<SyncHeads> {
        match self.config.controller {
            ControllerConfig::Md(md) if self.raid.planner.array().rebuild_array().stripe(0).is_some() => {
                Some(SyncHeads { total: md.stripe_cache_size as u64, used: 0 })
            }
            _ => None,
        }
    }

    fn recorder_data_loss(&self) -> bool {
        self.results.data_loss.is_some()
    }

    /// Rebuilds the planner for the current failed set (md's `degraded` changes).
    fn replan(&mut self) {
        let array = self.raid.planner.array().clone();
        let rmw = match self.config.controller {
            ControllerConfig::Md(md) => md.rmw_level,
            ControllerConfig::Hardware(_) => RmwLevel::Enable,
        };
        self.raid.planner = Planner::new(array, &self.raid.failed, rmw).expect("failure set checked");
        let recovering = self.raid.rebuild.as_ref().map(|r| (r.target, r.in_sync_below()));
        self.raid.planner.set_recovering(recovering);
    }

    pub(crate) fn note_phase(&mut self) {
        let learning = self.hw.controller.as_ref().is_some_and(|c| c.learning);
        let name = match (self.raid.rebuild.is_some(), self.raid.failed.is_empty(), learning) {
            (true, _, false) => "rebuilding",
            (false, true, false) => "optimal",
            (false, false, false) => "degraded",
            // A controller's BBU learn cycle is a phase of its own.
            (true, _, true) => "rebuilding, bbu-learn",
            (false, true, true) => "bbu-learn",
            (false, false, true) => "degraded, bbu-learn",
        };
        self.results.phase(self.now, name);
    }

    pub(crate) fn rebuild_pct(&self) -> f64 {
        match (&self.raid.rebuild, self.results.rebuilds.last()) {
            (Some(state), _) => state.progress_pct(),
            (None, Some(done)) if done.end_ns.is_some() => 100.0,
            _ => 0.0,
        }
    }

    /// Issues rebuild windows while md's throttle allows.
    pub(crate) fn rebuild_pump(&mut self) {
        loop {
            let Some(state) = self.raid.rebuild.as_mut() else { return };
            if state.next_sector >= state.end_sector || state.in_flight >= state.max_in_flight {
                return;
            }
            match state.wait {
                Wait::Until(t) if self.now < t => return,
                Wait::Drain if state.in_flight > 0 => return,
                Wait::Head => {
                    let heads = state.heads.expect("md parity recovery");
                    if heads.used * 4 >= heads.total * 3 {
                        return;
                    }
                    // The blocking get returned: one stripe, then a jiffy's sleep.
                    state.wait = Wait::Until(self.now + JIFFY_NS);
                    self.events.push(self.now + JIFFY_NS, Event::Raid(RaidEvent::RebuildTimer));
                    self.rebuild_issue(STRIPE_SECTORS);
                    continue;
                }
                _ => state.wait = Wait::None,
            }
            // (Wait::Credit is re-checked by the throttle on every foreground completion.)
            // md_do_sync checks once per window of issued sync sectors (`last_check + window`).
            if state.unchecked_sectors >= WINDOW_SECTORS {
                if !self.kind_rebuild_throttle() {
                    return;
                }
                self.raid.rebuild.as_mut().expect("rebuilding").unchecked_sectors = 0;
            }
            let state = self.raid.rebuild.as_ref().expect("rebuilding");
            match state.heads {
                None => self.rebuild_issue(state.request_sectors),
                Some(heads) if heads.used == heads.total => {
                    self.raid.rebuild.as_mut().expect("rebuilding").wait = Wait::Head;
                    return;
                }
                Some(heads) => self.rebuild_burst(heads),
            }
        }
    }

    pub(crate) fn rebuild_wait(&mut self, wait: Wait) {
        if let Wait::Until(t) = wait {
            self.events.push(t, Event::Raid(RaidEvent::RebuildTimer));
        }
        self.raid.rebuild.as_mut().expect("rebuilding").wait = wait;
    }

    /// Issues a sync request of up to `sectors` at the next sector.
    pub(crate) fn rebuild_issue(&mut self, sectors: u64) {
        let now = self.now;
        let state = self.raid.rebuild.as_mut().expect("rebuilding");
        let sector = state.next_sector;
        let sectors = sectors.min(state.end_sector - sector);
        if let Some(heads) = state.heads.as_mut() {
            heads.used += sectors.div_ceil(STRIPE_SECTORS);
            assert!(heads.used <= heads.total, "recovery holds more stripe heads than the cache has");
        }
        state.next_sector += sectors;
        state.unchecked_sectors += sectors;
        state.in_flight += 1;
        state.windows.push_back(sector);
        state.last_window_issued = now;
        let target = state.target;
        self.raid.planner
            .plan_rebuild(target, sector, sectors, &mut self.raid.plan_scratch)
            .expect("rebuild windows lie within the member");
        let rebuild = state.result_index as u32;
        let length = u32::try_from(sectors).expect("a sync window is far below 2 TiB");
        self.submit_planned(Owner::Rebuild(sector, length, rebuild), crate::sim::block::RESYNC_THREAD, false);
    }

    #[inline(never)]
    pub(crate) fn rebuild_window_done(&mut self, start: u64, sectors: u64, rebuild: u32) {
        // A window of an aborted rebuild completes for nothing (another may be running now).
        let Some(state) = self.raid.rebuild.as_mut().filter(|s| s.result_index == rebuild as usize) else { return };
        state.in_flight -= 1;
        state.done_sectors += sectors;
        if let Some(heads) = state.heads.as_mut() {
            heads.used -= sectors.div_ceil(STRIPE_SECTORS);
        }
        let at = state.windows.iter().position(|&s| s == start).expect("a window in flight");
        state.windows.remove(at);
        self.raid.planner.set_recovering(Some((state.target, state.in_sync_below())));
        let index = state.result_index;
        self.results.rebuilds[index].done_sectors = state.done_sectors;
        if state.start_sector + state.done_sectors >= state.end_sector {
            let target = state.target;
            self.results.rebuilds[index].end_ns = Some(self.now);
            self.raid.rebuild = None;
            self.raid.failed.retain(|&m| m != target);
            self.replan();
            self.note_phase();
            if let Some(&next) = self.raid.failed.first() {
                if self.config.rebuild.spare {
                    self.replace_member(next);
                    self.note_phase();
                }
            }
        } else {
            self.rebuild_pump();
        }
        let pct = self.rebuild_pct();
        self.results.close_windows(self.now, pct);
    }

    #[inline(never)]
    pub(crate) fn rebuild_timer(&mut self) {
        self.rebuild_pump();
    }
}
