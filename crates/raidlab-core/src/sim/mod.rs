//! The deterministic discrete-event simulator.

pub mod engine;
pub mod histogram;
pub mod md;
pub mod offsets;
pub mod rng;
pub mod time;
pub mod workload;

pub use rng::Prng;
pub use time::Nanos;
pub mod sched;
