//! Which sets of failed members lose data, derived from the layout engine.
//!
//! Nothing here is a per-level rule. For raid0/1/4/5/6 the number of failures that loses data is
//! found by asking [`Array::loses_data`] about growing sets, and the answer is checked to depend
//! only on how many members failed. For raid10 the *copy sets* (the members holding the copies of
//! one chunk) are read off [`Array::map`] over one placement period, each weighted by how many
//! chunks it holds, and checked against [`Array::loses_data`]: data is lost exactly when a failed
//! set covers a copy set (a second failure is fatal only if it hits a member sharing a copy
//! set with an already failed one). That is how md raid10 `n2` with an even count pairs members while
//! `n2` with an odd count, `f2` and `o2` make each member share data with both neighbours.
//!
//! The structure also says which bytes a rebuild reads *without redundancy left* in a degraded
//! state: an unreadable sector there is lost (md records a bad block and carries on,
//! `drivers/md/raid5.c` `handle_failed_sync`, `raid1.c` `fix_sync_read_error`, `raid10.c`
//! `fix_recovery_read_error`).

use std::collections::HashMap;

use crate::bits::members;
use crate::layout::{Array, Copies, Level};
use crate::{PAGE_BYTES, SECTOR_BYTES};

/// How the Markov chain may lump failed sets without losing exactness.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Lumping {
    /// Loss and exposure depend only on how many members failed: states are counts.
    Count,
    /// The copy sets partition the members into equal groups (raid10 `n2` on an even count, `n3`
    /// on a multiple of 3, ...): states are how many members failed in each group, sorted, which
    /// is exact because any permutation of groups and of members within a group is a symmetry.
    Groups,
    /// States are failed sets up to the layout's symmetries (rotations and reflections of the
    /// member ring that map the copy sets onto themselves).
    Sets,
}

#[derive(Clone, Debug)]
enum Kind {
    /// raid0/1/4/5/6: `fatal_count` failures lose data, fewer never do.
    Threshold { fatal_count: u32, mirror: bool },
    /// raid10: (member mask, chunks per period) of every copy set.
    CopySets { sets: Vec<(u64, u64)>, total_weight: u64 },
    /// A stack (md arrays of md arrays): `sets` inner arrays of `per_set` members, each with the inner
    /// structure; data is lost when `outer_fatal` inner arrays are lost (raid0 outer: 1; raid1
    /// outer: all of them).
    Stacked { inner: Box<FailureStructure>, per_set: u32, sets: u32, outer_fatal: u32 },
}

/// The failure structure of one array.
#[derive(Clone, Debug)]
pub struct FailureStructure {
    level: Level,
    devices: u32,
    capacity_bytes: u64,
    member_used_bytes: Vec<u64>,
    data_disks: u32,
    kind: Kind,
    fatal_depth: u32,
    lumping: Lumping,
    /// Member permutations (as index maps) that preserve the weighted copy sets; identity first.
    symmetries: Vec<Vec<u8>>,
    /// For [`Lumping::Groups`]: each group's members, in member order.
    groups: Vec<Vec<u32>>,
}

fn mask_of(members: impl IntoIterator<Item = u32>) -> u64 {
    members.into_iter().fold(0u64, |mask, m| mask | (1u64 << m))
}

fn members_of(mask: u64) -> Vec<u32> {
    (0..64).filter(|m| mask & (1u64 << m) != 0).collect()
}

/// The set of the first `k` members (k ≤ 64).
pub fn prefix_mask(k: u32) -> u64 {
    if k >= 64 {
        u64::MAX
    } else {
        (1u64 << k) - 1
    }
}

fn binomial(n: u64, k: u64) -> u64 {
    let k = k.min(n - k);
    let mut value: u128 = 1;
    for i in 0..k {
        value = value * (n - i) as u128 / (i + 1) as u128;
        if value > u64::MAX as u128 {
            return u64::MAX;
        }
    }
    value as u64
}

