//! Acceptance tests of the reliability core against textbook values (the exact chains' closed
//! forms and the published cases named at each test, computed by hand), the layout engine, the
//! Monte Carlo, and monotonicity.

mod common;

use proptest::prelude::*;
use raidlab_core::layout::{Array, ArraySpec, Layout, Level};
use raidlab_core::reliability::ctmc::{Chain, ChainRates, SectorFaults, STATE_BUDGET};
use raidlab_core::reliability::structure::FailureStructure;
use raidlab_core::reliability::{
    analyze, mttf_from_afr, ure, Inputs, RepairDistribution, RepairPolicy, Report, HOURS_PER_YEAR,
};
use raidlab_core::ErrorKind;

const TB: f64 = 1e12;

fn array(level: &str, devices: usize, layout: Option<&str>, member_bytes: f64) -> Array {
    let level = Level::parse(level).unwrap();
    let layout = layout.map(|name| Layout::parse(level, name).unwrap());
    let member_kib = (member_bytes / 1024.0) as u64;
    Array::new(&ArraySpec { level, layout, chunk_kib: 512, member_kib: vec![member_kib; devices] }).unwrap()
}

fn exact_only() -> Inputs {
    Inputs { trials: 0, ..Inputs::defaults() }
}

fn years(hours: f64) -> f64 {
    hours / HOURS_PER_YEAR
}

fn close(got: f64, want: f64, rel: f64) -> bool {
    (got / want - 1.0).abs() <= rel
}

// ---- Textbook values ------------------------------------------------------------------------

#[test]
fn greenan_raid5_exact_and_approximate_mttdl() {
    // HFRS/Greenan canonical case: RAID4/5, N = 8, MTTF 461,386 h, MTTR 12 h (the example model
    // of HFRS, Greenan, Plank & Wylie, HotStorage 2010).
    // Exact CTMC ((2N−1)λ + μ)/(N(N−1)λ²) = 36,176 y; PGK approximation μ/(N(N−1)λ²) = 36,162 y.
    let inputs = Inputs { mttf_hours: 461_386.0, repair_hours: 12.0, mission_hours: 10.0 * HOURS_PER_YEAR, ..exact_only() };
    let report = analyze(&array("5", 8, None, 4.0 * TB), &inputs).unwrap();
    let exact = years(report.mttdl_hours);
    let approx = years(report.mttdl_hours_approx);
    assert!(close(exact, 36_176.0, 1e-4), "exact CTMC MTTDL {exact} y, want 36,176 y");
    assert!(close(approx, 36_162.0, 1e-4), "approximate MTTDL {approx} y, want 36,162 y");
    // The exact value is the larger one: the (2N−1)λ term adds survival the approximation drops.
    assert!(exact > approx + 10.0);
    // P(loss in 10 y) = 2.763e-4 (computed from the chain) and, MTTDL ≫ MTTR, ≈ 1 − exp(−T/MTTDL).
    assert!(close(report.p_array_loss, 2.763e-4, 1e-3), "P(10 y) {}", report.p_array_loss);
    let poisson = -(-10.0 / exact).exp_m1();
    assert!(close(report.p_array_loss, poisson, 1e-3));
    // The curve: one point a year, rising, ending at the mission's value.
    assert_eq!(report.loss_curve.len(), 10);
    assert!(report.loss_curve.windows(2).all(|w| w[1].1 > w[0].1));
    assert_eq!(report.loss_curve.last().unwrap().1, report.p_array_loss);
    assert!(close(report.loss_curve[0].1, -(-1.0 / exact).exp_m1(), 2e-3));
    assert_eq!(report.states, 2);
    assert_eq!(report.depth_cap, None);
}

