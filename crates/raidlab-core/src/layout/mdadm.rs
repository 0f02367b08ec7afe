//! mdadm's defaults that change where data starts on each member.
//!
//! Restates mdadm `super1.c:validate_geometry1` and `choose_bm_space` (metadata 1.2, the
//! default since mdadm 3.0).

const GIB_SECTORS: u64 = 1 << 21;

/// Sectors mdadm reserves for an internal bitmap on a device of `device_sectors`.
fn bitmap_space_sectors(device_sectors: u64) -> u64 {
    if device_sectors < 128 {
        0
    } else if device_sectors - 128 >= 200 * GIB_SECTORS {
        256
    } else if device_sectors - 8 > 8 * GIB_SECTORS {
        128
    } else {
        8
    }
}

/// The data offset mdadm 1.2 chooses for a member of `device_sectors` with chunk
/// `chunk_sectors` (0 for raid1): superblock, bitmap space and reshape headroom, rounded up to
/// 1 MiB. E.g. 264192 sectors (129 MiB) for any device of 128 GiB or more with 512 KiB chunks.
pub fn data_offset_sectors(device_sectors: u64, chunk_sectors: u64) -> u64 {
    let mut headroom: u64 = 262_144;
    while headroom * 1024 > device_sectors && (chunk_sectors == 0 || headroom / 2 >= 2 * chunk_sectors) {
        headroom /= 2;
    }
    (24 + bitmap_space_sectors(device_sectors) + headroom).div_ceil(2048) * 2048
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn matches_mdadm_worked_values() {
        let chunk = 1024; // 512 KiB
        assert_eq!(data_offset_sectors(1_953_125_000, chunk), 264_192); // 1 TB
        assert_eq!(data_offset_sectors(7_814_037_168, chunk), 264_192); // 4 TB
        assert_eq!(data_offset_sectors(100 * GIB_SECTORS, chunk), 133_120);
        assert_eq!(data_offset_sectors(10 * GIB_SECTORS, chunk), 18_432);
        assert_eq!(data_offset_sectors(GIB_SECTORS, chunk), 4_096);
    }
}
