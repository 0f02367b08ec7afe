//! Properties of `raidlab_core::parity`: GF(2^8) arithmetic against an independent reference,
//! Q in md's slot order against hand-worked rows, and encode → lose members → decode round
//! trips for every level and layout. Every failure set the layout survives must give back the
//! exact bytes (and the exact member images a rebuild writes); every other set must be DataLoss.

use proptest::prelude::*;
use raidlab_core::layout::{Array, ArraySpec, Copies, Layout, Level, ParityAlgorithm};
use raidlab_core::layout::{Raid0Layout, Raid10Layout};
use raidlab_core::parity::{self, gf256};
use raidlab_core::{ErrorKind, SECTOR_BYTES};

// ---------------------------------------------------------------------------------------------
// Helpers
// ---------------------------------------------------------------------------------------------

fn make_array(level: Level, layout: Option<Layout>, chunk_kib: u64, member_kib: Vec<u64>) -> Array {
    let spec = ArraySpec { level, layout, chunk_kib, member_kib };
    Array::new(&spec).unwrap_or_else(|e| panic!("{spec:?}: {e}"))
}

/// Deterministic pseudo-random bytes (xorshift64*); proptest supplies only the seed so that
/// shrinking never has to walk a megabyte-long vector.
fn random_bytes(len: usize, seed: u64) -> Vec<u8> {
    let mut state = seed | 1;
    let mut out = Vec::with_capacity(len + 8);
    while out.len() < len {
        state ^= state >> 12;
        state ^= state << 25;
        state ^= state >> 27;
        out.extend_from_slice(&state.wrapping_mul(0x2545_f491_4f6c_dd1d).to_le_bytes());
    }
    out.truncate(len);
    out
}

/// Every subset of `0..devices` with at most `max_size` members, smallest first.
fn failure_sets(devices: u32, max_size: u32) -> Vec<Vec<u32>> {
    let mut sets: Vec<Vec<u32>> = (0u64..1 << devices)
        .filter(|mask| mask.count_ones() <= max_size)
        .map(|mask| (0..devices).filter(|m| mask >> m & 1 == 1).collect())
        .collect();
    sets.sort_by_key(|set| set.len());
    sets
}

/// Whether the array keeps all its data without `failed`, decided independently of
/// `Array::loses_data`: parity levels by count, copy levels by walking every array chunk.
fn survives(array: &Array, failed: &[u32]) -> bool {
    let parity = array.level().parity_count() as usize;
    if parity > 0 {
        return failed.len() <= parity;
    }
    let mut copies = Copies::new();
    let chunks = array.capacity_sectors().div_ceil(array.chunk_sectors());
    (0..chunks).all(|chunk| {
        array.map(chunk * array.chunk_sectors(), &mut copies);
        copies.as_slice().iter().any(|l| !failed.contains(&l.member))
    })
}

/// Encodes random bytes, then for every failure set of at most `max_failed` members checks
/// that decode and rebuild either give the exact original or report data loss.
fn check_round_trips(array: &Array, seed: u64, max_failed: u32) {
    let data = random_bytes(array.capacity_bytes() as usize, seed);
    let images = parity::encode(array, &data).unwrap();
    for (member, image) in images.iter().enumerate() {
        assert_eq!(image.len(), parity::member_image_bytes(array, member as u32));
    }
    for failed in failure_sets(array.devices(), max_failed.min(array.devices())) {
        let expect_ok = survives(array, &failed);
        assert_eq!(array.loses_data(&failed), !expect_ok, "{array:?} loses_data({failed:?})");
        let members: Vec<Option<Vec<u8>>> = (0..array.devices())
            .map(|m| (!failed.contains(&m)).then(|| images[m as usize].clone()))
            .collect();
        match parity::decode(array, &members) {
            Ok(decoded) => {
                assert!(expect_ok, "{array:?}: decode without {failed:?} should be data loss");
                assert!(decoded == data, "{array:?}: decode without {failed:?} differs");
                let rebuilt = parity::rebuild(array, &members).unwrap();
                assert!(rebuilt == images, "{array:?}: rebuild of {failed:?} differs");
            }
            Err(e) => {
                assert!(!expect_ok, "{array:?}: decode without {failed:?} failed: {e}");
                assert_eq!(e.kind, ErrorKind::DataLoss, "{e}");
                assert!(!e.message.contains('\n'));
            }
        }
    }
}

