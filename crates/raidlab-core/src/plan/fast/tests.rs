//! The shortcut plans exactly what the general planner plans: same member I/Os in the same
//! order and the same counts, on random arrays of every level, layout, chunk size and device
//! count, with failed members, a recovering member, random read-balancing state and random
//! requests (biased to the single-chunk ones the shortcut takes).

use super::super::{MirrorState, Path, Plan, Planner, ReadBalance, Request, RmwLevel};
use crate::layout::{Array, ArraySpec, Layout, Level, ParityAlgorithm, Raid0Layout, Raid10Layout};
use crate::PAGE_SECTORS;
use proptest::prelude::*;

const LEVELS: [Level; 6] =
    [Level::Raid0, Level::Raid1, Level::Raid4, Level::Raid5, Level::Raid6, Level::Raid10];

/// A layout for `level` picked by `pick`; raid10 words cover near, far, offset and far sets.
fn layout(level: Level, pick: u32) -> Option<Layout> {
    match level {
        Level::Raid0 => Some(Layout::Raid0([Raid0Layout::Original, Raid0Layout::Alternate][pick as usize % 2])),
        Level::Raid1 | Level::Raid4 => None,
        Level::Raid5 | Level::Raid6 => {
            let fits = |a: &ParityAlgorithm| level == Level::Raid6 || a.valid_for_raid5();
            let valid: Vec<_> = ParityAlgorithm::ALL.into_iter().filter(fits).collect();
            Some(Layout::Parity(valid[pick as usize % valid.len()]))
        }
        Level::Raid10 => {
            let (near, far, offset, far_set_mode) = (1 + pick % 3, 1 + pick / 3 % 3, pick / 9 % 2, pick / 18 % 3);
            let word = near | far << 8 | offset << 16 | far_set_mode << 17;
            Some(Layout::Raid10(Raid10Layout::from_number(word).ok()?))
        }
    }
}

/// A valid array of 1-10 members of 4-40 chunks of 4-64 KiB (raid0 members may differ).
fn arrays() -> impl Strategy<Value = Array> {
    let parts = (0..LEVELS.len(), any::<u32>(), 1usize..=10, 2u32..=6, prop::collection::vec(4u64..40, 10));
    parts.prop_filter_map("no such array", |(level, pick, devices, chunk_shift, chunks)| {
        let level = LEVELS[level];
        let chunk_kib = 1u64 << chunk_shift;
        let member_kib =
            (0..devices).map(|m| chunk_kib * if level == Level::Raid0 { chunks[m] } else { chunks[0] }).collect();
        Array::new(&ArraySpec { level, layout: layout(level, pick), chunk_kib, member_kib }).ok()
    })
}

/// Random request bits: mostly within one chunk, often of whole pages.
#[derive(Clone, Copy, Debug)]
struct RequestBits {
    write: bool,
    within_chunk: bool,
    whole_pages: bool,
    start: u64,
    length: u64,
}

fn request_bits() -> impl Strategy<Value = RequestBits> {
    let parts = (any::<bool>(), 0..4u8, any::<bool>(), any::<u64>(), any::<u64>());
    parts.prop_map(|(write, kind, whole_pages, start, length)| {
        RequestBits { write, within_chunk: kind != 0, whole_pages, start, length }
    })
}

fn request(array: &Array, bits: RequestBits) -> Request {
    let capacity = array.capacity_sectors();
    let chunk = array.chunk_sectors();
    let (mut sector, mut sectors) = if bits.within_chunk {
        let sector = bits.start % capacity;
        let room = (chunk - sector % chunk).min(capacity - sector);
        (sector, 1 + bits.length % room)
    } else {
        let sector = bits.start % capacity;
        (sector, 1 + bits.length % (3 * chunk).min(capacity - sector))
    };
    if bits.whole_pages {
        // Chunks and capacity are whole pages, so rounding out stays within both.
        sector -= sector % PAGE_SECTORS;
        sectors = sectors.div_ceil(PAGE_SECTORS) * PAGE_SECTORS;
        let room = if bits.within_chunk { chunk - sector % chunk } else { capacity - sector };
        sectors = sectors.min(room);
    }
    Request { write: bits.write, sector, sectors }
}

