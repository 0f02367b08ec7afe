//! Parameter declarations: one per parameter (name, unit, default, range, doc), feeding
//! validation, CLI help, drive TOML files and the docs alike.

use crate::error::{Error, Result};
use std::collections::BTreeMap;

/// One declared numeric parameter.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct ParamDecl {
    /// Name as written in TOML files and reports; carries its unit (`seek_ms_avg`).
    pub name: &'static str,
    /// Unit in words (`ms`, `rpm`, `bytes`, `count`, `fraction`, `bool`).
    pub unit: &'static str,
    pub default: f64,
    pub min: f64,
    pub max: f64,
    /// One sentence for help text and docs.
    pub doc: &'static str,
}

/// Scalar parameter values by name, as read from a preset or a TOML file.
pub type ParamValues = BTreeMap<String, f64>;

impl ParamDecl {
    /// Checks one value against the declared range; the error names parameter, unit and range.
    pub fn check(&self, value: f64) -> Result<f64> {
        if !value.is_finite() || value < self.min || value > self.max {
            return Err(Error::new(
                crate::error::ErrorKind::InvalidDevice,
                format!(
                    "{} = {value} is out of range: expected {} to {} {}",
                    self.name, self.min, self.max, self.unit
                ),
            ));
        }
        Ok(value)
    }
}

/// Resolves `values` against `decls`: unknown names are errors, missing ones take defaults.
pub fn resolve(decls: &[ParamDecl], values: &ParamValues, what: &str) -> Result<ParamValues> {
    for name in values.keys() {
        if !decls.iter().any(|d| d.name == name) {
            return Err(Error::device(format!("unknown {what} parameter '{name}'")));
        }
    }
    let mut resolved = ParamValues::new();
    for decl in decls {
        let value = values.get(decl.name).copied().unwrap_or(decl.default);
        resolved.insert(decl.name.to_string(), decl.check(value)?);
    }
    Ok(resolved)
}

/// Reads a resolved value; panics if `resolve` did not produce it (a programming error).
pub fn get(values: &ParamValues, name: &str) -> f64 {
    *values.get(name).unwrap_or_else(|| panic!("parameter {name} was not resolved"))
}

/// Reads a resolved value that must be a whole number; the error names the parameter.
pub fn whole(values: &ParamValues, name: &str) -> Result<u64> {
    let value = get(values, name);
    if value.fract() != 0.0 {
        return Err(Error::device(format!("{name} = {value} must be a whole number")));
    }
    Ok(value as u64)
}
