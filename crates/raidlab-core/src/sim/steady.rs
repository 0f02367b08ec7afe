//! fio's steady-state detection (`ss`, `ss_dur`, `ss_ramp`; fio steadystate.c): after
//! `ss_ramp`, each second's IOPS or bandwidth joins a window of `ss_dur` seconds; once the
//! window is full, the job has reached steady state when
//! - `iops` / `bw`: the largest deviation of a second from the window's mean is at most the
//!   limit (as a percentage of the mean with `%`), or
//! - `iops_slope` / `bw_slope`: the least-squares slope of the window is at most the limit (as a
//!   percentage of the mean with `%`),
//!
//! and fio then ends the job. Here the run's 1 s series (all jobs together) is checked.

use crate::time::Nanos;

/// What `ss` measures.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum SteadyMetric {
    #[default]
    None,
    Iops,
    IopsSlope,
    Bw,
    BwSlope,
}

/// A job's steady-state criterion (fio `ss=METRIC:LIMIT[%]`, `ss_dur`, `ss_ramp`).
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct SteadyState {
    pub metric: SteadyMetric,
    pub limit: f64,
    /// The limit is a percentage of the window's mean.
    pub percent: bool,
    pub duration_ns: Nanos,
    pub ramp_ns: Nanos,
}

impl SteadyState {
    pub fn enabled(&self) -> bool {
        self.metric != SteadyMetric::None
    }

    fn slope(&self) -> bool {
        matches!(self.metric, SteadyMetric::IopsSlope | SteadyMetric::BwSlope)
    }

    /// Whether the window of per-second values (oldest first) meets the criterion; the window
    /// must hold `ss_dur` seconds.
    pub fn attained(&self, window: &[f64]) -> bool {
        let seconds = (self.duration_ns / 1_000_000_000).max(1) as usize;
        if !self.enabled() || window.len() < seconds {
            return false;
        }
        let values = &window[window.len() - seconds..];
        let n = values.len() as f64;
        let mean = values.iter().sum::<f64>() / n;
        let criterion = if self.slope() {
            // Least squares over x = 0..n-1 (fio steadystate.c steadystate_slope).
            let x_mean = (n - 1.0) / 2.0;
            let (mut sxy, mut sxx) = (0.0, 0.0);
            for (i, &y) in values.iter().enumerate() {
                let dx = i as f64 - x_mean;
                sxy += dx * (y - mean);
                sxx += dx * dx;
            }
            if sxx > 0.0 { (sxy / sxx).abs() } else { 0.0 }
        } else {
            values.iter().map(|&v| (v - mean).abs()).fold(0.0, f64::max)
        };
        let criterion = if self.percent {
            if mean <= 0.0 {
                return false;
            }
            100.0 * criterion / mean
        } else {
            criterion
        };
        criterion <= self.limit
    }

    /// Whether the metric is bandwidth (else IOPS).
    pub fn bandwidth(&self) -> bool {
        matches!(self.metric, SteadyMetric::Bw | SteadyMetric::BwSlope)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ss(metric: SteadyMetric, limit: f64) -> SteadyState {
        SteadyState { metric, limit, percent: true, duration_ns: 5_000_000_000, ramp_ns: 0 }
    }

    #[test]
    fn a_flat_window_is_steady_and_a_falling_one_is_not() {
        let flat = [100.0, 101.0, 99.0, 100.0, 100.0];
        let falling = [150.0, 130.0, 110.0, 90.0, 70.0];
        assert!(ss(SteadyMetric::Iops, 2.0).attained(&flat));
        assert!(!ss(SteadyMetric::Iops, 2.0).attained(&falling));
        assert!(ss(SteadyMetric::IopsSlope, 1.0).attained(&flat));
        // slope -20 per second on a mean of 110: 18 %.
        assert!(!ss(SteadyMetric::IopsSlope, 10.0).attained(&falling));
        assert!(ss(SteadyMetric::IopsSlope, 20.0).attained(&falling));
        assert!(!ss(SteadyMetric::Iops, 2.0).attained(&flat[..4]), "a window not yet full");
    }
}
