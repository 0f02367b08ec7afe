//! Reliability: how likely an array is to lose data, computed from its layout.
//!
//! Four parts, each answering one question (each module cites the papers its formulas come from):
//! - [`structure`]: which failed sets lose data, and which rebuild reads have no redundancy left,
//!   derived from the layout engine ([`crate::layout::Array::loses_data`] and the map).
//! - [`ctmc`]: the exact Markov chain over failed sets with exponential failures and repairs:
//!   MTTDL (linear solve), P(loss within the mission) (uniformization), and the textbook
//!   approximation alongside.
//! - [`ure`]: unrecoverable read errors (per bit read) and latent sector errors (with a scrub
//!   interval) met by critical rebuild reads; md records a bad block and carries on, so these lose
//!   sectors, not the array.
//! - [`montecarlo`]: Weibull lifetimes and fixed repair times by Monte Carlo with conditional
//!   sampling and importance sampling, seeded, with confidence intervals.
//!
//! [`analyze`] runs them all for one array and one set of [`Inputs`]. Units: hours and bytes;
//! years are 8760 hours (365 days), as AFR ↔ MTTF conversions take them.

pub mod ctmc;
pub mod drops;
pub mod montecarlo;
pub mod structure;
pub mod ure;

use crate::error::{Error, ErrorKind, Result};
use crate::layout::Array;
use ctmc::{Absorbing, Chain, ChainRates, SectorFaults, Truncation, STATE_BUDGET};
use montecarlo::{McConfig, McResult};
use structure::{FailureStructure, Lumping};
use ure::SectorErrorModel;

/// Hours in the years the inputs and outputs speak of.
pub const HOURS_PER_YEAR: f64 = 8760.0;

/// Defaults, each with its source.
pub mod defaults {
    /// Annualized failure rate, as a fraction: Backblaze Drive Stats fleet AFR 2023–2025 was
    /// 1.36–1.70 % (backblaze.com/cloud-storage/resources/hard-drive-test-data); datasheets
    /// claim 0.6–0.9 %.
    pub const AFR: f64 = 0.015;
    /// Weibull shape of the time to operational failure: 1.12, Elerath & Pecht, IEEE TC 58(3),
    /// 2009; slightly increasing hazard.
    pub const WEIBULL_SHAPE: f64 = 1.12;
    /// Unrecoverable bit error rate per bit read of enterprise/NAS drives (datasheets: < 1 in
    /// 10^15); desktop drives specify [`UBER_DESKTOP`].
    pub const UBER: f64 = 1e-15;
    /// Desktop drives' datasheet UBER, 1 in 10^14 (Harris 2007 used it).
    pub const UBER_DESKTOP: f64 = 1e-14;
    /// Mission time in years: 5 y (the literature often uses 10 y).
    pub const MISSION_YEARS: f64 = 5.0;
    /// Repair (rebuild) hours when none is given: 24 h, as in the worked examples the tests
    /// check (`tests/reliability.rs`); a 16 TB drive rebuilt at
    /// 180 MB/s takes 24.7 h (capacity / rate).
    pub const REPAIR_HOURS: f64 = 24.0;
    /// Days between scrubs: monthly, as Debian/Ubuntu mdadm packaging runs `checkarray` on the
    /// first Sunday of each month (Debian's `/etc/cron.d/mdadm`).
    pub const SCRUB_DAYS: f64 = 30.0;
    /// Monte Carlo trials.
    pub const TRIALS: u64 = 20_000;
}

/// How failed members are repaired (see [`ctmc`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum RepairPolicy {
    /// md: one recovery pass rebuilds every missing member and restarts when another fails.
    Md,
    /// One member at a time (μ_j = μ, the Chen et al. 1994 textbook chain).
    Serial,
    /// Every failed member independently (μ_j = jμ).
    Parallel,
}

impl RepairPolicy {
    pub fn parse(text: &str) -> Result<RepairPolicy> {
        match text.trim().to_ascii_lowercase().as_str() {
            "md" => Ok(RepairPolicy::Md),
            "serial" => Ok(RepairPolicy::Serial),
            "parallel" => Ok(RepairPolicy::Parallel),
            _ => Err(config(format!("unknown repair policy '{text}': expected md, serial or parallel"))),
        }
    }
    pub fn name(self) -> &'static str {
        match self {
            RepairPolicy::Md => "md",
            RepairPolicy::Serial => "serial",
            RepairPolicy::Parallel => "parallel",
        }
    }
}

