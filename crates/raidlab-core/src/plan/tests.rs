//! Plans checked against md's behaviour on small, hand-countable cases.

use super::*;
use crate::error::ErrorKind;
use crate::layout::{ArraySpec, Layout};
use crate::PAGE_SECTORS;

const KIB: u64 = 2; // sectors per KiB

fn array(level: Level, layout: Option<&str>, devices: usize, chunk_kib: u64) -> Array {
    let layout = layout.map(|name| Layout::parse(level, name).unwrap());
    Array::new(&ArraySpec { level, layout, chunk_kib, member_kib: vec![64 * 1024; devices] }).unwrap()
}

fn planner(array: Array, failed: &[u32]) -> Planner {
    Planner::new(array, failed, RmwLevel::Enable).unwrap()
}

fn plan(planner: &mut Planner, write: bool, sector: u64, sectors: u64) -> Plan {
    let mirrors = MirrorState::new(planner.array().devices(), ReadBalance::Md);
    let mut plan = Plan::new();
    planner.plan(&Request { write, sector, sectors }, &mirrors, &mut plan).unwrap();
    plan
}

fn kinds(ios: &[MemberIo]) -> Vec<IoKind> {
    let mut kinds: Vec<_> = ios.iter().map(|io| io.kind).collect();
    kinds.sort();
    kinds
}

#[test]
fn raid5_small_write_is_read_modify_write() {
    let mut p = planner(array(Level::Raid5, None, 6, 64), &[]);
    let plan = plan(&mut p, true, 40 * KIB, 4 * KIB);
    assert_eq!(kinds(&plan.reads), [IoKind::RmwRead, IoKind::RmwRead]);
    assert_eq!(kinds(&plan.writes), [IoKind::Write, IoKind::ParityWrite]);
    assert_eq!(plan.counts.rows_rmw, 1);
}

#[test]
fn raid5_four_disk_tie_goes_to_reconstruct_write() {
    // rmw reads data + P = 2; rcw reads the 2 other data blocks = 2: md picks rcw on a tie.
    let mut p = planner(array(Level::Raid5, None, 4, 64), &[]);
    let plan = plan(&mut p, true, 0, 4 * KIB);
    assert_eq!(kinds(&plan.reads), [IoKind::RcwRead, IoKind::RcwRead]);
    assert_eq!(plan.writes.len(), 2);
    assert_eq!(plan.counts.rows_rcw, 1);
    let mut prefer = Planner::new(array(Level::Raid5, None, 4, 64), &[], RmwLevel::Prefer).unwrap();
    let plan = super::tests::plan(&mut prefer, true, 0, 4 * KIB);
    assert_eq!(kinds(&plan.reads), [IoKind::RmwRead, IoKind::RmwRead]);
}

#[test]
fn forced_reconstruct_write_needing_a_failed_block_reads_every_survivor() {
    // raid4 on 3 disks, member 0 failed, rmw_level 0: a write covering part of data block 1
    // would reconstruct-write, which needs data block 0 on the failed member. md reads every
    // surviving block of the row to compute it (and used to panic here).
    let array = array(Level::Raid4, None, 3, 8);
    let mut p = Planner::new(array, &[0], RmwLevel::Disable).unwrap();
    let plan = plan(&mut p, true, 8 * KIB + 2, 4 * KIB);
    assert_eq!(plan.reads.iter().map(|io| (io.member, io.kind)).collect::<Vec<_>>(),
        [(1, IoKind::ReconstructRead), (2, IoKind::ReconstructRead)]);
    assert_eq!(kinds(&plan.writes), [IoKind::Write, IoKind::ParityWrite]);
    assert!(plan.reads.iter().chain(&plan.writes).all(|io| io.member != 0));
    assert_eq!(plan.counts.rows_degraded, 2);
}

#[test]
fn raid6_small_write_costs_three_and_three() {
    let mut p = planner(array(Level::Raid6, None, 6, 64), &[]);
    let plan = plan(&mut p, true, 8 * KIB, 4 * KIB);
    assert_eq!(plan.reads.len(), 3);
    assert_eq!(kinds(&plan.writes), [IoKind::Write, IoKind::ParityWrite, IoKind::SyndromeWrite]);
    // With 8 disks rmw (3) beats rcw (5).
    let mut p = planner(array(Level::Raid6, None, 8, 64), &[]);
    let plan = super::tests::plan(&mut p, true, 8 * KIB, 4 * KIB);
    assert_eq!(kinds(&plan.reads), [IoKind::RmwRead; 3]);
}