#[test]
fn raid6_serial_parallel_and_chen_values() {
    // RAID6, N = 8, same λ and μ (computed from the chain): serial 2.318e8 y, parallel 4.636e8 y, Chen
    // approximation 2.317e8 y; P(10 y) serial 4.31e-8.
    let base = Inputs { mttf_hours: 461_386.0, repair_hours: 12.0, mission_hours: 10.0 * HOURS_PER_YEAR, ..exact_only() };
    let raid6 = array("6", 8, None, 4.0 * TB);
    let serial = analyze(&raid6, &Inputs { policy: RepairPolicy::Serial, ..base }).unwrap();
    let parallel = analyze(&raid6, &Inputs { policy: RepairPolicy::Parallel, ..base }).unwrap();
    assert!(close(years(serial.mttdl_hours), 2.318e8, 5e-4), "{}", years(serial.mttdl_hours));
    assert!(close(years(parallel.mttdl_hours), 4.636e8, 5e-4), "{}", years(parallel.mttdl_hours));
    assert!(close(years(serial.mttdl_hours_approx), 2.317e8, 5e-4), "{}", years(serial.mttdl_hours_approx));
    assert!(close(serial.p_array_loss, 4.31e-8, 2e-3), "{}", serial.p_array_loss);
}

#[test]
fn afr_figures_of_the_exact_chains() {
    // Computed from the exact chains: AFR 1.5 %, MTTR 24 h: RAID5 N = 8 2.855e4 y, P(5 y) 1.75e-4; RAID6 N = 8
    // (serial) 1.149e8 y, P(5 y) 4.35e-8; RAID5 N = 12 1.21e4 y; RAID5 N = 8, MTTR 72 h 9,529 y;
    // raid10 n2 N = 8: 1.998e5 y exact vs 1.997e5 y approximate.
    let mttf = mttf_from_afr(0.015).unwrap();
    let base = Inputs { mttf_hours: mttf, repair_hours: 24.0, ..exact_only() };
    let r5 = analyze(&array("5", 8, None, 4.0 * TB), &base).unwrap();
    assert!(close(years(r5.mttdl_hours), 2.855e4, 5e-4) && close(r5.p_array_loss, 1.75e-4, 2e-3));
    let r6 = analyze(&array("6", 8, None, 4.0 * TB), &Inputs { policy: RepairPolicy::Serial, ..base }).unwrap();
    assert!(close(years(r6.mttdl_hours), 1.149e8, 5e-4) && close(r6.p_array_loss, 4.35e-8, 2e-3));
    let r5_12 = analyze(&array("5", 12, None, 4.0 * TB), &base).unwrap();
    assert!(close(years(r5_12.mttdl_hours), 1.21e4, 2e-3));
    let r5_72 = analyze(&array("5", 8, None, 4.0 * TB), &Inputs { repair_hours: 72.0, ..base }).unwrap();
    assert!(close(years(r5_72.mttdl_hours), 9_529.0, 5e-4), "{}", years(r5_72.mttdl_hours));
    let r10 = analyze(&array("10", 8, Some("n2"), 4.0 * TB), &base).unwrap();
    assert!(close(years(r10.mttdl_hours), 1.998e5, 3e-4), "{}", years(r10.mttdl_hours));
    assert!(close(years(r10.mttdl_hours_approx), 1.997e5, 3e-4), "{}", years(r10.mttdl_hours_approx));
}

#[test]
fn harris_ure_during_rebuild() {
    // 7 × 2 TB RAID5 reads 12 TB to rebuild: 61.7 % at 1e-14, 9.15 % at 1e-15,
    // 0.95 % at 1e-16 (Harris 2007).
    // (Tolerances: half a unit of the quoted figures' last digit.)
    let raid5 = array("5", 7, None, 2.0 * TB);
    for (uber, want, tolerance) in [(1e-14, 0.617, 5e-4), (1e-15, 0.0915, 5e-5), (1e-16, 0.0095, 1e-4)] {
        let report = analyze(&raid5, &Inputs { uber, ..exact_only() }).unwrap();
        assert!((report.rebuild_read_bytes / 12e12 - 1.0).abs() < 1e-3, "{}", report.rebuild_read_bytes);
        assert!((report.p_ure_rebuild - want).abs() <= tolerance, "uber {uber}: {}", report.p_ure_rebuild);
        // In RAID5 every rebuild read is critical, so the sector-fault chance is the same.
        assert!(close(report.p_sector_fault_critical_rebuild, report.p_ure_rebuild, 1e-9));
    }
    // The Q&A figures: RAID1 of 6 TB 38 % / 4.7 %; RAID10 of 3 TB mirrors 21 % / 2.4 %;
    // 2 × 16 TB mirror 72.2 % / 12.0 %.
    for (level, devices, size, want14, want15) in
        [("1", 2, 6.0, 0.38, 0.047), ("10", 4, 3.0, 0.21, 0.024), ("1", 2, 16.0, 0.722, 0.120)]
    {
        let a = array(level, devices, None, size * TB);
        let r14 = analyze(&a, &Inputs { uber: 1e-14, ..exact_only() }).unwrap();
        let r15 = analyze(&a, &Inputs { uber: 1e-15, ..exact_only() }).unwrap();
        assert!((r14.p_ure_rebuild - want14).abs() < 0.005, "{level}x{devices}: {}", r14.p_ure_rebuild);
        assert!((r15.p_ure_rebuild - want15).abs() < 0.0015, "{level}x{devices}: {}", r15.p_ure_rebuild);
    }
    // RAID6 reads the same bytes but a single bad sector is covered by Q: nothing critical.
    let raid6 = analyze(&array("6", 7, None, 2.0 * TB), &Inputs { uber: 1e-14, ..exact_only() }).unwrap();
    assert!(raid6.p_ure_rebuild > 0.5);
    assert!(raid6.critical_read_bytes > 0.0, "the doubly degraded state reads without redundancy");
}