/// Encodes bytes whose first few bytes per array chunk are given (the rest zero).
fn encode_chunk_heads(array: &Array, heads: &[(u64, &[u8])]) -> Vec<Vec<u8>> {
    let mut data = vec![0u8; array.capacity_bytes() as usize];
    for &(chunk, head) in heads {
        let at = (chunk * array.chunk_bytes()) as usize;
        data[at..at + head.len()].copy_from_slice(head);
    }
    parity::encode(array, &data).unwrap()
}

/// md's "multiply by x": shift left, XOR 0x1d on carry (kernel `lib/raid6/mktables.c`).
fn xtime(x: u8) -> u8 {
    (x << 1) ^ if x & 0x80 != 0 { 0x1d } else { 0 }
}

/// Carry-less product, then polynomial long division by 0x11d: a second, independent multiply.
fn reference_mul(a: u8, b: u8) -> u8 {
    let mut wide = 0u16;
    for bit in 0..8 {
        if b >> bit & 1 == 1 {
            wide ^= (a as u16) << bit;
        }
    }
    for bit in (8..15).rev() {
        if wide >> bit & 1 == 1 {
            wide ^= 0x11d << (bit - 8);
        }
    }
    wide as u8
}

// ---------------------------------------------------------------------------------------------
// GF(2^8)
// ---------------------------------------------------------------------------------------------

#[test]
fn gf_multiply_matches_reference_for_every_pair() {
    for a in 0..=255u8 {
        for b in 0..=255u8 {
            assert_eq!(gf256::mul(a, b), reference_mul(a, b), "{a:#04x} · {b:#04x}");
        }
        assert_eq!(gf256::mul(a, 2), xtime(a));
    }
}

#[test]
fn gf_known_values() {
    assert_eq!(gf256::exp(0), 1);
    assert_eq!(gf256::exp(255), 1, "g^255 = 1");
    assert_eq!(gf256::exp(8), 0x1d);
    assert_eq!(gf256::exp(25), 0x03, "log(3) = 25 for 0x11d");
    assert_eq!(gf256::log(3), 25);
    assert_eq!(gf256::mul(0x8e, 2), 1);
    assert_eq!(gf256::inv(2), 0x8e);
    assert_eq!(gf256::div(0x1d, 0x80), 2);
    // g generates the group: its first 255 powers are exactly the 255 non-zero bytes.
    let mut seen = [false; 256];
    for i in 0..255 {
        let x = gf256::exp(i) as usize;
        assert!(x != 0 && !seen[x], "g^{i} repeats");
        seen[x] = true;
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(256))]

    #[test]
    fn gf_field_laws(a in any::<u8>(), b in any::<u8>(), c in any::<u8>(), n in 0u32..1000) {
        prop_assert_eq!(gf256::mul(a, b), gf256::mul(b, a));
        prop_assert_eq!(gf256::mul(a, gf256::mul(b, c)), gf256::mul(gf256::mul(a, b), c));
        prop_assert_eq!(gf256::mul(a, b ^ c), gf256::mul(a, b) ^ gf256::mul(a, c));
        prop_assert_eq!(gf256::exp(n), gf256::pow(2, n));
        if b != 0 {
            prop_assert_eq!(gf256::mul(gf256::div(a, b), b), a);
            prop_assert_eq!(gf256::mul(b, gf256::inv(b)), 1);
            prop_assert_eq!(gf256::exp(gf256::log(b) as u32), b);
        }
        let mut expected = 1u8;
        for _ in 0..n % 300 {
            expected = reference_mul(expected, a);
        }
        prop_assert_eq!(gf256::pow(a, n % 300), expected);
    }
}

