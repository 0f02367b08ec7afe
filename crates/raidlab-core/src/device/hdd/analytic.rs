//! Closed-form expectations from the same parameters the simulation uses, for tests and quick
//! estimates: mean seek over random cylinder pairs, and the expected QD1 random-read service
//! time (overhead + seek + half a revolution + transfer), the first-order disk model that
//! Ruemmler & Wilkes (IEEE Computer 1994) start from.

use super::drive::Hdd;
use crate::time::Nanos;

/// Bins for the LBA-weighted seek mean: fine enough that binning error is far below 0.1 %.
const SEEK_BINS: u32 = 512;

/// Expected QD1 random-read service time, split into its parts (all in ns).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Qd1Estimate {
    /// Controller overhead per read miss.
    pub overhead_ns: f64,
    /// Mean seek between two sectors drawn uniformly over the capacity (outer zones, holding
    /// more sectors per cylinder, are drawn more often than inner ones).
    pub seek_ns: f64,
    /// Mean seek between two uniformly drawn cylinders (the data-sheet definition).
    pub seek_uniform_cylinders_ns: f64,
    /// Half a revolution.
    pub rotation_ns: f64,
    /// Media transfer (track and cylinder switches included) plus the interface tail.
    pub transfer_ns: f64,
    /// The sum: what a uniformly random read at queue depth 1 takes on average.
    pub service_ns: f64,
}

impl Qd1Estimate {
    pub fn iops(&self) -> f64 {
        1e9 / self.service_ns
    }
}

impl Hdd {
    /// Mean seek time (ns) over two independent uniformly random cylinders.
    pub fn mean_seek_ns(&self) -> f64 {
        self.mech.seek_table.curve().mean_uniform_ns()
    }

    /// Expected service time of a uniformly random read of `sectors` at queue depth 1.
    pub fn expected_qd1_random_read(&self, sectors: u32) -> Qd1Estimate {
        assert!(sectors > 0);
        let overhead_ns = self.timing.overhead_read as f64;
        let seek_ns = self.lba_weighted_mean_seek_ns();
        let rotation_ns = self.mech.rev() as f64 / 2.0;
        let transfer_ns = self.mean_transfer_ns(sectors);
        Qd1Estimate {
            overhead_ns,
            seek_ns,
            seek_uniform_cylinders_ns: self.mean_seek_ns(),
            rotation_ns,
            transfer_ns,
            service_ns: overhead_ns + seek_ns + rotation_ns + transfer_ns,
        }
    }

    /// Sectors of the exposed capacity stored on each cylinder (0 past the last used one).
    fn cylinder_weights(&self) -> Vec<f64> {
        let geo = &self.mech.geo;
        let capacity = geo.capacity_sectors();
        let mut weights = vec![0.0; geo.cylinders() as usize];
        for zone in geo.zones() {
            let per_cylinder = geo.surfaces() as u64 * zone.spec.sectors_per_track as u64;
            for (k, c) in (zone.spec.first_cylinder..=zone.spec.last_cylinder).enumerate() {
                let first = zone.first_lba + k as u64 * per_cylinder;
                let used = capacity.saturating_sub(first).min(per_cylinder);
                weights[c as usize] = used as f64;
            }
        }
        weights
    }

    /// Mean seek between two sectors drawn uniformly over the capacity. Cylinders are grouped
    /// into equal-width bins: pairs in different bins use the distance between the bins'
    /// weighted centres, pairs within a bin the exact mean for a uniform band of that width.
    fn lba_weighted_mean_seek_ns(&self) -> f64 {
        let weights = self.cylinder_weights();
        let cylinders = weights.len() as u32;
        let bins = cylinders.min(SEEK_BINS);
        let width = cylinders.div_ceil(bins);
        let mut mass = vec![0.0; bins as usize];
        let mut centre = vec![0.0; bins as usize];
        for (c, &w) in weights.iter().enumerate() {
            let b = c / width as usize;
            mass[b] += w;
            centre[b] += w * c as f64;
        }
        let total: f64 = mass.iter().sum();
        for b in 0..bins as usize {
            centre[b] = if mass[b] > 0.0 {
                centre[b] / mass[b]
            } else {
                0.0
            };
        }
        let seek = self.mech.seek_table.curve();
        let within = within_band_mean_ns(width, |d| seek.nanos(d));
        let mut sum = 0.0;
        for i in 0..bins as usize {
            sum += mass[i] * mass[i] * within;
            for j in i + 1..bins as usize {
                let distance = (centre[i] - centre[j]).abs().round() as u32;
                sum += 2.0 * mass[i] * mass[j] * seek.nanos(distance) as f64;
            }
        }
        sum / (total * total)
    }

    /// Mean media + interface time of a read of `sectors` at a uniformly random start.
    fn mean_transfer_ns(&self, sectors: u32) -> f64 {
        let geo = &self.mech.geo;
        let capacity = geo.capacity_sectors() as f64;
        let rev = self.mech.rev() as f64;
        let surfaces = geo.surfaces() as f64;
        let n = sectors as f64;
        let mut mean = 0.0;
        for zone in geo.zones() {
            let used =
                (geo.capacity_sectors().saturating_sub(zone.first_lba)).min(zone.sectors) as f64;
            let spt = zone.spec.sectors_per_track as f64;
            let media = n * rev / spt;
            // Each of the n−1 gaps between sectors is a track boundary with probability 1/spt;
            // one in `surfaces` boundaries is a cylinder switch.
            let head_gap =
                self.switch_gap(self.mech.head_switch, zone.spec.track_skew_sectors, spt);
            let cyl_gap = self.switch_gap(
                self.mech.seek_table.curve().nanos(1),
                zone.spec.cylinder_skew_sectors,
                spt,
            );
            let gap = (1.0 - 1.0 / surfaces) * head_gap + cyl_gap / surfaces;
            let switches = (n - 1.0) / spt * gap;
            let tail =
                (self.timing.iface(1) as f64).max(self.timing.iface(sectors as u64) as f64 - media);
            mean += used / capacity * (media + switches + tail);
        }
        mean
    }

    /// Time from the end of one track to the first sector of the next: the skew, plus whole
    /// revolutions if the switch takes longer than the skew allows.
    fn switch_gap(&self, switch: Nanos, skew_sectors: u32, spt: f64) -> f64 {
        let rev = self.mech.rev() as f64;
        let skew = skew_sectors as f64 * rev / spt;
        let late = (switch as f64 - skew).max(0.0);
        skew + rev * (late / rev).ceil()
    }
}

/// Mean of `seek(|x − y|)` for x, y independent and uniform over a band of `width` cylinders.
fn within_band_mean_ns(width: u32, seek: impl Fn(u32) -> Nanos) -> f64 {
    let m = width as f64;
    (1..width)
        .map(|d| 2.0 * (m - d as f64) / (m * m) * seek(d) as f64)
        .sum()
}
