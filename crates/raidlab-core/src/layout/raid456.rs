//! RAID4/5/6 placement: which member holds P, Q and each data chunk of a row.
//!
//! Restates kernel `drivers/md/raid5.c` `raid5_compute_sector` (forward) and
//! `raid5_compute_blocknr` (inverse); Q slot order from `set_syndrome_sources`, `raid6_d0` and
//! `raid6_idx_to_slot`. Notation: `n` raid disks, `k` data disks, row `s` = chunk / k.

use super::names::{Level, ParityAlgorithm};
use super::{Cell, Location, MAX_DEVICES};

/// md's roles for one row of a raid4/5/6 array.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Stripe {
    /// Member holding P.
    pub p: u32,
    /// Member holding Q (raid6 only).
    pub q: Option<u32>,
    /// Number of data members (k).
    pub data_count: u32,
    /// `data[i]` is the member holding logical data index `i` of the row.
    pub data: [u32; MAX_DEVICES],
    /// `q_slot[i]` is the exponent of g multiplying data index `i` in Q (raid6 only).
    pub q_slot: [u32; MAX_DEVICES],
}

impl Stripe {
    /// The data members in logical order.
    pub fn data_members(&self) -> &[u32] {
        &self.data[..self.data_count as usize]
    }
    /// The logical data index a member holds in this row, if it holds data.
    pub fn data_index(&self, member: u32) -> Option<u32> {
        self.data_members().iter().position(|&m| m == member).map(|i| i as u32)
    }
}

/// Where one array sector of a raid4/5/6 array lives, with its row's parity members: what
/// `map` and `stripe` together say, without building the whole stripe.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ParityPlace {
    /// The member and member sector holding the array sector.
    pub data: Location,
    /// Member holding the row's P.
    pub p: u32,
    /// Member holding the row's Q (raid6 only).
    pub q: Option<u32>,
}

#[derive(Clone, Debug)]
pub struct Raid456 {
    level: Level,
    algorithm: ParityAlgorithm,
    disks: u32,
    data_disks: u32,
    chunk_shift: u32,
}

impl Raid456 {
    pub fn new(level: Level, algorithm: ParityAlgorithm, disks: u32, chunk_sectors: u64) -> Raid456 {
        assert!(chunk_sectors.is_power_of_two());
        let parity = level.parity_count();
        assert!(parity >= 1 && disks > parity, "raid{} with {disks} disks", level.number());
        Raid456 {
            level,
            algorithm,
            disks,
            data_disks: disks - parity,
            chunk_shift: chunk_sectors.trailing_zeros(),
        }
    }

    pub fn data_disks(&self) -> u32 {
        self.data_disks
    }

    /// P member, Q member (or `u32::MAX`) and the member of data index `i` in row `row`.
    #[inline]
    fn place(&self, row: u64, i: u32) -> (u32, u32, u32) {
        debug_assert!(i < self.data_disks);
        let n = self.disks;
        let k = self.data_disks;
        let rot = (row % n as u64) as u32;
        let none = u32::MAX;
        use ParityAlgorithm::*;
        if self.level != Level::Raid6 {
            // raid4 is PARITY_N whatever the layout word says (raid5.c: "if (conf->level == 4)").
            let algorithm = if self.level == Level::Raid4 { ParityN } else { self.algorithm };
            return match algorithm {
                LeftAsymmetric => asym(n - 1 - rot, none, i),
                RightAsymmetric => asym(rot, none, i),
                LeftSymmetric => sym(n - 1 - rot, none, i, n, 1),
                RightSymmetric => sym(rot, none, i, n, 1),
                Parity0 => (0, none, i + 1),
                ParityN => (k, none, i),
                _ => unreachable!("validated raid5 layout"),
            };
        }
        let rot6 = (row % (n as u64 - 1)) as u32;
        match self.algorithm {
            LeftAsymmetric | RotatingNRestart => {
                // ddf-N-restart is left-asymmetric shifted one row: the first row is D D D P Q.
                let rot = if self.algorithm == RotatingNRestart {
                    ((row + 1) % n as u64) as u32
                } else {
                    rot
                };
                asym6(n - 1 - rot, i, n)
            }
            RightAsymmetric | RotatingZeroRestart => asym6(rot, i, n),
            LeftSymmetric => sym(n - 1 - rot, (n - rot) % n, i, n, 2),
            RightSymmetric => sym(rot, (rot + 1) % n, i, n, 2),
            Parity0 => (0, 1, i + 2),
            ParityN => (k, k + 1, i),
            RotatingNContinue => {
                let p = n - 1 - rot;
                (p, (p + n - 1) % n, (p + 1 + i) % n)
            }
            LeftAsymmetric6 => with_q_last(asym(k - rot6, none, i), n),
            RightAsymmetric6 => with_q_last(asym(rot6, none, i), n),
            LeftSymmetric6 => with_q_last(sym(k - rot6, none, i, n - 1, 1), n),
            RightSymmetric6 => with_q_last(sym(rot6, none, i, n - 1, 1), n),
            Parity06 => (0, n - 1, i + 1),
        }
    }

    /// The member and member sector of array sector `sector`.
    #[inline]
    pub fn map(&self, sector: u64) -> Location {
        self.map_with_parity(sector).data
    }

    /// The member and member sector of array sector `sector`, and the P and Q of its row.
    #[inline]
    pub fn map_with_parity(&self, sector: u64) -> ParityPlace {
        let chunk = sector >> self.chunk_shift;
        let offset = sector & ((1 << self.chunk_shift) - 1);
        let row = chunk / self.data_disks as u64;
        let i = (chunk - row * self.data_disks as u64) as u32;
        let (p, q, member) = self.place(row, i);
        debug_assert!(member < self.disks && p < self.disks);
        let data = Location { member, sector: (row << self.chunk_shift) + offset };
        ParityPlace { data, p, q: (q != u32::MAX).then_some(q) }
    }