/// The distribution of repair times in the Monte Carlo (the chain is always exponential).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum RepairDistribution {
    Fixed,
    Exponential,
}

impl RepairDistribution {
    pub fn parse(text: &str) -> Result<RepairDistribution> {
        match text.trim().to_ascii_lowercase().as_str() {
            "fixed" => Ok(RepairDistribution::Fixed),
            "exponential" | "exp" => Ok(RepairDistribution::Exponential),
            _ => Err(config(format!("unknown repair distribution '{text}': expected fixed or exponential"))),
        }
    }
    pub fn name(self) -> &'static str {
        match self {
            RepairDistribution::Fixed => "fixed",
            RepairDistribution::Exponential => "exponential",
        }
    }
}

fn config(message: String) -> Error {
    Error::new(ErrorKind::InvalidConfig, message)
}

/// Everything besides the array.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Inputs {
    /// Mean time to failure of one drive, hours: the chain's exponential rate is its inverse;
    /// the Monte Carlo's Weibull keeps the same first-year failure probability (the AFR), see
    /// [`weibull_scale_for_afr`].
    pub mttf_hours: f64,
    pub weibull_shape: f64,
    /// Mean time from a failure to full redundancy: detection + replacement + rebuild, hours.
    pub repair_hours: f64,
    pub policy: RepairPolicy,
    pub repair_distribution: RepairDistribution,
    /// Unrecoverable bit error rate, per bit read.
    pub uber: f64,
    /// Latent sector errors per disk-hour (0: none).
    pub lse_per_hour: f64,
    /// Hours between scrubs (`None`: never scrubbed).
    pub scrub_hours: Option<f64>,
    pub mission_hours: f64,
    /// A sector fault in a critical rebuild read loses the array (some hardware controllers
    /// abort the rebuild), rather than a few KiB (md).
    pub ure_aborts_rebuild: bool,
    /// Monte Carlo trials (0: skip the Monte Carlo).
    pub trials: u64,
    pub seed: u64,

    // ---- drives dropped by the host's command timeout ----
    /// Members dropped by the host's command timeout per drive-hour (a read error the drive
    /// recovers for longer than the timeout, [`drops`]); added to the failure rate.
    pub drops_per_hour: f64,
}

impl Inputs {
    /// The defaults for everything but the array, with MTTF from the default AFR.
    pub fn defaults() -> Inputs {
        Inputs {
            mttf_hours: mttf_from_afr(defaults::AFR).expect("valid default"),
            weibull_shape: defaults::WEIBULL_SHAPE,
            repair_hours: defaults::REPAIR_HOURS,
            policy: RepairPolicy::Md,
            repair_distribution: RepairDistribution::Fixed,
            uber: defaults::UBER,
            lse_per_hour: 0.0,
            scrub_hours: Some(defaults::SCRUB_DAYS * 24.0),
            mission_hours: defaults::MISSION_YEARS * HOURS_PER_YEAR,
            ure_aborts_rebuild: false,
            trials: defaults::TRIALS,
            seed: 1,
            drops_per_hour: 0.0,
        }
    }

