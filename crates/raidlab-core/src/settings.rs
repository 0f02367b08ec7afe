//! Run settings: one declaration per setting (name, unit, kind, default, range, help, layer),
//! as `device/params.rs` declares every drive parameter once.
//!
//! The names are the user's: the `raidlab sim` option (`--nr-requests`), the designs- and
//! sweep-file key, the Python API keyword (`raidlab.Design(nr_requests=...)`) and the field of
//! the core's configuration that holds the value where its unit is the user's (a value kept in
//! another unit, such as `max_time_ns` for `max_time_s`, names that unit). The core's
//! `Default`s read [`RUN_SETTINGS`]' and [`CONTROLLER_SETTINGS`]' defaults, the glue checks a
//! value with [`Setting::check`], and Python builds its CLI options, TOML keys and dataclass
//! fields from `raidlab._core.run_settings()` / `controller_settings()`.

use crate::error::{Error, ErrorKind, Result};

pub mod controller;
pub mod run;

pub use controller::CONTROLLER_SETTINGS;
pub use run::{MAX_SIM_TIME_S, RUN_SETTINGS};

/// A bound or default as the user writes it: a whole number or a real one (kept apart so that
/// help and error text print `1048576`, not `1048576.0`, where the declaration says so).
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Number {
    Int(u64),
    Float(f64),
}

impl Number {
    /// The number as a real (for comparisons).
    pub const fn as_f64(self) -> f64 {
        match self {
            Number::Int(v) => v as f64,
            Number::Float(v) => v,
        }
    }
}

impl std::fmt::Display for Number {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Number::Int(v) => write!(f, "{v}"),
            Number::Float(v) => write!(f, "{v}"),
        }
    }
}

/// A setting's default value.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Value {
    /// No value: the setting is off unless given (`layout`: mdadm's; `host`: no host limit).
    Absent,
    Int(u64),
    Float(f64),
    Bool(bool),
    Text(&'static str),
    /// An empty list (no failed members, no scripted events, no controller overrides).
    Empty,
}

/// A value given for a setting, as a user's file or the glue hands it over.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Given<'a> {
    Number(f64),
    Flag(bool),
    Text(&'a str),
}

impl Value {
    /// The default as a given value (None where there is none or it is a list).
    pub fn given(self) -> Option<Given<'static>> {
        match self {
            Value::Int(v) => Some(Given::Number(v as f64)),
            Value::Float(v) => Some(Given::Number(v)),
            Value::Bool(v) => Some(Given::Flag(v)),
            Value::Text(v) => Some(Given::Text(v)),
            Value::Absent | Value::Empty => None,
        }
    }
}

/// What a setting's value is.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Kind {
    Int,
    Float,
    Bool,
    /// One of the declared `choices`.
    Choice,
    /// Free text the core parses itself (a RAID level, a layout name).
    Text,
    /// A value Python reads itself (a drive model, a controller preset or file, a host preset,
    /// member lists, scripted events, KEY=VALUE pairs, START+DURATION).
    Structured,
}

impl Kind {
    pub const fn name(self) -> &'static str {
        match self {
            Kind::Int => "int",
            Kind::Float => "float",
            Kind::Bool => "bool",
            Kind::Choice => "choice",
            Kind::Text => "text",
            Kind::Structured => "structured",
        }
    }
}

/// The layer of the I/O stack a setting belongs to.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Layer {
    Array,
    Md,
    Controller,
    Block,
    PageCache,
    Host,
    Drive,
    Rebuild,
    Run,
}

impl Layer {
    pub const fn name(self) -> &'static str {
        match self {
            Layer::Array => "array",
            Layer::Md => "md",
            Layer::Controller => "controller",
            Layer::Block => "block",
            Layer::PageCache => "page_cache",
            Layer::Host => "host",
            Layer::Drive => "drive",
            Layer::Rebuild => "rebuild",
            Layer::Run => "run",
        }
    }
}

/// Where a setting is given: the design (the array and everything below the host, what a
/// design in `raidlab compare` varies), the run's options (seed, bounds, failures), or a
/// hardware controller's parameters (`--controller-opt KEY=VALUE`, controller TOML files).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Scope {
    Design,
    Options,
    Controller,
}