    /// The member of data index `i` in row `row` (its chunk's first member sector) and the
    /// row's P and Q: one entry of `stripe(row)` without building the row.
    #[inline]
    pub fn place_in_row(&self, row: u64, i: u32) -> ParityPlace {
        let (p, q, member) = self.place(row, i);
        let data = Location { member, sector: row << self.chunk_shift };
        ParityPlace { data, p, q: (q != u32::MAX).then_some(q) }
    }

    /// Roles of every member in `row`, with md's Q slot order.
    pub fn stripe(&self, row: u64) -> Stripe {
        let mut stripe = Stripe {
            p: 0,
            q: None,
            data_count: self.data_disks,
            data: [u32::MAX; MAX_DEVICES],
            q_slot: [u32::MAX; MAX_DEVICES],
        };
        for i in 0..self.data_disks {
            let (p, q, member) = self.place(row, i);
            stripe.p = p;
            stripe.q = (q != u32::MAX).then_some(q);
            stripe.data[i as usize] = member;
        }
        if let Some(q) = stripe.q {
            self.fill_q_slots(&mut stripe, q);
        }
        self.assert_stripe(&stripe);
        stripe
    }

    fn fill_q_slots(&self, stripe: &mut Stripe, q: u32) {
        let n = self.disks;
        if self.algorithm.is_ddf() {
            // DDF: the syndrome runs over all n disks in raw order (P and Q count as zero blocks).
            for i in 0..self.data_disks as usize {
                stripe.q_slot[i] = stripe.data[i];
            }
            return;
        }
        // md: start just after Q (or at disk 0 when Q is last), skip P and Q, number data disks.
        let start = if q == n - 1 { 0 } else { q + 1 };
        let mut slot = 0;
        for step in 0..n {
            let member = (start + step) % n;
            if member == stripe.p || member == q {
                continue;
            }
            let index = stripe.data_index(member).expect("every other member holds data");
            stripe.q_slot[index as usize] = slot;
            slot += 1;
        }
        assert_eq!(slot, self.data_disks);
    }

    fn assert_stripe(&self, stripe: &Stripe) {
        let mut seen = 0u64;
        let roles = stripe.data_members().iter().copied().chain([stripe.p]).chain(stripe.q);
        for member in roles {
            assert!(member < self.disks, "role on member {member} of {}", self.disks);
            assert!(seen & (1 << member) == 0, "two roles on member {member}");
            seen |= 1 << member;
        }
        assert_eq!(seen.count_ones(), self.disks, "every member has one role");
    }

    /// What `member` holds at member sector `sector` (raid5_compute_blocknr by search).
    pub fn unmap(&self, member: u32, sector: u64, capacity_sectors: u64) -> Cell {
        let row = sector >> self.chunk_shift;
        let offset = sector & ((1 << self.chunk_shift) - 1);
        let rows = capacity_sectors >> self.chunk_shift;
        if row * self.data_disks as u64 >= rows {
            return Cell::Unused;
        }
        let stripe = self.stripe(row);
        if member == stripe.p {
            return Cell::P;
        }
        if Some(member) == stripe.q {
            return Cell::Q;
        }
        let index = stripe.data_index(member).expect("member has a role") as u64;
        let chunk = row * self.data_disks as u64 + index;
        Cell::Data((chunk << self.chunk_shift) + offset)
    }
}

/// Asymmetric placement: data fills the members in order, skipping P.
#[inline]
fn asym(p: u32, q: u32, i: u32) -> (u32, u32, u32) {
    (p, q, if i < p { i } else { i + 1 })
}

/// Symmetric placement: data starts `skip` members after P and wraps around `width` members.
#[inline]
fn sym(p: u32, q: u32, i: u32, width: u32, skip: u32) -> (u32, u32, u32) {
    (p, q, (p + skip + i) % width)
}

/// raid6 asymmetric placement: Q follows P; a row with P last has Q on disk 0 (Q D D D P).
#[inline]
fn asym6(p: u32, i: u32, n: u32) -> (u32, u32, u32) {
    if p == n - 1 {
        (p, 0, i + 1)
    } else {
        (p, p + 1, if i < p { i } else { i + 2 })
    }
}

/// The `*_6` layouts: a raid5 layout on the first n-1 disks, Q on the last.
#[inline]
fn with_q_last((p, _, member): (u32, u32, u32), n: u32) -> (u32, u32, u32) {
    (p, n - 1, member)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `map_with_parity` agrees with `map` and with the roles `stripe` gives the row, for
    /// every algorithm and device count over several rotations.
    #[test]
    fn map_with_parity_agrees_with_stripe() {
        let chunk_sectors = 16;
        for level in [Level::Raid4, Level::Raid5, Level::Raid6] {
            for algorithm in ParityAlgorithm::ALL {
                if level == Level::Raid5 && !algorithm.valid_for_raid5() {
                    continue;
                }
                for disks in level.parity_count() + 1..=9 {
                    let raid = Raid456::new(level, algorithm, disks, chunk_sectors);
                    let sectors = 3 * disks as u64 * raid.data_disks() as u64 * chunk_sectors;
                    for sector in (0..sectors).step_by(5) {
                        let place = raid.map_with_parity(sector);
                        assert_eq!(place.data, raid.map(sector));
                        let stripe = raid.stripe(place.data.sector >> raid.chunk_shift);
                        assert_eq!((place.p, place.q), (stripe.p, stripe.q), "{level:?} {algorithm:?} {disks}");
                        assert!(stripe.data_members().contains(&place.data.member));
                    }
                }
            }
        }
    }
}
