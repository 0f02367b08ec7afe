//! Members that misbehave in a run (`device/behaviour.rs` decides when): each such drive is
//! wrapped in its behaviour before the block layer queues to it.

use crate::device::behaviour::{Behaved, Behaviour};
use crate::device::Drive;
use crate::rng::Prng;
use crate::sim::engine::config::{ArrayEventKind, SimConfig};

/// Wraps each member that can misbehave in this run (an idle timer, an error rate, or a
/// scripted latent error) in its behaviour; the others stay the bare model.
pub(crate) fn wrap_drives(config: &SimConfig, drives: Vec<Box<dyn Drive>>) -> Vec<Box<dyn Drive>> {
    let faults = &config.drive_faults;
    drives
        .into_iter()
        .enumerate()
        .map(|(index, drive)| {
            let spec = faults.behaviours.get(index).copied().unwrap_or_default();
            let scripted = config.timeline.iter().any(|e| e.kind == ArrayEventKind::LatentError(index as u32));
            if !spec.shows_by_itself() && !scripted {
                return drive;
            }
            let prng = Prng::derive(config.seed, "drive-behaviour", index as u64);
            Box::new(Behaved::new(drive, spec, faults.command_timeout_ns, prng)) as Box<dyn Drive>
        })
        .collect()
}

/// Checks the per-member behaviours match the array.
pub(crate) fn check_behaviours(config: &SimConfig, devices: u32) -> crate::error::Result<()> {
    let n = config.drive_faults.behaviours.len();
    if n != 0 && n != devices as usize {
        return Err(crate::error::Error::new(
            crate::error::ErrorKind::InvalidConfig,
            format!("{n} drive behaviours for {devices} members"),
        ));
    }
    let _ = Behaviour::default();
    Ok(())
}