#[test]
fn ure_and_lse_change_sector_loss_not_array_loss_in_md() {
    let a = array("5", 8, None, 16.0 * TB);
    let clean = analyze(&a, &Inputs { uber: 0.0, ..exact_only() }).unwrap();
    let ure = analyze(&a, &Inputs { uber: 1e-15, ..exact_only() }).unwrap();
    let lse = analyze(&a, &Inputs { uber: 1e-15, lse_per_hour: 1.08e-4, ..exact_only() }).unwrap();
    let rarely = analyze(&a, &Inputs { uber: 1e-15, lse_per_hour: 1.08e-4, scrub_hours: Some(24.0 * 90.0), ..exact_only() }).unwrap();
    assert_eq!(clean.p_array_loss, ure.p_array_loss, "md records a bad block and carries on");
    assert!(close(clean.p_sector_loss, clean.p_array_loss, 1e-9));
    assert!(ure.p_sector_loss > 100.0 * ure.p_array_loss);
    assert!(lse.p_sector_loss > ure.p_sector_loss && rarely.p_sector_loss > lse.p_sector_loss);
    assert!(lse.expected_bytes_lost_per_year > ure.expected_bytes_lost_per_year);
    // A controller that aborts the rebuild on an unreadable sector turns it into array loss.
    let aborts = analyze(&a, &Inputs { uber: 1e-15, ure_aborts_rebuild: true, ..exact_only() }).unwrap();
    assert!(close(aborts.p_array_loss, ure.p_sector_loss, 1e-9));
    assert!(aborts.mttdl_hours < ure.mttdl_hours / 100.0);
}

// ---- Agreement with Monte Carlo -------------------------------------------------------------

fn exponential_mc(trials: u64, seed: u64) -> Inputs {
    Inputs {
        mttf_hours: mttf_from_afr(0.05).unwrap(),
        weibull_shape: 1.0,
        repair_hours: 72.0,
        repair_distribution: RepairDistribution::Exponential,
        uber: 1e-15,
        trials,
        seed,
        ..Inputs::defaults()
    }
}

/// Checks one case; returns how many of its three estimates' 95 % intervals hold the exact value.
/// Every exact value must be within 2.576 standard errors (a 99 % interval).
fn agreement(report: &Report, what: &str) -> usize {
    let mc = report.monte_carlo.as_ref().unwrap();
    let mut covered = 0;
    for (name, exact, estimate) in [
        ("P(array loss)", report.p_array_loss, mc.p_array_loss),
        ("P(sector loss)", report.p_sector_loss, mc.p_sector_loss),
        ("bytes lost", report.expected_bytes_lost, mc.bytes_lost),
    ] {
        let z = (estimate.mean - exact) / estimate.std_error;
        println!("{what} {name}: exact {exact:e}, Monte Carlo {:e} ± {:e} (z = {z:.2})", estimate.mean, estimate.std_error);
        assert!(z.abs() < 2.576, "{what} {name}: exact {exact:e} is {z:.2} standard errors from the Monte Carlo {:e}", estimate.mean);
        assert!(estimate.relative_error() < 0.08, "{what} {name}: relative error {}", estimate.relative_error());
        covered += estimate.covers(exact) as usize;
    }
    covered
}