/// Read-balancing state drawn from `seeds`; some members' heads or streams sit exactly at the
/// request's copies so md's sequential and nearest-head rules get exercised.
fn mirrors(array: &Array, request: &Request, seeds: &[u64]) -> MirrorState {
    let policy = if seeds[0] % 4 == 0 { ReadBalance::First } else { ReadBalance::Md };
    let mut mirrors = MirrorState::new(array.devices(), policy);
    let mut copies = crate::layout::Copies::new();
    array.map(request.sector, &mut copies);
    for (member, &seed) in seeds.iter().enumerate().take(array.devices() as usize) {
        let copy = copies.as_slice().iter().find(|l| l.member as usize == member);
        let near = copy.map_or(seed % 4096, |l| l.sector);
        mirrors.head_sector[member] = if seed % 3 == 0 { near } else { seed >> 8 & 0xffff };
        mirrors.next_sequential_sector[member] = if seed % 5 == 0 { near } else { u64::MAX };
        mirrors.pending[member] = (seed >> 4 & 3) as u32;
        mirrors.nonrotational[member] = seed % 7 == 0;
    }
    mirrors
}

const RMW_LEVELS: [RmwLevel; 3] = [RmwLevel::Disable, RmwLevel::Enable, RmwLevel::Prefer];

proptest! {
    #![proptest_config(ProptestConfig::with_cases(512))]

    #[test]
    fn the_shortcut_plans_what_the_general_planner_plans(
        array in arrays(),
        failed_bits in any::<u64>(),
        rmw_level in 0..3usize,
        recovering_bits in any::<u64>(),
        requests in prop::collection::vec(request_bits(), 24),
        seeds in prop::collection::vec(any::<u64>(), 10),
    ) {
        let devices = array.devices();
        let mut failed: Vec<u32> = (0..devices).filter(|m| failed_bits & (1 << m) != 0).collect();
        if array.loses_data(&failed) {
            failed.clear();
        }
        let rmw_level = RMW_LEVELS[rmw_level];
        let mut planner = Planner::new(array.clone(), &failed, rmw_level).unwrap();
        // Half the time a failed member is recovering, in sync below a random point of its
        // used space (sometimes none of it, sometimes all).
        if !failed.is_empty() && recovering_bits % 2 == 0 {
            let member = failed[(recovering_bits >> 1) as usize % failed.len()];
            let used = array.member_used_sectors(member);
            let below = (recovering_bits >> 8) % (used + 2);
            planner.set_recovering(Some((member, below)));
        }
        let (mut fast, mut general) = (Plan::new(), Plan::new());
        for bits in requests {
            let request = request(&array, bits);
            let mirrors = mirrors(&array, &request, &seeds);
            let fast_result = planner.plan_by(Path::Fast, &request, &mirrors, &mut fast);
            let general_result = planner.plan_by(Path::General, &request, &mirrors, &mut general);
            prop_assert_eq!(fast_result.is_ok(), general_result.is_ok());
            prop_assert_eq!(&fast, &general, "{:?} on {:?} failed {:?}", request, array.layout(), failed);
        }
    }
}

fn benchmark_planner(level: Level, layout: &str, failed: &[u32]) -> Planner {
    let layout = Some(Layout::parse(level, layout).unwrap());
    let spec = ArraySpec { level, layout, chunk_kib: 64, member_kib: vec![64 * 1024; 6] };
    Planner::new(Array::new(&spec).unwrap(), failed, RmwLevel::Enable).unwrap()
}

/// The benchmark's requests (16 KiB, aligned, within a 64 KiB chunk) take the shortcut;
/// degraded raid5 and requests crossing a chunk do not.
#[test]
fn the_shortcut_takes_the_common_requests() {
    let kib = 2;
    let mut plan = Plan::new();
    for (level, layout) in [(Level::Raid5, "left-symmetric"), (Level::Raid10, "n2")] {
        let mut planner = benchmark_planner(level, layout, &[]);
        let mirrors = MirrorState::new(6, ReadBalance::Md);
        for write in [false, true] {
            for sector in (0..8 * 64 * kib).step_by(16 * kib as usize) {
                let request = Request { write, sector, sectors: 16 * kib };
                plan.clear();
                assert!(planner.plan_within_chunk(&request, &mirrors, &mut plan), "{level:?} {request:?}");
            }
            let crossing = Request { write, sector: 56 * kib, sectors: 16 * kib };
            plan.clear();
            assert!(!planner.plan_within_chunk(&crossing, &mirrors, &mut plan));
        }
    }
    let mut degraded = benchmark_planner(Level::Raid5, "left-symmetric", &[2]);
    let request = Request { write: false, sector: 0, sectors: 16 * kib };
    plan.clear();
    assert!(!degraded.plan_within_chunk(&request, &MirrorState::new(6, ReadBalance::Md), &mut plan));
}
