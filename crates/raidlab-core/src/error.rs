//! The core's one error type.
//!
//! An [`Error`] is an *operating* error: the caller gave input that cannot be honoured (an array
//! md would refuse, a request outside the array, a failure set the layout cannot survive). A
//! broken invariant inside the core is a bug and panics instead.

use std::fmt;

/// What went wrong, in categories the Python layer maps to one exception class each.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum ErrorKind {
    /// An array md would refuse to create: device count, chunk, member sizes.
    InvalidArray,
    /// A layout name or number that is unknown or invalid for the level.
    InvalidLayout,
    /// A request outside the array or otherwise malformed (zero length, unaligned).
    InvalidRequest,
    /// A failure set the layout cannot survive: the data asked for is gone.
    DataLoss,
    /// A drive model or preset that cannot be built (unknown parameter, value out of range).
    InvalidDevice,
    /// A workload that cannot be run (sizes, depths, mixes out of range).
    InvalidWorkload,
    /// A simulation configuration that cannot be run (limits, schedulers, controllers).
    InvalidConfig,
}

impl ErrorKind {
    /// A stable lower-case name, used in messages and by the Python bindings.
    pub fn name(self) -> &'static str {
        match self {
            ErrorKind::InvalidArray => "invalid array",
            ErrorKind::InvalidLayout => "invalid layout",
            ErrorKind::InvalidRequest => "invalid request",
            ErrorKind::DataLoss => "data loss",
            ErrorKind::InvalidDevice => "invalid device",
            ErrorKind::InvalidWorkload => "invalid workload",
            ErrorKind::InvalidConfig => "invalid config",
        }
    }
}

/// An operating error with a one-line, human-readable message.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Error {
    pub kind: ErrorKind,
    pub message: String,
}

impl Error {
    pub fn new(kind: ErrorKind, message: impl Into<String>) -> Error {
        // Messages quote user input; keep them one line whatever the input held.
        let message: String = message.into().replace(['\n', '\r'], " ");
        Error { kind, message }
    }
    pub fn array(message: impl Into<String>) -> Error {
        Error::new(ErrorKind::InvalidArray, message)
    }
    pub fn layout(message: impl Into<String>) -> Error {
        Error::new(ErrorKind::InvalidLayout, message)
    }
    pub fn request(message: impl Into<String>) -> Error {
        Error::new(ErrorKind::InvalidRequest, message)
    }
    pub fn data_loss(message: impl Into<String>) -> Error {
        Error::new(ErrorKind::DataLoss, message)
    }
    pub fn device(message: impl Into<String>) -> Error {
        Error::new(ErrorKind::InvalidDevice, message)
    }
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.message)
    }
}

impl std::error::Error for Error {}

/// The core's result type.
pub type Result<T> = std::result::Result<T, Error>;