#[test]
fn full_stripe_write_reads_nothing() {
    let mut p = planner(array(Level::Raid5, None, 6, 64), &[]);
    let plan = plan(&mut p, true, 5 * 64 * KIB, 5 * 64 * KIB);
    assert!(plan.reads.is_empty());
    assert_eq!(plan.writes.len(), 6);
    assert!(plan.writes.iter().all(|io| io.sectors == 64 * KIB));
    assert_eq!(plan.counts.rows_full, 16);
}

#[test]
fn partial_page_write_reads_the_old_page() {
    let mut p = planner(array(Level::Raid5, None, 6, 64), &[]);
    let plan = plan(&mut p, true, 0, 1);
    assert_eq!(kinds(&plan.reads), [IoKind::RmwRead, IoKind::RmwRead]);
    assert!(plan.writes.iter().all(|io| io.sectors == PAGE_SECTORS));
}

#[test]
fn raid10_write_goes_to_both_copies() {
    let mut p = planner(array(Level::Raid10, None, 4, 64), &[]);
    let plan = plan(&mut p, true, 0, 4 * KIB);
    assert!(plan.reads.is_empty());
    let members: Vec<u32> = plan.writes.iter().map(|io| io.member).collect();
    assert_eq!(members, [0, 1]);
}

#[test]
fn optimal_raid5_read_splits_at_chunks() {
    let mut p = planner(array(Level::Raid5, None, 4, 64), &[]);
    let plan = plan(&mut p, false, 32 * KIB, 64 * KIB);
    assert_eq!(plan.reads.len(), 2);
    assert_eq!(plan.sectors(), (64 * KIB, 0));
}

#[test]
fn degraded_raid5_read_of_missing_chunk_reads_every_survivor() {
    let a = array(Level::Raid5, None, 6, 64);
    let on_member_0 = 0; // left-symmetric row 0: D0 on member 0
    assert_eq!(a.map_primary(on_member_0).member, 0);
    let mut p = planner(a, &[0]);
    let plan = plan(&mut p, false, on_member_0, 16 * KIB);
    assert_eq!(plan.reads.len(), 5);
    assert!(plan.reads.iter().all(|io| io.sectors == 16 * KIB && io.member != 0));
    let plan = super::tests::plan(&mut p, false, 64 * KIB, 16 * KIB);
    assert_eq!(plan.reads.len(), 1);
    assert_eq!(plan.counts.rows_degraded, 0);
}

#[test]
fn degraded_raid5_write_to_missing_member_updates_parity_only() {
    let mut p = planner(array(Level::Raid5, None, 6, 64), &[0]);
    let plan = plan(&mut p, true, 0, 4 * KIB);
    // rmw would need the dead block: rcw reads the 4 other data blocks and writes P.
    assert_eq!(kinds(&plan.reads), [IoKind::RcwRead; 4]);
    assert_eq!(kinds(&plan.writes), [IoKind::ParityWrite]);
}

#[test]
fn raid10_reads_of_a_failed_mirror_go_to_the_survivor() {
    let mut p = planner(array(Level::Raid10, None, 4, 64), &[0]);
    for chunk in 0..8 {
        let plan = plan(&mut p, false, chunk * 64 * KIB, 8);
        assert_ne!(plan.reads[0].member, 0);
    }
}

#[test]
fn raid10_second_failure_in_the_same_pair_is_data_loss() {
    let a = array(Level::Raid10, None, 4, 64);
    assert!(Planner::new(a.clone(), &[0, 2], RmwLevel::Enable).is_ok());
    let error = Planner::new(a, &[0, 1], RmwLevel::Enable).unwrap_err();
    assert_eq!(error.kind, ErrorKind::DataLoss);
}

#[test]
fn requests_outside_the_array_are_rejected() {
    let mut p = planner(array(Level::Raid5, None, 4, 64), &[]);
    let capacity = p.array().capacity_sectors();
    let mirrors = MirrorState::new(4, ReadBalance::Md);
    let mut out = Plan::new();
    for (sector, sectors) in [(capacity, 1), (0, 0), (capacity - 1, 2), (u64::MAX, 2)] {
        let error = p.plan(&Request { write: false, sector, sectors }, &mirrors, &mut out).unwrap_err();
        assert_eq!(error.kind, ErrorKind::InvalidRequest);
    }
}

#[test]
fn raid5_rebuild_reads_every_survivor() {
    let mut p = planner(array(Level::Raid5, None, 4, 64), &[2]);
    let mut out = Plan::new();
    p.plan_rebuild(2, 0, 256, &mut out).unwrap();
    assert_eq!(kinds(&out.reads), [IoKind::RebuildRead; 3]);
    assert_eq!(out.writes, [MemberIo { member: 2, kind: IoKind::RebuildWrite, sector: 0, sectors: 256 }]);
    assert_eq!(p.plan_rebuild(1, 0, 8, &mut out).unwrap_err().kind, ErrorKind::InvalidRequest);
}

