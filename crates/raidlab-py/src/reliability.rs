//! Glue for the reliability core: a Python dict of inputs becomes an `Array` and `Inputs`, the
//! core `Report` becomes a dict. No reliability logic lives here.

use crate::dict::field;
use crate::errors;
use pyo3::prelude::*;
use pyo3::types::PyDict;
use raidlab_core::layout::{Array, ArraySpec, Layout, Level};
use raidlab_core::reliability::montecarlo::Estimate;
use raidlab_core::reliability::{
    self, defaults, Inputs, RepairDistribution, RepairPolicy, HOURS_PER_YEAR,
};
use raidlab_core::Error;

/// Runs the analysis without the GIL, taking it between batches of trials to run signal
/// handlers and the progress callback; their error (KeyboardInterrupt) ends the analysis.
fn analyze_interruptibly(py: Python<'_>, array: &Array, inputs: &Inputs, progress: Option<Py<PyAny>>) -> PyResult<reliability::Report> {
    let mut stopped: Option<PyErr> = None;
    let outcome = py.allow_threads(|| {
        reliability::analyze_with_progress(array, inputs, &mut |done, total| {
            Python::with_gil(|py| {
                let step = py.check_signals().and_then(|()| match &progress {
                    Some(callback) => callback.call1(py, (done, total)).map(drop),
                    None => Ok(()),
                });
                step.map_err(|e| stopped = Some(e)).is_ok()
            })
        })
    });
    match (outcome.map_err(errors::to_py)?, stopped) {
        (Some(report), _) => Ok(report),
        (None, Some(error)) => Err(error),
        (None, None) => unreachable!("the analysis stops only when the callback says so"),
    }
}

fn estimate<'py>(py: Python<'py>, e: &Estimate) -> PyResult<Bound<'py, PyDict>> {
    let d = PyDict::new(py);
    d.set_item("mean", e.mean)?;
    d.set_item("std_error", e.std_error)?;
    d.set_item("ci95", (e.ci_low, e.ci_high))?;
    Ok(d)
}