#[test]
fn monte_carlo_agrees_with_the_exact_chain_in_the_exponential_case() {
    // A 95 % interval misses one time in twenty by design: all 18 comparisons must lie within
    // 99 % intervals and at least 16 within the reported 95 % intervals.
    let mut covered = 0;
    for (level, devices, layout, policy) in [
        ("5", 8, None, RepairPolicy::Md),
        ("6", 6, None, RepairPolicy::Md),
        ("6", 6, None, RepairPolicy::Parallel),
        ("10", 5, Some("f2"), RepairPolicy::Md),
        ("10", 6, Some("n2"), RepairPolicy::Parallel),
        ("1", 3, None, RepairPolicy::Serial),
    ] {
        let a = array(level, devices, layout, 8.0 * TB);
        let report = analyze(&a, &Inputs { policy, ..exponential_mc(20_000, 7) }).unwrap();
        covered += agreement(&report, &format!("raid{level} x{devices} {layout:?} {policy:?}"));
    }
    assert!(covered >= 16, "only {covered} of 18 exact values inside the 95 % intervals");
}

#[test]
fn rare_events_are_estimated_with_small_relative_error() {
    // RAID6 loses data with P ≈ 1e-8 here; plain sampling would need ~1e10 trials for 10 %.
    let a = array("6", 8, None, 4.0 * TB);
    let inputs = Inputs { mttf_hours: mttf_from_afr(0.015).unwrap(), repair_hours: 24.0, ..exponential_mc(20_000, 3) };
    let report = analyze(&a, &inputs).unwrap();
    let mc = report.monte_carlo.unwrap();
    assert!(report.p_array_loss < 1e-7);
    assert!(mc.p_array_loss.relative_error() < 0.05, "{}", mc.p_array_loss.relative_error());
    let z = (mc.p_array_loss.mean - report.p_array_loss) / mc.p_array_loss.std_error;
    assert!(z.abs() < 2.576, "{} vs {:?}", report.p_array_loss, mc.p_array_loss);
}

#[test]
fn weibull_raid0_matches_its_closed_form() {
    // RAID0 under Weibull (its CDF, N drives): P(loss by t) = 1 − exp(−N(t/η)^β); the killed-process
    // estimator is exact here (no sampled event can change the hazard).
    use raidlab_core::reliability::{afr_from_mttf, weibull_scale_for_afr};
    let inputs = Inputs { weibull_shape: 1.5, trials: 200, ..Inputs::defaults() };
    let report = analyze(&array("0", 4, None, TB), &inputs).unwrap();
    let eta = weibull_scale_for_afr(afr_from_mttf(inputs.mttf_hours), 1.5);
    let want = -(-4.0 * (inputs.mission_hours / eta).powf(1.5)).exp_m1();
    let mc = report.monte_carlo.unwrap();
    assert!(close(mc.p_array_loss.mean, want, 1e-9), "{} vs {want}", mc.p_array_loss.mean);
    assert!(mc.p_array_loss.std_error < 1e-12);
}

/// The Weibull holds the AFR asked for: whatever its shape, a new drive fails within its first
/// year with probability AFR (a raid0 of 4 loses data within a year with 1 − (1 − AFR)^4, exact
/// under killing). Holding the mean instead gave shape 1.12 a first-year failure probability
/// 0.6× the AFR.
#[test]
fn the_weibull_keeps_the_afr_asked_for_whatever_its_shape() {
    for shape in [0.7, 1.0, 1.12, 1.5, 3.0] {
        let inputs = Inputs { weibull_shape: shape, mttf_hours: mttf_from_afr(0.05).unwrap(), mission_hours: HOURS_PER_YEAR, trials: 50, ..Inputs::defaults() };
        let report = analyze(&array("0", 4, None, TB), &inputs).unwrap();
        let mc = report.monte_carlo.unwrap().p_array_loss.mean;
        let want = 1.0 - 0.95f64.powi(4);
        assert!(close(mc, want, 1e-9), "shape {shape}: P(raid0 loss in year one) {mc} vs {want}");
        assert!(close(report.p_array_loss, want, 1e-9), "the chain: {}", report.p_array_loss);
    }
}