// ---------------------------------------------------------------------------------------------
// Hand-worked rows: Q in md's slot order
// ---------------------------------------------------------------------------------------------

#[test]
fn raid6_left_symmetric_4_disks_row_0_by_hand() {
    // Row 0 of a 4-disk left-symmetric raid6 is `Q D0 D1 P`; Q's walk starts at the disk after
    // Q, so D0 has slot 0 and D1 slot 1: Q = D0 ⊕ 2·D1.
    let array = make_array(Level::Raid6, None, 4, vec![16; 4]);
    let stripe = array.stripe(0).unwrap();
    assert_eq!((stripe.q, stripe.p, stripe.data_members()), (Some(0), 3, &[1, 2][..]));
    let d0: &[u8] = &[0x01, 0x80, 0xff];
    let d1: &[u8] = &[0x03, 0x80, 0x10];
    let images = encode_chunk_heads(&array, &[(0, d0), (1, d1)]);
    // 2·0x03 = 0x06; 2·0x80 = 0x100 ⊕ 0x11d = 0x1d; 2·0x10 = 0x20.
    assert_eq!(&images[0][..4], &[0x07, 0x9d, 0xdf, 0x00], "Q");
    assert_eq!(&images[3][..4], &[0x02, 0x00, 0xef, 0x00], "P");
    assert_eq!(&images[1][..3], d0);
    assert_eq!(&images[2][..3], d1);
    assert!(images.iter().all(|image| image[4..].iter().all(|&b| b == 0)));
    // Losing both data members: recov.c's two-data formula must give them back.
    let mut blocks: Vec<Vec<u8>> = images.iter().map(|image| image[..3].to_vec()).collect();
    blocks[1].fill(0xaa);
    blocks[2].fill(0x55);
    let mut refs: Vec<&mut [u8]> = blocks.iter_mut().map(|b| b.as_mut_slice()).collect();
    parity::reconstruct_row(&stripe, &mut refs, &[1, 2]).unwrap();
    assert_eq!((&blocks[1][..], &blocks[2][..]), (d0, d1));
}

#[test]
fn raid6_left_asymmetric_slot_order_differs_from_data_order() {
    // 5-disk left-asymmetric row 2 is `D0 D1 P Q D2`: slots D2→0, D0→1, D1→2
    // (kernel `drivers/md/raid5.c` `set_syndrome_sources`), so Q = D2 ⊕ 2·D0 ⊕ 4·D1. Row 2 holds array chunks 6, 7, 8.
    let la = Some(Layout::Parity(ParityAlgorithm::LeftAsymmetric));
    let array = make_array(Level::Raid6, la, 4, vec![16; 5]);
    let stripe = array.stripe(2).unwrap();
    assert_eq!((stripe.p, stripe.q, stripe.data_members()), (2, Some(3), &[0, 1, 4][..]));
    let images = encode_chunk_heads(&array, &[(6, &[0x01]), (7, &[0x02]), (8, &[0x04])]);
    let row_2 = 2 * 4096;
    assert_eq!(images[3][row_2], 0x04 ^ 0x02 ^ 0x08, "Q in md slot order");
    assert_ne!(images[3][row_2], 0x01 ^ 0x04 ^ 0x10, "not Q in logical data order");
    assert_eq!(images[2][row_2], 0x07, "P");
}

#[test]
fn raid6_ddf_slots_are_disk_numbers() {
    // ddf-N-continue, 4 disks, row 1: P on disk 2, Q on disk 1, D0 on disk 3, D1 on disk 0.
    // DDF Q runs over raw disk numbers: Q = g^3·D0 ⊕ g^0·D1.
    let ddf = Some(Layout::Parity(ParityAlgorithm::RotatingNContinue));
    let array = make_array(Level::Raid6, ddf, 4, vec![16; 4]);
    let stripe = array.stripe(1).unwrap();
    assert_eq!((stripe.p, stripe.q, stripe.data_members()), (2, Some(1), &[3, 0][..]));
    let mut p = [0u8; 2];
    let mut q = [0u8; 2];
    parity::compute_pq(&stripe, &[&[1, 0x20], &[1, 0]], &mut p, Some(&mut q));
    assert_eq!(p, [0, 0x20]);
    assert_eq!(q, [0x09, 0x1d], "8·1 ⊕ 1 and 8·0x20 = 0x100 → 0x1d");
}

