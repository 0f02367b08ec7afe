//! Monte Carlo with Weibull drive lifetimes, for what the Markov chain cannot express: ageing
//! hazards (shape ≠ 1), fixed repair times, md's restart-on-failure rebuild.
//!
//! Each slot holds a drive whose time to failure is Weibull(shape β, scale η) from its install
//! time; a replaced drive is new (Elerath & Pecht, "A Highly Accurate Method for Assessing
//! Reliability of RAID", IEEE TC 58(3), 2009: each slot a renewal process). Repairs follow the
//! same [`RepairPolicy`] as the chain, with fixed or exponential durations.
//!
//! Rare events are handled by two variance reductions:
//! - **Conditional Monte Carlo by killing.** Failures that would lose data are never sampled.
//!   The trial runs the process with those transitions removed and integrates their hazard
//!   analytically, K = Σ ∫ h_m(t) dt over the members whose failure would be fatal at the time;
//!   the trial's loss estimate is 1 − e^{−K}. This is the Feynman–Kac (killed process) identity
//!   P(no loss by T) = E[exp(−∫₀ᵀ κ(X_t) dt)], exact for any hazard; it is analytic window
//!   integration, Elerath & Schindler's (ACM TOS 10(2), 2014) idea done per
//!   trial. The chance of an unreadable sector in the critical reads of each rebuild pass is
//!   killed the same way, on entry to the degraded state, as in the chain.
//! - **Importance sampling by failure biasing.** Failures that do not lose data but lead
//!   towards it (a second failure in RAID6) get their hazard multiplied by a factor b, realised
//!   as an extra superposed Poisson process of intensity (b − 1)·Σh (superposition, so each
//!   drive's own clock is drawn once). b is chosen at each state change so that about θ extra
//!   failures are expected in the current repair window, with θ = min(0.3, 1/(expected first
//!   failures over the mission)): each biased window multiplies the likelihood ratio's second
//!   moment by about e^θ, so many windows cannot make it degenerate (likelihood ratios
//!   degenerate over long horizons otherwise: Glasserman et al., Oper. Res. 47(4), 1999). When
//!   nothing has failed the target is 0.5 over the rest of the mission; where one more failure
//!   can already lose data nothing is biased, since killing covers it. The trial carries the
//!   likelihood ratio Π b⁻¹ over biased-period failures times exp((b − 1)·∫h) over biased
//!   periods (Lewis & Böhm, Nucl. Eng. Des. 77, 1984; Goyal, Shahabuddin, Heidelberger, Nicola
//!   & Glynn, IEEE TC 41(1), 1992; Nicola, Nakayama, Heidelberger & Goyal, IEEE TC 42(12), 1993,
//!   for general failure distributions).
//!
//! Every trial draws from its own generator, `Prng::derive(seed, "reliability", trial)`, so a
//! result depends only on the inputs and the seed: not on how the trials are batched between
//! progress reports (they are accumulated in trial order whatever the batches). Confidence intervals are normal-theory 95 %
//! intervals on the per-trial estimates.

use std::collections::HashMap;

use super::ctmc::SectorFaults;
use super::structure::{prefix_mask, FailureStructure};
use super::{RepairDistribution, RepairPolicy};
use crate::bits::members;
use crate::rng::Prng;

/// The normal quantile of a two-sided 95 % interval.
pub const Z95: f64 = 1.959_963_984_540_054;
const BIAS_TARGET_DEGRADED: f64 = 0.3;
const BIAS_TARGET_HEALTHY: f64 = 0.5;
const BIAS_MAX: f64 = 1e12;

/// What one Monte Carlo run needs.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct McConfig {
    pub trials: u64,
    pub seed: u64,
    pub mission_hours: f64,
    pub weibull_shape: f64,
    pub weibull_scale_hours: f64,
    pub repair_hours: f64,
    pub repair_distribution: RepairDistribution,
    pub policy: RepairPolicy,
    /// A sector fault during a critical rebuild read loses the array (a controller that aborts
    /// the rebuild) instead of a few KiB (md).
    pub ure_aborts_rebuild: bool,
}

/// A mean with its standard error and 95 % confidence interval.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Estimate {
    pub mean: f64,
    pub std_error: f64,
    pub ci_low: f64,
    pub ci_high: f64,
}

impl Estimate {
    /// Whether `value` lies inside the confidence interval.
    pub fn covers(&self, value: f64) -> bool {
        self.ci_low <= value && value <= self.ci_high
    }
    /// Standard error over the mean (infinite when the mean is 0).
    pub fn relative_error(&self) -> f64 {
        if self.mean > 0.0 {
            self.std_error / self.mean
        } else {
            f64::INFINITY
        }
    }
}

/// Welford's running mean and variance.
#[derive(Clone, Copy, Debug, Default)]
struct Running {
    n: u64,
    mean: f64,
    m2: f64,
}

