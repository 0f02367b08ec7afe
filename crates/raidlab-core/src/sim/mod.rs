//! The deterministic discrete-event simulator.

pub mod engine;
pub mod histogram;
pub mod md;
pub mod offsets;
pub mod sched;
pub mod workload;

// Simulated time and the PRNG now live below `sim/` (`crate::time`, `crate::rng`) so that
// `device/` need not import from `sim/`. These re-exports keep the old paths
// (`sim::Nanos`, `sim::Prng`, `sim::time::*`, `sim::rng::*`) working for one release; new code
// uses the crate-root paths.
pub use crate::rng::{self, Prng};
pub use crate::time::{self, Nanos};
