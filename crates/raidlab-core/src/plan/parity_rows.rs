//! raid4/5/6 requests through md's stripe cache, one 4 KiB row (`stripe_head`) at a time:
//! all writes, and reads while the array is degraded.
//!
//! Restates kernel `drivers/md/raid5.c`: `handle_stripe_dirtying` (rmw vs rcw cost: a block
//! that must be read costs 1, or 2·disks if its member cannot be read; rmw wins only when
//! strictly cheaper unless rmw_level is PREFER), `need_this_block`/`fetch_block` (a degraded
//! read of a block on a failed member reads every surviving block of the row and computes it).

use crate::bits::count;
use super::{IoKind, MemberIo, Plan, Request};
use crate::layout::{Array, Level, Stripe};
use crate::PAGE_SECTORS;

/// md's `rmw_level` sysfs knob.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum RmwLevel {
    /// 0: always reconstruct-write.
    Disable,
    /// 1 (default): read-modify-write only when it reads strictly fewer blocks.
    Enable,
    /// 2: read-modify-write on ties too.
    Prefer,
}

/// What one request does to one 4 KiB row, as masks over the row's data indices.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
struct RowTouch {
    touched: u64,
    overwritten: u64,
}

/// Plans every 4 KiB row the request touches.
pub fn plan_rows(array: &Array, failed_mask: u64, rmw_level: RmwLevel, request: &Request, plan: &mut Plan) {
    let chunk = array.chunk_sectors();
    let k = array.data_disks() as u64;
    let first_row = request.sector / chunk / k;
    let last_row = (request.sector + request.sectors - 1) / chunk / k;
    for row in first_row..=last_row {
        let stripe = array.stripe(row).expect("raid4/5/6 has stripes");
        let (page_first, page_last) = touched_pages(request, row, chunk, k);
        // Consecutive pages the request touches alike get the same decisions, so they are
        // planned as one run: the merged plan is the same as page by page, with less work.
        let mut page = page_first;
        while page <= page_last {
            let touch = row_touch(request, row, page, chunk, k);
            let mut pages = 1;
            while page + pages <= page_last && row_touch(request, row, page + pages, chunk, k) == touch {
                pages += 1;
            }
            let first = page;
            page += pages;
            if touch.touched == 0 {
                continue;
            }
            let sector = row * chunk + first * PAGE_SECTORS;
            plan.counts.rows_cached += pages as u32;
            let row_plan = RowPlan { array, stripe: &stripe, failed_mask, sector, pages };
            if request.write {
                row_plan.write(touch, rmw_level, plan);
            } else {
                row_plan.read(touch, plan);
            }
        }
    }
}

/// The range of page indices (within a chunk) the request touches in parity row `row`.
fn touched_pages(request: &Request, row: u64, chunk: u64, k: u64) -> (u64, u64) {
    let row_start = row * k * chunk;
    let start = request.sector.max(row_start);
    let end = (request.sector + request.sectors).min(row_start + k * chunk);
    assert!(start < end, "row {row} is touched");
    if start / chunk != (end - 1) / chunk {
        // The request spans a chunk boundary in this row, so its pages wrap: consider all
        // (row_touch skips the untouched ones).
        return (0, chunk / PAGE_SECTORS - 1);
    }
    (start % chunk / PAGE_SECTORS, (end - 1) % chunk / PAGE_SECTORS)
}

/// Which data indices of (row, page) the request writes or reads, and which it covers whole.
fn row_touch(request: &Request, row: u64, page: u64, chunk: u64, k: u64) -> RowTouch {
    let mut touch = RowTouch::default();
    let request_end = request.sector + request.sectors;
    for index in 0..k {
        let page_start = (row * k + index) * chunk + page * PAGE_SECTORS;
        let page_end = page_start + PAGE_SECTORS;
        let start = request.sector.max(page_start);
        let end = request_end.min(page_end);
        if start < end {
            touch.touched |= 1 << index;
            if start == page_start && end == page_end {
                touch.overwritten |= 1 << index;
            }
        }
    }
    touch
}

/// Which way `handle_stripe_dirtying` writes a row.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum RowWay {
    /// Read-modify-write: old data of the written blocks and P (Q) are needed.
    Rmw,
    /// Reconstruct-write: the data blocks not overwritten are needed (none: a full-row write).
    Rcw,
    /// A needed block is on a failed member: every live block is read and the rest computed.
    Reconstruct,
}

/// The decision for one row: the way, and the members to pre-read (those needed and not
/// already up to date in the stripe cache).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct RowChoice {
    pub way: RowWay,
    pub reads: u64,
}

/// md's cost rule for writing one row (`handle_stripe_dirtying`, Linux 6.1 raid5.c): a block
/// that must be read costs 1, 0 if it is already up to date (or locked) in the stripe head, and
/// 2·disks if its member cannot be read; rmw wins only when strictly cheaper unless rmw_level is
/// PREFER. The one statement of the rule: the stateless planner passes `uptodate = 0`, the
/// stripe cache (`sim::md`) the pages its head holds.
#[derive(Clone, Copy, Debug)]
pub struct RowRule {
    /// The row's data members and its P (and Q) members, as masks.
    pub data_mask: u64,
    pub parity_mask: u64,
    pub devices: u32,
    pub failed_mask: u64,
    pub rmw_level: RmwLevel,
}

impl RowRule {
    pub fn of(stripe: &Stripe, devices: u32, failed_mask: u64, rmw_level: RmwLevel) -> RowRule {
        let data_mask = stripe.data_members().iter().fold(0, |m, &d| m | 1 << d);
        let parity_mask = (1u64 << stripe.p) | stripe.q.map_or(0, |q| 1u64 << q);
        RowRule { data_mask, parity_mask, devices, failed_mask, rmw_level }
    }

