//! [`AnyDrive`]: the engine's handle on a drive, calling the HDD model without dynamic dispatch.
//!
//! The [`Drive`] trait stays the one interface every model implements and every caller
//! (`Simulation::new`, the catalog, tests with drives of their own) hands around as
//! `Box<dyn Drive>`. Only the engine's per-request calls (`submit`, `next_event`, `advance`,
//! several per host I/O) are hot, and through a vtable they are never inlined. So the engine
//! converts each drive once, when it builds its members: a known model becomes its own
//! variant, called directly; anything else keeps going through the trait.

use super::hdd::Hdd;
use super::{Command, Completion, Drive, DriveInfo};
use crate::time::Nanos;
use std::any::Any;

/// Lets a boxed drive be recognised by its concrete type (a helper supertrait of [`Drive`],
/// implemented for every `'static` type; `dyn Drive` cannot be upcast to `dyn Any` before Rust
/// 1.86).
pub trait AsAny: Any {
    fn as_any(&self) -> &dyn Any;
    /// (The engine reaches a [`super::behaviour::Behaved`] member's behaviour through it.)
    fn as_any_mut(&mut self) -> &mut dyn Any;
    fn into_any(self: Box<Self>) -> Box<dyn Any>;
}

impl<T: Any> AsAny for T {
    fn as_any(&self) -> &dyn Any {
        self
    }
    fn as_any_mut(&mut self) -> &mut dyn Any {
        self
    }
    fn into_any(self: Box<Self>) -> Box<dyn Any> {
        self
    }
}

/// A drive as the engine holds it: the HDD model by its type, any other through the trait.
pub enum AnyDrive {
    Hdd(Box<Hdd>),
    Other(Box<dyn Drive>),
}

impl From<Box<dyn Drive>> for AnyDrive {
    fn from(drive: Box<dyn Drive>) -> AnyDrive {
        // `(*drive)`: the box itself is `Any` too, and would answer for itself.
        if (*drive).as_any().is::<Hdd>() {
            AnyDrive::Hdd(drive.into_any().downcast().expect("checked to be an Hdd"))
        } else {
            AnyDrive::Other(drive)
        }
    }
}

/// Forwards a call to whichever drive it is.
macro_rules! each {
    ($self:expr, $d:ident => $call:expr) => {
        match $self {
            AnyDrive::Hdd($d) => $call,
            AnyDrive::Other($d) => $call,
        }
    };
}

impl AnyDrive {
    /// The drive's behaviour wrapper (idle power management, error recovery), when the engine
    /// gave it one.
    pub fn behaved(&mut self) -> Option<&mut super::behaviour::Behaved> {
        match self {
            AnyDrive::Other(drive) => (**drive).as_any_mut().downcast_mut(),
            AnyDrive::Hdd(_) => None,
        }
    }
}

impl Drive for AnyDrive {
    fn info(&self) -> &DriveInfo {
        each!(self, d => d.info())
    }
    fn queue_depth(&self) -> u32 {
        each!(self, d => d.queue_depth())
    }
    #[inline]
    fn submit(&mut self, now: Nanos, command: Command) {
        each!(self, d => d.submit(now, command))
    }
    #[inline]
    fn next_event(&self) -> Option<Nanos> {
        each!(self, d => d.next_event())
    }
    #[inline]
    fn advance(&mut self, now: Nanos, completed: &mut Vec<Completion>) {
        each!(self, d => d.advance(now, completed))
    }
    fn run_to(&mut self, now: Nanos) {
        each!(self, d => d.run_to(now))
    }
    fn busy_nanos(&self) -> Nanos {
        each!(self, d => d.busy_nanos())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::device::catalog::DriveChoice;
    use crate::device::params::ParamValues;
    use crate::rng::Prng;

    fn build(preset: Option<&str>, kind: Option<&str>) -> Box<dyn Drive> {
        let choice = DriveChoice::resolve(preset, kind, &ParamValues::new()).unwrap();
        choice.build(Prng::new(1), None)
    }

    #[test]
    fn an_hdd_is_called_directly_and_others_through_the_trait() {
        let hdd = AnyDrive::from(build(Some("cheetah-10k7"), None));
        assert!(matches!(hdd, AnyDrive::Hdd(_)));
        assert_eq!(hdd.info().kind, "hdd");
        let ssd = AnyDrive::from(build(None, Some("ssd")));
        assert!(matches!(ssd, AnyDrive::Other(_)));
        assert_eq!(ssd.info().kind, "ssd");
    }
}