/// With shape 1 the Weibull is the chain's exponential: raid5 8×16 TB at AFR 5 % over 5 years
/// (MTTR 24 h fixed vs the chain's exponential repairs differ, so repairs are exponential here)
/// agree within the Monte Carlo's interval.
#[test]
fn shape_one_monte_carlo_agrees_with_the_chain_on_raid5() {
    let a = array("5", 8, None, 16.0 * TB);
    let inputs = Inputs {
        mttf_hours: mttf_from_afr(0.05).unwrap(),
        weibull_shape: 1.0,
        repair_hours: 24.0,
        repair_distribution: RepairDistribution::Exponential,
        mission_hours: 5.0 * HOURS_PER_YEAR,
        trials: 20_000,
        seed: 5,
        ..Inputs::defaults()
    };
    let report = analyze(&a, &inputs).unwrap();
    let mc = report.monte_carlo.unwrap().p_array_loss;
    let z = (mc.mean - report.p_array_loss) / mc.std_error;
    assert!(z.abs() < 2.576, "chain {} vs Monte Carlo {mc:?} (z = {z:.2})", report.p_array_loss);
    assert!(mc.relative_error() < 0.02, "{mc:?}");
}

#[test]
fn weibull_shape_changes_the_answer_and_fixed_repairs_halve_raid6_exposure() {
    // With the first year's failure probability held (the AFR), an increasing hazard fails
    // drives more often after it: (5 y/η)^1.5 is 5^1.5 = 11.2 first years' worth, not 5.
    let a = array("5", 8, None, 4.0 * TB);
    let exp = analyze(&a, &Inputs { weibull_shape: 1.0, repair_distribution: RepairDistribution::Exponential, ..Inputs::defaults() }).unwrap();
    let wear = analyze(&a, &Inputs { weibull_shape: 1.5, repair_distribution: RepairDistribution::Exponential, ..Inputs::defaults() }).unwrap();
    let (e, w) = (exp.monte_carlo.unwrap().p_array_loss, wear.monte_carlo.unwrap().p_array_loss);
    assert!(w.ci_low > e.ci_high, "shape 1.5 {w:?} vs exponential {e:?}");
    // For 2-fault tolerance the double-failure term scales with E[R²]: fixed repairs give half
    // the exponential value (E[R²] is R² for a fixed R, 2·E[R]² for an exponential one).
    let raid6 = array("6", 8, None, 4.0 * TB);
    let base = Inputs { weibull_shape: 1.0, mttf_hours: mttf_from_afr(0.05).unwrap(), repair_hours: 72.0, policy: RepairPolicy::Serial, ..Inputs::defaults() };
    let fixed = analyze(&raid6, &Inputs { repair_distribution: RepairDistribution::Fixed, ..base }).unwrap();
    let expo = analyze(&raid6, &Inputs { repair_distribution: RepairDistribution::Exponential, ..base }).unwrap();
    let ratio = fixed.monte_carlo.unwrap().p_array_loss.mean / expo.monte_carlo.unwrap().p_array_loss.mean;
    assert!((0.42..0.58).contains(&ratio), "fixed/exponential = {ratio}");
}

#[test]
fn monte_carlo_is_reproducible_from_its_seed() {
    let a = array("10", 6, Some("o2"), TB);
    let one = analyze(&a, &exponential_mc(2_000, 11)).unwrap();
    let again = analyze(&a, &exponential_mc(2_000, 11)).unwrap();
    let other = analyze(&a, &exponential_mc(2_000, 12)).unwrap();
    assert_eq!(one, again);
    assert_ne!(one.monte_carlo.unwrap().p_array_loss.mean, other.monte_carlo.unwrap().p_array_loss.mean);
}

// ---- The layout decides which failures are fatal ------------------------------------------------

fn members(mask: u64) -> Vec<u32> {
    (0..64).filter(|m| mask & (1u64 << m) != 0).collect()
}

/// The second-failure loss fraction the layout engine implies, by brute force over all pairs.
fn layout_second_fraction(a: &Array) -> f64 {
    let n = a.devices();
    let mut fatal = 0u32;
    for first in 0..n {
        for second in (0..n).filter(|&m| m != first) {
            fatal += a.loses_data(&[first, second]) as u32;
        }
    }
    fatal as f64 / (n * (n - 1)) as f64
}

