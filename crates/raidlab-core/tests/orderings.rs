//! The published orderings of md raid5 vs raid10 n2/f2/o2 rest on two mechanisms the
//! core restates from Linux 6.1; these pin them (the orderings themselves are checked end to
//! end by tests/test_orderings.py).

use raidlab_core::layout::{Array, ArraySpec, Layout, Level, Location};
use raidlab_core::plan::{MirrorState, ReadBalance};
use raidlab_core::sim::pagecache::default_read_ahead_kib;

fn array(level: Level, layout: Option<&str>, devices: usize) -> Array {
    let layout = layout.map(|name| Layout::parse(level, name).unwrap());
    Array::new(&ArraySpec { level, layout, chunk_kib: 512, member_kib: vec![1 << 20; devices] }).unwrap()
}

/// `blk_queue_io_opt` (block/blk-settings.c): read_ahead_kb = max(2 x io_opt, 128 KiB), io_opt
/// as md sets it: raid0 chunk x devices, raid5 chunk x (devices - 1), raid10 chunk x the stripes
/// of distinct data (n2: devices / 2; f2, o2: devices), raid1 and a bare drive none.
#[test]
fn read_ahead_is_twice_what_md_declares_as_io_opt() {
    let cases = [
        (Level::Raid0, None, 4, 4096),
        (Level::Raid0, None, 1, 128),
        (Level::Raid1, None, 2, 128),
        (Level::Raid5, None, 4, 3072),
        (Level::Raid6, None, 6, 4096),
        (Level::Raid10, Some("n2"), 4, 2048),
        (Level::Raid10, Some("f2"), 4, 4096),
        (Level::Raid10, Some("o2"), 4, 4096),
        (Level::Raid10, Some("n2"), 3, 3072),
    ];
    for (level, layout, devices, kib) in cases {
        assert_eq!(default_read_ahead_kib(&array(level, layout, devices)), kib, "{level:?} {layout:?} x{devices}");
    }
}

/// raid10.c `read_balance`: with far copies (f2 and o2 both have far_copies = 2) md reads the
/// copy with the lowest device address even when its member is busy, so the first band works
/// as a raid0 of all members (commits 22dfdf52 and 8ed3a195); with near copies it takes an idle
/// member first, else the nearest head.
#[test]
fn far_and_offset_copies_read_the_lowest_address_near_copies_the_idle_member() {
    for (name, expect_lowest) in [("f2", true), ("o2", true), ("n2", false)] {
        let layout = match Layout::parse(Level::Raid10, name).unwrap() {
            Layout::Raid10(layout) => layout,
            other => panic!("{other:?}"),
        };
        let mut state = MirrorState::new(4, ReadBalance::Md);
        let low = Location { member: 1, sector: 1024 };
        let high = Location { member: 2, sector: 1 << 20 };
        state.issued(1, 0, 8); // the lowest-address copy's member is busy
        let chosen = state.choose(&[high, low], 0, 8, Some(layout)).unwrap();
        let expected = if expect_lowest { low } else { high };
        assert_eq!(chosen, expected, "{name}");
    }
}