impl Scope {
    pub const fn name(self) -> &'static str {
        match self {
            Scope::Design => "design",
            Scope::Options => "options",
            Scope::Controller => "controller",
        }
    }
}

/// One setting's one declaration.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Setting {
    /// The user's name: CLI option (with dashes), TOML key, Python keyword.
    pub name: &'static str,
    /// Unit in words (`KiB`, `s`, `%`, `requests`; empty where there is none).
    pub unit: &'static str,
    pub kind: Kind,
    pub default: Value,
    /// Range, inclusive (numbers only).
    pub min: Option<Number>,
    pub max: Option<Number>,
    /// The values a `Kind::Choice` setting takes.
    pub choices: &'static [&'static str],
    /// The meaning, in full (the Python API's documentation).
    pub doc: &'static str,
    /// The shorter text of the CLI option's `--help` (None: no option of its own).
    pub cli_help: Option<&'static str>,
    pub layer: Layer,
    pub scope: Scope,
}

/// The fields every declaration below starts from.
const BLANK: Setting = Setting {
    name: "",
    unit: "",
    kind: Kind::Int,
    default: Value::Absent,
    min: None,
    max: None,
    choices: &[],
    doc: "",
    cli_help: None,
    layer: Layer::Run,
    scope: Scope::Design,
};

impl Setting {
    /// The default of a whole-number setting.
    pub const fn default_int(&self) -> u64 {
        match self.default {
            Value::Int(v) => v,
            _ => panic!("setting has no whole-number default"),
        }
    }

    /// The default of a real-number setting.
    pub const fn default_float(&self) -> f64 {
        match self.default {
            Value::Float(v) => v,
            Value::Int(v) => v as f64,
            _ => panic!("setting has no numeric default"),
        }
    }

    /// The default of a flag.
    pub const fn default_bool(&self) -> bool {
        match self.default {
            Value::Bool(v) => v,
            _ => panic!("setting has no flag default"),
        }
    }

    /// The default of a choice or text setting.
    pub const fn default_text(&self) -> &'static str {
        match self.default {
            Value::Text(v) => v,
            _ => panic!("setting has no text default"),
        }
    }

    /// The index of the default among `choices`.
    pub fn default_choice(&self) -> usize {
        self.choice_index(self.default_text()).expect("a choice setting's default is one of its choices")
    }

    /// Where `value` is among `choices`.
    pub fn choice_index(&self, value: &str) -> Option<usize> {
        self.choices.iter().position(|c| *c == value)
    }

    /// `value` checked against the declared range: finite, whole where the kind is, and from
    /// `min` to `max`; the error names the setting, the range and the unit.
    pub fn check(&self, value: f64) -> Result<f64> {
        let (Some(min), Some(max)) = (self.min, self.max) else { return Ok(value) };
        let whole = self.kind != Kind::Int || value.fract() == 0.0;
        if !value.is_finite() || !whole || value < min.as_f64() || value > max.as_f64() {
            let unit = if self.unit.is_empty() { String::new() } else { format!(" {}", self.unit) };
            return Err(Error::new(
                ErrorKind::InvalidConfig,
                format!("{} = {value} is out of range: expected {min} to {max}{unit}", self.name),
            ));
        }
        Ok(value)
    }

    /// `value` checked against the declared choices.
    pub fn check_choice(&self, value: &str) -> Result<usize> {
        self.choice_index(value).ok_or_else(|| {
            Error::new(
                ErrorKind::InvalidConfig,
                format!("{} '{value}': expected one of {}", self.name, self.choices.join(", ")),
            )
        })
    }
}

/// The run setting named `name`.
pub fn run_setting(name: &str) -> Option<&'static Setting> {
    RUN_SETTINGS.iter().find(|s| s.name == name)
}

/// The controller parameter named `name`.
pub fn controller_setting(name: &str) -> Option<&'static Setting> {
    CONTROLLER_SETTINGS.iter().find(|s| s.name == name)
}