fn chain_of(a: &Array) -> Chain {
    let structure = FailureStructure::from_array(a);
    let rates = ChainRates { failure_per_hour: 1e-6, repair_per_hour: 0.04, policy: RepairPolicy::Md };
    Chain::build(&structure, rates, |_| SectorFaults::default(), STATE_BUDGET).unwrap()
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(120))]

    #[test]
    fn raid10_second_failure_loss_fraction_is_the_layouts(
        devices in 2usize..=40,
        layout in prop::sample::select(vec!["n2", "f2", "o2"]),
    ) {
        let a = array("10", devices, Some(layout), 1e9);
        let n = devices as f64;
        // n2 even pairs members, 1/(N−1); n2 odd, f2 and o2 share each member's
        // data with both neighbours, 2/(N−1) (N ≥ 3; on 2 devices every layout is a mirror).
        let textbook = if devices == 2 || (layout == "n2" && devices % 2 == 0) { 1.0 / (n - 1.0) } else { 2.0 / (n - 1.0) };
        let from_layout = layout_second_fraction(&a);
        let structure = FailureStructure::from_array(&a);
        let chain = chain_of(&a);
        prop_assert!((from_layout - textbook).abs() < 1e-12, "layout engine {} vs {}", from_layout, textbook);
        prop_assert!((structure.second_failure_loss_fraction() - from_layout).abs() < 1e-12);
        let in_chain = chain.next_failure_loss_fraction(1).unwrap();
        prop_assert!((in_chain - from_layout).abs() < 1e-12, "chain {} vs layout {}", in_chain, from_layout);
        // Third failure: n2 even leaves two partners of two failed members, 2/(N−2). On a ring
        // the two failed members are non-adjacent; 3 neighbours are fatal when they are two apart
        // (N such pairs) and 4 otherwise, so 2(2N−7)/((N−3)(N−2)) for N ≥ 5.
        if devices >= 5 && (layout != "n2" || devices % 2 == 1) {
            let third = chain.next_failure_loss_fraction(2).unwrap();
            let ring = 2.0 * (2.0 * n - 7.0) / ((n - 3.0) * (n - 2.0));
            prop_assert!((third - ring).abs() < 1e-9, "third {} vs {}", third, ring);
        } else if devices >= 4 && layout == "n2" {
            let third = chain.next_failure_loss_fraction(2).unwrap();
            prop_assert!((third - 2.0 / (n - 2.0)).abs() < 1e-9, "third {} vs {}", third, 2.0 / (n - 2.0));
        }
    }

    #[test]
    fn the_structure_agrees_with_loses_data_on_every_set(array in common::arrays(), picks in prop::collection::vec(any::<u64>(), 24)) {
        let structure = FailureStructure::from_array(&array);
        let n = array.devices();
        let all = if n == 64 { u64::MAX } else { (1u64 << n) - 1 };
        let masks: Vec<u64> = if n <= 8 { (0..=all).collect() } else { picks.iter().map(|p| p & all).collect() };
        for mask in masks {
            prop_assert_eq!(structure.is_fatal(mask), array.loses_data(&members(mask)), "mask {:b}", mask);
        }
    }
}

