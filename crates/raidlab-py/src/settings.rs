//! Glue for the run settings' declarations (`raidlab_core::settings`): each becomes a dict
//! Python builds its options, keys and fields from.

use pyo3::prelude::*;
use pyo3::types::{PyDict, PyTuple};
use raidlab_core::settings::{Number, Setting, Value, CONTROLLER_SETTINGS, RUN_SETTINGS};

fn number(py: Python<'_>, value: Number) -> PyResult<PyObject> {
    Ok(match value {
        Number::Int(v) => v.into_pyobject(py)?.into_any().unbind(),
        Number::Float(v) => v.into_pyobject(py)?.into_any().unbind(),
    })
}

fn value(py: Python<'_>, value: Value) -> PyResult<PyObject> {
    Ok(match value {
        Value::Absent => py.None(),
        Value::Int(v) => number(py, Number::Int(v))?,
        Value::Float(v) => number(py, Number::Float(v))?,
        Value::Bool(v) => pyo3::types::PyBool::new(py, v).to_owned().into_any().unbind(),
        Value::Text(v) => v.into_pyobject(py)?.into_any().unbind(),
        Value::Empty => PyTuple::empty(py).into_any().unbind(),
    })
}

/// One declaration as a dict: name, unit, kind, default, min, max, choices, doc, cli_help,
/// layer, scope (None where a declaration has no default, range, choices or CLI help).
fn setting_dict<'py>(py: Python<'py>, setting: &Setting) -> PyResult<Bound<'py, PyDict>> {
    let dict = PyDict::new(py);
    dict.set_item("name", setting.name)?;
    dict.set_item("unit", setting.unit)?;
    dict.set_item("kind", setting.kind.name())?;
    dict.set_item("default", value(py, setting.default)?)?;
    dict.set_item("min", setting.min.map(|n| number(py, n)).transpose()?)?;
    dict.set_item("max", setting.max.map(|n| number(py, n)).transpose()?)?;
    let choices = (!setting.choices.is_empty()).then(|| setting.choices.to_vec());
    dict.set_item("choices", choices)?;
    dict.set_item("doc", setting.doc)?;
    dict.set_item("cli_help", setting.cli_help)?;
    dict.set_item("layer", setting.layer.name())?;
    dict.set_item("scope", setting.scope.name())?;
    Ok(dict)
}

/// Every run setting's declaration, in the Python API's field order.
#[pyfunction]
pub fn run_settings(py: Python<'_>) -> PyResult<Vec<Bound<'_, PyDict>>> {
    RUN_SETTINGS.iter().map(|s| setting_dict(py, s)).collect()
}

/// Every hardware controller parameter's declaration, in `raidlab controllers --params` order.
#[pyfunction]
pub fn controller_settings(py: Python<'_>) -> PyResult<Vec<Bound<'_, PyDict>>> {
    CONTROLLER_SETTINGS.iter().map(|s| setting_dict(py, s)).collect()
}

/// `ram_gib` as the core takes it: bytes, whole 4 KiB pages.
#[pyfunction]
pub fn ram_bytes(gib: f64) -> u64 {
    raidlab_core::sim::engine::config::ram_bytes(gib)
}

/// `partition_gib` as the core takes it: bytes, whole 1 MiB units (0: the whole drive).
#[pyfunction]
pub fn partition_bytes(gib: f64) -> u64 {
    raidlab_core::sim::engine::config::partition_bytes(gib)
}
