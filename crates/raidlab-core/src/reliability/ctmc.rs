//! The exact continuous-time Markov chain over failed sets, with exponential failures and repairs.
//!
//! States are the failed sets that still hold all data, lumped by [`FailureStructure::canonical`]
//! (by count where loss depends only on the count, by failures per group where the copy sets
//! partition the members, otherwise up to the layout's ring symmetries; a lumping by a symmetry
//! group of the chain is exact: Kemeny & Snell, *Finite Markov Chains*, 1960, §6.3). Transitions:
//! - a live member fails at rate λ: into the larger set, or into the absorbing loss state when
//!   the layout says the larger set loses data;
//! - repairs by [`RepairPolicy`]: `Md`, md's one recovery pass that rebuilds every missing member
//!   and restarts when another fails (`md.c` `md_do_sync`), so the whole set is
//!   repaired at rate μ; `Serial`, one member at a time at total rate μ (μ_j = μ, Chen et al.
//!   1994); `Parallel`, each failed member independently at rate μ (μ_j = jμ).
//!
//! MTTDL is the expected absorption time from "none failed": the linear system (−Q_T)·t = 1,
//! solved by state reduction with the Grassmann–Taksar–Heyman rule (Grassmann, Taksar & Heyman,
//! Operations Research 33(5), 1985): every diagonal is recomputed as a sum of positive rates, so
//! no subtraction loses the tiny λ against the large μ. P(loss within T) is the loss entry of
//! exp(Q·T), computed by uniformization (Jensen 1953; Grassmann 1977; Reibman & Trivedi,
//! Computers & OR 15(1), 1988): only sums of non-negative terms, so probabilities of 1e-12 keep
//! their relative accuracy. When q·T is large, the walk settles into the quasi-stationary
//! distribution (Darroch & Seneta, J. Appl. Prob. 4, 1967) long before T, after which the
//! absorbed mass grows geometrically; the remaining Poisson sums then have closed forms.
//!
//! Sector errors: entering a degraded state (re)starts md's recovery pass, which reads the
//! state's critical bytes; with probability [`SectorFaults::p_fault`] it meets an unreadable
//! sector. For P(any sector lost) that branch of every transition is absorbed; for the array it
//! only adds expected bytes lost (md records a bad block), unless the caller models a controller
//! that aborts the rebuild.
//!
//! Large raid10 arrays have too many survivable sets to enumerate; the chain keeps every state up
//! to a depth that fits [`STATE_BUDGET`] and treats a failure beyond it either as a loss
//! (pessimistic, the reported value) or as not happening (optimistic), so the caller can report
//! both bounds.

use std::collections::HashMap;

use super::structure::FailureStructure;
use super::RepairPolicy;
use crate::bits::members;
use crate::error::{Error, ErrorKind, Result};

/// The most lumped states the exact chain keeps.
pub const STATE_BUDGET: usize = 1200;

/// Rates of the exponential model, per hour.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct ChainRates {
    pub failure_per_hour: f64,
    pub repair_per_hour: f64,
    pub policy: RepairPolicy,
}

/// The sector-error exposure of the rebuild pass that starts when the chain enters a state: md
/// (re)starts its recovery pass on every change of the failed set and reads the critical bytes
/// again, so the fault is decided on entry (a transition into state j goes to "sector lost" with
/// probability `p_fault` of j).
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct SectorFaults {
    /// P(at least one unreadable sector among the pass's critical reads).
    pub p_fault: f64,
    /// Expected data bytes lost by the pass.
    pub expected_bytes: f64,
}

/// The chain as the solvers see it: effective transitions, absorption and byte rewards.
struct Effective {
    rows: Vec<Vec<(usize, f64)>>,
    absorb: Vec<f64>,
    bytes_per_hour: Vec<f64>,
}

/// The lumped chain.
#[derive(Clone, Debug)]
pub struct Chain {
    masks: Vec<u64>,
    depth: Vec<u32>,
    failures: Vec<Vec<(usize, f64)>>,
    repairs: Vec<Vec<(usize, f64)>>,
    loss: Vec<f64>,
    truncated: Vec<f64>,
    faults: Vec<SectorFaults>,
    depth_cap: Option<u32>,
    devices: u32,
    failure_rate: f64,
    fatal_depth: u32,
}

/// How failures beyond the depth cap count.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Truncation {
    /// As data loss: a lower bound on MTTDL, an upper bound on P(loss).
    AsLoss,
    /// As if they did not happen: the other bound.
    Suppressed,
}