#[test]
fn large_raid10_is_solved_exactly_or_within_tight_bounds() {
    // 64-device n2 pairs members: the chain counts degraded pairs, 33 states, exact.
    let pairs = analyze(&array("10", 64, Some("n2"), 4.0 * TB), &exact_only()).unwrap();
    assert_eq!((pairs.states, pairs.depth_cap), (33, None));
    // Pairs: loss rate ≈ Nλ·λ/μ, MTTDL ≈ μ/(Nλ²) (a fatal second failure hits the pair's other member).
    assert!(close(pairs.mttdl_hours, pairs.mttdl_hours_approx, 2e-3));
    let mu_over = |r: &Report| r.mttdl_hours;
    let expected = (1.0 / 24.0) / (64.0 * (1.0 / Inputs::defaults().mttf_hours).powi(2));
    assert!(close(mu_over(&pairs), expected, 2e-3));
    // 64-device f2 is a ring: too many survivable sets to enumerate; the chain keeps 3 failed
    // members and brackets MTTDL by counting deeper failures as loss or as not happening.
    let ring = analyze(&array("10", 64, Some("f2"), 4.0 * TB), &exact_only()).unwrap();
    assert_eq!(ring.depth_cap, Some(3));
    assert!(ring.mttdl_hours <= ring.mttdl_hours_optimistic);
    assert!(close(ring.mttdl_hours, ring.mttdl_hours_optimistic, 1e-3));
    // Each member shares data with two neighbours: half the pairs' MTTDL.
    assert!(close(ring.mttdl_hours, pairs.mttdl_hours / 2.0, 2e-3));
    // n4 on 64 devices: 16 groups of 4, exact.
    let quads = analyze(&array("10", 64, Some("n4"), 4.0 * TB), &exact_only()).unwrap();
    assert_eq!(quads.depth_cap, None);
    assert!(quads.mttdl_hours > 1e6 * pairs.mttdl_hours);
}

#[test]
fn long_missions_with_many_repair_windows_keep_the_estimator_sound() {
    // 16 × 50 y × 5 %: about 40 first failures per trial. Biasing each repair window as hard
    // as a single one would make the likelihood ratio degenerate; θ shrinks with the count.
    let a = array("6", 16, None, 4.0 * TB);
    let inputs = Inputs { mission_hours: 50.0 * HOURS_PER_YEAR, ..exponential_mc(20_000, 13) };
    let report = analyze(&a, &inputs).unwrap();
    let mc = report.monte_carlo.unwrap().p_array_loss;
    let z = (mc.mean - report.p_array_loss) / mc.std_error;
    assert!(z.abs() < 2.576 && mc.relative_error() < 0.05, "exact {} vs {:?}", report.p_array_loss, mc);
}

// ---- Monotonicity ---------------------------------------------------------------------------

fn cases() -> Vec<(&'static str, usize, Option<&'static str>)> {
    vec![
        ("0", 4, None),
        ("1", 2, None),
        ("1", 3, None),
        ("5", 4, None),
        ("5", 9, None),
        ("6", 6, None),
        ("6", 12, None),
        ("10", 4, Some("n2")),
        ("10", 7, Some("n2")),
        ("10", 8, Some("f2")),
        ("10", 9, Some("o2")),
        ("10", 9, Some("n3")),
    ]
}

#[test]
fn a_longer_rebuild_never_lowers_loss() {
    // P(any sector lost) rises with the repair time only while a rebuild pass is more likely to
    // read cleanly than not (here at most ~35 %): when a pass almost surely meets a bad sector,
    // a longer repair mostly means fewer drive failures (an empty slot cannot fail) and so fewer
    // passes. 4 TB members at 1e-15 keep every case below one half.
    let policies = [RepairPolicy::Md, RepairPolicy::Serial, RepairPolicy::Parallel];
    for (level, devices, layout) in cases() {
        let a = array(level, devices, layout, 4.0 * TB);
        for policy in policies {
            let mut previous: Option<Report> = None;
            for repair_hours in [1.0, 6.0, 24.0, 72.0, 168.0, 720.0, 4_380.0] {
                let r = analyze(&a, &Inputs { repair_hours, policy, lse_per_hour: 1e-5, ..exact_only() }).unwrap();
                if let Some(p) = &previous {
                    let what = format!("raid{level} x{devices} {layout:?} {policy:?} at {repair_hours} h");
                    assert!(r.p_array_loss >= p.p_array_loss, "{what}: P(array loss) fell");
                    assert!(r.p_sector_loss >= p.p_sector_loss, "{what}: P(sector loss) fell");
                    assert!(r.expected_bytes_lost >= p.expected_bytes_lost, "{what}: bytes lost fell");
                    assert!(r.mttdl_hours <= p.mttdl_hours, "{what}: MTTDL rose");
                }
                previous = Some(r);
            }
        }
    }
}

