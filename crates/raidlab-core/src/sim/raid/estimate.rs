//! The estimated duration of a rebuild the run ended before finishing.

use crate::device::AnyDrive;
use crate::sim::engine::{ControllerConfig, Simulation};
use crate::time::Nanos;

impl Simulation {
    /// Extrapolates each unfinished rebuild over the rebuilt drive's zones. A rebuilt sector
    /// costs the media's time to pass under the head (a revolution per track, plus the track's
    /// share of the skews that rotate the next track's first sector: about twice as long on the
    /// inner tracks as on the outer) plus a
    /// share of what else the rebuild waits for per request (command overhead, missed
    /// revolutions between requests, md's sync window), which does not depend on the zone. The
    /// second part is what the measured rate leaves after the media time of the sectors done;
    /// each zone still to come costs both, capped at md's `speed_limit_max`. A media-bound
    /// rebuild thus slows towards the inner tracks as the media does, and one bound by its
    /// requests keeps nearly its rate. A rebuild md held at `speed_limit_min` (foreground I/O:
    /// the measured rate within a quarter of it) runs at that limit whatever the zone: no
    /// estimate here.
    pub(crate) fn estimate_rebuilds(&mut self, end: Nanos) {
        let limits = self.config.rebuild;
        let md = matches!(self.config.controller, ControllerConfig::Md(_));
        for index in 0..self.results.rebuilds.len() {
            let rebuild = &self.results.rebuilds[index];
            if rebuild.end_ns.is_some() || rebuild.aborted_ns.is_some() || rebuild.done_sectors == 0 {
                continue;
            }
            let elapsed = end.saturating_sub(rebuild.start_ns) as f64;
            let member = &self.block.members[rebuild.member as usize];
            let AnyDrive::Hdd(hdd) = &member.drive else { continue };
            let sectors_per_ns = rebuild.done_sectors as f64 / elapsed.max(1.0);
            let min_limit = limits.speed_limit_min as f64 * 2.0 / 1e9;
            if md && sectors_per_ns <= 1.25 * min_limit {
                continue;
            }
            let floor_ns = if md { 1e9 / (limits.speed_limit_max as f64 * 2.0) } else { 0.0 };
            let (rev_ns, surfaces) = (hdd.geometry().rev_ns() as f64, hdd.geometry().surfaces() as f64);
            // (A rebuild started part-way, `start_sector`, has done the sectors after it.)
            let (offset, total) = (member.lba_offset, rebuild.total_sectors);
            let (start, done) = (rebuild.start_sector, rebuild.start_sector + rebuild.done_sectors);
            // Sectors of [from, to) (member sectors) in each zone, with the media time of one.
            let spans = |from: u64, to: u64| -> Vec<(f64, f64)> {
                hdd.geometry()
                    .zones()
                    .iter()
                    .map(|z| {
                        let (a, b) = (z.first_lba.max(offset + from), (z.first_lba + z.sectors).min(offset + to));
                        // A track streams in a revolution, plus the skew the next track's
                        // first sector is rotated by (a head switch per track, a cylinder
                        // switch per cylinder).
                        let spt = z.spec.sectors_per_track as f64;
                        let skew = ((surfaces - 1.0) * z.spec.track_skew_sectors as f64 + z.spec.cylinder_skew_sectors as f64) / surfaces;
                        (b.saturating_sub(a) as f64, rev_ns * (spt + skew) / spt / spt)
                    })
                    .collect()
            };
            let done_spans = spans(start, done);
            let sectors_done: f64 = done_spans.iter().map(|&(n, _)| n).sum();
            if sectors_done <= 0.0 {
                continue;
            }
            let media_done: f64 = done_spans.iter().map(|&(n, media)| n * media).sum();
            let other_ns = ((elapsed - media_done) / sectors_done).max(0.0);
            let left: f64 = spans(done, total).iter().map(|&(n, media)| n * (other_ns + media).max(floor_ns)).sum();
            self.results.rebuilds[index].estimated_duration_ns = Some((elapsed + left).round() as Nanos);
        }
    }
}
