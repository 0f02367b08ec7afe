//! Properties of the layout engine for random small arrays of every level and layout:
//! the map is a bijection from array chunks onto the member cells holding data, every copy of a
//! chunk is on a distinct member, and offsets within a chunk are preserved.

mod common;

use proptest::prelude::*;
use raidlab_core::layout::{Cell, Copies};

proptest! {
    #![proptest_config(ProptestConfig::with_cases(300))]

    #[test]
    fn map_is_a_bijection_onto_data_cells(array in common::arrays()) {
        let chunk = array.chunk_sectors();
        let chunks = array.capacity_sectors() / chunk;
        let mut copies = Copies::new();
        for c in 0..chunks {
            array.map(c * chunk, &mut copies);
            prop_assert_eq!(copies.len() as u32, array.copies());
            let mut members: Vec<u32> = copies.as_slice().iter().map(|l| l.member).collect();
            members.sort_unstable();
            members.dedup();
            prop_assert_eq!(members.len(), copies.len(), "copies of chunk {} share a member", c);
            for location in copies.as_slice() {
                prop_assert_eq!(location.sector % chunk, 0);
                prop_assert_eq!(array.unmap(location.member, location.sector), Cell::Data(c * chunk));
            }
            prop_assert_eq!(array.map_primary(c * chunk), copies.as_slice()[0]);
        }
        // Surjective onto data cells: every member cell holding data is some chunk's copy.
        let mut data_cells = 0u64;
        for member in 0..array.devices() {
            let cells = array.member_sectors()[member as usize] / chunk;
            for cell in 0..cells {
                if let Cell::Data(sector) = array.unmap(member, cell * chunk) {
                    prop_assert!(sector < array.capacity_sectors());
                    data_cells += 1;
                }
            }
        }
        prop_assert_eq!(data_cells, chunks * array.copies() as u64);
    }

    #[test]
    fn offsets_within_a_chunk_are_preserved(array in common::arrays(), pick in any::<u64>(), offset in any::<u64>()) {
        let chunk = array.chunk_sectors();
        let base = pick % (array.capacity_sectors() / chunk) * chunk;
        let offset = offset % chunk;
        let (mut at_base, mut at_offset) = (Copies::new(), Copies::new());
        array.map(base, &mut at_base);
        array.map(base + offset, &mut at_offset);
        for (a, b) in at_base.as_slice().iter().zip(at_offset.as_slice()) {
            prop_assert_eq!(a.member, b.member);
            prop_assert_eq!(a.sector + offset, b.sector);
            prop_assert_eq!(array.unmap(b.member, b.sector), Cell::Data(base + offset));
        }
    }

    #[test]
    fn parity_rows_hold_one_p_and_q_each(array in common::arrays()) {
        let Some(first) = array.stripe(0) else { return Ok(()) };
        let chunk = array.chunk_sectors();
        for row in 0..array.parity_rows() {
            let stripe = array.stripe(row).unwrap();
            prop_assert_eq!(stripe.data_count, first.data_count);
            prop_assert_eq!(array.unmap(stripe.p, row * chunk), Cell::P);
            if let Some(q) = stripe.q {
                prop_assert_eq!(array.unmap(q, row * chunk), Cell::Q);
                let mut slots: Vec<u32> = stripe.q_slot[..stripe.data_count as usize].to_vec();
                slots.sort_unstable();
                slots.dedup();
                prop_assert_eq!(slots.len() as u32, stripe.data_count, "distinct Q slots");
            }
        }
    }
}
