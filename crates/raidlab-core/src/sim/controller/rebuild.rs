//! A controller's rebuild priority: the share of member commands the rebuild gets under load.
//! The windows, failures and replacements are every kind's (`raid/rebuild.rs`).

use crate::sim::engine::Simulation;
use crate::sim::raid::rebuild::Wait;

impl Simulation {
    /// Controller rebuild priority: under load the controller interleaves rebuild and host
    /// commands so that about `pct`% of the member commands it issues are the rebuild's (the
    /// "rebuild rate" of LSI/Adaptec-class controllers). A window may go out once the host has
    /// had (100 − pct)/pct times the window's member commands since the last one.
    pub(crate) fn rebuild_hw_share(&mut self) -> bool {
        let pct = self.config.rebuild.rebuild_priority.clamp(1, 100) as u64;
        let foreground = self.raid.foreground_ios;
        let devices = self.block.members.len() as u64;
        let state = self.raid.rebuild.as_mut().expect("rebuilding");
        let owed = devices * (100 - pct) / pct;
        if pct == 100 || foreground - state.foreground_ios_seen >= owed || self.raid.ops.len() as u64 <= state.in_flight as u64 {
            state.foreground_ios_seen = foreground;
            return true;
        }
        state.wait = Wait::Credit;
        false
    }
}
