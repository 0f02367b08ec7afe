//! The deterministic discrete-event simulator.

pub mod block;
pub mod engine;
pub mod host;
pub mod histogram;
pub mod instance;
pub mod controller;
pub mod md;
pub mod offsets;
pub mod pagecache;
pub mod raid;
pub mod steady;
pub mod workload;

// Simulated time and the PRNG live below `sim/` (`crate::time`, `crate::rng`): `device/` uses them too.
