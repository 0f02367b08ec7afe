//! Plans read and write only what md would: for random arrays, failure sets the layout
//! survives, and random requests, every member I/O is checked sector by sector against the
//! layout's own map and inverse.

mod common;

use proptest::prelude::*;
use raidlab_core::layout::{Array, Cell, Copies, Level};
use raidlab_core::plan::{IoKind, MirrorState, Plan, Planner, ReadBalance, Request, RmwLevel};
use raidlab_core::PAGE_SECTORS;
use std::collections::HashSet;

fn covered(plan: &Plan, kinds: &[IoKind]) -> HashSet<(u32, u64)> {
    let mut set = HashSet::new();
    for io in plan.reads.iter().chain(&plan.writes).filter(|io| kinds.contains(&io.kind)) {
        for sector in io.sector..io.sector + io.sectors {
            assert!(set.insert((io.member, sector)), "{io:?} overlaps another I/O of its kind");
        }
    }
    set
}

fn is_parity_level(array: &Array) -> bool {
    matches!(array.level(), Level::Raid4 | Level::Raid5 | Level::Raid6)
}

fn failed_set(array: &Array, bits: u64) -> Vec<u32> {
    let failed: Vec<u32> = (0..array.devices()).filter(|m| bits & (1 << m) != 0).collect();
    if array.loses_data(&failed) { Vec::new() } else { failed }
}

fn request(array: &Array, write: bool, start: u64, length: u64) -> Request {
    let capacity = array.capacity_sectors();
    let sector = start % capacity;
    let sectors = 1 + length % (3 * array.chunk_sectors()).min(capacity - sector);
    Request { write, sector, sectors }
}

fn check_reads(array: &Array, failed: &[u32], request: &Request, plan: &Plan) {
    let degraded_parity = is_parity_level(array) && !failed.is_empty();
    let reads = covered(plan, &[IoKind::Read]);
    let reconstruct = covered(plan, &[IoKind::ReconstructRead]);
    assert!(plan.writes.is_empty());
    if !degraded_parity {
        assert_eq!(reads.len() as u64, request.sectors, "reads exactly the request");
        assert!(reconstruct.is_empty());
    }
    let mut copies = Copies::new();
    for sector in request.sector..request.sector + request.sectors {
        array.map(sector, &mut copies);
        let live: Vec<_> = copies.as_slice().iter().filter(|l| !failed.contains(&l.member)).collect();
        if live.is_empty() {
            // Reconstructed: every surviving member's block of the row is read.
            let at = copies.as_slice()[0].sector;
            for member in (0..array.devices()).filter(|m| !failed.contains(m)) {
                assert!(reconstruct.contains(&(member, at)) || reads.contains(&(member, at)));
            }
        } else {
            assert_eq!(live.iter().filter(|l| reads.contains(&(l.member, l.sector))).count(), 1);
        }
    }
}

fn check_writes(array: &Array, failed: &[u32], request: &Request, plan: &Plan) {
    let (mut lo, mut hi) = (request.sector, request.sector + request.sectors);
    if is_parity_level(array) {
        lo = lo / PAGE_SECTORS * PAGE_SECTORS;
        hi = hi.div_ceil(PAGE_SECTORS) * PAGE_SECTORS;
    }
    let writes = covered(plan, &[IoKind::Write]);
    for &(member, sector) in &writes {
        let Cell::Data(at) = array.unmap(member, sector) else { panic!("data write off data") };
        assert!((lo..hi).contains(&at), "write outside the request");
    }
    let mut copies = Copies::new();
    for sector in request.sector..request.sector + request.sectors {
        array.map(sector, &mut copies);
        for l in copies.as_slice().iter().filter(|l| !failed.contains(&l.member)) {
            assert!(writes.contains(&(l.member, l.sector)), "live copy not written");
        }
    }
    for (kind, cell) in [(IoKind::ParityWrite, Cell::P), (IoKind::SyndromeWrite, Cell::Q)] {
        for (member, sector) in covered(plan, &[kind]) {
            assert_eq!(array.unmap(member, sector), cell);
        }
    }
    for (member, sector) in covered(plan, &[IoKind::RcwRead]) {
        assert!(matches!(array.unmap(member, sector), Cell::Data(_)), "rcw pre-reads only data");
    }
    for (member, sector) in covered(plan, &[IoKind::RmwRead]) {
        match array.unmap(member, sector) {
            Cell::Data(at) => assert!((lo..hi).contains(&at), "rmw pre-reads only written data"),
            Cell::P | Cell::Q => {}
            Cell::Unused => panic!("pre-read of unused space"),
        }
    }
    if !is_parity_level(array) {
        assert!(plan.reads.is_empty(), "mirrors and stripes write without reading");
        return;
    }
    // Every row written gets its P (and Q) rewritten, unless that member is failed.
    let parity = covered(plan, &[IoKind::ParityWrite, IoKind::SyndromeWrite]);
    for sector in (lo..hi).step_by(PAGE_SECTORS as usize) {
        let at = array.map_primary(sector).sector;
        let stripe = array.stripe(array.parity_row(at)).unwrap();
        for member in std::iter::once(stripe.p).chain(stripe.q).filter(|m| !failed.contains(m)) {
            assert!(parity.contains(&(member, at)), "row at {at} lacks parity on {member}");
        }
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(400))]

    #[test]
    fn plans_touch_only_what_md_would(
        array in common::arrays(),
        failed_bits in any::<u64>(),
        write in any::<bool>(),
        start in any::<u64>(),
        length in any::<u64>(),
    ) {
        let failed = failed_set(&array, failed_bits & ((1 << array.devices()) - 1));
        let request = request(&array, write, start, length);
        let mut planner = Planner::new(array.clone(), &failed, RmwLevel::Enable).unwrap();
        let mirrors = MirrorState::new(array.devices(), ReadBalance::Md);
        let mut plan = Plan::new();
        planner.plan(&request, &mirrors, &mut plan).unwrap();
        for io in plan.reads.iter().chain(&plan.writes) {
            prop_assert!(!failed.contains(&io.member), "I/O to failed member {}", io.member);
            prop_assert!(io.sector + io.sectors <= array.member_sectors()[io.member as usize]);
        }
        if write {
            check_writes(&array, &failed, &request, &plan);
        } else {
            check_reads(&array, &failed, &request, &plan);
        }
    }

    #[test]
    fn rebuild_writes_every_used_sector_of_the_target(array in common::arrays(), pick in any::<u32>()) {
        prop_assume!(array.level() != Level::Raid0);
        let target = pick % array.devices();
        let mut planner = Planner::new(array.clone(), &[target], RmwLevel::Enable).unwrap();
        let used = array.member_used_sectors(target);
        let mut plan = Plan::new();
        planner.plan_rebuild(target, 0, used, &mut plan).unwrap();
        let written = covered(&plan, &[IoKind::RebuildWrite]);
        for sector in 0..used {
            let holds_something = array.unmap(target, sector) != Cell::Unused;
            prop_assert_eq!(written.contains(&(target, sector)), holds_something);
        }
        prop_assert!(plan.reads.iter().all(|io| io.member != target));
    }
}