/// What the mission computation absorbs besides data loss.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Absorbing {
    pub truncation: Truncation,
    /// Sector faults absorb too (for P(any sector lost), or when a URE aborts the rebuild).
    pub sector_faults: bool,
}

/// Result of a mission-time computation.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Mission {
    /// P(absorbed by the mission's end).
    pub p_absorbed: f64,
    /// Expected bytes lost to sector faults before absorption, over the mission.
    pub sector_bytes: f64,
    /// Uniformization steps taken with the full vector.
    pub steps: u64,
    /// Whether the tail came from the quasi-stationary closed form.
    pub extrapolated: bool,
}

fn merge(mut row: Vec<(usize, f64)>) -> Vec<(usize, f64)> {
    row.sort_unstable_by_key(|e| e.0);
    let mut merged: Vec<(usize, f64)> = Vec::with_capacity(row.len());
    for (j, rate) in row {
        match merged.last_mut() {
            Some(last) if last.0 == j => last.1 += rate,
            _ => merged.push((j, rate)),
        }
    }
    merged
}

impl Chain {
    /// Builds the chain. `sector_faults` gives the exposure of the rebuild pass of a failed set.
    pub fn build(
        structure: &FailureStructure,
        rates: ChainRates,
        mut sector_faults: impl FnMut(u64) -> SectorFaults,
        budget: usize,
    ) -> Result<Chain> {
        let n = structure.devices();
        let lambda = rates.failure_per_hour;
        let mu = rates.repair_per_hour;
        let all = super::structure::prefix_mask(n);
        let mut masks = vec![0u64];
        let mut depth = vec![0u32];
        let mut index: HashMap<u64, usize> = HashMap::from([(0u64, 0usize)]);
        let mut frontier = vec![0usize];
        let mut depth_cap = None;
        let mut d = 0u32;
        loop {
            let mut next: Vec<u64> = Vec::new();
            let mut seen: HashMap<u64, ()> = HashMap::new();
            for &i in &frontier {
                let s = masks[i];
                for m in members(all & !s) {
                    let t = s | (1u64 << m);
                    if structure.is_fatal(t) {
                        continue;
                    }
                    let c = structure.canonical(t);
                    if seen.insert(c, ()).is_none() {
                        next.push(c);
                    }
                }
            }
            if next.is_empty() {
                break;
            }
            if masks.len() + next.len() > budget {
                depth_cap = Some(d);
                break;
            }
            d += 1;
            frontier.clear();
            for c in next {
                index.insert(c, masks.len());
                frontier.push(masks.len());
                masks.push(c);
                depth.push(d);
            }
        }
        if let Some(cap) = depth_cap {
            if cap + 1 < structure.fatal_depth() {
                return Err(Error::new(
                    ErrorKind::InvalidConfig,
                    format!(
                        "this array loses data only after {} failures and has too many failure states on the way to solve exactly (at most {budget})",
                        structure.fatal_depth()
                    ),
                ));
            }
        }
        let states = masks.len();
        let mut chain = Chain {
            masks,
            depth,
            failures: Vec::with_capacity(states),
            repairs: Vec::with_capacity(states),
            loss: vec![0.0; states],
            truncated: vec![0.0; states],
            faults: vec![SectorFaults::default(); states],
            depth_cap,
            devices: n,
            failure_rate: lambda,
            fatal_depth: structure.fatal_depth(),
        };
        for i in 0..states {
            let s = chain.masks[i];
            let k = s.count_ones();
            let mut fail_row = Vec::new();
            for m in members(all & !s) {
                let t = s | (1u64 << m);
                if structure.is_fatal(t) {
                    chain.loss[i] += lambda;
                } else if let Some(&j) = index.get(&structure.canonical(t)) {
                    fail_row.push((j, lambda));
                } else {
                    chain.truncated[i] += lambda;
                }
            }
            let mut repair_row = Vec::new();
            if k > 0 {
                match rates.policy {
                    RepairPolicy::Md => repair_row.push((0, mu)),
                    RepairPolicy::Serial | RepairPolicy::Parallel => {
                        let each = if rates.policy == RepairPolicy::Serial { mu / k as f64 } else { mu };
                        for m in members(s) {
                            let j = index[&structure.canonical(s & !(1u64 << m))];
                            repair_row.push((j, each));
                        }
                    }
                }
                chain.faults[i] = sector_faults(s);
            }
            chain.failures.push(merge(fail_row));
            chain.repairs.push(merge(repair_row));
        }
        Ok(chain)
    }

