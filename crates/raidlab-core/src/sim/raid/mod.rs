//! What every RAID kind shares: an array operation (a plan's member I/O, reads then writes,
//! and who waits for it), failures and rebuilds, and the mirror read balancer's accounting.

pub(crate) mod ops;
pub(crate) mod estimate;
pub(crate) mod kind;
pub(crate) mod rebuild;

pub(crate) use kind::RaidKind;

/// Failures and rebuilds: every RAID kind's events.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub(crate) enum RaidEvent {
    /// A member fails or is replaced.
    ArrayChange { kind: ArrayEventKind },
    /// A throttled rebuild may issue again.
    RebuildTimer,
}
use crate::plan::MemberIo;
use crate::device::Drive;
use crate::error::Result;
use crate::layout::Array;
use crate::plan::{MirrorState, Plan, Planner};
use crate::sim::engine::{ArrayEventKind, SimConfig};
use crate::sim::engine::slab::Slab;

/// The array's state every RAID kind shares: its planner and mirror balancer, the operations
/// in flight, the failed members and the rebuild.
pub(crate) struct RaidRoom {
    pub(crate) planner: Planner,
    pub(crate) mirrors: MirrorState,
    pub(crate) mirrored: MirrorAccounting,
    pub(crate) ops: Slab<ArrayOp>,
    pub(crate) plan_scratch: Plan,
    /// Emptied member I/O vectors of finished operations, reused so operations allocate nothing.
    pub(crate) spare_ios: Vec<Vec<MemberIo>>,
    pub(crate) failed: Vec<u32>,
    pub(crate) rebuild: Option<rebuild::RebuildState>,
    /// Sectors of non-rebuild I/O completed on members (md's idleness check).
    pub(crate) foreground_sectors: u64,
    /// Non-rebuild member commands completed (a controller's rebuild share).
    pub(crate) foreground_ios: u64,
}

impl RaidRoom {
    /// The planner for `array` (the members in `config.failed` failed), with the kind's
    /// policies; the balancer learns which drives are solid-state.
    pub(crate) fn new(config: &SimConfig, array: &Array, drives: &[Box<dyn Drive>]) -> Result<RaidRoom> {
        let (rmw_level, read_balance) = RaidKind::planner_policy(config);
        let mut mirrors = MirrorState::new(array.devices(), read_balance);
        for (member, drive) in drives.iter().enumerate() {
            mirrors.nonrotational[member] = !drive.info().rotational;
        }
        let mirrored = RaidKind::mirror_accounting(config, array);
        let planner = Planner::new(array.clone(), &config.failed, rmw_level)?;
        Ok(RaidRoom {
            planner,
            mirrors,
            mirrored,
            ops: Slab::with_capacity(4096),
            plan_scratch: Plan::new(),
            spare_ios: Vec::new(),
            failed: config.failed.clone(),
            rebuild: None,
            foreground_sectors: 0,
            foreground_ios: 0,
        })
    }
}

/// Who is waiting for an array operation.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Owner {
    Host(u32),
    /// A controller destage of one cache row.
    Destage(u64),
    /// A controller read-ahead.
    Prefetch,
    /// A rebuild window: first member sector, length, and which rebuild (its result's index).
    Rebuild(u64, u32, u32),
    /// A batch of md stripe heads handled alike (raid4/5/6 writes).
    Stripes(u32),
    /// A batch of stripe heads of inner array `.0` of a stack.
    InnerStripes(u32, u32),
    // md correcting a read error, by correction.
    /// Reading the other members to compute the failed block.
    ReadFix(u32),
    /// Writing the computed block back to the member.
    Rewrite(u32),
    /// Reading it back.
    ReadBack(u32),
    /// md's one flush in flight to the members (md/flush.rs), for the host flushes it covers.
    MdFlush,
}

pub(crate) struct ArrayOp {
    pub(crate) owner: Owner,
    pub(crate) thread: u32,
    pub(crate) flush: bool,
    pub(crate) reads: Vec<MemberIo>,
    pub(crate) writes: Vec<MemberIo>,
    pub(crate) pending: u32,
    pub(crate) in_writes: bool,
    pub(crate) stripe_heads: u32,
}

/// What the mirror read balancer is told about member I/O.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum MirrorAccounting {
    /// Not a mirrored array.
    None,
    /// md: every member I/O counts as pending; reads also move the head.
    Md,
    /// A hardware controller's mirrors: reads only.
    Reads,
}
