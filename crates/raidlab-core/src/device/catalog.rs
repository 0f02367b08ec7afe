//! Every drive model and preset behind one door: resolve a preset name or a model kind plus
//! parameters into a validated choice, list presets for `raidlab drives`, and build drives.

use super::params::{ParamDecl, ParamValues};
use super::{empirical, hdd, null, ssd, volume, Drive};
use crate::error::{Error, Result};
use crate::rng::Prng;

/// The model families.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum DriveKind {
    Hdd,
    Ssd,
    Null,
    /// Fitted from measurements (`raidlab calibrate`); no presets.
    Empirical,
    /// A cloud block volume (provisioned IOPS and throughput, credit buckets).
    Volume,
}

impl DriveKind {
    pub fn parse(text: &str) -> Result<DriveKind> {
        match text {
            "hdd" => Ok(DriveKind::Hdd),
            "ssd" => Ok(DriveKind::Ssd),
            "null" => Ok(DriveKind::Null),
            "empirical" => Ok(DriveKind::Empirical),
            "volume" => Ok(DriveKind::Volume),
            _ => Err(Error::device(format!("unknown drive kind '{text}': expected hdd, ssd, null, empirical or volume"))),
        }
    }
    pub fn name(self) -> &'static str {
        match self {
            DriveKind::Hdd => "hdd",
            DriveKind::Ssd => "ssd",
            DriveKind::Null => "null",
            DriveKind::Empirical => "empirical",
            DriveKind::Volume => "volume",
        }
    }
    /// Every parameter the model reads (name, unit, default, range, doc).
    pub fn declarations(self) -> &'static [ParamDecl] {
        match self {
            DriveKind::Hdd => hdd::DECLARATIONS,
            DriveKind::Ssd => ssd::DECLARATIONS,
            DriveKind::Null => null::DECLARATIONS,
            DriveKind::Empirical => empirical::DECLARATIONS,
            DriveKind::Volume => volume::DECLARATIONS,
        }
    }
}


/// A preset as `raidlab drives` lists it.
#[derive(Clone, Debug, PartialEq)]
pub struct PresetInfo {
    pub name: &'static str,
    pub kind: DriveKind,
    pub description: &'static str,
    pub interface: &'static str,
    pub source: &'static str,
    pub values: ParamValues,
}

/// Every preset, HDDs first.
pub fn presets() -> Vec<PresetInfo> {
    let mut all = Vec::new();
    for p in hdd::presets::PRESETS {
        let (name, description, interface, source) = (p.name, p.description, p.interface, p.source);
        all.push(PresetInfo { name, kind: DriveKind::Hdd, description, interface, source, values: p.values() });
    }
    for p in ssd::presets::PRESETS {
        let (name, description, interface, source) = (p.name, p.description, p.interface, p.source);
        all.push(PresetInfo { name, kind: DriveKind::Ssd, description, interface, source, values: p.values() });
    }
    for p in volume::PRESETS {
        let (name, description, interface, source) = (p.name, p.description, p.interface, p.source);
        all.push(PresetInfo { name, kind: DriveKind::Volume, description, interface, source, values: p.values() });
    }
    all.push(PresetInfo {
        name: "null",
        kind: DriveKind::Null,
        description: null::PRESET_DESCRIPTION,
        interface: "none",
        source: null::PRESET_SOURCE,
        values: null::preset("null").expect("null preset"),
    });
    all
}

/// A validated drive model: kind, parameter values and the interface label to report.
#[derive(Clone, Debug, PartialEq)]
pub struct DriveChoice {
    pub kind: DriveKind,
    pub values: ParamValues,
    pub interface: String,
    /// The preset it came from, if any.
    pub preset: Option<String>,
    /// A full HDD description (e.g. imported from a DiskSim model, `device::disksim`); when set
    /// it is used instead of `values`.
    pub hdd_spec: Option<Box<hdd::HddSpec>>,
}

