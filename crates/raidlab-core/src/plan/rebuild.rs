//! Rebuild (md "recovery") of a replacement member: what is read from whom, what is written.
//!
//! md recovers a member sequentially through its data area. raid4/5/6 handle each 4 KiB row by
//! reading every surviving member and computing the missing block (`raid5_sync_request`,
//! `need_this_block` while syncing); raid1 reads one in-sync mirror (`raid1_sync_request`);
//! raid10 reads, for each chunk the member holds, one surviving copy (`raid10_sync_request`).

use super::{IoKind, MemberIo, Plan};
use crate::error::{Error, Result};
use crate::layout::{Array, Cell, Copies, Level};

pub fn plan_rebuild(
    array: &Array,
    failed_mask: u64,
    target: u32,
    sector: u64,
    sectors: u64,
    plan: &mut Plan,
) -> Result<()> {
    check_target(array, failed_mask, target, sector, sectors)?;
    let live = |m: u32| failed_mask & (1 << m) == 0;
    match array.level() {
        Level::Raid0 => unreachable!("check_target rejects raid0"),
        Level::Raid1 => {
            let source = (0..array.devices()).find(|&m| live(m)).expect("a mirror survives");
            plan.push(MemberIo { member: source, kind: IoKind::RebuildRead, sector, sectors });
        }
        Level::Raid4 | Level::Raid5 | Level::Raid6 => {
            for member in (0..array.devices()).filter(|&m| live(m)) {
                plan.push(MemberIo { member, kind: IoKind::RebuildRead, sector, sectors });
            }
        }
        Level::Raid10 => {
            rebuild_raid10(array, failed_mask, target, sector, sectors, plan);
            return Ok(());
        }
    }
    plan.push(MemberIo { member: target, kind: IoKind::RebuildWrite, sector, sectors });
    Ok(())
}

fn check_target(array: &Array, failed_mask: u64, target: u32, sector: u64, sectors: u64) -> Result<()> {
    if array.level() == Level::Raid0 {
        return Err(Error::data_loss("raid0 has no redundancy: a failed member cannot be rebuilt"));
    }
    if target >= array.devices() || failed_mask & (1 << target) == 0 {
        return Err(Error::request(format!("member {target} is not a failed member of the array")));
    }
    let used = array.member_used_sectors(target);
    if sectors == 0 || sector.checked_add(sectors).is_none_or(|end| end > used) {
        return Err(Error::request(format!(
            "rebuild range of {sectors} sectors at {sector} is outside member {target}'s {used} used sectors"
        )));
    }
    Ok(())
}

/// Each chunk piece of the target: read one surviving copy of what it holds, write it.
fn rebuild_raid10(array: &Array, failed_mask: u64, target: u32, sector: u64, sectors: u64, plan: &mut Plan) {
    let chunk = array.chunk_sectors();
    let mut copies = Copies::new();
    let mut position = sector;
    let end = sector + sectors;
    while position < end {
        let piece = (chunk - position % chunk).min(end - position);
        if let Cell::Data(array_sector) = array.unmap(target, position) {
            array.map(array_sector, &mut copies);
            let source = copies
                .as_slice()
                .iter()
                .find(|l| failed_mask & (1 << l.member) == 0)
                .expect("Planner::new rejected failure sets that lose data");
            let read = MemberIo { member: source.member, kind: IoKind::RebuildRead, sector: source.sector, sectors: piece };
            plan.push(read);
            plan.push(MemberIo { member: target, kind: IoKind::RebuildWrite, sector: position, sectors: piece });
        }
        position += piece;
    }
}
