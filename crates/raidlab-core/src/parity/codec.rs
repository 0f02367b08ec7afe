//! Whole-array encode, rebuild and decode: the array's logical bytes to member images and back.
//!
//! Everything goes through the layout engine ([`Array::map`], [`Array::unmap`],
//! [`Array::stripe`]), so these helpers check the maths *and* the placement together. They
//! hold whole images in memory and are meant for tests and the simulator's checkers.

use super::row::{compute_pq, reconstruct_row};
use crate::error::{Error, Result};
use crate::layout::{Array, Cell, Copies, Level};
use crate::SECTOR_BYTES;

/// Bytes of member `member`'s image: the part of its data area the array uses.
pub fn member_image_bytes(array: &Array, member: u32) -> usize {
    sectors_to_bytes(array.member_used_sectors(member))
}

/// Lays the array's logical bytes out on its members as md would, with P and Q filled in.
///
/// Returns one image per member of [`member_image_bytes`] bytes; space md leaves unused is
/// zero. `data` must hold exactly [`Array::capacity_bytes`] bytes.
pub fn encode(array: &Array, data: &[u8]) -> Result<Vec<Vec<u8>>> {
    if data.len() as u64 != array.capacity_bytes() {
        return Err(Error::request(format!(
            "encode needs the array's {} bytes, got {}",
            array.capacity_bytes(),
            data.len()
        )));
    }
    let mut images: Vec<Vec<u8>> =
        (0..array.devices()).map(|m| vec![0u8; member_image_bytes(array, m)]).collect();
    let mut copies = Copies::new();
    for (sector, sectors) in pieces(array.capacity_sectors(), array.chunk_sectors()) {
        let bytes = byte_range(sector, sectors);
        array.map(sector, &mut copies);
        for location in copies.as_slice() {
            debug_assert_contiguous(array, location.member, location.sector, sector, sectors);
            let at = byte_range(location.sector, sectors);
            images[location.member as usize][at].copy_from_slice(&data[bytes.clone()]);
        }
    }
    for row in 0..array.parity_rows() {
        fill_parity_row(array, &mut images, row);
    }
    Ok(images)
}

/// Every member's image with the missing ones (`None`) regenerated as a rebuild would write
/// them: from parity for raid4/5/6, from a surviving copy for raid1/10.
///
/// Present images may be longer than [`member_image_bytes`]; the result is cut to that size.
/// A failure set the array cannot survive is a [`crate::ErrorKind::DataLoss`] error.
pub fn rebuild(array: &Array, members: &[Option<Vec<u8>>]) -> Result<Vec<Vec<u8>>> {
    let missing = check_members(array, members)?;
    let mut images: Vec<Vec<u8>> = (0..array.devices())
        .map(|m| match &members[m as usize] {
            Some(image) => image[..member_image_bytes(array, m)].to_vec(),
            None => vec![0u8; member_image_bytes(array, m)],
        })
        .collect();
    if missing.is_empty() {
        return Ok(images);
    }
    if array.level().parity_count() > 0 {
        for row in 0..array.parity_rows() {
            rebuild_parity_row(array, &mut images, row, &missing)?;
        }
    } else {
        for &member in &missing {
            rebuild_mirror_member(array, &mut images, member, &missing)?;
        }
    }
    Ok(images)
}

/// The array's logical contents, reconstructed when members are missing (`None`).
/// A failure set the array cannot survive is a [`crate::ErrorKind::DataLoss`] error.
pub fn decode(array: &Array, members: &[Option<Vec<u8>>]) -> Result<Vec<u8>> {
    let images = rebuild(array, members)?;
    let mut data = vec![0u8; sectors_to_bytes(array.capacity_sectors())];
    for (sector, sectors) in pieces(array.capacity_sectors(), array.chunk_sectors()) {
        let location = array.map_primary(sector);
        let from = byte_range(location.sector, sectors);
        data[byte_range(sector, sectors)].copy_from_slice(&images[location.member as usize][from]);
    }
    Ok(data)
}