impl Running {
    fn push(&mut self, x: f64) {
        self.n += 1;
        let delta = x - self.mean;
        self.mean += delta / self.n as f64;
        self.m2 += delta * (x - self.mean);
    }
    fn estimate(&self) -> Estimate {
        let variance = if self.n > 1 { self.m2 / (self.n - 1) as f64 } else { 0.0 };
        let std_error = (variance / self.n.max(1) as f64).sqrt();
        Estimate {
            mean: self.mean,
            std_error,
            ci_low: (self.mean - Z95 * std_error).max(0.0),
            ci_high: self.mean + Z95 * std_error,
        }
    }
}

/// The Monte Carlo estimates over the mission.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct McResult {
    pub trials: u64,
    pub seed: u64,
    pub p_array_loss: Estimate,
    pub p_sector_loss: Estimate,
    /// Expected bytes lost over the mission (whole array on array loss, plus sector faults).
    pub bytes_lost: Estimate,
    /// Trials that spent time in a state where one more event could lose data.
    pub trials_exposed: u64,
}

struct Trial {
    origin: [f64; 64],
    /// Each live member's natural failure time (hazard h, unbiased). A clock stays valid until
    /// its member fails, or until it passes while the member's failure was being killed.
    next_fail: [f64; 64],
    repair_end: [f64; 64],
    queue: Vec<u32>,
    failed: u64,
    fatal: u64,
    bias: f64,
    /// The first event of the extra failure process of intensity (bias − 1)·Σ h over the
    /// non-fatal members in the current window, and whose failure it is.
    extra_time: f64,
    extra_who: usize,
}

/// Trials between two progress reports.
pub const BATCH_TRIALS: u64 = 256;

/// Runs the trials. `sector_faults` gives the exposure of the rebuild pass that starts when the
/// failed set becomes `mask` (decided on entry, as in the chain).
pub fn run(structure: &FailureStructure, cfg: &McConfig, sector_faults: impl FnMut(u64) -> SectorFaults) -> McResult {
    run_with_progress(structure, cfg, sector_faults, &mut |_| true).expect("never stopped")
}

/// [`run`], calling `progress(trials done)` after every [`BATCH_TRIALS`] trials and at the end;
/// when it returns false the run stops and gives None (the caller was interrupted).
pub fn run_with_progress(
    structure: &FailureStructure,
    cfg: &McConfig,
    mut sector_faults: impl FnMut(u64) -> SectorFaults,
    progress: &mut dyn FnMut(u64) -> bool,
) -> Option<McResult> {
    let mut cache: HashMap<u64, SectorFaults> = HashMap::new();
    let mut faults = |mask: u64| *cache.entry(mask).or_insert_with(|| sector_faults(mask));
    let (mut array, mut sector, mut bytes) = (Running::default(), Running::default(), Running::default());
    let mut exposed = 0u64;
    // Each biased repair window multiplies the second moment of the likelihood ratio by about
    // e^θ, so over a mission with many windows θ shrinks to keep their product near e
    // (likelihood ratios degenerate over long horizons otherwise).
    let windows = structure.devices() as f64 * libm::pow(cfg.mission_hours / cfg.weibull_scale_hours, cfg.weibull_shape);
    let degraded_target = BIAS_TARGET_DEGRADED.min(1.0 / windows.max(1e-300));
    for trial in 0..cfg.trials {
        if trial % BATCH_TRIALS == 0 && trial > 0 && !progress(trial) {
            return None;
        }
        let mut rng = Prng::derive(cfg.seed, "reliability", trial);
        let outcome = one_trial(structure, cfg, degraded_target, &mut rng, &mut faults);
        array.push(outcome.0);
        sector.push(outcome.1);
        bytes.push(outcome.2);
        exposed += outcome.3 as u64;
    }
    if !progress(cfg.trials) {
        return None;
    }
    Some(McResult {
        trials: cfg.trials,
        seed: cfg.seed,
        p_array_loss: array.estimate(),
        p_sector_loss: sector.estimate(),
        bytes_lost: bytes.estimate(),
        trials_exposed: exposed,
    })
}

