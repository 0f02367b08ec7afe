//! The md front end's raid4/5/6 writes through the stripe cache (`sim::md::StripeCache`): host
//! writes join stripe heads, raid5d passes (`raid5d` → `handle_active_stripes`) turn the heads
//! ready to go into member I/O, and a write completes when every head holding it is written.

use super::MdEvent;
use crate::sim::engine::events::Event;
use super::plug::Raid5dOf;
use crate::sim::block::RAID5D_THREAD;
use crate::sim::engine::{ControllerConfig, Simulation};
use crate::sim::raid::{ArrayOp, Owner};
use crate::bits::members;
use crate::plan::{IoKind, MemberIo, RowWay};
use crate::sim::md::{HeadIo, Raid5dCpu, WriteBio};
use crate::sim::host::{HostOp, KERNEL_JOB};
use crate::PAGE_SECTORS;

impl Simulation {
    pub(crate) fn md_event(&mut self, event: MdEvent) {
        match event {
            MdEvent::Raid5d => self.raid5d(),
            MdEvent::Raid5dDone => self.raid5d_done(),
            MdEvent::InnerRaid5d { set } => self.inner_raid5d(set),
            MdEvent::InnerRaid5dDone { set } => self.inner_raid5d_done(set),
        }
    }

    /// A host I/O arrives at md: raid4/5/6 writes go through the stripe cache (a stack's inner
    /// arrays' caches), a flush waits for md's next flush, the rest is planned directly.
    pub(crate) fn md_submit(&mut self, id: u32) {
        let io = self.host.ios.get(id);
        let (op, sector, sectors, thread) = (io.op, io.sector, io.sectors, io.thread);
        if op == HostOp::Write && self.md.stripes.is_some() {
            self.md_write(id);
        } else if op == HostOp::Write && self.md.inner.is_some() {
            self.inner_md_write(id);
        } else if op == HostOp::Flush {
            self.md_flush_request(id);
        } else {
            self.submit_array(Owner::Host(id), op, sector, sectors, thread);
        }
    }

    /// A host write enters md's stripe cache.
    pub(crate) fn md_write(&mut self, id: u32) {
        let io = self.host.ios.get(id);
        let bio = WriteBio { id, sector: io.sector, sectors: io.sectors, sync: self.write_is_sync(id), plugged: self.write_is_plugged(id), submitter: self.submitter_of(id) };
        self.md.stripes.as_mut().expect("a stripe cache").submit(bio);
        self.stripes_settle();
    }

    /// The thread a host write comes from, as md's stripe cache tells sleepers apart: a job's
    /// thread, or the kernel thread that writes the page cache back.
    pub(crate) fn submitter_of(&self, id: u32) -> u32 {
        let io = self.host.ios.get(id);
        if io.job == KERNEL_JOB {
            return io.thread;
        }
        assert!(io.job < 0x8000 && io.thread < 0x10000, "job {} thread {} beyond the submitter ids", io.job, io.thread);
        io.job << 16 | io.thread
    }

    /// The page cache's writer finished a pass (blk_finish_plug): the heads its writeback
    /// added reach raid5d together (raid5_unplug).
    pub(crate) fn md_unplug(&mut self) {
        if let Some(cache) = self.md.stripes.as_mut() {
            cache.unplug();
            self.stripes_settle();
        }
        self.inner_unplug();
    }

    /// Completes finished writes and wakes raid5d if heads wait to be handled.
    fn stripes_settle(&mut self) {
        let cache = self.md.stripes.as_mut().expect("a stripe cache");
        if cache.has_work() && !self.md.raid5d_pending {
            self.md.raid5d_pending = true;
            // raid5d runs once the submitters of this instant are done (md_wakeup_thread); while
            // it is busy, the end of its pass runs the next one (`raid5d_done`).
            if self.now >= self.md.raid5d.busy_until {
                self.events.push(self.now, Event::Md(MdEvent::Raid5d));
            }
        }
        let mut done = std::mem::take(&mut self.md.stripe_done);
        cache.take_completed(&mut done);
        for id in done.drain(..) {
            self.host_complete(id);
        }
        self.md.stripe_done = done;
    }

