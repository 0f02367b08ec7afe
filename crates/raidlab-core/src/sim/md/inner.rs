//! md's raid4/5/6 front end of each inner array of a stack: a raid5+0 or raid6+0
//! is an outer raid0 over md raid5/6 arrays, and each of those runs its own stripe cache
//! (`stripe_cache_size` heads) and its own raid5d thread. The outer raid0 splits a host write at
//! its chunk boundaries (raid0.c `raid0_make_request`); each piece is a bio into the inner
//! array's stripe cache (`sim::md::StripeCache`, the same room a flat raid5/6 uses), and the
//! host write completes when every piece has. The inner caches' member I/O goes to the physical
//! members of that inner array.

use super::MdEvent;
use super::plug::Raid5dOf;
use crate::sim::engine::events::Event;
use crate::sim::engine::slab::Slab;
use crate::sim::engine::{ControllerConfig, Simulation};
use crate::sim::raid::Owner;
use crate::layout::Array;
use crate::sim::md::{HeadIo, Raid5dCpu, Raid5dThreads, StripeCache, WriteBio};
use std::collections::HashMap;

/// One inner md raid4/5/6 array: its stripe cache and its raid5d.
struct InnerMd {
    cache: StripeCache,
    raid5d: Raid5dThreads,
    pending: bool,
}

/// The inner arrays' front ends, and the host writes split over them.
pub(crate) struct InnerStripes {
    sets: Vec<InnerMd>,
    /// Piece (a bio into one inner array) → the host write it is part of.
    pieces: Slab<u32>,
    /// Host write → pieces not yet completed.
    remaining: HashMap<u32, u32>,
    per_set: u32,
    offset_sectors: u64,
    outer: Array,
    done: Vec<u32>,
    head_ios: Vec<HeadIo>,
}

impl InnerStripes {
    /// For a stack whose inner arrays are raid4/5/6 under md; None otherwise.
    pub(crate) fn for_array(array: &Array, controller: ControllerConfig, max_sectors: u32) -> Option<InnerStripes> {
        let (ControllerConfig::Md(md), Some(stack)) = (controller, array.stack()) else { return None };
        stack.inner().stripe(0)?;
        let members = stack.per_set() as usize;
        let sets = (0..stack.sets())
            .map(|_| {
                let mut cache = StripeCache::new(stack.inner().clone(), md.stripe_cache_size, md.rmw_level);
                cache.set_bypass_threshold(md.preread_bypass_threshold);
                InnerMd { cache, raid5d: Raid5dThreads::new(md.group_thread_cnt, members, max_sectors), pending: false }
            })
            .collect();
        Some(InnerStripes {
            sets,
            pieces: Slab::with_capacity(1024),
            remaining: HashMap::new(),
            per_set: stack.per_set(),
            offset_sectors: stack.offset_sectors(),
            outer: stack.outer().clone(),
            done: Vec::new(),
            head_ios: Vec::new(),
        })
    }

    /// Inner array `set`'s raid5d.
    pub(crate) fn raid5d_mut(&mut self, set: u32) -> &mut Raid5dThreads {
        &mut self.sets[set as usize].raid5d
    }

    /// Inner array `set`'s first physical member.
    pub(crate) fn base_of(&self, set: u32) -> u32 {
        set * self.per_set
    }

    /// Checks every inner stripe cache's invariants.
    pub(crate) fn check(&self) {
        for set in &self.sets {
            set.cache.check();
            set.raid5d.check();
        }
    }
}

impl Simulation {
    /// A host write to a stacked array with raid4/5/6 inner arrays: one bio per outer chunk
    /// piece into the inner array holding it.
    #[inline(never)]
    pub(crate) fn inner_md_write(&mut self, id: u32) {
        let io = self.host.ios.get(id);
        let (sector, sectors) = (io.sector, io.sectors);
        let (sync, plugged, submitter) = (self.write_is_sync(id), self.write_is_plugged(id), self.submitter_of(id));
        let inner = self.md.inner.as_mut().expect("inner stripe caches");
        let chunk = inner.outer.chunk_sectors();
        let (mut at, end) = (sector, sector + sectors);
        let mut touched = Vec::new();
        inner.remaining.insert(id, 0);
        while at < end {
            let piece = (chunk - at % chunk).min(end - at);
            let place = inner.outer.map_primary(at);
            let piece_id = inner.pieces.insert(id);
            *inner.remaining.get_mut(&id).expect("just inserted") += 1;
            // The outer raid0 passes the piece on in the writer's context, under its plug.
            let bio = WriteBio { id: piece_id, sector: place.sector + inner.offset_sectors, sectors: piece, sync, plugged, submitter };
            inner.sets[place.member as usize].cache.submit(bio);
            if !touched.contains(&place.member) {
                touched.push(place.member);
            }
            at += piece;
        }
        for set in touched {
            self.inner_settle(set);
        }
    }