/// One trial: (array-loss estimate, sector-loss estimate, bytes-lost estimate, exposed).
fn one_trial(
    structure: &FailureStructure,
    cfg: &McConfig,
    degraded_target: f64,
    rng: &mut Prng,
    faults: &mut impl FnMut(u64) -> SectorFaults,
) -> (f64, f64, f64, bool) {
    let n = structure.devices();
    let all = prefix_mask(n);
    let (beta, eta, horizon) = (cfg.weibull_shape, cfg.weibull_scale_hours, cfg.mission_hours);
    // Weibull cumulative hazard H(a) = (a/η)^β and hazard h(a) = (β/η)(a/η)^(β−1).
    let cumulative = |age: f64| libm::pow(age.max(0.0) / eta, beta);
    let hazard = |age: f64| beta / eta * libm::pow(age.max(0.0) / eta, beta - 1.0);
    let repair_time = |rng: &mut Prng| match cfg.repair_distribution {
        RepairDistribution::Fixed => cfg.repair_hours,
        RepairDistribution::Exponential => rng.exponential(cfg.repair_hours),
    };
    let mut s = Trial {
        origin: [0.0; 64],
        next_fail: [f64::INFINITY; 64],
        repair_end: [f64::INFINITY; 64],
        queue: Vec::new(),
        failed: 0,
        fatal: 0,
        bias: 1.0,
        extra_time: f64::INFINITY,
        extra_who: 0,
    };
    let next_repair = |s: &Trial| -> (f64, u32) {
        match cfg.policy {
            RepairPolicy::Md | RepairPolicy::Serial => (s.repair_end[0], 0),
            RepairPolicy::Parallel => {
                let mut best = (f64::INFINITY, 0);
                for m in members(s.failed) {
                    if s.repair_end[m as usize] < best.0 {
                        best = (s.repair_end[m as usize], m);
                    }
                }
                best
            }
        }
    };
    // A natural clock from time t: the inverse of the conditional cumulative hazard.
    let draw = |s: &mut Trial, m: usize, t: f64, rng: &mut Prng| {
        let target = cumulative(t - s.origin[m]) + rng.exponential(1.0);
        s.next_fail[m] = s.origin[m] + eta * libm::pow(target, 1.0 / beta);
    };
    // After every state change: which live members are fatal, fresh clocks where needed, the
    // bias of the new window and its extra failure process.
    let refresh = |s: &mut Trial, t: f64, rng: &mut Prng| {
        let live = all & !s.failed;
        s.fatal = 0;
        for m in members(live) {
            if structure.is_fatal(s.failed | (1u64 << m)) {
                s.fatal |= 1u64 << m;
            }
        }
        let nonfatal = live & !s.fatal;
        for m in members(nonfatal).map(|m| m as usize) {
            // New drives have no clock; a clock that ran out while the member was fatal was a
            // killed failure, and the next one is a fresh draw (independent increments).
            if !(s.next_fail[m] > t && s.next_fail[m].is_finite()) {
                draw(s, m, t, rng);
            }
        }
        s.bias = 1.0;
        s.extra_time = f64::INFINITY;
        // Bias only where loss needs more failures than one: where a single failure can already
        // lose data, killing does the work and biasing would only add likelihood-ratio noise.
        let needs_more = s.fatal == 0 || s.failed == 0;
        if !needs_more || nonfatal == 0 {
            return;
        }
        let target = if s.failed == 0 { BIAS_TARGET_HEALTHY } else { degraded_target };
        let end = next_repair(s).0.min(horizon);
        // A cheap lower bound first: the member with the smallest increment (the youngest when
        // the hazard rises, the oldest when it falls).
        let (mut youngest, mut oldest) = (f64::NEG_INFINITY, f64::INFINITY);
        for m in members(nonfatal).map(|m| m as usize) {
            youngest = youngest.max(s.origin[m]);
            oldest = oldest.min(s.origin[m]);
        }
        let pick = if beta >= 1.0 { youngest } else { oldest };
        let count = nonfatal.count_ones() as f64;
        if count * (cumulative(end - pick) - cumulative(t - pick)) >= target {
            return;
        }
        let mut base = [0.0f64; 64];
        let mut expected = 0.0;
        for m in members(nonfatal).map(|m| m as usize) {
            base[m] = cumulative(t - s.origin[m]);
            expected += cumulative(end - s.origin[m]) - base[m];
        }
        if !(expected > 0.0 && expected < target) {
            return;
        }
        s.bias = (target / expected).min(BIAS_MAX);
        // The extra process: its first event solves F(τ) = (b − 1)·Σ ΔH(τ) = E, if it comes
        // before the window ends (probability about 1 − e^(−θ)). F rises monotonically:
        // Newton's method from the constant-hazard guess, kept inside a shrinking bracket.
        let e = rng.exponential(1.0);
        let scale = s.bias - 1.0;
        if scale * expected <= e {
            return;
        }
        let f_and_slope = |tau: f64| {
            let (mut f, mut slope) = (-e, 0.0);
            for m in members(nonfatal).map(|m| m as usize) {
                f += scale * (cumulative(tau - s.origin[m]) - base[m]);
                slope += scale * hazard(tau - s.origin[m]);
            }
            (f, slope)
        };
        let (mut lo, mut hi) = (t, end);
        let mut when = t + (end - t) * e / (scale * expected);
        for _ in 0..100 {
            let (f, slope) = f_and_slope(when);
            if f < 0.0 {
                lo = when;
            } else {
                hi = when;
            }
            let newton = when - f / slope;
            let next = if slope > 0.0 && newton > lo && newton < hi { newton } else { 0.5 * (lo + hi) };
            if (next - when).abs() <= 1e-13 * (end - t) || hi - lo <= 1e-13 * (end - t) {
                when = next;
                break;
            }
            when = next;
        }
        // Whose failure: proportional to the hazards at that time.
        let mut total = 0.0;
        for m in members(nonfatal).map(|m| m as usize) {
            total += hazard(when - s.origin[m]);
        }
        let mut u = rng.unit_f64() * total;
        let mut who = nonfatal.trailing_zeros() as usize;
        for m in members(nonfatal).map(|m| m as usize) {
            who = m;
            u -= hazard(when - s.origin[m]);
            if u < 0.0 {
                break;
            }
        }
        s.extra_time = when;
        s.extra_who = who;
    };

    let mut t = 0.0f64;
    let (mut k_disk, mut k_fault, mut log_lr, mut lost_bytes) = (0.0f64, 0.0f64, 0.0f64, 0.0f64);
    let mut exposed = false;
    refresh(&mut s, t, rng);
    loop {
        let (t_repair, repaired) = next_repair(&s);
        let nonfatal = all & !s.failed & !s.fatal;
        let (mut t_fail, mut who) = (s.extra_time, s.extra_who);
        for m in members(nonfatal).map(|m| m as usize) {
            if s.next_fail[m] < t_fail {
                t_fail = s.next_fail[m];
                who = m;
            }
        }
        let t_next = t_fail.min(t_repair).min(horizon);
        if t_next > t {
            // Fatal members' hazard is killed; biased members' hazard enters the likelihood ratio.
            for m in members(if s.bias != 1.0 { all & !s.failed } else { s.fatal }).map(|m| m as usize) {
                let dh = cumulative(t_next - s.origin[m]) - cumulative(t - s.origin[m]);
                if s.fatal & (1u64 << m) != 0 {
                    k_disk += dh;
                } else {
                    log_lr += (s.bias - 1.0) * dh;
                }
            }
            exposed |= s.fatal != 0;
        }
        t = t_next;
        if t >= horizon {
            break;
        }
        if t_fail <= t_repair {
            // Under the biased measure member `who` failed with intensity b·h: ratio 1/b.
            log_lr -= libm::log(s.bias);
            s.failed |= 1u64 << who;
            s.next_fail[who] = f64::INFINITY;
            let end = t + repair_time(rng);
            match cfg.policy {
                // md restarts its one recovery pass to include the new spare.
                RepairPolicy::Md => s.repair_end[0] = end,
                RepairPolicy::Serial => {
                    s.queue.push(who as u32);
                    if s.queue.len() == 1 {
                        s.repair_end[0] = end;
                    }
                }
                RepairPolicy::Parallel => s.repair_end[who] = end,
            }
        } else {
            match cfg.policy {
                RepairPolicy::Md => {
                    for m in 0..n as usize {
                        if s.failed & (1u64 << m) != 0 {
                            s.origin[m] = t;
                        }
                    }
                    s.failed = 0;
                    s.repair_end[0] = f64::INFINITY;
                }
                RepairPolicy::Serial => {
                    let m = s.queue.remove(0) as usize;
                    s.failed &= !(1u64 << m);
                    s.origin[m] = t;
                    s.repair_end[0] = if s.queue.is_empty() { f64::INFINITY } else { t + repair_time(rng) };
                }
                RepairPolicy::Parallel => {
                    let m = repaired as usize;
                    s.failed &= !(1u64 << m);
                    s.origin[m] = t;
                    s.repair_end[m] = f64::INFINITY;
                }
            }
        }
        if s.failed != 0 {
            // The rebuild pass (re)started for the new failed set reads its critical bytes: the
            // chance of an unreadable sector there is killed, not sampled; bytes are weighted by
            // the array still being there.
            let pass = faults(s.failed);
            if pass.p_fault > 0.0 {
                let alive = libm::exp(-(k_disk + if cfg.ure_aborts_rebuild { k_fault } else { 0.0 }));
                lost_bytes += alive * pass.expected_bytes;
                k_fault += -libm::log1p(-pass.p_fault);
                exposed = true;
            }
        }
        refresh(&mut s, t, rng);
    }
    let weight = libm::exp(log_lr);
    let k_array = k_disk + if cfg.ure_aborts_rebuild { k_fault } else { 0.0 };
    let p_array = -libm::expm1(-k_array);
    let p_sector = -libm::expm1(-(k_disk + k_fault));
    let bytes = p_array * structure.capacity_bytes() as f64 + lost_bytes;
    (weight * p_array, weight * p_sector, weight * bytes, exposed)
}