/// Validates the member list and returns the missing members; refuses fatal failure sets.
fn check_members(array: &Array, members: &[Option<Vec<u8>>]) -> Result<Vec<u32>> {
    if members.len() != array.devices() as usize {
        return Err(Error::request(format!(
            "the array has {} members, got {} images",
            array.devices(),
            members.len()
        )));
    }
    let mut missing = Vec::new();
    for (member, image) in members.iter().enumerate() {
        let need = member_image_bytes(array, member as u32);
        match image {
            None => missing.push(member as u32),
            Some(image) if image.len() < need => {
                return Err(Error::request(format!(
                    "member {member} image has {} bytes, the array uses {need}",
                    image.len()
                )))
            }
            Some(_) => {}
        }
    }
    if array.loses_data(&missing) {
        return Err(Error::data_loss(format!(
            "raid{} ({}) on {} members cannot survive losing members {missing:?}",
            array.level().number(),
            array.layout().name(),
            array.devices()
        )));
    }
    Ok(missing)
}

/// Computes P (and Q) of parity row `row` from the data already placed in `images`.
fn fill_parity_row(array: &Array, images: &mut [Vec<u8>], row: u64) {
    let stripe = array.stripe(row).expect("parity rows exist only in raid4/5/6");
    let range = byte_range(row * array.chunk_sectors(), array.chunk_sectors());
    let mut p = vec![0u8; range.len()];
    let mut q = stripe.q.map(|_| vec![0u8; range.len()]);
    {
        let data: Vec<&[u8]> =
            stripe.data_members().iter().map(|&m| &images[m as usize][range.clone()]).collect();
        compute_pq(&stripe, &data, &mut p, q.as_deref_mut());
    }
    images[stripe.p as usize][range.clone()].copy_from_slice(&p);
    if let (Some(member), Some(q)) = (stripe.q, q) {
        images[member as usize][range].copy_from_slice(&q);
    }
}

/// Reconstructs the missing members' blocks of one parity row in `images`.
fn rebuild_parity_row(
    array: &Array,
    images: &mut [Vec<u8>],
    row: u64,
    missing: &[u32],
) -> Result<()> {
    let stripe = array.stripe(row).expect("parity rows exist only in raid4/5/6");
    let range = byte_range(row * array.chunk_sectors(), array.chunk_sectors());
    let mut blocks: Vec<&mut [u8]> =
        images.iter_mut().map(|image| &mut image[range.clone()]).collect();
    reconstruct_row(&stripe, &mut blocks, missing)
}

/// Fills a missing mirror member chunk by chunk from the first surviving copy in md's order.
fn rebuild_mirror_member(
    array: &Array,
    images: &mut [Vec<u8>],
    member: u32,
    missing: &[u32],
) -> Result<()> {
    debug_assert!(matches!(array.level(), Level::Raid1 | Level::Raid10), "only mirrors copy");
    let mut copies = Copies::new();
    let used_sectors = array.member_used_sectors(member);
    for (member_sector, sectors) in pieces(used_sectors, array.chunk_sectors()) {
        let Cell::Data(sector) = array.unmap(member, member_sector) else {
            continue; // Space md leaves unused stays zero, as encode leaves it.
        };
        debug_assert_contiguous(array, member, member_sector, sector, sectors);
        array.map(sector, &mut copies);
        let source = copies.as_slice().iter().find(|l| !missing.contains(&l.member));
        let Some(source) = source else {
            return Err(Error::data_loss(format!(
                "every copy of array sector {sector} is on a missing member"
            )));
        };
        let from = byte_range(source.sector, sectors);
        let piece = images[source.member as usize][from].to_vec();
        images[member as usize][byte_range(member_sector, sectors)].copy_from_slice(&piece);
    }
    Ok(())
}

/// Splits `0..total_sectors` into chunk-aligned pieces `(start, sectors)`; the last may be short.
fn pieces(total_sectors: u64, chunk_sectors: u64) -> impl Iterator<Item = (u64, u64)> {
    assert!(chunk_sectors > 0);
    (0..total_sectors.div_ceil(chunk_sectors)).map(move |chunk| {
        let start = chunk * chunk_sectors;
        (start, chunk_sectors.min(total_sectors - start))
    })
}

fn byte_range(sector: u64, sectors: u64) -> std::ops::Range<usize> {
    sectors_to_bytes(sector)..sectors_to_bytes(sector + sectors)
}

fn sectors_to_bytes(sectors: u64) -> usize {
    usize::try_from(sectors * SECTOR_BYTES).expect("image fits in memory")
}

/// The pieces are copied whole, so a piece must map to one contiguous member run.
fn debug_assert_contiguous(
    array: &Array,
    member: u32,
    member_sector: u64,
    sector: u64,
    sectors: u64,
) {
    if cfg!(debug_assertions) {
        let last = array.unmap(member, member_sector + sectors - 1);
        assert_eq!(last, Cell::Data(sector + sectors - 1), "a chunk maps to one member run");
    }
}
