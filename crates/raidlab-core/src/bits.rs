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

#[cfg(test)]
mod tests {
    use super::*;

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
