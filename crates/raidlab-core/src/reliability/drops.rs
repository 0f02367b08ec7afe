//! Members dropped by the host's command timeout, as failures the chain counts.
//!
//! A drive meets unreadable sectors at the rate its reads and its unrecoverable bit error rate
//! give (errors per hour = 8 · bytes read per hour · UBER, the Poisson intensity of
//! [`super::ure::ure_intensity`]). Each takes the drive's recovery time: without error recovery
//! control a deep recovery of tens of seconds up to minutes, with ERC at most its limit
//! (`device::behaviour::Behaviour::recovery_ns`). When that exceeds the host's command timeout
//! (Linux: 30 s) md fails the member though the drive works: a drop. Drops are a Poisson
//! process of rate read errors × P(recovery > timeout) per drive, added to its failure rate;
//! the repair after a drop is the same rebuild (the drive is re-added or replaced and
//! recovered). What is left out: md's write-intent bitmap, which can make a re-added drive's
//! resync short, and drops during a rebuild's own reads (counted at the workload's rate).

use crate::device::behaviour::Behaviour;
use crate::time::Nanos;

/// The rates behind the drops, per drive.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct DropRates {
    /// Unreadable sectors met per drive-hour.
    pub read_errors_per_hour: f64,
    /// P(the drive's recovery outlasts the host's command timeout).
    pub p_recovery_over_timeout: f64,
    /// Members dropped per drive-hour: the product.
    pub drops_per_hour: f64,
}

/// Drops of a drive reading `read_bytes_per_hour` at `uber` errors per bit read, with
/// `behaviour`'s recovery against `timeout_ns` (0: no timeout, no drops).
pub fn timeout_drops(uber: f64, read_bytes_per_hour: f64, behaviour: &Behaviour, timeout_ns: Nanos) -> DropRates {
    let read_errors_per_hour = super::ure::ure_intensity(read_bytes_per_hour, uber);
    let p_recovery_over_timeout = if timeout_ns == 0 { 0.0 } else { behaviour.p_recovery_over(timeout_ns) };
    DropRates { read_errors_per_hour, p_recovery_over_timeout, drops_per_hour: read_errors_per_hour * p_recovery_over_timeout }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::device::params::ParamValues;

    #[test]
    fn no_erc_drops_and_erc_does_not() {
        let desktop = Behaviour::from_params(&[("erc_read_s".to_string(), 0.0)].into_iter().collect::<ParamValues>()).unwrap();
        // 55 TB a year at 1e-14: 8 · 6.28e9 B/h · 1e-14 = 5.02e-4 errors an hour.
        let bytes_per_hour = 55e12 / 8760.0;
        let d = timeout_drops(1e-14, bytes_per_hour, &desktop, 30_000_000_000);
        assert!((d.read_errors_per_hour - 5.0228e-4).abs() < 1e-7, "{d:?}");
        assert!((d.drops_per_hour - 5.0228e-4 * 90.0 / 110.0).abs() < 1e-7, "{d:?}");
        let enterprise = timeout_drops(1e-14, bytes_per_hour, &Behaviour::default(), 30_000_000_000);
        assert_eq!(enterprise.drops_per_hour, 0.0);
    }
}