impl FailureStructure {
    /// Derives the structure from the layout engine.
    pub fn from_array(array: &Array) -> FailureStructure {
        let devices = array.devices();
        let member_used_bytes: Vec<u64> =
            (0..devices).map(|m| array.member_used_sectors(m) * SECTOR_BYTES).collect();
        let mut structure = FailureStructure {
            level: array.level(),
            devices,
            capacity_bytes: array.capacity_bytes(),
            member_used_bytes,
            data_disks: array.data_disks(),
            kind: Kind::Threshold { fatal_count: devices, mirror: false },
            fatal_depth: 0,
            lumping: Lumping::Count,
            symmetries: Vec::new(),
            groups: Vec::new(),
        };
        if let Some(stack) = array.stack() {
            structure.derive_stack(stack);
        } else if array.level() == Level::Raid10 {
            structure.derive_copy_sets(array);
        } else {
            structure.derive_threshold(array);
        }
        structure
    }

    fn derive_threshold(&mut self, array: &Array) {
        let n = self.devices;
        let prefix = |k: u32| (0..k).collect::<Vec<u32>>();
        let fatal_count = (1..=n)
            .find(|&k| array.loses_data(&prefix(k)))
            .expect("losing every member loses data");
        // The chain lumps by count, so the layout must not care *which* members failed. Check a
        // few other sets of each critical size (suffix and strided); md's code is symmetric, so a
        // difference here is a bug in the layout engine or in this derivation.
        for k in [fatal_count - 1, fatal_count] {
            if k == 0 {
                continue;
            }
            let suffix: Vec<u32> = (n - k..n).collect();
            let strided: Vec<u32> = (0..k).map(|i| (i * 2 + 1) % n).collect();
            let expected = k >= fatal_count;
            assert_eq!(array.loses_data(&suffix), expected, "loss depends on which members failed");
            let mut distinct = strided.clone();
            distinct.sort_unstable();
            distinct.dedup();
            if distinct.len() == strided.len() {
                assert_eq!(array.loses_data(&strided), expected, "loss depends on which members failed");
            }
        }
        self.kind = Kind::Threshold { fatal_count, mirror: array.level() == Level::Raid1 };
        self.fatal_depth = fatal_count;
        self.lumping = Lumping::Count;
    }

    /// A stack's structure: each inner array's own (derived from its layout like any array's),
    /// and the outer array's threshold of lost inner arrays, found from the outer layout. Each
    /// inner array is a group whose members are exchangeable and the inner arrays are
    /// exchangeable too, so the chain lumps by per-group counts exactly (as raid10 n2's pairs).
    fn derive_stack(&mut self, stack: &crate::layout::Stack) {
        let inner = FailureStructure::from_array(stack.inner());
        assert_eq!(inner.lumping, Lumping::Count, "an inner array's loss depends only on how many members failed");
        let (sets, per_set) = (stack.sets(), stack.per_set());
        let outer_fatal = (1..=sets)
            .find(|&k| stack.outer().loses_data(&(0..k).collect::<Vec<u32>>()))
            .expect("losing every inner array loses data");
        self.fatal_depth = outer_fatal * inner.fatal_depth;
        self.groups = (0..sets).map(|s| (s * per_set..(s + 1) * per_set).collect()).collect();
        self.lumping = Lumping::Groups;
        self.kind = Kind::Stacked { inner: Box::new(inner), per_set, sets, outer_fatal };
    }

    /// The failed members of inner array `set`, as its own member mask.
    fn local(failed: u64, set: u32, per_set: u32) -> u64 {
        (failed >> (set * per_set)) & prefix_mask(per_set)
    }