#[test]
fn raid10_rebuild_copies_from_the_partner() {
    let mut p = planner(array(Level::Raid10, Some("n2"), 4, 64), &[1]);
    let mut out = Plan::new();
    p.plan_rebuild(1, 0, 4 * 64 * KIB, &mut out).unwrap();
    assert!(out.reads.iter().all(|io| io.member == 0 && io.kind == IoKind::RebuildRead));
    assert_eq!(out.sectors(), (4 * 64 * KIB, 4 * 64 * KIB));
}

#[test]
fn raid1_read_balance_sticks_to_a_sequential_stream() {
    let a = array(Level::Raid1, None, 2, 64);
    let mut mirrors = MirrorState::new(2, ReadBalance::Md);
    let copies = [Location { member: 0, sector: 800 }, Location { member: 1, sector: 800 }];
    mirrors.issued(1, 792, 8);
    mirrors.issued(0, 0, 8);
    mirrors.issued(0, 8, 8);
    // Member 1 has the stream that ends at 800, even though it has pending I/O.
    assert_eq!(mirrors.choose(&copies, 0, 8, a.raid10_layout()).unwrap().member, 1);
    // A random read goes to the idlest member when one is idle.
    mirrors.completed(1, 792, 8);
    let far = [Location { member: 0, sector: 90_000 }, Location { member: 1, sector: 90_000 }];
    assert_eq!(mirrors.choose(&far, 0, 8, None).unwrap().member, 1);
    // With member 1 failed, member 0 is the only choice.
    assert_eq!(mirrors.choose(&far, 0b10, 8, None).unwrap().member, 0);
}

#[test]
fn raid1_a_member_that_has_not_read_takes_a_read_of_sector_0() {
    // md allocates conf->mirrors zeroed: next_seq_sect is 0 until a member reads, so a read of
    // sector 0 goes to the first such member even when another's head is there.
    let a = array(Level::Raid1, None, 2, 64);
    let mut mirrors = MirrorState::new(2, ReadBalance::Md);
    mirrors.head_sector = vec![1000, 0];
    let copies = [Location { member: 0, sector: 0 }, Location { member: 1, sector: 0 }];
    assert_eq!(mirrors.choose(&copies, 0, 8, a.raid10_layout()).unwrap().member, 0);
}

#[test]
fn raid10_far_reads_prefer_the_lowest_address() {
    let a = array(Level::Raid10, Some("f2"), 4, 64);
    let mut copies = Copies::new();
    let mirrors = MirrorState::new(4, ReadBalance::Md);
    for chunk in 0..16 {
        a.map(chunk * 64 * KIB, &mut copies);
        let chosen = mirrors.choose(copies.as_slice(), 0, 8, a.raid10_layout()).unwrap();
        assert_eq!(chosen, copies.as_slice()[0], "first (near) section is lowest");
        assert!(chosen.sector < copies.as_slice()[1].sector);
    }
}

#[test]
fn a_recovering_member_serves_what_lies_below_its_rebuild_point() {
    // Left-symmetric raid5 over 6: stripes 0 and 102 both keep their first data chunk on
    // member 0 and parity on member 5; member 0 is being rebuilt and is in sync below
    // member sector 1024 (stripe 8).
    let mut p = planner(array(Level::Raid5, None, 6, 64), &[0]);
    let chunk = 64 * KIB;
    let stripe_102 = 102 * 5 * chunk;
    let degraded_low = plan(&mut p, true, 0, 4 * KIB);
    let degraded_high = plan(&mut p, true, stripe_102, 4 * KIB);
    assert!(degraded_low.reads.iter().chain(&degraded_low.writes).all(|io| io.member != 0));
    p.set_recovering(Some((0, 1024)));
    let low = plan(&mut p, true, 0, 4 * KIB);
    assert_eq!(kinds(&low.reads), [IoKind::RmwRead, IoKind::RmwRead]);
    assert!(low.writes.iter().any(|io| io.member == 0 && io.sector < 1024));
    assert_eq!(plan(&mut p, true, stripe_102, 4 * KIB), degraded_high);
    // Reads too: below the point member 0 answers for itself, above it is reconstructed.
    assert!(plan(&mut p, false, 0, 4 * KIB).reads.iter().all(|io| io.member == 0));
    assert!(plan(&mut p, false, stripe_102, 4 * KIB).reads.iter().all(|io| io.member != 0));
    // A request straddling the point is planned as degraded.
    p.set_recovering(Some((0, 2)));
    assert_eq!(plan(&mut p, true, 0, 4 * KIB), degraded_low);
    p.set_recovering(None);
    assert_eq!(plan(&mut p, true, 0, 4 * KIB), degraded_low);
}