#[test]
fn raid5_parity_is_xor() {
    let array = make_array(Level::Raid5, None, 4, vec![8; 3]);
    let images = encode_chunk_heads(&array, &[(0, &[0xf0, 0x0f]), (1, &[0x3c, 0xff])]);
    let stripe = array.stripe(0).unwrap();
    assert_eq!(&images[stripe.p as usize][..3], &[0xcc, 0xf0, 0x00]);
}

// ---------------------------------------------------------------------------------------------
// Bad input and failure sets beyond tolerance
// ---------------------------------------------------------------------------------------------

#[test]
fn malformed_input_is_an_invalid_request() {
    let array = make_array(Level::Raid5, None, 4, vec![32; 3]);
    let data = vec![7u8; array.capacity_bytes() as usize];
    let short = parity::encode(&array, &data[1..]).unwrap_err();
    assert_eq!(short.kind, ErrorKind::InvalidRequest);
    let images = parity::encode(&array, &data).unwrap();
    let too_few: Vec<Option<Vec<u8>>> = images[..2].iter().cloned().map(Some).collect();
    assert_eq!(parity::decode(&array, &too_few).unwrap_err().kind, ErrorKind::InvalidRequest);
    let mut truncated: Vec<Option<Vec<u8>>> = images.iter().cloned().map(Some).collect();
    truncated[1].as_mut().unwrap().pop();
    assert_eq!(parity::decode(&array, &truncated).unwrap_err().kind, ErrorKind::InvalidRequest);
    let stripe = array.stripe(0).unwrap();
    let mut blocks = [[0u8; 4]; 3];
    let mut refs: Vec<&mut [u8]> = blocks.iter_mut().map(|b| b.as_mut_slice()).collect();
    let twice = parity::reconstruct_row(&stripe, &mut refs, &[1, 1]).unwrap_err();
    assert_eq!(twice.kind, ErrorKind::InvalidRequest);
    let outside = parity::reconstruct_row(&stripe, &mut refs, &[3]).unwrap_err();
    assert_eq!(outside.kind, ErrorKind::InvalidRequest);
    let two = parity::reconstruct_row(&stripe, &mut refs, &[0, 2]).unwrap_err();
    assert_eq!(two.kind, ErrorKind::DataLoss);
}

#[test]
fn raid0_tolerates_no_failure() {
    let array = make_array(Level::Raid0, None, 4, vec![16, 24, 32]);
    check_round_trips(&array, 1, 2);
}

// ---------------------------------------------------------------------------------------------
// Every layout, exhaustively, on small arrays
// ---------------------------------------------------------------------------------------------

#[test]
fn every_raid6_layout_every_failure_set() {
    for algorithm in ParityAlgorithm::ALL {
        for devices in 4..=8u32 {
            // n rows cover every rotation (periods are n or n-1 rows); one larger member
            // exercises rounding down to the chunk.
            let mut member_kib = vec![4 * devices as u64; devices as usize];
            member_kib[0] += 12;
            let layout = Some(Layout::Parity(algorithm));
            let array = make_array(Level::Raid6, layout, 4, member_kib);
            check_round_trips(&array, devices as u64, 3);
        }
    }
}