    /// One raid5d pass over the heads queued for handling. While raid5d and its workers are
    /// still busy with the previous pass, the heads wait (and gather writes) until they are free
    /// (raid5d loops in `handle_active_stripes` while heads are queued).
    pub(crate) fn raid5d(&mut self) {
        if self.now < self.md.raid5d.busy_until {
            self.events.push(self.md.raid5d.busy_until, Event::Md(MdEvent::Raid5d));
            return;
        }
        self.md.raid5d_pending = false;
        let mut out = std::mem::take(&mut self.md.head_ios);
        let planner = &self.raid.planner;
        let cache = self.md.stripes.as_mut().expect("a stripe cache");
        let ControllerConfig::Md(md) = self.config.controller else { unreachable!("a stripe cache is md's") };
        // A free CPU handles every queued head at once; a costly one a batch per thread a pass.
        let max_heads = if md.raid5d_cpu == Raid5dCpu::FREE { usize::MAX } else { self.md.raid5d.batch_heads() };
        cache.handle_batch(|sector| planner.failed_mask_at(sector), &mut out, max_heads);
        let pass_ns = self.md.raid5d.pass_ns(&md.raid5d_cpu, cache.array(), &out, md.skip_copy);
        if pass_ns == 0 {
            // A free CPU handles every queued head in one pass: the loop's last.
            // Known inexactness: with a costly CPU a pass whose heads issue no I/O
            // (written heads returning their bios) also costs nothing and lands here, ending
            // raid5d's loop and flushing its plug while heads may still be queued; md would go
            // on. Taking it as one step of the loop brings md-io's member write requests closer
            // to md's (192 KiB writes 8 deep on 4x64K: 0.50 per host write, md 0.51-0.82; now
            // 3.92) but moves the buffered 4x512K case out of its slack (reads 0.20-0.21 per host
            // sector, md 0.07-0.09; now 0.134): left until the buffered path is understood.
            self.release_pass(Raid5dOf::Flat, &mut out, true);
            self.md.head_ios = out;
            self.raid5d_maybe_idle();
            self.stripes_settle();
            return;
        }
        // The pass's member I/O goes into raid5d's plug once its heads are handled (ops_run_io).
        self.md.raid5d.busy_until = self.now + pass_ns;
        self.md.raid5d.issuing.append(&mut out);
        self.md.head_ios = out;
        self.events.push(self.md.raid5d.busy_until, Event::Md(MdEvent::Raid5dDone));
    }

    /// A pass's handling is done: its member I/O goes into the plug, and raid5d goes on with the
    /// heads queued meanwhile (its loop in raid5d: `handle_active_stripes` until none is left).
    pub(crate) fn raid5d_done(&mut self) {
        let work = self.md.stripes.as_ref().expect("a stripe cache").has_work();
        let mut issuing = std::mem::take(&mut self.md.raid5d.issuing);
        self.release_pass(Raid5dOf::Flat, &mut issuing, !work);
        self.md.raid5d.issuing = issuing;
        self.md.raid5d_pending = false;
        if work {
            self.raid5d();
        } else {
            self.raid5d_maybe_idle();
            self.stripes_settle();
        }
    }

    /// raid5d found nothing more to handle and sleeps: the end of `raid5d()`, where its plug
    /// is finished (its member I/O reaches the queues) and md grows its stripe cache when a
    /// writer went without a head.
    fn raid5d_maybe_idle(&mut self) {
        self.finish_plug(Raid5dOf::Flat);
        let cache = self.md.stripes.as_mut().expect("a stripe cache");
        if !cache.has_work() {
            cache.raid5d_idle();
        }
    }

    pub(crate) fn start_head_io(&mut self, io: &HeadIo) {
        self.start_heads_op(io, 0, Owner::Stripes(io.batch));
    }

    /// Starts the member I/O of a batch of heads handled alike, on members `base +` the
    /// head's members (a stack's inner array starts at its first physical member), owned by
    /// `owner` (ops_run_io: one 4 KiB bio per member and head, merged in the member queue).
    pub(crate) fn start_heads_op(&mut self, io: &HeadIo, base: u32, owner: Owner) {
        let mut ios = self.raid.spare_ios.pop().unwrap_or_default();
        for member in members(io.members) {
            let kind = match (io.write, io.way) {
                (true, _) if member == io.p => IoKind::ParityWrite,
                (true, _) if Some(member) == io.q => IoKind::SyndromeWrite,
                (true, _) => IoKind::Write,
                (false, RowWay::Rmw) => IoKind::RmwRead,
                (false, RowWay::Rcw) => IoKind::RcwRead,
                (false, RowWay::Reconstruct) => IoKind::ReconstructRead,
            };
            ios.push(MemberIo { member: base + member, kind, sector: io.sector, sectors: io.pages * PAGE_SECTORS });
        }
        let other = self.raid.spare_ios.pop().unwrap_or_default();
        let (reads, writes) = if io.write { (other, ios) } else { (ios, other) };
        let op = ArrayOp { owner, thread: RAID5D_THREAD, flush: false, reads, writes, pending: 0, in_writes: false, stripe_heads: 0 };
        let id = self.raid.ops.insert(op);
        self.start_op(id);
    }

    /// The member I/O of a batch of heads completed.
    pub(crate) fn stripes_done(&mut self, batch: u32) {
        self.md.stripes.as_mut().expect("a stripe cache").batch_done(batch);
        self.stripes_settle();
    }
}