    /// The writer unplugged: every inner array's plugged heads reach its raid5d (raid5_unplug
    /// runs once per md device the plug holds a callback for).
    pub(crate) fn inner_unplug(&mut self) {
        let Some(inner) = self.md.inner.as_mut() else { return };
        for set in &mut inner.sets {
            set.cache.unplug();
        }
        for set in 0..inner.sets.len() as u32 {
            self.inner_settle(set);
        }
    }

    /// Completes the host writes whose pieces are all done and wakes the inner raid5d.
    fn inner_settle(&mut self, set: u32) {
        let now = self.now;
        let inner = self.md.inner.as_mut().expect("inner stripe caches");
        let md = &mut inner.sets[set as usize];
        if md.cache.has_work() && !md.pending {
            md.pending = true;
            if now >= md.raid5d.busy_until {
                self.events.push(now, Event::Md(MdEvent::InnerRaid5d { set }));
            }
        }
        let mut done = std::mem::take(&mut inner.done);
        md.cache.take_completed(&mut done);
        let mut finished = Vec::new();
        for piece in done.drain(..) {
            let host = inner.pieces.remove(piece);
            let left = inner.remaining.get_mut(&host).expect("a host write in flight");
            *left -= 1;
            if *left == 0 {
                inner.remaining.remove(&host);
                finished.push(host);
            }
        }
        inner.done = done;
        for host in finished {
            self.host_complete(host);
        }
    }

    /// One raid5d pass of inner array `set` (as `stripes::raid5d` for a flat array).
    pub(crate) fn inner_raid5d(&mut self, set: u32) {
        let ControllerConfig::Md(config) = self.config.controller else { unreachable!("md only") };
        let inner = self.md.inner.as_mut().expect("inner stripe caches");
        let md = &mut inner.sets[set as usize];
        if self.now < md.raid5d.busy_until {
            self.events.push(md.raid5d.busy_until, Event::Md(MdEvent::InnerRaid5d { set }));
            return;
        }
        md.pending = false;
        let mut out = std::mem::take(&mut inner.head_ios);
        let planner = self.raid.planner.stack_inner(set).expect("a running inner array");
        let max_heads = if config.raid5d_cpu == Raid5dCpu::FREE { usize::MAX } else { md.raid5d.batch_heads() };
        md.cache.handle_batch(|sector| planner.failed_mask_at(sector), &mut out, max_heads);
        let pass_ns = md.raid5d.pass_ns(&config.raid5d_cpu, md.cache.array(), &out, config.skip_copy);
        if pass_ns == 0 {
            self.release_pass(Raid5dOf::Inner(set), &mut out, true);
            self.md.inner.as_mut().expect("inner stripe caches").head_ios = out;
            self.inner_raid5d_idle(set);
            self.inner_settle(set);
            return;
        }
        md.raid5d.busy_until = self.now + pass_ns;
        md.raid5d.issuing.append(&mut out);
        let at = md.raid5d.busy_until;
        inner.head_ios = out;
        self.events.push(at, Event::Md(MdEvent::InnerRaid5dDone { set }));
    }

    /// An inner raid5d pass's handling is done: its member I/O goes to raid5d's plug.
    #[inline(never)]
    pub(crate) fn inner_raid5d_done(&mut self, set: u32) {
        let inner = self.md.inner.as_mut().expect("inner stripe caches");
        let mut issuing = std::mem::take(&mut inner.sets[set as usize].raid5d.issuing);
        let work = inner.sets[set as usize].cache.has_work();
        self.release_pass(Raid5dOf::Inner(set), &mut issuing, !work);
        let md = &mut self.md.inner.as_mut().expect("inner stripe caches").sets[set as usize];
        md.raid5d.issuing = issuing;
        md.pending = false;
        if work {
            self.inner_raid5d(set);
        } else {
            self.inner_raid5d_idle(set);
            self.inner_settle(set);
        }
    }

    /// raid5d's loop over inner array `set` ended, or it had nothing to do: its plug is
    /// flushed and finished (as `stripes::raid5d_maybe_idle` for a flat array).
    fn inner_raid5d_idle(&mut self, set: u32) {
        self.finish_plug(Raid5dOf::Inner(set));
        let md = &mut self.md.inner.as_mut().expect("inner stripe caches").sets[set as usize];
        if !md.cache.has_work() {
            md.cache.raid5d_idle();
        }
    }

    /// A head's member I/O, on the physical members of inner array `set`.
    pub(crate) fn start_inner_head_io(&mut self, set: u32, io: &HeadIo) {
        let base = self.md.inner.as_ref().expect("inner stripe caches").base_of(set);
        self.start_heads_op(io, base, Owner::InnerStripes(set, io.batch));
    }

    /// The member I/O of a batch of inner array `set`'s heads completed.
    #[inline(never)]
    pub(crate) fn inner_stripes_done(&mut self, set: u32, batch: u32) {
        self.md.inner.as_mut().expect("inner stripe caches").sets[set as usize].cache.batch_done(batch);
        self.inner_settle(set);
    }
}