    fn derive_copy_sets(&mut self, array: &Array) {
        let n = self.devices;
        let chunk = array.chunk_sectors();
        let chunks = (array.capacity_sectors() / chunk).max(1);
        // md places copies with a period of at most devices × far copies chunks
        // (`__raid10_find_phys`); devices × copies covers it whatever the word.
        let period = (n as u64 * array.copies() as u64).min(chunks);
        let mut weights: HashMap<u64, u64> = HashMap::new();
        let mut copies = Copies::new();
        for c in 0..period {
            array.map(c * chunk, &mut copies);
            let mask = mask_of(copies.as_slice().iter().map(|l| l.member));
            *weights.entry(mask).or_insert(0) += 1;
        }
        let mut sets: Vec<(u64, u64)> = weights.into_iter().collect();
        sets.sort_unstable();
        // Each copy set must be exactly a minimal fatal set for the layout engine.
        for &(mask, _) in &sets {
            let members = members_of(mask);
            assert!(array.loses_data(&members), "copy set {members:?} does not lose data");
            for skip in 0..members.len() {
                let mut fewer = members.clone();
                fewer.remove(skip);
                assert!(!array.loses_data(&fewer), "copy set {members:?} is not minimal");
            }
        }
        let total_weight = sets.iter().map(|s| s.1).sum();
        let sizes: Vec<u32> = sets.iter().map(|s| s.0.count_ones()).collect();
        let fatal_depth = *sizes.iter().min().expect("an array holds at least one chunk");
        let copies_each = array.copies();
        // Exchangeable when every c-subset of the members is a copy set with the same weight
        // (e.g. n2 on 2 devices, n2 on 3): then counts lump exactly.
        let exchangeable = sizes.iter().all(|&s| s == copies_each)
            && sets.len() as u64 == binomial(n as u64, copies_each as u64)
            && sets.iter().all(|s| s.1 == sets[0].1);
        let union = sets.iter().fold(0u64, |all, s| all | s.0);
        let partition = sets.iter().map(|s| s.0.count_ones()).sum::<u32>() == n
            && union == prefix_mask(n)
            && sizes.iter().all(|&s| s == sizes[0])
            && sets.iter().all(|s| s.1 == sets[0].1);
        if partition {
            self.groups = sets.iter().map(|s| members_of(s.0)).collect();
        }
        self.kind = Kind::CopySets { sets, total_weight };
        self.fatal_depth = fatal_depth;
        if exchangeable {
            self.lumping = Lumping::Count;
        } else if partition {
            self.lumping = Lumping::Groups;
        } else {
            self.lumping = Lumping::Sets;
            self.symmetries = self.find_symmetries();
        }
    }

    /// Rotations m → m + s and reflections m → s − m (mod N) that map every copy set onto a copy
    /// set of the same weight. The identity comes first.
    fn find_symmetries(&self) -> Vec<Vec<u8>> {
        let Kind::CopySets { sets, .. } = &self.kind else { return Vec::new() };
        let n = self.devices;
        let family: HashMap<u64, u64> = sets.iter().copied().collect();
        let mut found = Vec::new();
        for reflect in [false, true] {
            for s in 0..n {
                let perm: Vec<u8> =
                    (0..n).map(|m| if reflect { (s + n - m) % n } else { (m + s) % n } as u8).collect();
                let keeps = sets.iter().all(|&(mask, weight)| {
                    family.get(&permute(mask, &perm)) == Some(&weight)
                });
                if keeps && !found.contains(&perm) {
                    found.push(perm);
                }
            }
        }
        found
    }

    pub fn level(&self) -> Level {
        self.level
    }
    pub fn devices(&self) -> u32 {
        self.devices
    }
    pub fn capacity_bytes(&self) -> u64 {
        self.capacity_bytes
    }
    pub fn member_used_bytes(&self, member: u32) -> u64 {
        self.member_used_bytes[member as usize]
    }
    /// The fewest failures that can lose data (1 for raid0, 2 for raid5 and 2-copy raid10, ...).
    pub fn fatal_depth(&self) -> u32 {
        self.fatal_depth
    }
    pub fn lumping(&self) -> Lumping {
        self.lumping
    }
    /// How many member permutations the chain lumps by under [`Lumping::Sets`] (1 otherwise).
    pub fn symmetry_count(&self) -> usize {
        self.symmetries.len().max(1)
    }
    /// The copy sets (member mask, chunks per placement period), for raid10.
    pub fn copy_sets(&self) -> Option<&[(u64, u64)]> {
        match &self.kind {
            Kind::CopySets { sets, .. } => Some(sets),
            Kind::Threshold { .. } | Kind::Stacked { .. } => None,
        }
    }

