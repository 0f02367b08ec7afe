//! Sets of array members as bit masks: bit `m` is member `m` (at most 64 members).

/// The members in `mask`, lowest first.
#[inline]
pub fn members(mut mask: u64) -> impl Iterator<Item = u32> {
    std::iter::from_fn(move || {
        let member = mask.trailing_zeros();
        mask &= mask.wrapping_sub(1);
        (member < u64::BITS).then_some(member)
    })
}

/// The members in `mask`, highest first (the order md's `ops_run_io` walks a stripe's devices:
/// `for (i = disks; i--; )`).
#[inline]
pub fn members_from_last(mut mask: u64) -> impl Iterator<Item = u32> {
    std::iter::from_fn(move || {
        (mask != 0).then(|| {
            let member = u64::BITS - 1 - mask.leading_zeros();
            mask &= !(1u64 << member);
            member
        })
    })
}

/// How many members `mask` holds: `mask.count_ones()`. The default x86-64 target has no
/// POPCNT instruction, so `count_ones` compiles to a dozen-instruction bit trick; most arrays'
/// masks fit a byte, counted by one table load (md's rmw/rcw rule counts four masks a head).
#[inline(always)]
pub fn count(mask: u64) -> u32 {
    if mask < 256 {
        BYTE_COUNTS[mask as usize] as u32
    } else {
        mask.count_ones()
    }
}

/// The members in each byte value.
const BYTE_COUNTS: [u8; 256] = {
    let mut counts = [0u8; 256];
    let mut byte = 0;
    while byte < 256 {
        counts[byte] = (byte as u32).count_ones() as u8;
        byte += 1;
    }
    counts
};

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn count_is_count_ones() {
        for mask in (0..1024u64).chain([u64::MAX, 1 << 63, 0xff << 8, 0x8000_0000_0000_00ff]) {
            assert_eq!(count(mask), mask.count_ones(), "{mask:#x}");
        }
    }

    #[test]
    fn members_lists_the_set_bits_lowest_first() {
        assert_eq!(members(0).count(), 0);
        assert_eq!(members(0b1010_0101).collect::<Vec<_>>(), [0, 2, 5, 7]);
        assert_eq!(members(1 << 63 | 1).collect::<Vec<_>>(), [0, 63]);
        assert_eq!(members(u64::MAX).count(), 64);
    }

    #[test]
    fn members_from_last_lists_them_highest_first() {
        assert_eq!(members_from_last(0).count(), 0);
        assert_eq!(members_from_last(0b1010_0101).collect::<Vec<_>>(), [7, 5, 2, 0]);
        assert_eq!(members_from_last(1 << 63 | 1).collect::<Vec<_>>(), [63, 0]);
    }
}
