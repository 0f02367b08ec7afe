//! The deterministic discrete-event simulator.

pub mod rng;
pub mod time;

pub use rng::Prng;
pub use time::Nanos;
