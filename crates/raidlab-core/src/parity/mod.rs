//! Parity maths: XOR P and RAID6 Q over GF(2^8), recovery of lost members, and whole-array
//! encode/decode through the layout engine.
//!
//! - [`gf256`]: the field md's RAID6 uses (polynomial 0x11d, generator 2), tables built at
//!   compile time.
//! - [`compute_pq`] / [`reconstruct_row`]: one row (md's "stripe") of a raid4/5/6 array, with
//!   md's Q slot order per layout.
//! - [`encode`] / [`rebuild`] / [`decode`]: every member's image from the array's bytes, the
//!   images a rebuild writes, and the array's bytes back from the surviving members. A failure
//!   set beyond what the layout survives is [`crate::ErrorKind::DataLoss`], never garbage.
//!
//! Sources: kernel `lib/raid6/mktables.c`, `recov.c`, `drivers/md/raid5.c`
//! (`set_syndrome_sources`).

mod codec;
pub mod gf256;
mod row;

pub use codec::{decode, encode, member_image_bytes, rebuild};
pub use row::{compute_pq, q_coefficient, reconstruct_row, row_members, row_tolerance};