#[test]
fn more_redundancy_never_raises_loss() {
    for devices in [4usize, 5, 6, 8, 12, 16, 24] {
        for repair_hours in [12.0, 72.0, 720.0] {
            for uber in [0.0, 1e-14] {
                let inputs = Inputs { repair_hours, uber, ..exact_only() };
                let level = |l: &str| analyze(&array(l, devices, None, 8.0 * TB), &inputs).unwrap();
                let (r0, r5, r6) = (level("0"), level("5"), level("6"));
                for (fewer, more) in [(&r0, &r5), (&r5, &r6)] {
                    assert!(more.p_array_loss <= fewer.p_array_loss, "{devices} devices, {repair_hours} h");
                    assert!(more.p_sector_loss <= fewer.p_sector_loss, "{devices} devices, {repair_hours} h");
                    assert!(more.mttdl_hours >= fewer.mttdl_hours);
                }
            }
        }
    }
    // More copies: 3-way over 2-way mirrors, and raid10 n3 over n2 on the same devices.
    let inputs = exact_only();
    let two = analyze(&array("1", 2, None, 8.0 * TB), &inputs).unwrap();
    let three = analyze(&array("1", 3, None, 8.0 * TB), &inputs).unwrap();
    assert!(three.p_array_loss < two.p_array_loss && three.p_sector_loss < two.p_sector_loss);
    let n2 = analyze(&array("10", 9, Some("n2"), 8.0 * TB), &inputs).unwrap();
    let n3 = analyze(&array("10", 9, Some("n3"), 8.0 * TB), &inputs).unwrap();
    assert!(n3.p_array_loss < n2.p_array_loss && n3.p_sector_loss < n2.p_sector_loss);
}

// ---- Bad input ------------------------------------------------------------------------------

#[test]
fn bad_inputs_are_one_line_config_errors() {
    let a = array("5", 4, None, TB);
    for bad in [
        Inputs { weibull_shape: 0.0, ..exact_only() },
        Inputs { weibull_shape: -1.0, ..exact_only() },
        Inputs { mttf_hours: -5.0, ..exact_only() },
        Inputs { repair_hours: 0.0, ..exact_only() },
        Inputs { uber: -1e-15, ..exact_only() },
        Inputs { mission_hours: f64::NAN, ..exact_only() },
        Inputs { scrub_hours: Some(0.0), ..exact_only() },
    ] {
        let error = analyze(&a, &bad).unwrap_err();
        assert_eq!(error.kind, ErrorKind::InvalidConfig);
        assert!(!error.message.contains('\n'));
    }
    assert_eq!(mttf_from_afr(-0.01).unwrap_err().kind, ErrorKind::InvalidConfig);
    assert_eq!(mttf_from_afr(1.0).unwrap_err().kind, ErrorKind::InvalidConfig);
    assert!(close(mttf_from_afr(0.00872).unwrap(), 1.0e6, 1e-3), "1 M h is AFR 0.872 % (1 − exp(−8760/10^6))");
}

#[test]
fn ure_helpers_use_bits() {
    // 8 × 16 TB RAID5 reads 112 TB: 59.2 % at 1e-15 (1 − (1 − u)^{8B}).
    assert!((ure::p_ure(112e12, 1e-15) - 0.592).abs() < 0.001);
}

/// The Monte Carlo reports progress between batches of trials and stops when asked (Ctrl-C);
/// the result is the same with or without the reports.
#[test]
fn monte_carlo_progress_is_reported_between_batches_and_can_stop_it() {
    use raidlab_core::reliability::analyze_with_progress;
    use raidlab_core::reliability::montecarlo::BATCH_TRIALS;
    let a = array("6", 8, None, 4.0 * TB);
    let inputs = exponential_mc(1_000, 9);
    let mut calls = Vec::new();
    let reported = analyze_with_progress(&a, &inputs, &mut |done, total| {
        calls.push((done, total));
        true
    })
    .unwrap()
    .unwrap();
    assert_eq!(reported, analyze(&a, &inputs).unwrap());
    let want: Vec<(u64, u64)> = [BATCH_TRIALS, 2 * BATCH_TRIALS, 3 * BATCH_TRIALS, 1_000].iter().map(|&d| (d, 1_000)).collect();
    assert_eq!(calls, want);
    let mut seen = 0;
    let stopped = analyze_with_progress(&a, &inputs, &mut |_, _| {
        seen += 1;
        seen < 2
    });
    assert_eq!((stopped.unwrap(), seen), (None, 2));
}