    fn cost(&self, needed: u64) -> u32 {
        // Counted without a loop over the members (whose trip count the branch predictor
        // cannot guess): 1 per readable block, 2·disks per failed one.
        let readable = count(needed & !self.failed_mask);
        if self.failed_mask == 0 {
            return readable;
        }
        readable + count(needed & self.failed_mask) * 2 * self.devices
    }

    /// Chooses for a row whose members `written` get new data (`overwritten` of them whole
    /// pages) while the head holds `uptodate` pages. Inlined: md's stripe cache asks for every
    /// head it handles.
    #[inline]
    pub fn choose(&self, written: u64, overwritten: u64, uptodate: u64) -> RowChoice {
        let rmw_set = (written & self.data_mask | self.parity_mask) & !uptodate;
        let rcw_set = self.data_mask & !overwritten & !uptodate;
        let (rmw, rcw) = (self.cost(rmw_set), self.cost(rcw_set));
        let use_rmw = match self.rmw_level {
            RmwLevel::Disable => false,
            RmwLevel::Enable => rmw < rcw,
            RmwLevel::Prefer => rmw <= rcw,
        };
        // The chosen way needs a block it cannot read: a partially written block on a failed
        // member, or (rmw_level 0 forcing reconstruct-write) a failed member's block that is not
        // overwritten. md computes it from every survivor (`need_this_block`: "If one of the
        // devices that we would need to read ... is missing/faulty, then we need to read
        // everything we can").
        let chosen = if use_rmw { rmw } else { rcw };
        let all = if self.devices >= 64 { u64::MAX } else { (1u64 << self.devices) - 1 };
        let live = all & !self.failed_mask;
        if chosen >= 2 * self.devices {
            RowChoice { way: RowWay::Reconstruct, reads: live & !uptodate }
        } else if use_rmw {
            RowChoice { way: RowWay::Rmw, reads: rmw_set }
        } else {
            RowChoice { way: RowWay::Rcw, reads: rcw_set }
        }
    }
}

struct RowPlan<'a> {
    array: &'a Array,
    stripe: &'a Stripe,
    failed_mask: u64,
    /// Member sector of the first 4 KiB row (the same on every member).
    sector: u64,
    /// Consecutive 4 KiB rows planned alike.
    pages: u64,
}

impl RowPlan<'_> {
    fn failed(&self, member: u32) -> bool {
        self.failed_mask & (1 << member) != 0
    }

    fn page(&self, member: u32, kind: IoKind) -> MemberIo {
        assert!(!self.failed(member), "no I/O to failed member {member}");
        MemberIo { member, kind, sector: self.sector, sectors: self.pages * PAGE_SECTORS }
    }

    /// Reads every live member of the row except those in `skip_mask`.
    fn read_all_live(&self, kind: IoKind, skip_mask: u64, plan: &mut Plan) {
        for member in 0..self.array.devices() {
            if !self.failed(member) && skip_mask & (1 << member) == 0 {
                plan.push(self.page(member, kind));
            }
        }
    }

    fn read(&self, touch: RowTouch, plan: &mut Plan) {
        let mut requested_live = 0u64;
        let mut needs_reconstruct = false;
        for (index, &member) in self.stripe.data_members().iter().enumerate() {
            if touch.touched & (1 << index) == 0 {
                continue;
            }
            if self.failed(member) {
                needs_reconstruct = true;
            } else {
                requested_live |= 1 << member;
                plan.push(self.page(member, IoKind::Read));
            }
        }
        if needs_reconstruct {
            plan.counts.rows_degraded += self.pages as u32;
            self.read_all_live(IoKind::ReconstructRead, requested_live, plan);
        }
    }

    fn write(&self, touch: RowTouch, rmw_level: RmwLevel, plan: &mut Plan) {
        let data = self.stripe.data_members();
        let mask_of = |indices: u64| -> u64 {
            data.iter().enumerate().filter(|&(i, _)| indices & (1 << i) != 0).fold(0, |m, (_, &d)| m | 1 << d)
        };
        let rule = RowRule::of(self.stripe, self.array.devices(), self.failed_mask, rmw_level);
        let choice = rule.choose(mask_of(touch.touched), mask_of(touch.overwritten), 0);
        let kind = match choice.way {
            RowWay::Reconstruct => {
                plan.counts.rows_degraded += self.pages as u32;
                IoKind::ReconstructRead
            }
            RowWay::Rmw => {
                plan.counts.rows_rmw += self.pages as u32;
                IoKind::RmwRead
            }
            RowWay::Rcw if choice.reads == 0 => {
                plan.counts.rows_full += self.pages as u32;
                IoKind::RcwRead
            }
            RowWay::Rcw => {
                plan.counts.rows_rcw += self.pages as u32;
                IoKind::RcwRead
            }
        };
        crate::bits::members(choice.reads).for_each(|m| plan.push(self.page(m, kind)));
        self.write_new(touch, plan);
    }

    /// New data to live written members, then P and Q when their members are live.
    fn write_new(&self, touch: RowTouch, plan: &mut Plan) {
        for (index, &member) in self.stripe.data_members().iter().enumerate() {
            if touch.touched & (1 << index) != 0 && !self.failed(member) {
                plan.push(self.page(member, IoKind::Write));
            }
        }
        if !self.failed(self.stripe.p) {
            plan.push(self.page(self.stripe.p, IoKind::ParityWrite));
        }
        if let Some(q) = self.stripe.q.filter(|&q| !self.failed(q)) {
            plan.push(self.page(q, IoKind::SyndromeWrite));
        }
        debug_assert!(self.array.level() == Level::Raid6 || self.stripe.q.is_none());
    }
}