    /// Refuses inputs the models cannot honour, with a one-line message.
    pub fn validate(&self) -> Result<()> {
        let positive = |name: &str, value: f64, max: f64| -> Result<()> {
            if !(value.is_finite() && value > 0.0 && value <= max) {
                return Err(config(format!("{name} must be positive and at most {max}, got {value}")));
            }
            Ok(())
        };
        positive("MTTF hours", self.mttf_hours, 1e12)?;
        if !(self.weibull_shape.is_finite() && self.weibull_shape > 0.0) {
            return Err(config(format!("Weibull shape must be positive, got {}", self.weibull_shape)));
        }
        if self.weibull_shape < 0.1 || self.weibull_shape > 20.0 {
            return Err(config(format!("Weibull shape {} is outside 0.1 to 20", self.weibull_shape)));
        }
        positive("repair hours", self.repair_hours, 1e6)?;
        if self.repair_hours < 0.01 {
            return Err(config(format!("repair hours must be at least 0.01, got {}", self.repair_hours)));
        }
        if !(self.uber.is_finite() && (0.0..1e-3).contains(&self.uber)) {
            return Err(config(format!("UBER must be between 0 and 1e-3 errors per bit read, got {}", self.uber)));
        }
        if !(self.lse_per_hour.is_finite() && self.lse_per_hour >= 0.0 && self.lse_per_hour <= 1.0) {
            return Err(config(format!("latent sector error rate must be between 0 and 1 per disk-hour, got {}", self.lse_per_hour)));
        }
        if let Some(scrub) = self.scrub_hours {
            positive("scrub interval hours", scrub, 1e7)?;
        }
        positive("mission hours", self.mission_hours, 100.0 * HOURS_PER_YEAR)?;
        if !(self.drops_per_hour.is_finite() && (0.0..=1.0).contains(&self.drops_per_hour)) {
            return Err(config(format!("timeout drops must be between 0 and 1 per drive-hour, got {}", self.drops_per_hour)));
        }
        if self.trials > 100_000_000 {
            return Err(config(format!("at most 100000000 Monte Carlo trials, got {}", self.trials)));
        }
        Ok(())
    }
}

/// MTTF in hours from an annualized failure rate (a fraction): λ = −ln(1 − AFR)/8760
/// (exponential lifetimes: P(failure within a year) = 1 − exp(−8760·λ) = AFR).
pub fn mttf_from_afr(afr: f64) -> Result<f64> {
    if !(afr.is_finite() && afr > 0.0 && afr < 1.0) {
        return Err(config(format!("AFR must be between 0 and 100 %, got {} %", afr * 100.0)));
    }
    Ok(HOURS_PER_YEAR / -libm::log1p(-afr))
}

/// The AFR the chain's exponential lifetimes give: P(a new drive fails within a year) =
/// 1 − exp(−8760/MTTF) (the inverse of [`mttf_from_afr`]: λ = 1/MTTF = −ln(1−AFR)/8760).
pub fn afr_from_mttf(mttf_hours: f64) -> f64 {
    -libm::expm1(-HOURS_PER_YEAR / mttf_hours)
}

/// The Weibull scale η that gives a new drive the failure probability `afr` within its first
/// year, for any shape β: 1 − exp(−(8760/η)^β) = AFR, so η = 8760 / (−ln(1 − AFR))^(1/β)
/// (the Weibull CDF; for raid0 of N drives P(loss by t) = 1 − exp(−N(t/η)^β)).
///
/// This is what the Monte Carlo holds equal to the chain: the AFR, i.e. the first year. With
/// β = 1 it is the chain's exponential (η = MTTF); with β > 1 failures are rarer than the
/// chain's in the first year's early months and more frequent after it. (Holding the *mean*
/// equal instead, η = MTTF/Γ(1 + 1/β), gave β = 1.12 a first-year failure probability 0.6×
/// the AFR asked for, and P(loss) below the chain's at the same AFR: 1.31e-3 against 2.01e-3
/// for raid5 8×16 TB, AFR 5 %, 5 years; holding the AFR gives 2.89e-3, the wear-out after the
/// first year.)
pub fn weibull_scale_for_afr(afr: f64, shape: f64) -> f64 {
    HOURS_PER_YEAR / libm::pow(-libm::log1p(-afr), 1.0 / shape)
}