    /// Whether losing exactly the members in `failed` loses data. Agrees with
    /// [`Array::loses_data`] on every set (tested); cheaper, since it does not map chunks.
    pub fn is_fatal(&self, failed: u64) -> bool {
        match &self.kind {
            Kind::Threshold { fatal_count, .. } => failed.count_ones() >= *fatal_count,
            Kind::CopySets { sets, .. } => sets.iter().any(|&(set, _)| set & !failed == 0),
            Kind::Stacked { inner, per_set, sets, outer_fatal } => {
                let lost = (0..*sets).filter(|&s| inner.is_fatal(Self::local(failed, s, *per_set))).count();
                lost as u32 >= *outer_fatal
            }
        }
    }

    /// The canonical representative of a failed set under the chain's lumping.
    pub fn canonical(&self, failed: u64) -> u64 {
        match self.lumping {
            Lumping::Count => prefix_mask(failed.count_ones()),
            Lumping::Groups => {
                let mut counts: Vec<u32> =
                    self.groups.iter().map(|g| g.iter().filter(|&&m| failed & (1u64 << m) != 0).count() as u32).collect();
                counts.sort_unstable_by(|a, b| b.cmp(a));
                let mut mask = 0u64;
                for (group, &count) in self.groups.iter().zip(&counts) {
                    for &m in group.iter().take(count as usize) {
                        mask |= 1u64 << m;
                    }
                }
                mask
            }
            Lumping::Sets => self
                .symmetries
                .iter()
                .map(|perm| permute(failed, perm))
                .min()
                .expect("the identity is a symmetry"),
        }
    }

    /// Of the surviving members, the fraction whose failure would lose data after one failure,
    /// averaged over which member failed first (raid0: 1 by convention).
    pub fn second_failure_loss_fraction(&self) -> f64 {
        let n = self.devices;
        if n < 2 || self.fatal_depth <= 1 {
            return 1.0;
        }
        let mut fatal_pairs = 0u64;
        for first in 0..n {
            for second in (0..n).filter(|&m| m != first) {
                if self.is_fatal((1u64 << first) | (1u64 << second)) {
                    fatal_pairs += 1;
                }
            }
        }
        fatal_pairs as f64 / (n as f64 * (n - 1) as f64)
    }

    /// Bytes a rebuild reads in failed state `failed`, per member read, counting only reads with
    /// no redundancy left (an unreadable sector there is lost). Pushes (member, bytes).
    pub fn critical_reads(&self, failed: u64, out: &mut Vec<(u32, f64)>) {
        out.clear();
        let k = failed.count_ones();
        if k == 0 {
            return;
        }
        match &self.kind {
            Kind::Threshold { fatal_count, mirror } => {
                if k + 1 != *fatal_count {
                    return;
                }
                let survivors = (0..self.devices).filter(|&m| failed & (1u64 << m) == 0);
                if *mirror {
                    // raid1 recovery reads one in-sync mirror (`raid1_sync_request`).
                    if let Some(source) = survivors.clone().next() {
                        out.push((source, self.member_used_bytes(source) as f64));
                    }
                } else {
                    // raid4/5/6 recovery reads every surviving member of each row
                    // (`raid5_sync_request`, `need_this_block`).
                    for m in survivors {
                        out.push((m, self.member_used_bytes(m) as f64));
                    }
                }
            }
            Kind::CopySets { sets, total_weight } => {
                let mut per_member = [0.0f64; 64];
                for &(set, weight) in sets {
                    let live = set & !failed;
                    if set & failed != 0 && live.count_ones() == 1 {
                        per_member[live.trailing_zeros() as usize] +=
                            self.capacity_bytes as f64 * weight as f64 / *total_weight as f64;
                    }
                }
                for (m, &bytes) in per_member.iter().enumerate().take(self.devices as usize) {
                    if bytes > 0.0 {
                        out.push((m as u32, bytes));
                    }
                }
            }
            Kind::Stacked { .. } => self.stacked_critical_reads(failed, out),
        }
    }

