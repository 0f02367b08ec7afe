//! The block layer under each member: its scheduler (`sched`), plug, request tags and the
//! drive's queue (`members`), and the dispatch of member I/O to the drives (`dispatch`).

pub(crate) mod dispatch;
pub(crate) mod faulty;
pub mod members;
pub mod sched;

pub use members::MemberStats;

/// The block layer's events.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub(crate) enum BlockEvent {
    /// A drive may have finished work: advance it.
    DriveWake { member: u32 },
    /// A scheduler asked to be polled (CFQ idling ended).
    SchedulerTimer { member: u32 },
}

use crate::device::{AnyDrive, Drive};
use crate::error::Result;
use crate::sim::engine::SimConfig;
use crate::sim::instance::limit_by_host;
use faulty::{check_behaviours, wrap_drives};
use crate::sim::engine::slab::Slab;
use crate::sim::instance::HostMeter;
use members::Member;
use std::cell::RefCell;
use std::rc::Rc;

/// The block layer's state in a run: each member's queue and drive, the block requests in
/// flight, a plug being flushed, and the instance's meter in front of the members.
pub(crate) struct BlockRoom {
    pub(crate) members: Vec<Member>,
    pub(crate) blocks: Slab<BlockRef>,
    /// A plug is being flushed: requests go into their queues, which run only once all are in
    /// (`blk_mq_flush_plug_list` inserts the whole list, then runs the queues).
    pub(crate) plug_flushing: bool,
    /// A flushing plug's queues in the order their requests were made (the flush runs them
    /// newest first: `issue_unplugged`); kept for its allocation.
    pub(crate) plug_made: Vec<u32>,
    /// The instance's meter in front of every volume member (`config.host_limits`).
    pub(crate) host_meter: Option<Rc<RefCell<HostMeter>>>,
}

impl BlockRoom {
    /// Checks every member's queues, the instance's meter, and that no plug flush is open.
    pub(crate) fn check(&self) {
        for member in &self.members {
            member.check();
        }
        if let Some(meter) = &self.host_meter {
            meter.borrow().check();
        }
        assert!(!self.plug_flushing, "a plug flush left open");
    }
}

/// The kernel threads that issue member I/O of their own, as the schedulers see them (CFQ
/// keeps a queue per thread): md's raid5d (stripe handling, and md correcting a read error),
/// the page cache's flusher, and md's resync thread. Host threads are numbered from 0.
pub(crate) const RAID5D_THREAD: u32 = u32::MAX;
pub(crate) const FLUSHER_THREAD: u32 = u32::MAX - 1;
pub(crate) const RESYNC_THREAD: u32 = u32::MAX - 2;

#[derive(Clone, Copy)]
pub(crate) struct BlockRef {
    pub(crate) op: u32,
    pub(crate) member: u32,
    pub(crate) read: bool,
    pub(crate) sector: u64,
    pub(crate) sectors: u64,
    pub(crate) thread: u32,
}

/// How a member's queue is set up: its scheduler, its request tags (`nr_requests`) and how many
/// commands it keeps on the drive. The RAID kind decides (`RaidKind::member_queue`).
#[derive(Clone, Copy, Debug)]
pub(crate) struct MemberQueue {
    pub(crate) scheduler: sched::SchedulerKind,
    pub(crate) nr_requests: u32,
    pub(crate) depth_cap: u32,
}

impl BlockRoom {
    /// The members' block layer over `drives`: each drive wrapped in its behaviour (drive
    /// faults) and the instance's meter, with a queue shaped as `queue`.
    pub(crate) fn new(config: &SimConfig, queue: MemberQueue, drives: Vec<Box<dyn Drive>>) -> Result<BlockRoom> {
        check_behaviours(config, drives.len() as u32)?;
        let drives = wrap_drives(config, drives);
        let (drives, host_meter) = limit_by_host(config, drives)?;
        Ok(BlockRoom {
            members: build_members(config, queue, drives),
            blocks: Slab::with_capacity(16384),
            plug_flushing: false,
            plug_made: Vec::new(),
            host_meter,
        })
    }
}

fn build_members(config: &SimConfig, queue: MemberQueue, drives: Vec<Box<dyn Drive>>) -> Vec<Member> {
    let mut seek_tables = Vec::new();
    drives
        .into_iter()
        .map(|drive| {
            let mut drive = AnyDrive::from(drive);
            if let AnyDrive::Hdd(hdd) = &mut drive {
                hdd.share_seek_table(&mut seek_tables);
            }
            let scheduler = sched::AnyScheduler::new(queue.scheduler, config.queue_limits);
            Member::new(scheduler, drive, config.data_offset_sectors, queue.nr_requests, queue.depth_cap)
        })
        .collect()
}