/// The core's defaults, so the Python layer states them once.
#[pyfunction]
pub fn reliability_defaults(py: Python<'_>) -> PyResult<Bound<'_, PyDict>> {
    let d = PyDict::new(py);
    d.set_item("afr_pct", defaults::AFR * 100.0)?;
    d.set_item("weibull_shape", defaults::WEIBULL_SHAPE)?;
    d.set_item("uber", defaults::UBER)?;
    d.set_item("uber_desktop", defaults::UBER_DESKTOP)?;
    d.set_item("mission_years", defaults::MISSION_YEARS)?;
    d.set_item("repair_hours", defaults::REPAIR_HOURS)?;
    d.set_item("scrub_days", defaults::SCRUB_DAYS)?;
    d.set_item("trials", defaults::TRIALS)?;
    d.set_item("hours_per_year", HOURS_PER_YEAR)?;
    Ok(d)
}

/// MTTF hours from an AFR in percent (λ = −ln(1 − AFR)/8760).
#[pyfunction]
pub fn reliability_mttf_from_afr(afr_pct: f64) -> PyResult<f64> {
    reliability::mttf_from_afr(afr_pct / 100.0).map_err(errors::to_py)
}

/// Runs the analysis. Keys: level, devices, layout (or None), chunk_kib, member_kib, mttf_hours,
/// weibull_shape, repair_hours, policy, repair_distribution, uber, lse_per_hour, scrub_hours (or
/// None), mission_hours, ure_aborts_rebuild, trials, seed. Between batches of Monte Carlo
/// trials it runs Python's signal handlers (so Ctrl-C raises KeyboardInterrupt there) and calls
/// `progress(trials_done, trials)` if given; either raising stops the analysis with that error.
#[pyfunction]
#[pyo3(signature = (config, progress=None))]
pub fn reliability_analyze<'py>(
    py: Python<'py>,
    config: &Bound<'py, PyDict>,
    progress: Option<Py<PyAny>>,
) -> PyResult<Bound<'py, PyDict>> {
    let level_text: String = field(config, "level")?;
    // A stacked level (an md array of md arrays): the structure comes from its inner arrays.
    let stacked = raidlab_core::layout::parse_stacked(&level_text);
    let level = match stacked {
        Some((_, _, inner)) => inner,
        None => Level::parse(&level_text).map_err(errors::to_py)?,
    };
    let layout = match field::<Option<String>>(config, "layout")? {
        Some(name) => Some(Layout::parse(level, &name).map_err(errors::to_py)?),
        None => None,
    };
    let devices: usize = field(config, "devices")?;
    if devices > raidlab_core::layout::MAX_DEVICES {
        return Err(errors::to_py(Error::array(format!(
            "raidlab models at most {} devices in one array, got {devices}",
            raidlab_core::layout::MAX_DEVICES
        ))));
    }
    let member_kib: u64 = field(config, "member_kib")?;
    let spec = ArraySpec { level, layout, chunk_kib: field(config, "chunk_kib")?, member_kib: vec![member_kib; devices] };
    let array = match crate::stacked::stack_from(config, devices as u32, member_kib)? {
        Some(stack) => Array::stacked(&stack).map_err(errors::to_py)?,
        None => Array::new(&spec).map_err(errors::to_py)?,
    };
    let inputs = Inputs {
        mttf_hours: field(config, "mttf_hours")?,
        weibull_shape: field(config, "weibull_shape")?,
        repair_hours: field(config, "repair_hours")?,
        policy: RepairPolicy::parse(&field::<String>(config, "policy")?).map_err(errors::to_py)?,
        repair_distribution: RepairDistribution::parse(&field::<String>(config, "repair_distribution")?)
            .map_err(errors::to_py)?,
        uber: field(config, "uber")?,
        lse_per_hour: field(config, "lse_per_hour")?,
        scrub_hours: field(config, "scrub_hours")?,
        mission_hours: field(config, "mission_hours")?,
        ure_aborts_rebuild: field(config, "ure_aborts_rebuild")?,
        trials: field(config, "trials")?,
        seed: field(config, "seed")?,
        drops_per_hour: match config.get_item("drops_per_hour")? {
            Some(value) => value.extract()?,
            None => 0.0,
        },
    };
    let report = analyze_interruptibly(py, &array, &inputs, progress)?;

    let d = PyDict::new(py);
    match stacked {
        Some((name, _, _)) => d.set_item("level", name)?,
        None => d.set_item("level", level.number())?,
    }
    d.set_item("layout", match array.rebuild_array().layout() {
        Layout::Mirror => None,
        other => Some(other.name()),
    })?;
    d.set_item("devices", report.devices)?;
    d.set_item("capacity_bytes", report.capacity_bytes)?;
    d.set_item("member_used_bytes", array.member_used_sectors(0) * raidlab_core::SECTOR_BYTES)?;
    d.set_item("fatal_depth", report.fatal_depth)?;
    d.set_item("lumping", match report.lumping {
        reliability::structure::Lumping::Count => "count",
        reliability::structure::Lumping::Groups => "groups",
        reliability::structure::Lumping::Sets => "sets",
    })?;
    d.set_item("states", report.states)?;
    d.set_item("depth_cap", report.depth_cap)?;
    d.set_item("second_failure_loss_fraction", report.second_failure_loss_fraction)?;
    d.set_item("third_failure_loss_fraction", report.third_failure_loss_fraction)?;
    d.set_item("rebuild_read_bytes", report.rebuild_read_bytes)?;
    d.set_item("p_ure_rebuild", report.p_ure_rebuild)?;
    d.set_item("critical_read_bytes", report.critical_read_bytes)?;
    d.set_item("p_sector_fault_critical_rebuild", report.p_sector_fault_critical_rebuild)?;
    d.set_item("mttdl_hours", report.mttdl_hours)?;
    d.set_item("mttdl_hours_optimistic", report.mttdl_hours_optimistic)?;
    d.set_item("mttdl_hours_approx", report.mttdl_hours_approx)?;
    d.set_item("p_array_loss", report.p_array_loss)?;
    d.set_item("p_sector_loss", report.p_sector_loss)?;
    d.set_item("expected_bytes_lost", report.expected_bytes_lost)?;
    d.set_item("expected_bytes_lost_per_year", report.expected_bytes_lost_per_year)?;
    d.set_item("uniformization_steps", report.uniformization_steps)?;
    d.set_item("loss_curve", report.loss_curve.clone())?;
    match &report.monte_carlo {
        Some(mc) => {
            let m = PyDict::new(py);
            m.set_item("trials", mc.trials)?;
            m.set_item("seed", mc.seed)?;
            m.set_item("rng", raidlab_core::rng::Prng::ALGORITHM)?;
            m.set_item("p_array_loss", estimate(py, &mc.p_array_loss)?)?;
            m.set_item("p_sector_loss", estimate(py, &mc.p_sector_loss)?)?;
            m.set_item("bytes_lost", estimate(py, &mc.bytes_lost)?)?;
            m.set_item("trials_exposed", mc.trials_exposed)?;
            d.set_item("monte_carlo", m)?;
        }
        None => d.set_item("monte_carlo", py.None())?,
    }
    Ok(d)
}

