//! Mirror read balancing: which copy md reads.
//!
//! Restates kernel `drivers/md/raid1.c` `choose_best_rdev` and `raid10.c` `read_balance`
//! (as in the md-next tree of Linux ~6.12–6.14). The simulator owns the state (pending I/O per
//! member, head positions) and updates it as I/Os are issued and complete.

use crate::layout::{Location, Raid10Layout};

/// How a copy is chosen for a read.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ReadBalance {
    /// md's heuristics: sequential stickiness, then fewest pending (any idle disk or any SSD),
    /// else nearest head; raid10 far layouts prefer the lowest address.
    Md,
    /// Always the first live copy (md's choice while a resync runs past the request).
    First,
    /// A hardware controller alternating between the live copies.
    RoundRobin,
    /// A hardware controller reading from the copy with the fewest commands outstanding
    /// (ties: the first).
    LeastOutstanding,
}

/// Per-member state md's read balancing looks at.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct MirrorState {
    pub policy: ReadBalance,
    /// Member sector after the last completed I/O (md `head_position`).
    pub head_sector: Vec<u64>,
    /// Member sector just past the last read issued (md `next_seq_sect`; 0 on a member that
    /// has not read yet, as raid1.c's zeroed `conf->mirrors` leaves it, so a read of sector 0
    /// sticks to the first such member wherever its head is).
    pub next_sequential_sector: Vec<u64>,
    /// I/Os in flight per member (md `nr_pending`).
    pub pending: Vec<u32>,
    /// Members that are not rotational (SSDs).
    pub nonrotational: Vec<bool>,
    /// Reads issued so far (round robin's turn).
    pub reads_issued: u64,
}

impl MirrorState {
    pub fn new(devices: u32, policy: ReadBalance) -> MirrorState {
        let devices = devices as usize;
        MirrorState {
            policy,
            head_sector: vec![0; devices],
            next_sequential_sector: vec![0; devices],
            pending: vec![0; devices],
            nonrotational: vec![false; devices],
            reads_issued: 0,
        }
    }

    /// Records a read issued to `member` (md `update_read_sectors`).
    pub fn issued(&mut self, member: u32, sector: u64, sectors: u64) {
        let m = member as usize;
        self.pending[m] += 1;
        self.next_sequential_sector[m] = sector + sectors;
        self.reads_issued += 1;
    }

    /// Records a write or sync I/O issued to `member`: md counts it in `nr_pending` but it does
    /// not move the sequential-read point.
    pub fn issued_other(&mut self, member: u32) {
        self.pending[member as usize] += 1;
    }

    /// Records the completion of an I/O counted by `issued_other` (md `rdev_dec_pending`).
    pub fn completed_other(&mut self, member: u32) {
        let m = member as usize;
        assert!(self.pending[m] > 0, "completion without a pending I/O on member {member}");
        self.pending[m] -= 1;
    }

    /// Records a completion on `member` (md `update_head_pos`).
    pub fn completed(&mut self, member: u32, sector: u64, sectors: u64) {
        let m = member as usize;
        assert!(self.pending[m] > 0, "completion without a pending I/O on member {member}");
        self.pending[m] -= 1;
        self.head_sector[m] = sector + sectors;
    }

    /// The copy to read among `copies` (md's copy order), skipping failed members.
    /// `None` when every copy is on a failed member.
    pub fn choose(
        &self,
        copies: &[Location],
        failed_mask: u64,
        sectors: u64,
        raid10: Option<Raid10Layout>,
    ) -> Option<Location> {
        assert!(sectors > 0);
        let live = copies.iter().copied().filter(|l| failed_mask & (1 << l.member) == 0);
        match self.policy {
            ReadBalance::First => return live.into_iter().next(),
            ReadBalance::RoundRobin => {
                let count = live.clone().count() as u64;
                return if count == 0 { None } else { live.clone().nth((self.reads_issued % count) as usize) };
            }
            ReadBalance::LeastOutstanding => {
                let mut best: Option<Location> = None;
                for location in live {
                    if best.is_none_or(|b| self.pending[location.member as usize] < self.pending[b.member as usize]) {
                        best = Some(location);
                    }
                }
                return best;
            }
            ReadBalance::Md => {}
        }
        match raid10 {
            Some(layout) => self.choose_raid10(live, layout),
            None => self.choose_raid1(live),
        }
    }

    fn choose_raid1(&self, live: impl Iterator<Item = Location>) -> Option<Location> {
        let mut min_pending: Option<(u32, Location)> = None;
        let mut closest: Option<(u64, Location)> = None;
        let mut any_nonrotational = false;
        for location in live {
            let m = location.member as usize;
            if self.next_sequential_sector[m] == location.sector || self.head_sector[m] == location.sector {
                return Some(location);
            }
            any_nonrotational |= self.nonrotational[m];
            let pending = self.pending[m];
            if min_pending.is_none_or(|(best, _)| pending < best) {
                min_pending = Some((pending, location));
            }
            let distance = self.head_sector[m].abs_diff(location.sector);
            if closest.is_none_or(|(best, _)| distance < best) {
                closest = Some((distance, location));
            }
        }
        let (pending, idlest) = min_pending?;
        if any_nonrotational || pending == 0 {
            Some(idlest)
        } else {
            closest.map(|(_, location)| location)
        }
    }

    fn choose_raid10(&self, live: impl Iterator<Item = Location>, layout: Raid10Layout) -> Option<Location> {
        let mut best: Option<(u64, Location)> = None;
        let mut best_nonrotational: Option<(u32, Location)> = None;
        for location in live {
            let m = location.member as usize;
            if self.nonrotational[m] {
                let pending = self.pending[m];
                if best_nonrotational.is_none_or(|(fewest, _)| pending < fewest) {
                    best_nonrotational = Some((pending, location));
                }
            }
            let distance = if layout.near_copies > 1 && self.pending[m] == 0 {
                0
            } else if layout.far_copies > 1 {
                location.sector
            } else {
                self.head_sector[m].abs_diff(location.sector)
            };
            if best.is_none_or(|(shortest, _)| distance < shortest) {
                best = Some((distance, location));
            }
        }
        best_nonrotational.map(|(_, location)| location).or(best.map(|(_, location)| location))
    }
}
