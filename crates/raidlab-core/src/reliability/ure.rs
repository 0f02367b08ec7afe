//! Unrecoverable read errors (UREs) and latent sector errors (LSEs) met by a rebuild.
//!
//! - URE: the drive specification's unrecoverable bit error rate `u` is a probability per bit
//!   read, so reading B bytes meets at least one with probability 1 − (1 − u)^{8B} (Harris,
//!   "Why RAID 5 stops working in 2009", ZDNet 2007; Leventhal, "Triple-Parity RAID and Beyond",
//!   ACM Queue 7(11), 2009). The expected count is −8B·ln(1 − u)
//!   ≈ 8Bu, the intensity of the Poisson limit.
//! - LSE: latent defects arrive on each disk at rate r (Poisson) and a full scrub every S hours
//!   finds and repairs them. At a random time the age since the last scrub is uniform on [0, S],
//!   so the chance that a region holding a fraction f of a disk is clean is
//!   E[exp(−r·a·f)] = (1 − e^{−rSf})/(rSf), and the expected number of defects in it is rSf/2
//!   (after Elerath & Pecht, IEEE TC 58(3) 2009, and Schroeder, Damouras & Gill,
//!   FAST 2010). Without scrubbing defects accumulate over the mission: S is the mission time.
//!
//! Only reads with no redundancy left count: md records a bad block and carries on when a
//! recovery read fails (`drivers/md/raid5.c` `handle_failed_sync`), so each such error loses a
//! few KiB, not the array, unless the caller models a controller that aborts the rebuild.

use super::structure::FailureStructure;

/// P(at least one URE while reading `bytes`) at `uber` errors per bit read.
pub fn p_ure(bytes: f64, uber: f64) -> f64 {
    -libm::expm1(-ure_intensity(bytes, uber))
}

/// −ln P(no URE while reading `bytes`): the expected URE count in the Poisson limit, 8·B·u.
pub fn ure_intensity(bytes: f64, uber: f64) -> f64 {
    -8.0 * bytes * libm::log1p(-uber)
}

/// P(no latent defect in a fraction `fraction` of one disk) with defects arriving at
/// `rate_per_hour` and a scrub every `scrub_hours`.
pub fn p_no_latent(rate_per_hour: f64, scrub_hours: f64, fraction: f64) -> f64 {
    let x = rate_per_hour * scrub_hours * fraction;
    if x <= 0.0 {
        1.0
    } else if x < 1e-8 {
        1.0 - x / 2.0
    } else {
        -libm::expm1(-x) / x
    }
}

/// What the sector-error model needs: rates and the scrub interval (`None`: never scrubbed).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct SectorErrorModel {
    /// Unrecoverable bit error rate, errors per bit read.
    pub uber: f64,
    /// Latent defects per disk-hour (0: none).
    pub lse_per_hour: f64,
    /// Hours between full scrubs, or `None` for no scrubbing.
    pub scrub_hours: Option<f64>,
    /// Mission length (the scrub interval when there is no scrubbing).
    pub mission_hours: f64,
}

/// The sector-error exposure of one rebuild pass in one failed state.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct Exposure {
    /// Bytes read with no redundancy left.
    pub critical_bytes: f64,
    /// −ln P(no URE or LSE in those reads).
    pub fault_intensity: f64,
    /// Expected number of sector faults in those reads (UREs plus latent defects).
    pub expected_faults: f64,
    /// Data bytes lost per fault.
    pub bytes_per_fault: f64,
}

impl Exposure {
    /// P(at least one sector lost in this rebuild pass).
    pub fn p_fault(&self) -> f64 {
        -libm::expm1(-self.fault_intensity)
    }
}

/// The exposure of a full rebuild pass in failed state `failed`.
pub fn exposure(structure: &FailureStructure, failed: u64, model: &SectorErrorModel, reads: &mut Vec<(u32, f64)>) -> Exposure {
    structure.critical_reads(failed, reads);
    if reads.is_empty() {
        return Exposure::default();
    }
    let scrub = model.scrub_hours.unwrap_or(model.mission_hours);
    let mut critical_bytes = 0.0;
    let mut intensity = 0.0;
    let mut expected = 0.0;
    for &(member, bytes) in reads.iter() {
        critical_bytes += bytes;
        let used = structure.member_used_bytes(member).max(1) as f64;
        let fraction = (bytes / used).min(1.0);
        if model.lse_per_hour > 0.0 {
            intensity -= libm::log(p_no_latent(model.lse_per_hour, scrub, fraction));
            expected += model.lse_per_hour * scrub * fraction / 2.0;
        }
    }
    let ure = ure_intensity(critical_bytes, model.uber);
    Exposure {
        critical_bytes,
        fault_intensity: intensity + ure,
        expected_faults: expected + ure,
        bytes_per_fault: structure.bytes_lost_per_sector_fault(failed),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn harris_numbers() {
        // Harris's example (ZDNet 2007): 7 × 2 TB RAID5 reads 12 TB to rebuild; the values are
        // 1 − (1 − u)^{8B} computed by hand.
        let b = 12e12;
        assert!((p_ure(b, 1e-14) - 0.617).abs() < 0.001);
        assert!((p_ure(b, 1e-15) - 0.0915).abs() < 0.0005);
        assert!((p_ure(b, 1e-16) - 0.0095).abs() < 0.0001);
    }

    #[test]
    fn latent_exposure_matches_the_small_rate_limit() {
        // r = 0.95/y, weekly scrub: P(dirty disk) ≈ rS/2 ≈ 0.9 % (the small-rate limit of
        // (1 − e^{−rS})/(rS)).
        let r = 0.95 / 8760.0;
        let dirty = 1.0 - p_no_latent(r, 168.0, 1.0);
        assert!((dirty - 0.0091).abs() < 0.0002, "{dirty}");
    }
}