#[test]
fn every_raid4_and_raid5_layout_every_failure_set() {
    for algorithm in ParityAlgorithm::ALL.into_iter().filter(|a| a.valid_for_raid5()) {
        for devices in 2..=7u32 {
            let layout = Some(Layout::Parity(algorithm));
            let array =
                make_array(Level::Raid5, layout, 4, vec![8 * devices as u64; devices as usize]);
            check_round_trips(&array, devices as u64, 2);
        }
    }
    for devices in 2..=6u32 {
        let array = make_array(Level::Raid4, None, 4, vec![8 * devices as u64; devices as usize]);
        check_round_trips(&array, 4, 2);
    }
}

fn raid10(kind: char, copies: u32, far_set_mode: u32) -> Layout {
    let (near_copies, far_copies) = if kind == 'n' { (copies, 1) } else { (1, copies) };
    Layout::Raid10(Raid10Layout { near_copies, far_copies, offset: kind == 'o', far_set_mode })
}

#[test]
fn every_raid10_layout_every_failure_set_up_to_three() {
    for kind in ['n', 'f', 'o'] {
        for copies in 2..=3u32 {
            for devices in copies..=7 {
                // 15 chunks per member: odd, so far copies' stride does not divide evenly.
                let layout = Some(raid10(kind, copies, 0));
                let array = make_array(Level::Raid10, layout, 4, vec![60; devices as usize]);
                check_round_trips(&array, (devices * copies) as u64, 3);
            }
        }
    }
}

#[test]
fn raid1_survives_all_but_the_last_member() {
    for devices in 2..=4u32 {
        let mut member_kib = vec![36; devices as usize];
        member_kib[1] = 44;
        let array = make_array(Level::Raid1, None, 4, member_kib);
        check_round_trips(&array, 9, devices);
    }
}

// ---------------------------------------------------------------------------------------------
// Random arrays
// ---------------------------------------------------------------------------------------------

/// One raid6 row of random blocks: every set of at most two missing members comes back
/// exactly, and every set of three is data loss.
fn check_row_recovery(
    algorithm: ParityAlgorithm,
    devices: usize,
    row: u64,
    block_bytes: usize,
    seed: u64,
) -> Result<(), TestCaseError> {
    let layout = Some(Layout::Parity(algorithm));
    let array = make_array(Level::Raid6, layout, 4, vec![4096; devices]);
    let stripe = array.stripe(row).unwrap();
    let mut blocks: Vec<Vec<u8>> =
        (0..devices).map(|m| random_bytes(block_bytes, seed ^ ((m as u64) << 32))).collect();
    let data: Vec<&[u8]> = stripe.data_members().iter().map(|&m| &blocks[m as usize][..]).collect();
    let (mut p, mut q) = (vec![0u8; block_bytes], vec![0u8; block_bytes]);
    parity::compute_pq(&stripe, &data, &mut p, Some(&mut q));
    blocks[stripe.p as usize] = p;
    blocks[stripe.q.unwrap() as usize] = q;
    for missing in failure_sets(devices as u32, 3) {
        let mut damaged = blocks.clone();
        for &m in &missing {
            damaged[m as usize].fill(0x5a);
        }
        let mut refs: Vec<&mut [u8]> = damaged.iter_mut().map(|b| b.as_mut_slice()).collect();
        match parity::reconstruct_row(&stripe, &mut refs, &missing) {
            Ok(()) => prop_assert!(missing.len() <= 2 && damaged == blocks, "{:?}", missing),
            Err(e) => prop_assert!(missing.len() == 3 && e.kind == ErrorKind::DataLoss),
        }
    }
    Ok(())
}

/// A chunk of 4–64 KiB and `devices` member sizes of 8+ chunks (plus a few pages), with
/// members kept under about `budget_kib` so debug-mode runs stay quick.
fn geometry(
    devices: std::ops::RangeInclusive<usize>,
    budget_kib: u64,
) -> impl Strategy<Value = (u64, Vec<u64>)> {
    ((2u32..=6).prop_map(|shift| 1u64 << shift), devices).prop_flat_map(move |(chunk_kib, n)| {
        let max_chunks = (budget_kib / chunk_kib).clamp(8, 64);
        let member =
            (8..=max_chunks, 0..chunk_kib / 4).prop_map(move |(c, p)| c * chunk_kib + p * 4);
        (Just(chunk_kib), proptest::collection::vec(member, n))
    })
}

