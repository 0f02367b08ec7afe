//! The one place core errors become Python exceptions.
//!
//! `RaidlabError` is the base class; each [`ErrorKind`] has exactly one subclass. The classes are
//! defined here (not in Python) and re-exported by `raidlab.errors` and `raidlab`.

use pyo3::create_exception;
use pyo3::exceptions::PyException;
use pyo3::prelude::*;
use raidlab_core::{Error, ErrorKind};

create_exception!(
    raidlab,
    RaidlabError,
    PyException,
    "Base class of every error raidlab raises for input it cannot honour."
);
create_exception!(
    raidlab,
    ArrayError,
    RaidlabError,
    "An array md would refuse to create: level, device count, chunk or member sizes."
);
create_exception!(
    raidlab,
    LayoutError,
    RaidlabError,
    "A layout name that is unknown or not valid for the level and device count."
);
create_exception!(
    raidlab,
    RequestError,
    RaidlabError,
    "A request outside the array or otherwise malformed."
);
create_exception!(
    raidlab,
    DataLossError,
    RaidlabError,
    "A failure set the layout cannot survive: the data asked for is gone."
);
create_exception!(
    raidlab,
    DeviceError,
    RaidlabError,
    "A drive model or preset that cannot be built (unknown parameter, value out of range)."
);
create_exception!(
    raidlab,
    WorkloadError,
    RaidlabError,
    "A workload that cannot be run (sizes, depths, mixes out of range)."
);
create_exception!(
    raidlab,
    ConfigError,
    RaidlabError,
    "A simulation configuration that cannot be run (limits, schedulers, controllers)."
);

/// Converts a core error into the Python exception of its kind, keeping the one-line message.
pub fn to_py(error: Error) -> PyErr {
    let message = error.message;
    match error.kind {
        ErrorKind::InvalidArray => ArrayError::new_err(message),
        ErrorKind::InvalidLayout => LayoutError::new_err(message),
        ErrorKind::InvalidRequest => RequestError::new_err(message),
        ErrorKind::DataLoss => DataLossError::new_err(message),
        ErrorKind::InvalidDevice => DeviceError::new_err(message),
        ErrorKind::InvalidWorkload => WorkloadError::new_err(message),
        ErrorKind::InvalidConfig => ConfigError::new_err(message),
    }
}

/// Adds the exception classes to the extension module.
pub fn register(module: &Bound<'_, PyModule>) -> PyResult<()> {
    let py = module.py();
    module.add("RaidlabError", py.get_type::<RaidlabError>())?;
    module.add("ArrayError", py.get_type::<ArrayError>())?;
    module.add("LayoutError", py.get_type::<LayoutError>())?;
    module.add("RequestError", py.get_type::<RequestError>())?;
    module.add("DataLossError", py.get_type::<DataLossError>())?;
    module.add("DeviceError", py.get_type::<DeviceError>())?;
    module.add("WorkloadError", py.get_type::<WorkloadError>())?;
    module.add("ConfigError", py.get_type::<ConfigError>())?;
    Ok(())
}

/// A configuration the glue cannot read (a missing key, a wrong type, a value out of range):
/// `ConfigError`, like every other bad configuration.
pub fn config_error(message: String) -> PyErr {
    to_py(Error::new(ErrorKind::InvalidConfig, message))
}
