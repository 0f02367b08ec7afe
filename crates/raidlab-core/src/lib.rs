//! raidlab-core: the pure-Rust heart of raidlab.
//!
//! This crate knows where Linux md puts every byte and what member I/O each array request becomes.
//! It does no I/O of its own: no files, no network, no clock. Everything it needs is passed in,
//! and everything it computes is returned as plain data.
//!
//! Start reading at [`layout::Array`]: build one from an [`layout::ArraySpec`], then ask it for
//! capacity, topology, the map from array sectors to member sectors and back, and per-row stripe
//! roles. [`parity`] holds the XOR/GF(2^8) maths and [`plan`] the member I/O plans.
//!
//! Shared basics that every other module may use and that use nothing above them: [`time`]
//! (simulated time, [`time::Nanos`]), [`rng`] (the named PRNG, [`rng::Prng`]), [`bits`],
//! [`error`] and the sector/page constants below. `device/` sits below `sim/` and imports
//! nothing from it (`tests/layering.rs` checks the sources).

pub mod bits;
pub mod device;
pub mod error;
pub mod layout;
pub mod parity;
pub mod plan;
pub mod reliability;
pub mod rng;
pub mod settings;
pub mod sim;
pub mod time;

pub use error::{Error, ErrorKind, Result};

/// Bytes in one sector, the unit md and the block layer count in.
pub const SECTOR_BYTES: u64 = 512;
/// Bytes in one md stripe-cache page (`STRIPE_SIZE` with 4 KiB pages).
pub const PAGE_BYTES: u64 = 4096;
/// Sectors in one md stripe-cache page.
pub const PAGE_SECTORS: u64 = PAGE_BYTES / SECTOR_BYTES;