fn parity_algorithm(raid5_only: bool) -> impl Strategy<Value = ParityAlgorithm> {
    let choices: Vec<ParityAlgorithm> =
        ParityAlgorithm::ALL.into_iter().filter(|a| !raid5_only || a.valid_for_raid5()).collect();
    proptest::sample::select(choices)
}

proptest! {
    // Few cases, because each one decodes every failure set of a whole array in a debug
    // build; the exhaustive tests above already cover every layout on small arrays.
    #![proptest_config(ProptestConfig::with_cases(32))]

    #[test]
    fn raid0_and_raid1_round_trip(
        alternate in any::<bool>(),
        mirror in any::<bool>(),
        (chunk_kib, member_kib) in geometry(1..=5, 384),
        seed in any::<u64>(),
    ) {
        let (level, layout) = if mirror {
            (Level::Raid1, None)
        } else {
            let layout = if alternate { Raid0Layout::Alternate } else { Raid0Layout::Original };
            (Level::Raid0, Some(Layout::Raid0(layout)))
        };
        prop_assume!(level == Level::Raid0 || member_kib.len() >= 2);
        let array = make_array(level, layout, chunk_kib, member_kib);
        check_round_trips(&array, seed, array.devices());
    }

    #[test]
    fn raid4_raid5_round_trip(
        raid4 in any::<bool>(),
        algorithm in parity_algorithm(true),
        (chunk_kib, member_kib) in geometry(2..=6, 256),
        seed in any::<u64>(),
    ) {
        let (level, layout) = if raid4 {
            (Level::Raid4, None)
        } else {
            (Level::Raid5, Some(Layout::Parity(algorithm)))
        };
        let array = make_array(level, layout, chunk_kib, member_kib);
        check_round_trips(&array, seed, 2);
    }

    #[test]
    fn raid6_round_trip(
        algorithm in parity_algorithm(false),
        (chunk_kib, member_kib) in geometry(4..=6, 96),
        seed in any::<u64>(),
    ) {
        let layout = Some(Layout::Parity(algorithm));
        let array = make_array(Level::Raid6, layout, chunk_kib, member_kib);
        check_round_trips(&array, seed, 3);
    }

    #[test]
    fn raid10_round_trip(
        kind in proptest::sample::select(vec!['n', 'f', 'o']),
        copies in 2u32..=3,
        far_set_mode in 0u32..=2,
        extra_devices in 0u32..=4,
        (chunk_kib, member_kib) in geometry(7..=7, 128),
        seed in any::<u64>(),
    ) {
        let devices = copies + extra_devices;
        let far_set_mode = if kind == 'n' { 0 } else { far_set_mode };
        let spec = ArraySpec {
            level: Level::Raid10,
            layout: Some(raid10(kind, copies, far_set_mode)),
            chunk_kib,
            member_kib: member_kib[..devices as usize].to_vec(),
        };
        let array = Array::new(&spec);
        prop_assume!(array.is_ok(), "md refuses {:?}", spec);
        check_round_trips(&array.unwrap(), seed, 3);
    }

    #[test]
    fn raid6_rows_recover_every_pair(
        algorithm in parity_algorithm(false),
        devices in 4usize..=12,
        row in 0u64..200,
        block_bytes in 1usize..48,
        seed in any::<u64>(),
    ) {
        check_row_recovery(algorithm, devices, row, block_bytes, seed)?;
    }
}

#[test]
fn sector_size_is_what_the_images_assume() {
    // The images are indexed in bytes from sector numbers; md's sector is 512 bytes.
    assert_eq!(SECTOR_BYTES, 512);
    let array = make_array(Level::Raid10, None, 4, vec![64, 64, 64]);
    let used = array.member_used_sectors(0) * SECTOR_BYTES;
    assert_eq!(parity::member_image_bytes(&array, 0) as u64, used);
}