/// Everything [`analyze`] computes. Hours, bytes and probabilities.
#[derive(Clone, Debug, PartialEq)]
pub struct Report {
    pub devices: u32,
    pub capacity_bytes: u64,
    /// The fewest failures that can lose data.
    pub fatal_depth: u32,
    pub lumping: Lumping,
    pub states: usize,
    /// `Some(d)`: the chain keeps states with at most d failed members; MTTDL and P(loss) are
    /// then pessimistic, and [`Report::mttdl_hours_optimistic`] is the other bound.
    pub depth_cap: Option<u32>,
    /// After one failure, the fraction of survivors whose failure loses data.
    pub second_failure_loss_fraction: f64,
    /// After two (non-fatal) failures, the fraction of the next failures that lose data.
    pub third_failure_loss_fraction: Option<f64>,
    /// Bytes the rebuild after one failure reads.
    pub rebuild_read_bytes: f64,
    /// P(at least one URE in those reads) (Harris's number; for raid6 it is survivable).
    pub p_ure_rebuild: f64,
    /// Bytes read with no redundancy left by the rebuild in the most common critical state (one
    /// failure short of loss, reached by consecutive failures).
    pub critical_read_bytes: f64,
    /// P(at least one sector lost, URE or latent defect, in that rebuild).
    pub p_sector_fault_critical_rebuild: f64,
    pub mttdl_hours: f64,
    pub mttdl_hours_optimistic: f64,
    pub mttdl_hours_approx: f64,
    /// P(array loss within the mission), exact chain (pessimistic if truncated).
    pub p_array_loss: f64,
    /// P(any sector lost within the mission): array loss or a sector fault in a critical read.
    pub p_sector_loss: f64,
    /// Expected bytes lost over the mission: the capacity on array loss, plus sector faults.
    pub expected_bytes_lost: f64,
    pub expected_bytes_lost_per_year: f64,
    /// Uniformization steps of the array-loss mission computation.
    pub uniformization_steps: u64,
    /// (hours, P(array loss) by then): every whole year of the mission (at most 40 points) and
    /// the mission's end.
    pub loss_curve: Vec<(f64, f64)>,
    pub monte_carlo: Option<McResult>,
}

/// The whole analysis of one array.
pub fn analyze(array: &Array, inputs: &Inputs) -> Result<Report> {
    Ok(analyze_with_progress(array, inputs, &mut |_, _| true)?.expect("never stopped"))
}