    pub fn states(&self) -> usize {
        self.masks.len()
    }
    /// `Some(d)`: states with more than d failed members were cut (see [`Truncation`]).
    pub fn depth_cap(&self) -> Option<u32> {
        self.depth_cap
    }
    /// The representative failed set of each state (index 0: none failed).
    pub fn masks(&self) -> &[u64] {
        &self.masks
    }
    /// The rate of data loss out of each state.
    pub fn loss_rates(&self) -> &[f64] {
        &self.loss
    }

    /// The largest total rate out of any state (every absorption counted), per hour.
    pub fn max_exit_rate(&self) -> f64 {
        (0..self.states())
            .map(|i| {
                self.loss[i]
                    + self.truncated[i]
                    + self.failures[i].iter().chain(&self.repairs[i]).map(|e| e.1).sum::<f64>()
            })
            .fold(0.0, f64::max)
    }

    fn effective(&self, absorbing: Absorbing) -> Effective {
        let n = self.states();
        let mut rows = Vec::with_capacity(n);
        let mut absorb = Vec::with_capacity(n);
        let mut bytes_per_hour = Vec::with_capacity(n);
        for i in 0..n {
            let mut a = self.loss[i];
            if absorbing.truncation == Truncation::AsLoss {
                a += self.truncated[i];
            }
            let mut row = Vec::with_capacity(self.failures[i].len() + self.repairs[i].len());
            let mut bytes = 0.0;
            for &(j, rate) in self.failures[i].iter().chain(&self.repairs[i]) {
                let fault = self.faults[j];
                bytes += rate * fault.expected_bytes;
                if absorbing.sector_faults {
                    a += rate * fault.p_fault;
                    row.push((j, rate * (1.0 - fault.p_fault)));
                } else {
                    row.push((j, rate));
                }
            }
            rows.push(row);
            absorb.push(a);
            bytes_per_hour.push(bytes);
        }
        Effective { rows, absorb, bytes_per_hour }
    }

    /// Mean time to absorption from "none failed", in hours.
    pub fn mean_time_to_absorption(&self, absorbing: Absorbing) -> f64 {
        let n = self.states();
        let effective = self.effective(absorbing);
        let mut r = vec![0.0f64; n * n];
        let mut a = effective.absorb;
        let mut c = vec![1.0f64; n];
        for (i, row) in effective.rows.iter().enumerate() {
            for &(j, rate) in row {
                if j != i {
                    r[i * n + j] += rate;
                }
            }
        }
        // State reduction, deepest states first (GTH: out-rates are recomputed as sums).
        let mut nonzero: Vec<(usize, f64)> = Vec::with_capacity(n);
        for k in (1..n).rev() {
            nonzero.clear();
            let mut out = a[k];
            for j in 0..k {
                let rate = r[k * n + j];
                if rate > 0.0 {
                    nonzero.push((j, rate));
                    out += rate;
                }
            }
            if out <= 0.0 {
                continue;
            }
            for i in 0..k {
                let rik = r[i * n + k];
                if rik <= 0.0 {
                    continue;
                }
                let f = rik / out;
                for &(j, rkj) in &nonzero {
                    if j != i {
                        r[i * n + j] += f * rkj;
                    }
                }
                a[i] += f * a[k];
                c[i] += f * c[k];
            }
        }
        if a[0] > 0.0 {
            c[0] / a[0]
        } else {
            f64::INFINITY
        }
    }

    /// MTTDL in hours.
    pub fn mttdl_hours(&self, truncation: Truncation) -> f64 {
        self.mean_time_to_absorption(Absorbing { truncation, sector_faults: false })
    }

    /// The leading-order ("textbook", λ ≪ μ) MTTDL: the inverse of the rate of the shortest
    /// failure sequences that lose data, each intermediate failure arriving before the repair of
    /// the previous state. For k-of-N parity this is Π μ_j / Π (N − j)λ (Patterson, Gibson & Katz,
    /// SIGMOD 1988; Chen et al., ACM Computing Surveys 26(2), 1994); for 2-copy raid10 it is
    /// μ / (N·(N−1)·p·λ²) with p the second-failure loss fraction (for pairs p = 1/(N−1):
    /// the first failure at rate Nλ, a fatal second one at λ within the repair time).
    pub fn approx_mttdl_hours(&self) -> f64 {
        let flow = self.leading_flow();
        let d = self.fatal_depth;
        if d <= 1 {
            return 1.0 / self.loss[0];
        }
        let rate: f64 = (0..self.states())
            .filter(|&i| self.depth[i] == d - 1)
            .map(|i| flow[i] * self.loss[i] / self.repair_out(i))
            .sum();
        1.0 / rate
    }