    /// A stack's reads with no redundancy left. Outer raid0: each degraded inner array's own
    /// (its recovery, `critical_reads` of the inner structure). Outer raid1 (raid0+1) with one
    /// inner array left: the outer raid1's resync reads every member of it (`raid1_sync_request`
    /// reads the in-sync md device whole).
    fn stacked_critical_reads(&self, failed: u64, out: &mut Vec<(u32, f64)>) {
        let Kind::Stacked { inner, per_set, sets, outer_fatal } = &self.kind else { unreachable!() };
        let lost: Vec<bool> = (0..*sets).map(|s| inner.is_fatal(Self::local(failed, s, *per_set))).collect();
        let lost_count = lost.iter().filter(|&&l| l).count() as u32;
        let mut local_reads = Vec::new();
        for set in 0..*sets {
            let base = set * per_set;
            if lost_count + 1 == *outer_fatal && !lost[set as usize] {
                if *outer_fatal > 1 {
                    out.extend((base..base + per_set).map(|m| (m, self.member_used_bytes(m) as f64)));
                    continue;
                }
                inner.critical_reads(Self::local(failed, set, *per_set), &mut local_reads);
                out.extend(local_reads.iter().map(|&(m, bytes)| (m + base, bytes)));
            }
        }
    }

    /// Every byte the rebuild of the members in `failed` reads (redundant or not), as the rebuild
    /// plan reads it: raid4/5/6 every survivor's used sectors, raid1 one mirror, raid10 one
    /// surviving copy of each chunk the failed members held. raid0 cannot rebuild: 0.
    pub fn rebuild_read_bytes(&self, failed: u64) -> f64 {
        if failed == 0 || self.is_fatal(failed) {
            return 0.0;
        }
        match &self.kind {
            Kind::Threshold { mirror: true, .. } => {
                let source = (0..self.devices).find(|&m| failed & (1u64 << m) == 0).expect("a mirror survives");
                self.member_used_bytes(source) as f64
            }
            Kind::Threshold { mirror: false, .. } => (0..self.devices)
                .filter(|&m| failed & (1u64 << m) == 0)
                .map(|m| self.member_used_bytes(m) as f64)
                .sum(),
            Kind::CopySets { sets, total_weight } => {
                let touched: u64 = sets.iter().filter(|s| s.0 & failed != 0).map(|s| s.1).sum();
                self.capacity_bytes as f64 * touched as f64 / *total_weight as f64
            }
            // Each degraded inner array recovers itself; a lost raid0+1 half is resynced from a
            // running one, read whole.
            Kind::Stacked { inner, per_set, sets, .. } => (0..*sets)
                .map(|set| {
                    let local = Self::local(failed, set, *per_set);
                    if !inner.is_fatal(local) {
                        return inner.rebuild_read_bytes(local);
                    }
                    let running = (0..*sets).find(|&s| !inner.is_fatal(Self::local(failed, s, *per_set))).expect("not fatal");
                    (running * per_set..(running + 1) * per_set).map(|m| self.member_used_bytes(m) as f64).sum()
                })
                .sum(),
        }
    }

