//! Where each I/O of a job goes: block sizes, sequential cursors and random distributions.
//!
//! Random offsets are block-aligned over the job's region. Skewed distributions draw a rank
//! (0 = hottest) and scatter ranks over the region with a fixed bijection, as fio hashes its
//! zipf/pareto ranks (fio `lib/zipf.c`) so hot blocks are not all adjacent.

use super::workload::{Distribution, Job};
use crate::rng::Prng;

/// A job's region on the target, in bytes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Region {
    pub start_bytes: u64,
    pub bytes: u64,
    /// Size of each of the job's files (sysbench splits the region into equal files).
    pub file_bytes: u64,
}

impl Region {
    /// The job's region clipped to a target of `capacity_bytes`; `None` if it is empty.
    pub fn of(job: &Job, capacity_bytes: u64) -> Option<Region> {
        let start_bytes = job.offset_bytes;
        if start_bytes >= capacity_bytes {
            return None;
        }
        let room = capacity_bytes - start_bytes;
        let bytes = if job.size_bytes == 0 { room } else { job.size_bytes.min(room) };
        let align = job.block_align_bytes.max(512);
        let file_bytes = bytes / job.files as u64 / align * align;
        if file_bytes < job.max_block_bytes() {
            return None;
        }
        Some(Region { start_bytes, bytes: file_bytes * job.files as u64, file_bytes })
    }
}

/// Picks a block size by weight.
pub fn block_size(job: &Job, rng: &mut Prng) -> u64 {
    if job.block_sizes.len() == 1 {
        return job.block_sizes[0].0;
    }
    let total: u64 = job.block_sizes.iter().map(|&(_, w)| w as u64).sum();
    let mut pick = rng.below(total);
    for &(bytes, weight) in &job.block_sizes {
        if pick < weight as u64 {
            return bytes;
        }
        pick -= weight as u64;
    }
    unreachable!("pick below the total weight")
}

/// A random block-aligned offset (bytes from the region start) for an I/O of `bytes`.
pub fn random_offset(job: &Job, region: &Region, bytes: u64, rng: &mut Prng, zipf: &mut Option<Zipf>) -> u64 {
    let align = job.block_align_bytes;
    let slots = (region.bytes - bytes) / align + 1;
    let rank = match job.distribution {
        Distribution::Uniform => return rng.below(slots) * align,
        Distribution::Zipf { theta } => {
            let sampler = zipf.get_or_insert_with(|| Zipf::new(slots, theta));
            sampler.sample(rng) - 1
        }
        Distribution::Pareto { h } => {
            // Power law: the fraction of the region reached is u^(1/h) (h in (0,1)).
            let fraction = libm::pow(rng.unit_f64(), 1.0 / h);
            ((fraction * slots as f64) as u64).min(slots - 1)
        }
        Distribution::Normal { stddev_pct } => {
            let centre = slots as f64 / 2.0;
            let value = centre + rng.normal() * stddev_pct / 100.0 * slots as f64;
            return (value.max(0.0) as u64).min(slots - 1) * align;
        }
    };
    scatter(rank, slots) * align
}

/// A fixed bijection of 0..n that spreads neighbouring ranks apart.
fn scatter(rank: u64, n: u64) -> u64 {
    const MULTIPLIERS: [u64; 4] = [0x9e37_79b9_7f4a_7c15 | 1, 2_654_435_761, 40_503, 7];
    let multiplier = MULTIPLIERS.iter().map(|&m| m % n.max(1)).find(|&m| m != 0 && gcd(m, n) == 1).unwrap_or(1);
    ((rank as u128 * multiplier as u128 + (n / 3) as u128) % n as u128) as u64
}

fn gcd(mut a: u64, mut b: u64) -> u64 {
    while b != 0 {
        (a, b) = (b, a % b);
    }
    a
}

/// Zipf over ranks 1..=n with exponent theta, by rejection-inversion (Hörmann & Derflinger,
/// "Rejection-inversion to generate variates from monotone discrete distributions", ACM TOMACS
/// 6(3), 1996): O(1) per sample for any n.
#[derive(Clone, Debug)]
pub struct Zipf {
    n: f64,
    exponent: f64,
    h_integral_x1: f64,
    h_integral_n: f64,
    s: f64,
}

impl Zipf {
    pub fn new(n: u64, exponent: f64) -> Zipf {
        assert!(n >= 1 && exponent > 0.0);
        let mut zipf = Zipf { n: n as f64, exponent, h_integral_x1: 0.0, h_integral_n: 0.0, s: 0.0 };
        zipf.h_integral_x1 = zipf.h_integral(1.5) - 1.0;
        zipf.h_integral_n = zipf.h_integral(n as f64 + 0.5);
        zipf.s = 2.0 - zipf.h_integral_inverse(zipf.h_integral(2.5) - zipf.h(2.0));
        zipf
    }

    pub fn sample(&mut self, rng: &mut Prng) -> u64 {
        loop {
            let u = self.h_integral_n + rng.unit_f64() * (self.h_integral_x1 - self.h_integral_n);
            let x = self.h_integral_inverse(u);
            let k = (x + 0.5).floor().clamp(1.0, self.n);
            if k - x <= self.s || u >= self.h_integral(k + 0.5) - self.h(k) {
                return k as u64;
            }
        }
    }

    fn h(&self, x: f64) -> f64 {
        libm::exp(-self.exponent * libm::log(x))
    }

    fn h_integral(&self, x: f64) -> f64 {
        let log_x = libm::log(x);
        expm1_over_x((1.0 - self.exponent) * log_x) * log_x
    }

    fn h_integral_inverse(&self, x: f64) -> f64 {
        let t = (x * (1.0 - self.exponent)).max(-1.0);
        libm::exp(log1p_over_x(t) * x)
    }
}

/// (e^x - 1)/x, continuous at 0.
fn expm1_over_x(x: f64) -> f64 {
    if x.abs() > 1e-8 { libm::expm1(x) / x } else { 1.0 + x / 2.0 }
}

/// ln(1 + x)/x, continuous at 0.
fn log1p_over_x(x: f64) -> f64 {
    if x.abs() > 1e-8 { libm::log1p(x) / x } else { 1.0 - x / 2.0 }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn zipf_rank_one_has_the_right_share() {
        // For theta = 1.2 over 1000 ranks, P(rank 1) = 1 / H(1000, 1.2).
        let harmonic: f64 = (1..=1000).map(|k| 1.0 / (k as f64).powf(1.2)).sum();
        let mut zipf = Zipf::new(1000, 1.2);
        let mut rng = Prng::new(5);
        let n = 50_000;
        let ones = (0..n).filter(|_| zipf.sample(&mut rng) == 1).count();
        let expected = n as f64 / harmonic;
        assert!((ones as f64 - expected).abs() < 0.05 * expected, "{ones} vs {expected}");
    }

    #[test]
    fn scatter_is_a_bijection() {
        for n in [1u64, 2, 7, 12, 1000, 1024] {
            let mut seen: Vec<u64> = (0..n).map(|r| scatter(r, n)).collect();
            seen.sort_unstable();
            assert_eq!(seen, (0..n).collect::<Vec<_>>());
        }
    }
}