/// Members dropped by the host's command timeout, per drive-hour: the read-error
/// rate (UBER and bytes read an hour), P(recovery > timeout) from the drive's behaviour
/// parameters (`erc_read_s`, `recovery_s_min`, `recovery_s_max`; others ignored) and the
/// product. Returns a dict of the three.
#[pyfunction]
pub fn reliability_timeout_drops<'py>(
    py: Python<'py>,
    uber: f64,
    read_bytes_per_hour: f64,
    behaviour: std::collections::BTreeMap<String, f64>,
    command_timeout_s: f64,
) -> PyResult<Bound<'py, PyDict>> {
    use raidlab_core::device::behaviour::Behaviour;
    use raidlab_core::reliability::drops::timeout_drops;
    let spec = Behaviour::from_params(&behaviour).map_err(errors::to_py)?;
    if !(command_timeout_s.is_finite() && (0.0..=1e6).contains(&command_timeout_s)) {
        return Err(errors::to_py(Error::new(
            raidlab_core::error::ErrorKind::InvalidConfig,
            format!("command timeout {command_timeout_s} s is out of range: 0 to 1000000 s"),
        )));
    }
    if !(read_bytes_per_hour.is_finite() && read_bytes_per_hour >= 0.0) {
        return Err(errors::to_py(Error::new(
            raidlab_core::error::ErrorKind::InvalidConfig,
            format!("bytes read per hour must be at least 0, got {read_bytes_per_hour}"),
        )));
    }
    let rates = timeout_drops(uber, read_bytes_per_hour, &spec, (command_timeout_s * 1e9).round() as u64);
    let d = PyDict::new(py);
    d.set_item("read_errors_per_hour", rates.read_errors_per_hour)?;
    d.set_item("p_recovery_over_timeout", rates.p_recovery_over_timeout)?;
    d.set_item("drops_per_hour", rates.drops_per_hour)?;
    Ok(d)
}

/// A drive's behaviour in an array (the core drive dict, as `sim` takes it): its
/// idle timers, ERC (`erc_read_s`, 0: none) and deep recovery bounds, in the declared units.
#[pyfunction]
pub fn drive_behaviour<'py>(py: Python<'py>, drive: &Bound<'py, PyDict>) -> PyResult<Bound<'py, PyDict>> {
    let choice = crate::sim::drive_from(drive)?;
    let b = raidlab_core::device::behaviour::for_drive(choice.kind, &choice.values);
    let s = |ns: u64| ns as f64 / 1e9;
    let d = PyDict::new(py);
    d.set_item("idle_park_s", s(b.idle_park_ns))?;
    d.set_item("park_wake_ms", s(b.park_wake_ns) * 1e3)?;
    d.set_item("spin_down_s", s(b.spin_down_ns))?;
    d.set_item("spin_up_s", s(b.spin_up_ns))?;
    d.set_item("erc_read_s", b.erc_read_ns.map_or(0.0, s))?;
    d.set_item("recovery_s_min", s(b.recovery_ns_min))?;
    d.set_item("recovery_s_max", s(b.recovery_ns_max))?;
    Ok(d)
}