    fn repair_out(&self, i: usize) -> f64 {
        self.repairs[i].iter().map(|e| e.1).sum()
    }

    /// Leading-order rate of reaching each state (depth ≥ 1) by failures alone, each before the
    /// repair of the state it leaves.
    fn leading_flow(&self) -> Vec<f64> {
        let n = self.states();
        let mut flow = vec![0.0f64; n];
        flow[0] = 1.0;
        for &(j, rate) in &self.failures[0] {
            flow[j] += rate;
        }
        for i in 1..n {
            let mu = self.repair_out(i);
            for &(j, rate) in &self.failures[i] {
                flow[j] += flow[i] * rate / mu;
            }
        }
        flow
    }

    /// With `depth` members failed (reached in the usual order, weighted by how likely each
    /// failed set is), the fraction of the next failures that lose data.
    pub fn next_failure_loss_fraction(&self, depth: u32) -> Option<f64> {
        if depth >= self.devices {
            return None;
        }
        let flow = self.leading_flow();
        let (mut lost, mut total) = (0.0, 0.0);
        for i in (0..self.states()).filter(|&i| self.depth[i] == depth) {
            lost += flow[i] * self.loss[i];
            total += flow[i] * (self.devices - depth) as f64 * self.failure_rate;
        }
        (total > 0.0).then(|| lost / total)
    }