    /// Data bytes lost when one sector read fails with no redundancy left in state `failed`.
    /// md's bad-block unit for raid4/5/6 recovery is one 4 KiB stripe unit per member
    /// (`STRIPE_SIZE`); the row then misses the failed members' units and the unreadable one, of
    /// which the data (not parity) share is lost. Mirrors lose the unreadable 4 KiB.
    pub fn bytes_lost_per_sector_fault(&self, failed: u64) -> f64 {
        match &self.kind {
            // The inner array whose rebuild lacks redundancy loses what a flat one would.
            Kind::Stacked { inner, per_set, sets, outer_fatal: 1 } => (0..*sets)
                .map(|s| Self::local(failed, s, *per_set))
                .max_by_key(|local| local.count_ones())
                .map_or(PAGE_BYTES as f64, |local| inner.bytes_lost_per_sector_fault(local)),
            Kind::Threshold { mirror: false, .. } => {
                let missing = failed.count_ones() as f64 + 1.0;
                PAGE_BYTES as f64 * missing * self.data_disks as f64 / self.devices as f64
            }
            _ => PAGE_BYTES as f64,
        }
    }
}

/// Applies a member permutation to a mask.
fn permute(mask: u64, perm: &[u8]) -> u64 {
    let mut out = 0u64;
    for m in members(mask).map(|m| m as usize) {
        out |= 1u64 << perm[m];
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::layout::{ArraySpec, Layout};

    fn array(level: &str, devices: usize, layout: Option<&str>) -> Array {
        let level = Level::parse(level).unwrap();
        let layout = layout.map(|l| Layout::parse(level, l).unwrap());
        Array::new(&ArraySpec { level, layout, chunk_kib: 64, member_kib: vec![64 * 64; devices] }).unwrap()
    }

    #[test]
    fn thresholds_come_from_the_layout() {
        assert_eq!(FailureStructure::from_array(&array("0", 3, None)).fatal_depth(), 1);
        assert_eq!(FailureStructure::from_array(&array("1", 3, None)).fatal_depth(), 3);
        assert_eq!(FailureStructure::from_array(&array("5", 6, None)).fatal_depth(), 2);
        assert_eq!(FailureStructure::from_array(&array("6", 6, None)).fatal_depth(), 3);
    }

    #[test]
    fn raid10_n2_even_pairs_and_odd_rings() {
        let even = FailureStructure::from_array(&array("10", 6, Some("n2")));
        assert_eq!(even.lumping(), Lumping::Groups);
        assert_eq!(even.copy_sets().unwrap().len(), 3);
        // Two failures in different pairs are one state whichever pairs they hit.
        assert_eq!(even.canonical(0b000101), even.canonical(0b100100));
        assert_ne!(even.canonical(0b000101), even.canonical(0b000011));
        assert_eq!(FailureStructure::from_array(&array("10", 6, Some("f2"))).lumping(), Lumping::Sets);
        let odd = FailureStructure::from_array(&array("10", 5, Some("n2")));
        assert_eq!(odd.copy_sets().unwrap().len(), 5);
        // n2 on 3 devices: every pair is a copy set, so counts lump.
        assert_eq!(FailureStructure::from_array(&array("10", 3, Some("n2"))).lumping(), Lumping::Count);
    }

    #[test]
    fn canonical_forms_are_stable_under_symmetry() {
        let s = FailureStructure::from_array(&array("10", 7, Some("f2")));
        assert!(s.symmetry_count() >= 7);
        assert_eq!(s.canonical(0b0000011), s.canonical(0b1100000));
        assert_ne!(s.canonical(0b0000011), s.canonical(0b0000101));
    }

    #[test]
    fn raid5_critical_reads_are_every_survivor() {
        let s = FailureStructure::from_array(&array("5", 4, None));
        let mut reads = Vec::new();
        s.critical_reads(0b0001, &mut reads);
        assert_eq!(reads.len(), 3);
        let s6 = FailureStructure::from_array(&array("6", 5, None));
        s6.critical_reads(0b0001, &mut reads);
        assert!(reads.is_empty(), "raid6 with one member missing still has parity for a bad sector");
        s6.critical_reads(0b0011, &mut reads);
        assert_eq!(reads.len(), 3);
    }
}
