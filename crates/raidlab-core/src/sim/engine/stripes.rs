//! The md front end's raid4/5/6 writes through the stripe cache (`sim::md::StripeCache`): host
//! writes join stripe heads, raid5d passes (`raid5d` → `handle_active_stripes`) turn the heads
//! ready to go into member I/O, and a write completes when every head holding it is written.

use super::events::Event;
use super::{ArrayOp, Owner, Simulation};
use crate::bits::members;
use crate::plan::{IoKind, MemberIo, RowWay};
use crate::sim::md::{HeadIo, WriteBio};
use crate::PAGE_SECTORS;

/// The thread md's member I/O is issued from (raid5d, a kernel thread).
const RAID5D_THREAD: u32 = u32::MAX;

impl Simulation {
    /// A host write enters md's stripe cache.
    pub(super) fn md_write(&mut self, id: u32) {
        let io = self.host_ios.get(id);
        // O_DIRECT writes carry REQ_SYNC (block/fops.c dio_bio_write_op).
        let bio = WriteBio { id, sector: io.sector, sectors: io.sectors, sync: true };
        self.stripes.as_mut().expect("a stripe cache").submit(bio);
        self.stripes_settle();
    }

    /// Completes finished writes and wakes raid5d if heads wait to be handled.
    fn stripes_settle(&mut self) {
        let cache = self.stripes.as_mut().expect("a stripe cache");
        if cache.has_work() && !self.raid5d_pending {
            self.raid5d_pending = true;
            // raid5d runs once the submitters of this instant are done (md_wakeup_thread).
            self.events.push(self.now, Event::Raid5d);
        }
        let mut done = std::mem::take(&mut self.stripe_done);
        cache.take_completed(&mut done);
        for id in done.drain(..) {
            self.host_complete(id);
        }
        self.stripe_done = done;
    }

    /// One raid5d pass over the heads queued for handling.
    pub(super) fn raid5d(&mut self) {
        self.raid5d_pending = false;
        let mut out = std::mem::take(&mut self.head_ios);
        let planner = &self.planner;
        let cache = self.stripes.as_mut().expect("a stripe cache");
        cache.handle(|sector| planner.failed_mask_at(sector), &mut out);
        for io in out.drain(..) {
            self.start_head_io(&io);
        }
        self.head_ios = out;
        self.stripes_settle();
    }

    fn start_head_io(&mut self, io: &HeadIo) {
        let mut ios = self.spare_ios.pop().unwrap_or_default();
        for member in members(io.members) {
            let kind = match (io.write, io.way) {
                (true, _) if member == io.p => IoKind::ParityWrite,
                (true, _) if Some(member) == io.q => IoKind::SyndromeWrite,
                (true, _) => IoKind::Write,
                (false, RowWay::Rmw) => IoKind::RmwRead,
                (false, RowWay::Rcw) => IoKind::RcwRead,
                (false, RowWay::Reconstruct) => IoKind::ReconstructRead,
            };
            ios.push(MemberIo { member, kind, sector: io.sector, sectors: io.pages * PAGE_SECTORS });
        }
        let other = self.spare_ios.pop().unwrap_or_default();
        let (reads, writes) = if io.write { (other, ios) } else { (ios, other) };
        let op = ArrayOp {
            owner: Owner::Stripes(io.batch),
            thread: RAID5D_THREAD,
            flush: false,
            reads,
            writes,
            pending: 0,
            in_writes: false,
            stripe_heads: 0,
        };
        let id = self.ops.insert(op);
        self.start_op(id);
    }

    /// The member I/O of a batch of heads completed.
    pub(super) fn stripes_done(&mut self, batch: u32) {
        self.stripes.as_mut().expect("a stripe cache").batch_done(batch);
        self.stripes_settle();
    }
}
