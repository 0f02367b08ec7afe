//! raid5d's block plug in the engine: a raid5d (the flat array's, or an inner array's of a
//! stack) issues each pass's member I/O into its plug (`Raid5dThreads::plug_head`), and the plug
//! sends it to the member queues when it fills or when raid5d's loop ends (`raid5d()`:
//! `blk_start_plug` … `blk_finish_plug`). A flush inserts every request before it runs any
//! queue, and runs them in `blk_mq_flush_plug_list`'s order (`issue_unplugged`).

use crate::sim::engine::Simulation;
use crate::bits::{members, members_from_last};
use crate::sim::md::{HeadIo, Raid5dThreads};

/// Which raid5d: the flat array's, or inner array `set`'s.
#[derive(Clone, Copy, Debug)]
pub(crate) enum Raid5dOf {
    Flat,
    Inner(u32),
}

impl Simulation {
    fn raid5d_of(&mut self, of: Raid5dOf) -> &mut Raid5dThreads {
        match of {
            Raid5dOf::Flat => &mut self.md.raid5d,
            Raid5dOf::Inner(set) => self.md.inner.as_mut().expect("inner stripe caches").raid5d_mut(set),
        }
    }

    fn start_plugged(&mut self, of: Raid5dOf, io: &HeadIo) {
        match of {
            Raid5dOf::Flat => self.start_head_io(io),
            Raid5dOf::Inner(set) => self.start_inner_head_io(set, io),
        }
    }

    fn member_base(&self, of: Raid5dOf) -> u32 {
        match of {
            Raid5dOf::Flat => 0,
            Raid5dOf::Inner(set) => self.md.inner.as_ref().expect("inner stripe caches").base_of(set),
        }
    }

    /// A handled pass's member I/O, from raid5d `of`: into the plug, or, when this is the last
    /// pass of raid5d's loop (`last`) and the plug is empty and the pass too small to fill it,
    /// straight into the queues as the loop's end would send it (the common case under small
    /// random writes; the same requests in the same order, without the plug's bookkeeping).
    pub(crate) fn release_pass(&mut self, of: Raid5dOf, ios: &mut Vec<HeadIo>, last: bool) {
        if last && self.raid5d_of(of).plug_is_passed_by(ios) {
            self.issue_unplugged(of, ios);
        } else {
            self.plug_pass(of, ios);
        }
    }

    /// A pass's member I/O goes into the plug; a plug that fills on the way sends what it held
    /// before (`Raid5dThreads::plug_head`).
    fn plug_pass(&mut self, of: Raid5dOf, ios: &mut Vec<HeadIo>) {
        for io in ios.drain(..) {
            if self.raid5d_of(of).plug_head(&io) {
                self.flush_plug(of);
            }
            self.raid5d_of(of).plugged.push(io);
        }
    }

    /// raid5d's loop ended (`blk_finish_plug`): what the plug holds goes out, and the next loop
    /// starts a fresh plug.
    pub(crate) fn finish_plug(&mut self, of: Raid5dOf) {
        if !self.raid5d_of(of).plugged.is_empty() {
            self.flush_plug(of);
        }
        self.raid5d_of(of).plug.finished();
    }

    /// The plug is flushed: its heads' member I/O goes into the member queues.
    fn flush_plug(&mut self, of: Raid5dOf) {
        let mut plugged = std::mem::take(&mut self.raid5d_of(of).plugged);
        self.issue_unplugged(of, &mut plugged);
        self.raid5d_of(of).plugged = plugged;
    }

    /// Heads' member I/O into the member queues as a plug flush sends it: every request in,
    /// then the queues run, by their newest request first. A member's request is made by its
    /// first bio of the flush (the head's members from the last down, `ops_run_io`'s
    /// `for (i = disks; i--; )`); later bios of a contiguous run merge into it without making
    /// it newer. (A member that starts a second request further on, not contiguous with its
    /// first, keeps the place of its first here.)
    ///
    /// The order is `blk_mq_flush_plug_list` → `blk_mq_dispatch_plug_list`'s: the plug list is
    /// newest first (`rq_list_add`), and each round inserts the requests of the first popped
    /// request's queue and runs that queue, putting the others back in their order
    /// (`rq_list_add_tail` since "block: do not reverse request order when flushing plug
    /// list", in 6.1.21 and so in the recordings' 6.1.192).
    fn issue_unplugged(&mut self, of: Raid5dOf, ios: &mut Vec<HeadIo>) {
        assert!(!self.block.plug_flushing, "plug flushes do not nest");
        if let [io] = ios[..] {
            // One head group: its requests were made from its last member down, so the
            // queues run from its first member up.
            ios.clear();
            self.block.plug_flushing = true;
            self.start_plugged(of, &io);
            self.block.plug_flushing = false;
            let base = self.member_base(of);
            for member in members(io.members) {
                self.kick(base + member);
            }
            return;
        }
        let base = self.member_base(of);
        // The members in the order their requests were made (each once: an array's members
        // fit a mask); the queues run newest first, so in reverse.
        let mut made = std::mem::take(&mut self.block.plug_made);
        let mut seen = 0u64;
        for io in ios.iter() {
            for member in members_from_last(io.members & !seen) {
                made.push(base + member);
            }
            seen |= io.members;
        }
        self.block.plug_flushing = true;
        for io in ios.drain(..) {
            self.start_plugged(of, &io);
        }
        self.block.plug_flushing = false;
        for &member in made.iter().rev() {
            self.kick(member);
        }
        made.clear();
        self.block.plug_made = made;
    }
}
