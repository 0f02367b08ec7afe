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
}