    /// P(absorbed within `hours`) and the expected bytes lost to sector faults before absorption.
    /// (Bytes are rewards on transitions, i.e. rates Σ_j r_ij·bytes_j in the state left.)
    pub fn mission(&self, hours: f64, absorbing: Absorbing) -> Mission {
        let n = self.states();
        let Effective { rows, absorb, bytes_per_hour: bytes } = self.effective(absorbing);
        let out: Vec<f64> = (0..n).map(|i| absorb[i] + rows[i].iter().map(|e| e.1).sum::<f64>()).collect();
        // A uniformization rate a little above the largest exit rate keeps every self-loop
        // positive, so the walk is aperiodic and its normalized vector converges.
        let q = 1.02 * out.iter().cloned().fold(0.0, f64::max);
        let big_lambda = q * hours;
        let stay: Vec<f64> = out.iter().map(|o| 1.0 - o / q).collect();
        let k_max = (big_lambda + 12.0 * big_lambda.sqrt() + 40.0).ceil() as u64;
        let head_negligible = |k: u64| (k as f64) < big_lambda - 40.0 * big_lambda.sqrt() - 40.0;
        let ln_lambda = libm::log(big_lambda);

        let mut v = vec![0.0f64; n];
        v[0] = 1.0;
        let mut next = vec![0.0f64; n];
        let mut previous_normalized = vec![0.0f64; n];
        let mut absorbed = 0.0f64;
        let mut cdf = 0.0f64;
        let (mut p, mut integral) = (0.0f64, 0.0f64);
        for k in 0..=k_max {
            let w = libm::exp(-big_lambda + k as f64 * ln_lambda - libm::lgamma(k as f64 + 1.0));
            p += w * absorbed;
            cdf += w;
            let tail = (1.0 - cdf).max(0.0);
            let survive: f64 = v.iter().sum();
            let byte_rate: f64 = v.iter().zip(&bytes).map(|(x, b)| x * b).sum();
            integral += tail * byte_rate / q;
            // Quasi-stationary check: the normalized vector stopped changing, entry by entry.
            let mut converged = k > n as u64 && survive > 0.0;
            for i in 0..n {
                let now = v[i] / survive;
                if converged {
                    let before = previous_normalized[i];
                    if now > 1e-280 {
                        if (now - before).abs() > 1e-12 * now {
                            converged = false;
                        }
                    } else if before > 1e-280 {
                        converged = false;
                    }
                }
                previous_normalized[i] = now;
            }
            if converged && head_negligible(k) {
                // From step k on the vector is S·ρ^{j}·v̂ with 1 − ρ = v̂·absorb/q.
                let eps: f64 = previous_normalized.iter().zip(&absorb).map(|(x, a)| x * a).sum::<f64>() / q;
                let ln_rho = libm::log1p(-eps);
                // Σ_{j>k} w_j (1 − ρ^{j−k}) = 1 − ρ^{−k}·e^{−Λε} once the head of the Poisson
                // weights is negligible (E[ρ^K] = e^{−Λ(1−ρ)}).
                let grow = -libm::expm1(-big_lambda * eps - k as f64 * ln_rho);
                // Σ_{j>k} P(K > j)·ρ^{j−k} = ρ·(1 − ρ^{−(k+1)}·e^{−Λε})/ε, from
                // Σ_j P(K > j)·x^j = (1 − E[x^K])/(1 − x).
                let k0 = (k + 1) as f64;
                let steps_ahead = if eps > 1e-300 {
                    -libm::expm1(-big_lambda * eps - k0 * ln_rho) / eps
                } else {
                    big_lambda - k0
                };
                p += tail * absorbed + survive * grow;
                let rate_now: f64 = previous_normalized.iter().zip(&bytes).map(|(x, b)| x * b).sum();
                integral += survive * (1.0 - eps) * steps_ahead * rate_now / q;
                return Mission { p_absorbed: p.min(1.0), sector_bytes: integral, steps: k, extrapolated: true };
            }
            // One step of the uniformized chain: v ← v·(I + Q/q).
            for i in 0..n {
                next[i] = v[i] * stay[i];
            }
            for i in 0..n {
                let x = v[i];
                if x == 0.0 {
                    continue;
                }
                for &(j, rate) in &rows[i] {
                    next[j] += x * rate / q;
                }
                absorbed += x * absorb[i] / q;
            }
            std::mem::swap(&mut v, &mut next);
        }
        Mission { p_absorbed: p.min(1.0), sector_bytes: integral, steps: k_max, extrapolated: false }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::layout::{Array, ArraySpec, Level};

    fn raid(level: Level, devices: usize) -> FailureStructure {
        let spec = ArraySpec { level, layout: None, chunk_kib: 64, member_kib: vec![4096; devices] };
        FailureStructure::from_array(&Array::new(&spec).unwrap())
    }

    fn chain(s: &FailureStructure, lambda: f64, mu: f64, policy: RepairPolicy) -> Chain {
        let rates = ChainRates { failure_per_hour: lambda, repair_per_hour: mu, policy };
        Chain::build(s, rates, |_| SectorFaults::default(), STATE_BUDGET).unwrap()
    }

    #[test]
    fn raid5_closed_form() {
        // The exact raid5 MTTDL (Greenan, Plank & Wylie, HotStorage 2010): ((2N−1)λ + μ) / (N(N−1)λ²).
        let (n, lambda, mu) = (8.0, 1.0 / 461_386.0, 1.0 / 12.0);
        let exact = ((2.0 * n - 1.0) * lambda + mu) / (n * (n - 1.0) * lambda * lambda);
        let c = chain(&raid(Level::Raid5, 8), lambda, mu, RepairPolicy::Md);
        let got = c.mttdl_hours(Truncation::AsLoss);
        assert!((got / exact - 1.0).abs() < 1e-12, "{got} vs {exact}");
    }

    #[test]
    fn raid6_serial_and_parallel_closed_forms() {
        let (n, l, m) = (8.0f64, 1.0 / 461_386.0, 1.0 / 12.0);
        let den = n * (n - 1.0) * (n - 2.0) * l * l * l;
        let serial = (3.0 * n * n * l * l - 6.0 * n * l * l + 2.0 * l * l + 2.0 * n * l * m - 2.0 * l * m + m * m) / den;
        let parallel = (3.0 * n * n * l * l - 6.0 * n * l * l + 2.0 * l * l + 3.0 * n * l * m - 2.0 * l * m + 2.0 * m * m) / den;
        let s = raid(Level::Raid6, 8);
        let got_serial = chain(&s, l, m, RepairPolicy::Serial).mttdl_hours(Truncation::AsLoss);
        let got_parallel = chain(&s, l, m, RepairPolicy::Parallel).mttdl_hours(Truncation::AsLoss);
        assert!((got_serial / serial - 1.0).abs() < 1e-10);
        assert!((got_parallel / parallel - 1.0).abs() < 1e-10);
    }

    #[test]
    fn mission_probability_of_a_two_state_chain() {
        // raid0 of 3: P(loss by T) = 1 − exp(−3λT) exactly.
        let s = raid(Level::Raid0, 3);
        let c = chain(&s, 1e-5, 0.1, RepairPolicy::Md);
        let m = c.mission(10_000.0, Absorbing { truncation: Truncation::AsLoss, sector_faults: false });
        let exact = -libm::expm1(-3.0 * 1e-5 * 10_000.0);
        assert!((m.p_absorbed / exact - 1.0).abs() < 1e-12, "{} vs {exact}", m.p_absorbed);
    }
}
