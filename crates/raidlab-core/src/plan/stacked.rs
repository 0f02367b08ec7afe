//! Plans for a stacked array (layout/stack.rs), level by level as md runs them: the outer md
//! splits a request into bios for its members, which are inner md arrays, and each inner md
//! turns its bio into physical member I/O with its own personality, failed set, recovery and
//! read balancing. A raid0 outer array splits at its chunk boundaries (raid0.c
//! `raid0_make_request` splits a bio that crosses a chunk); a raid1 outer array (raid0+1) writes
//! every inner array in sync and reads one (raid1.c `raid1_write_request`, `read_balance`).
//! The inner arrays are planned by the ordinary [`Planner`], so an inner raid1 read follows md's
//! read balancing and an inner raid5/6 read md's chunk pieces, as in a flat array. (Under md,
//! host writes to inner raid4/5/6 arrays go through each inner array's own stripe cache instead,
//! `sim/md/inner.rs`; this planner's stateless rmw/rcw plan serves the rest.)

use super::{MemberIo, MirrorState, Plan, Planner, Request, RmwLevel};
use crate::error::{Error, Result};
use crate::layout::{Copies, Level, Location, Stack};

#[derive(Clone, Debug)]
pub(crate) struct StackPlanner {
    stack: Stack,
    /// One planner per inner array; None for an inner array that is lost (a raid0+1 half with
    /// a failed member: the outer raid1 runs without it).
    inner: Vec<Option<Planner>>,
    /// Physical members failed, as a mask.
    failed_mask: u64,
    scratch: Plan,
    outer_copies: Copies,
}

impl StackPlanner {
    /// Fails with `DataLoss` if the outer array cannot run without the inner arrays that are lost.
    pub(super) fn new(stack: &Stack, failed_mask: u64, rmw_level: RmwLevel) -> Result<StackPlanner> {
        let per = stack.per_set();
        let lost = stack.lost_sets(failed_mask);
        let mut inner = Vec::with_capacity(stack.sets() as usize);
        for set in 0..stack.sets() {
            if lost.contains(&set) {
                inner.push(None);
                continue;
            }
            let local: Vec<u32> = (0..per).filter(|&m| failed_mask & (1 << (set * per + m)) != 0).collect();
            let mut planner = Planner::new(stack.inner().clone(), &local, rmw_level)?;
            planner.member_base = set * per;
            inner.push(Some(planner));
        }
        if stack.outer().loses_data(&lost) {
            return Err(Error::data_loss(format!("raid{} cannot run with inner arrays {lost:?} lost", stack.name())));
        }
        Ok(StackPlanner { stack: stack.clone(), inner, failed_mask, scratch: Plan::new(), outer_copies: Copies::new() })
    }

    /// Passes a physical member's recovery to its inner array (md recovers it there).
    pub(super) fn set_recovering(&mut self, recovering: Option<(u32, u64)>) {
        for planner in self.inner.iter_mut().flatten() {
            planner.set_recovering(None);
        }
        if let Some((member, below)) = recovering {
            let (set, local) = self.stack.place(member);
            let planner = self.inner[set as usize].as_mut().expect("a recovering member's inner array runs");
            planner.set_recovering(Some((local, below)));
        }
    }

    pub(super) fn plan(&mut self, request: &Request, mirrors: &MirrorState, plan: &mut Plan) {
        match self.stack.outer().level() {
            Level::Raid1 => self.plan_outer_mirror(request, mirrors, plan),
            _ => self.plan_outer_stripe(request, mirrors, plan),
        }
    }

    /// raid0 outer: one bio per outer chunk piece, to the inner array holding it.
    fn plan_outer_stripe(&mut self, request: &Request, mirrors: &MirrorState, plan: &mut Plan) {
        let chunk = self.stack.outer().chunk_sectors();
        let (mut sector, end) = (request.sector, request.sector + request.sectors);
        while sector < end {
            let piece = (chunk - sector % chunk).min(end - sector);
            let place = self.stack.outer().map_primary(sector);
            let inner_sector = place.sector + self.stack.offset_sectors();
            self.plan_inner(place.member, Request { write: request.write, sector: inner_sector, sectors: piece }, mirrors, plan);
            sector += piece;
        }
    }

