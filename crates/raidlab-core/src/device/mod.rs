//! Drive models behind one interface the engine drives.
//!
//! A drive is a state machine in simulated time. The engine hands it commands with
//! [`Drive::submit`] (never more than [`Drive::queue_depth`] outstanding), asks when it next
//! changes state with [`Drive::next_event`], and at that time calls [`Drive::advance`], which
//! reports the commands that completed. A drive may complete commands out of order (command
//! queueing) and may do work of its own (destaging a write cache) between host commands.
//! Drives own their randomness: each gets a sub-seeded `Prng` at construction.
//!
//! Each model module exposes `DECLARATIONS: &[params::ParamDecl]` (every parameter it reads,
//! with unit, default, range and doc) and a constructor from resolved `params::ParamValues`.

mod any;
/// Idle power management and error recovery in arrays.
pub mod behaviour;
pub mod catalog;
pub mod disksim;
pub mod empirical;
pub mod null;
pub mod hdd;
pub mod params;
pub mod ssd;
pub mod volume;

pub use any::{AnyDrive, AsAny};

use crate::time::Nanos;

/// What a command asks of the drive.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Op {
    Read,
    Write,
    /// Make every acknowledged write durable (SYNCHRONIZE CACHE / FLUSH); no data moves.
    Flush,
}

/// One command from the host (or array controller) to a drive.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Command {
    /// Unique per drive among outstanding commands; echoed in the completion.
    pub id: u64,
    pub op: Op,
    /// First sector (512 B) on the drive.
    pub sector: u64,
    /// Length in sectors (0 only for `Op::Flush`).
    pub sectors: u32,
}

/// A finished command.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Completion {
    pub id: u64,
    pub time: Nanos,
}

/// Static facts about a drive for reports and `raidlab drives`.
#[derive(Clone, Debug, PartialEq)]
pub struct DriveInfo {
    /// `hdd`, `ssd` or `null`.
    pub kind: &'static str,
    pub capacity_bytes: u64,
    /// 0 for non-rotating drives.
    pub rpm: u32,
    /// e.g. `SAS 3Gb/s`, `SATA 3Gb/s`, `NVMe PCIe 3.0 x4`.
    pub interface: String,
    pub rotational: bool,
}

/// The engine's view of a drive model. (`AsAny`, implemented for every `'static` type, lets
/// the engine recognise the models it calls directly: [`AnyDrive`].)
pub trait Drive: AsAny {
    fn info(&self) -> &DriveInfo;
    /// Commands the drive accepts at once (its tagged/native command queue depth).
    fn queue_depth(&self) -> u32;
    /// Accepts a command at `now`. The engine never exceeds `queue_depth` outstanding.
    fn submit(&mut self, now: Nanos, command: Command);
    /// The next time the drive must be advanced: its next completion, or internal work that
    /// could produce one sooner; None if neither. A drive may defer internal work that cannot
    /// complete a command before its next completion, and run it on the next call that brings
    /// it to a later time (`submit`, `advance`, `run_to`), as of the times it was due.
    fn next_event(&self) -> Option<Nanos>;
    /// Runs the drive up to `now`, appending the commands that completed by then.
    fn advance(&mut self, now: Nanos, completed: &mut Vec<Completion>);
    /// Runs deferred internal work up to `now` (before reading `busy_nanos` at the end of a
    /// run). Must not complete commands: the engine has advanced the drive to every completion.
    fn run_to(&mut self, now: Nanos) {
        let _ = now;
    }
    /// Busy time so far (a command or internal work in service), for utilisation.
    fn busy_nanos(&self) -> Nanos;
}
