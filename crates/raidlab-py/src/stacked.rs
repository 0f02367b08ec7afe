//! Glue for stacked arrays (md arrays of md arrays): a configuration dict whose level names a stack
//! (`1+0`, `5+0`, `6+0`, `0+1`) becomes a core `StackSpec`. No RAID logic lives here.

use crate::dict::field;
use crate::errors;
use pyo3::prelude::*;
use pyo3::types::PyDict;
use raidlab_core::layout::{parse_stacked, Array, Layout, StackSpec, DEFAULT_CHUNK_KIB};

/// An optional key of `dict`, converted, or `default` when absent or None.
fn optional<'py, T: FromPyObject<'py>>(dict: &Bound<'py, PyDict>, key: &str, default: T) -> PyResult<T> {
    match dict.get_item(key)? {
        Some(value) if !value.is_none() => field(dict, key),
        _ => Ok(default),
    }
}

/// The stack `dict` describes (keys level, layout, chunk_kib and optional inner_devices,
/// outer_chunk_kib), with `devices` members of `member_kib`; None when the level is not stacked.
pub fn stack_from(dict: &Bound<'_, PyDict>, devices: u32, member_kib: u64) -> PyResult<Option<StackSpec>> {
    let level: String = field(dict, "level")?;
    let Some((name, _, inner_level)) = parse_stacked(&level) else { return Ok(None) };
    let layout = field::<Option<String>>(dict, "layout")?
        .map(|text| Layout::parse(inner_level, &text))
        .transpose()
        .map_err(errors::to_py)?;
    let inner_devices: u32 = optional(dict, "inner_devices", 0)?;
    let outer_chunk_kib: u64 = optional(dict, "outer_chunk_kib", DEFAULT_CHUNK_KIB)?;
    let chunk_kib: u64 = field(dict, "chunk_kib")?;
    StackSpec::from_counts(name, devices, inner_devices, layout, chunk_kib, outer_chunk_kib, member_kib)
        .map(Some)
        .map_err(errors::to_py)
}

/// The canonical name of a stacked level ("raid50" → "5+0"), or None for any other level.
#[pyfunction]
pub fn parse_stacked_level(text: &str) -> Option<String> {
    parse_stacked(text).map(|s| s.0.to_string())
}

/// A stack's geometry for reports and setup commands. `config` has level, layout, chunk_kib,
/// devices, member_kib and optional inner_devices, outer_chunk_kib.
#[pyfunction]
pub fn stacked_geometry<'py>(py: Python<'py>, config: &Bound<'py, PyDict>) -> PyResult<Bound<'py, PyDict>> {
    let devices: u32 = field(config, "devices")?;
    let member_kib: u64 = field(config, "member_kib")?;
    let spec = stack_from(config, devices, member_kib)?
        .ok_or_else(|| errors::config_error("not a stacked level: expected 1+0, 5+0, 6+0 or 0+1".into()))?;
    let array = Array::stacked(&spec).map_err(errors::to_py)?;
    let stack = array.stack().expect("a stacked array");
    let d = PyDict::new(py);
    d.set_item("name", stack.name())?;
    d.set_item("outer_level", stack.outer().level().number())?;
    d.set_item("inner_level", stack.inner().level().number())?;
    d.set_item("inner_layout", match stack.inner().layout() {
        Layout::Mirror => None,
        other => Some(other.name()),
    })?;
    d.set_item("sets", stack.sets())?;
    d.set_item("inner_devices", stack.per_set())?;
    d.set_item("inner_chunk_kib", stack.inner().chunk_bytes() / 1024)?;
    d.set_item("outer_chunk_kib", stack.outer().chunk_bytes() / 1024)?;
    d.set_item("outer_offset_sectors", stack.offset_sectors())?;
    d.set_item("capacity_bytes", array.capacity_bytes())?;
    d.set_item("inner_capacity_bytes", stack.inner().capacity_bytes())?;
    d.set_item("io_min_bytes", array.io_min_bytes())?;
    d.set_item("io_opt_bytes", array.io_opt_bytes())?;
    d.set_item("copies", array.copies())?;
    Ok(d)
}