    /// raid1 outer (raid0+1): a write goes to every running inner array, a read to one, chosen
    /// by md's read balancing over the physical members that would serve its first sector.
    fn plan_outer_mirror(&mut self, request: &Request, mirrors: &MirrorState, plan: &mut Plan) {
        let inner_sector = request.sector + self.stack.offset_sectors();
        let sets: Vec<u32> = (0..self.stack.sets()).filter(|&s| self.inner[s as usize].is_some()).collect();
        let inner_request = Request { sector: inner_sector, ..*request };
        if request.write {
            for set in sets {
                self.plan_inner(set, inner_request, mirrors, plan);
            }
            return;
        }
        let per = self.stack.per_set();
        self.outer_copies.clear();
        for &set in &sets {
            let first = self.stack.inner().map_primary(inner_sector);
            self.outer_copies.push(Location { member: set * per + first.member, sector: first.sector });
        }
        let chosen = mirrors.choose(self.outer_copies.as_slice(), self.failed_mask, request.sectors, None);
        let set = chosen.expect("a running inner array").member / per;
        self.plan_inner(set, inner_request, mirrors, plan);
    }

    /// The inner array `set` plans its bio; its member I/O is added as physical members'.
    fn plan_inner(&mut self, set: u32, request: Request, mirrors: &MirrorState, plan: &mut Plan) {
        let planner = self.inner[set as usize].as_mut().expect("the outer array sends bios only to running inner arrays");
        planner.plan(&request, mirrors, &mut self.scratch).expect("outer pieces lie within the inner array");
        append_shifted(&self.scratch, set * self.stack.per_set(), plan);
    }

    /// The inner array rebuilds its own failed member (md recovery of that inner array).
    pub(super) fn plan_rebuild(&mut self, target: u32, sector: u64, sectors: u64, plan: &mut Plan) -> Result<()> {
        let (set, local) = self.stack.place(target);
        let Some(planner) = self.inner[set as usize].as_mut() else {
            return Err(Error::data_loss(format!(
                "raid{}: inner array {set} is lost; it is rebuilt only by creating it again and resyncing the outer array (not modelled)",
                self.stack.name()
            )));
        };
        planner.plan_rebuild(local, sector, sectors, &mut self.scratch)?;
        append_shifted(&self.scratch, set * self.stack.per_set(), plan);
        Ok(())
    }
}

fn append_shifted(from: &Plan, base: u32, to: &mut Plan) {
    let shift = |io: &MemberIo| MemberIo { member: io.member + base, ..*io };
    to.reads.extend(from.reads.iter().map(shift));
    to.writes.extend(from.writes.iter().map(shift));
    let (c, t) = (&from.counts, &mut to.counts);
    t.rows_rmw += c.rows_rmw;
    t.rows_rcw += c.rows_rcw;
    t.rows_full += c.rows_full;
    t.rows_degraded += c.rows_degraded;
    // (`rows_cached` stays 0: the engine's stripe-head count is the one stripe cache of a flat
    // raid4/5/6 array; the inner arrays' caches are their own, sim/md/inner.rs.)
}

impl Planner {
    /// md's read balancing for an inner array of a stack: its copies as physical members (the
    /// engine keeps the balancing state per physical member), the choice as its own member.
    pub(super) fn choose_shifted(&self, mirrors: &MirrorState, sectors: u64) -> Option<Location> {
        let base = self.member_base;
        let mut shifted = Copies::new();
        for l in self.copies.as_slice() {
            shifted.push(Location { member: l.member + base, sector: l.sector });
        }
        let chosen = mirrors.choose(shifted.as_slice(), self.failed_mask << base, sectors, self.array.raid10_layout());
        chosen.map(|l| Location { member: l.member - base, sector: l.sector })
    }
}

impl Planner {
    /// The planner of inner array `set` of a stacked array (None: not a stack, or that inner
    /// array is lost). Its members are the inner array's own (0 to its devices − 1).
    pub fn stack_inner(&self, set: u32) -> Option<&Planner> {
        self.stack.as_ref().and_then(|s| s.inner.get(set as usize)).and_then(|p| p.as_ref())
    }
}