impl DriveChoice {
    /// A preset (optionally with parameters overridden) or a kind with parameters.
    pub fn resolve(preset: Option<&str>, kind: Option<&str>, params: &ParamValues) -> Result<DriveChoice> {
        let (kind, mut values, interface, preset) = match preset {
            Some(name) => {
                let found = presets().into_iter().find(|p| p.name == name).ok_or_else(|| {
                    let names: Vec<&str> = presets().iter().map(|p| p.name).collect();
                    Error::device(format!("unknown drive preset '{name}': expected one of {}", names.join(", ")))
                })?;
                (found.kind, found.values, found.interface.to_string(), Some(name.to_string()))
            }
            None => {
                let kind = DriveKind::parse(kind.ok_or_else(|| Error::device("a drive needs a preset or a kind"))?)?;
                (kind, ParamValues::new(), "unspecified".to_string(), None)
            }
        };
        for (name, value) in params {
            values.insert(name.clone(), *value);
        }
        let choice = DriveChoice { kind, values, interface, preset, hdd_spec: None };
        choice.check()?;
        Ok(choice)
    }

    /// An HDD from a complete spec (checked here).
    pub fn from_hdd_spec(spec: hdd::HddSpec) -> Result<DriveChoice> {
        spec.validate()?;
        let interface = spec.interface.clone();
        Ok(DriveChoice { kind: DriveKind::Hdd, values: ParamValues::new(), interface, preset: None, hdd_spec: Some(Box::new(spec)) })
    }

    fn check(&self) -> Result<()> {
        if let Some(spec) = &self.hdd_spec {
            return spec.validate();
        }
        match self.kind {
            DriveKind::Hdd => hdd::HddSpec::from_params(&self.values).map(|_| ()),
            DriveKind::Ssd => ssd::SsdSpec::from_params(&self.values).map(|_| ()),
            DriveKind::Null => null::NullSpec::from_params(&self.values).map(|_| ()),
            DriveKind::Empirical => empirical::EmpiricalSpec::from_params(&self.values).map(|_| ()),
            DriveKind::Volume => volume::VolumeSpec::from_params(&self.values).map(|_| ()),
        }
    }

    pub fn capacity_bytes(&self) -> u64 {
        if let Some(spec) = &self.hdd_spec {
            return spec.capacity_sectors * 512;
        }
        let declared = self.kind.declarations().iter().find(|d| d.name == "capacity_bytes");
        let value = self.values.get("capacity_bytes").copied().or(declared.map(|d| d.default));
        value.expect("every model declares capacity_bytes") as u64
    }

    /// Builds one drive. `write_cache` overrides the HDD's own write cache setting (RAID
    /// controllers switch it off).
    pub fn build(&self, prng: Prng, write_cache: Option<bool>) -> Box<dyn Drive> {
        if let Some(spec) = &self.hdd_spec {
            let mut spec = (**spec).clone();
            if let Some(on) = write_cache {
                spec.write_cache = on && spec.write_buffer_sectors > 0;
            }
            return Box::new(hdd::Hdd::new(spec, prng));
        }
        let mut values = self.values.clone();
        if let (DriveKind::Hdd, Some(on)) = (self.kind, write_cache) {
            values.insert("write_cache".into(), if on { 1.0 } else { 0.0 });
        }
        match self.kind {
            DriveKind::Hdd => {
                let mut spec = hdd::HddSpec::from_params(&values).expect("checked in resolve");
                spec.interface = self.interface.clone();
                Box::new(hdd::Hdd::new(spec, prng))
            }
            DriveKind::Ssd => {
                let mut spec = ssd::SsdSpec::from_params(&values).expect("checked in resolve");
                spec.interface = self.interface.clone();
                Box::new(ssd::Ssd::new(spec, prng))
            }
            DriveKind::Null => {
                Box::new(null::NullDrive::new(null::NullSpec::from_params(&values).expect("checked"), prng))
            }
            DriveKind::Empirical => Box::new(empirical::EmpiricalDrive::new(
                empirical::EmpiricalSpec::from_params(&values).expect("checked in resolve"),
                prng,
            )),
            DriveKind::Volume => {
                let mut volume = volume::Volume::new(volume::VolumeSpec::from_params(&values).expect("checked in resolve"), prng);
                volume.set_interface(&self.interface);
                Box::new(volume)
            }
        }
    }
}
