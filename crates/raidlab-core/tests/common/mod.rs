//! Strategies shared by the property tests: small random md arrays of every level and layout.

#![allow(dead_code)]

pub mod md_io;
pub mod serial;

use proptest::prelude::*;
use raidlab_core::layout::{Array, ArraySpec, Layout, Level, ParityAlgorithm};

/// Every raid10 layout name worth testing, and the raid4/5/6 algorithms by level.
pub const RAID10_LAYOUTS: [&str; 6] = ["n2", "n3", "f2", "f3", "o2", "o3"];

fn layout_strategy(level: Level) -> BoxedStrategy<Option<Layout>> {
    match level {
        Level::Raid0 => prop_oneof![Just("original"), Just("alternate")]
            .prop_map(move |n| Some(Layout::parse(level, n).unwrap()))
            .boxed(),
        Level::Raid1 | Level::Raid4 => Just(None).boxed(),
        Level::Raid5 | Level::Raid6 => {
            let valid: Vec<ParityAlgorithm> = ParityAlgorithm::ALL
                .into_iter()
                .filter(|a| level == Level::Raid6 || a.valid_for_raid5())
                .collect();
            proptest::sample::select(valid).prop_map(|a| Some(Layout::Parity(a))).boxed()
        }
        Level::Raid10 => proptest::sample::select(RAID10_LAYOUTS.to_vec())
            .prop_map(move |n| Some(Layout::parse(level, n).unwrap()))
            .boxed(),
    }
}

fn min_devices(level: Level) -> usize {
    match level {
        Level::Raid0 => 1,
        Level::Raid6 => 4,
        Level::Raid10 => 3,
        _ => 2,
    }
}

/// A small valid array: 1-9 members of 4-40 chunks of 4-64 KiB (raid0 members may differ).
pub fn arrays() -> impl Strategy<Value = Array> {
    let levels = prop_oneof![
        Just(Level::Raid0),
        Just(Level::Raid1),
        Just(Level::Raid4),
        Just(Level::Raid5),
        Just(Level::Raid6),
        Just(Level::Raid10)
    ];
    levels.prop_flat_map(|level| {
        let devices = min_devices(level)..=9usize;
        let chunk_kib = (2u32..=6).prop_map(|p| 1u64 << p);
        (Just(level), layout_strategy(level), devices, chunk_kib, proptest::collection::vec(4u64..40, 9))
            .prop_filter_map("layout needs more devices", |(level, layout, devices, chunk_kib, chunks)| {
                let member_kib = (0..devices)
                    .map(|m| chunk_kib * if level == Level::Raid0 { chunks[m] } else { chunks[0] })
                    .collect();
                Array::new(&ArraySpec { level, layout, chunk_kib, member_kib }).ok()
            })
    })
}