/// [`analyze`], calling `progress(trials done, trials)` between batches of Monte Carlo trials;
/// when it returns false the analysis stops and gives `Ok(None)` (the caller was interrupted).
/// The result does not depend on the batches.
pub fn analyze_with_progress(array: &Array, inputs: &Inputs, progress: &mut dyn FnMut(u64, u64) -> bool) -> Result<Option<Report>> {
    inputs.validate()?;
    let structure = FailureStructure::from_array(array);
    let model = SectorErrorModel {
        uber: inputs.uber,
        lse_per_hour: inputs.lse_per_hour,
        scrub_hours: inputs.scrub_hours,
        mission_hours: inputs.mission_hours,
    };
    let mu = 1.0 / inputs.repair_hours;
    let mut reads = Vec::new();
    let mut fault_rates = |failed: u64| {
        let e = ure::exposure(&structure, failed, &model, &mut reads);
        SectorFaults {
            p_fault: e.p_fault(),
            // When the controller aborts, the fault is an array loss, counted as the capacity.
            expected_bytes: if inputs.ure_aborts_rebuild { 0.0 } else { e.expected_faults * e.bytes_per_fault },
        }
    };
    // A drop by the host's command timeout takes a member out like a failure.
    let failure_per_hour = 1.0 / inputs.mttf_hours + inputs.drops_per_hour;
    let rates = ChainRates { failure_per_hour, repair_per_hour: mu, policy: inputs.policy };
    let chain = Chain::build(&structure, rates, &mut fault_rates, STATE_BUDGET)?;
    let uniformization = chain.max_exit_rate() * inputs.mission_hours;
    if uniformization > 1e9 {
        return Err(config(format!(
            "a mission of {:.0} hours is too long against repairs of {} hours to compute exactly",
            inputs.mission_hours, inputs.repair_hours
        )));
    }
    let array_absorbing = Absorbing { truncation: Truncation::AsLoss, sector_faults: inputs.ure_aborts_rebuild };
    let mttdl_hours = chain.mean_time_to_absorption(array_absorbing);
    let mttdl_hours_optimistic = chain.mean_time_to_absorption(Absorbing { truncation: Truncation::Suppressed, ..array_absorbing });
    let array_mission = chain.mission(inputs.mission_hours, array_absorbing);
    let sector_mission = chain.mission(inputs.mission_hours, Absorbing { truncation: Truncation::AsLoss, sector_faults: true });
    let years = inputs.mission_hours / HOURS_PER_YEAR;
    let step_years = (years / 40.0).ceil().max(1.0);
    let mut loss_curve: Vec<(f64, f64)> = (1..)
        .map(|i| i as f64 * step_years * HOURS_PER_YEAR)
        .take_while(|&h| h < inputs.mission_hours * (1.0 - 1e-9))
        .map(|h| (h, chain.mission(h, array_absorbing).p_absorbed))
        .collect();
    loss_curve.push((inputs.mission_hours, array_mission.p_absorbed));
    let capacity = structure.capacity_bytes() as f64;
    let expected_bytes_lost = capacity * array_mission.p_absorbed + array_mission.sector_bytes;

    let one_failed = if structure.devices() > 1 { 1u64 } else { 0 };
    let rebuild_read_bytes = structure.rebuild_read_bytes(one_failed);
    let critical = critical_state(&structure);
    let exposure = ure::exposure(&structure, critical, &model, &mut Vec::new());

    let monte_carlo = match inputs.trials {
        0 => None,
        trials => match monte_carlo(&structure, inputs, &mut fault_rates, &mut |done| progress(done, trials)) {
            Some(result) => Some(result),
            None => return Ok(None),
        },
    };

    Ok(Some(Report {
        devices: structure.devices(),
        capacity_bytes: structure.capacity_bytes(),
        fatal_depth: structure.fatal_depth(),
        lumping: structure.lumping(),
        states: chain.states(),
        depth_cap: chain.depth_cap(),
        second_failure_loss_fraction: structure.second_failure_loss_fraction(),
        third_failure_loss_fraction: (structure.fatal_depth() >= 2).then(|| chain.next_failure_loss_fraction(2)).flatten(),
        rebuild_read_bytes,
        p_ure_rebuild: ure::p_ure(rebuild_read_bytes, inputs.uber),
        critical_read_bytes: exposure.critical_bytes,
        p_sector_fault_critical_rebuild: exposure.p_fault(),
        mttdl_hours,
        mttdl_hours_optimistic,
        mttdl_hours_approx: chain.approx_mttdl_hours(),
        p_array_loss: array_mission.p_absorbed,
        p_sector_loss: sector_mission.p_absorbed,
        expected_bytes_lost,
        expected_bytes_lost_per_year: expected_bytes_lost / (inputs.mission_hours / HOURS_PER_YEAR),
        uniformization_steps: array_mission.steps,
        loss_curve,
        monte_carlo,
    }))
}

/// The Weibull Monte Carlo of `inputs` (None when `progress` stopped it).
fn monte_carlo(
    structure: &FailureStructure,
    inputs: &Inputs,
    fault_rates: &mut impl FnMut(u64) -> SectorFaults,
    progress: &mut dyn FnMut(u64) -> bool,
) -> Option<McResult> {
    let cfg = McConfig {
        trials: inputs.trials,
        seed: inputs.seed,
        mission_hours: inputs.mission_hours,
        weibull_shape: inputs.weibull_shape,
        // Drops by timeout join the failures: the Weibull keeps the first-year probability of
        // either (an approximation: drops are memoryless, wear-out is not).
        weibull_scale_hours: weibull_scale_for_afr(
            afr_from_mttf(1.0 / (1.0 / inputs.mttf_hours + inputs.drops_per_hour)),
            inputs.weibull_shape,
        ),
        repair_hours: inputs.repair_hours,
        repair_distribution: inputs.repair_distribution,
        policy: inputs.policy,
        ure_aborts_rebuild: inputs.ure_aborts_rebuild,
    };
    montecarlo::run_with_progress(structure, &cfg, fault_rates, progress)
}

/// A failed set one failure short of loss: a minimal fatal set less one member (for raid0, none).
fn critical_state(structure: &FailureStructure) -> u64 {
    let fatal = match structure.copy_sets() {
        Some(sets) => sets.iter().map(|s| s.0).min_by_key(|m| m.count_ones()).expect("copy sets"),
        None => structure::prefix_mask(structure.fatal_depth()),
    };
    let top = 63 - fatal.leading_zeros();
    fatal & !(1u64 << top)
}
