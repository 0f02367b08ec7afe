//! Reading the plain dicts Python hands the glue: a missing key or a value of the wrong type is
//! a `ConfigError` naming the key.

use crate::errors::config_error;
use pyo3::prelude::*;
use pyo3::types::PyDict;

/// The value under `key`.
pub fn item<'py>(dict: &Bound<'py, PyDict>, key: &str) -> PyResult<Bound<'py, PyAny>> {
    dict.get_item(key)?.ok_or_else(|| config_error(format!("configuration lacks '{key}'")))
}

/// The value under `key`, converted.
pub fn field<'py, T: FromPyObject<'py>>(dict: &Bound<'py, PyDict>, key: &str) -> PyResult<T> {
    item(dict, key)?
        .extract()
        .map_err(|_| config_error(format!("configuration field '{key}' has the wrong type")))
}

/// The dict under `key`.
pub fn sub<'py>(dict: &Bound<'py, PyDict>, key: &str) -> PyResult<Bound<'py, PyDict>> {
    item(dict, key)?
        .downcast_into::<PyDict>()
        .map_err(|_| config_error(format!("'{key}' must be a dict")))
}
