//! The RAID kinds and the one interface the engine and the shared array machinery use to talk
//! to them. Each kind is a room of its own (`sim/md`, `sim/controller`) holding its state and
//! its event handlers; this file is the only place that picks one by kind, so a new kind (ZFS)
//! is a new variant here and a new room, with no change to `engine/`.

use super::MirrorAccounting;
use crate::error::Result;
use crate::layout::{Array, Level, StackSpec};
use crate::plan::{ReadBalance, RmwLevel};
use crate::sim::block::sched::SchedulerKind;
use crate::sim::block::MemberQueue;
use crate::sim::controller::{CommandOrder, MirrorReads};
use crate::sim::engine::{config_error, ArrayEventKind, ControllerConfig, SimConfig, Simulation};

/// Which RAID kind runs the array.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum RaidKind {
    /// Linux md (`sim/md`): the host's block layer runs on every member.
    Md,
    /// A hardware RAID controller (`sim/controller`): the host sees one logical drive.
    Controller,
}

impl RaidKind {
    pub(crate) fn of(config: &SimConfig) -> RaidKind {
        match config.controller {
            ControllerConfig::Md(_) => RaidKind::Md,
            ControllerConfig::Hardware(_) => RaidKind::Controller,
        }
    }

    /// The array the kind builds from the configuration (a stack is md's only).
    pub(crate) fn array(config: &SimConfig) -> Result<Array> {
        match &config.stack {
            Some(stack) => stacked_array(config, stack),
            None => Array::new(&config.array),
        }
    }

    /// The planner's read-modify-write rule and mirror read balancing.
    pub(crate) fn planner_policy(config: &SimConfig) -> (RmwLevel, ReadBalance) {
        match config.controller {
            ControllerConfig::Md(md) => (md.rmw_level, md.read_balance),
            ControllerConfig::Hardware(hw) => (RmwLevel::Enable, match hw.mirror_reads {
                MirrorReads::Nearest => ReadBalance::Md,
                MirrorReads::Primary => ReadBalance::First,
                MirrorReads::RoundRobin => ReadBalance::RoundRobin,
                MirrorReads::LeastOutstanding => ReadBalance::LeastOutstanding,
            }),
        }
    }

    /// What the mirror read balancer is told about member I/O.
    pub(crate) fn mirror_accounting(config: &SimConfig, array: &Array) -> MirrorAccounting {
        match (array.level(), config.controller) {
            (Level::Raid1 | Level::Raid10, ControllerConfig::Md(_)) => MirrorAccounting::Md,
            (Level::Raid1 | Level::Raid10, ControllerConfig::Hardware(_)) => MirrorAccounting::Reads,
            // A stack with copies (raid1+0, raid0+1): md's read balancing of its mirrors.
            (_, ControllerConfig::Md(_)) if array.stack().is_some() && array.copies() > 1 => MirrorAccounting::Md,
            _ => MirrorAccounting::None,
        }
    }

    /// Each member's queue: under md the host's scheduler and tags; behind a controller the host's
    /// scheduler runs on the logical drive (`controller/host_queue.rs`) and each drive's waiting
    /// commands are the firmware's, in its order, with no host tag limit; it keeps
    /// `commands_per_drive` on the drive.
    pub(crate) fn member_queue(config: &SimConfig) -> MemberQueue {
        match config.controller {
            ControllerConfig::Md(_) => MemberQueue {
                scheduler: config.scheduler,
                nr_requests: config.queue_limits.nr_requests,
                depth_cap: config.queues.drive_queue_depth,
            },
            ControllerConfig::Hardware(hw) => {
                let scheduler = match hw.command_order {
                    CommandOrder::Fifo => SchedulerKind::None,
                    CommandOrder::Elevator => SchedulerKind::mq_deadline_default(),
                };
                let depth_cap = match (hw.commands_per_drive, config.queues.drive_queue_depth) {
                    (0, d) | (d, 0) => d,
                    (c, d) => c.min(d),
                };
                MemberQueue { scheduler, nr_requests: 1 << 30, depth_cap }
            }
        }
    }
}

/// A stacked array, as md over md: no hardware controller, and no rebuild of a lost raid0 half
/// of a raid0+1 (md would need it created again and the outer raid1 resynced).
fn stacked_array(config: &SimConfig, stack: &StackSpec) -> Result<Array> {
    if matches!(config.controller, ControllerConfig::Hardware(_)) {
        return Err(config_error("a stacked level is md over md arrays: use controller md".into()));
    }
    let array = Array::stacked(stack)?;
    let replaces = config.timeline.iter().any(|e| matches!(e.kind, ArrayEventKind::Replace(_)));
    if stack.outer_level == Level::Raid1 && (replaces || config.rebuild.spare) {
        return Err(config_error(format!(
            "raid{}: a replaced drive means creating its raid0 half again and resyncing the outer raid1; that rebuild is not modelled (no --replace or --spare)",
            stack.name()
        )));
    }
    Ok(array)
}

impl Simulation {
    /// A host I/O (a job's O_DIRECT I/O, or a page-cache bio) arrives at the array.
    pub(crate) fn kind_submit(&mut self, id: u32) {
        match self.kind {
            RaidKind::Md => self.md_submit(id),
            RaidKind::Controller => self.array_queue_submit(id),
        }
    }

    /// The array operation of host I/O `id` finished on the members.
    pub(crate) fn kind_host_done(&mut self, id: u32) {
        match self.kind {
            RaidKind::Md => self.host_complete(id),
            RaidKind::Controller => self.controller_host_done(id),
        }
    }

    /// A drive finished block `block` of member `member` (its scheduler not yet told).
    pub(crate) fn kind_block_done(&mut self, member: u32, block: u64) {
        match self.kind {
            RaidKind::Md => self.block_done(block),
            RaidKind::Controller => self.controller_block_finished(member, block),
        }
    }

    /// Stripe heads the plan in `plan_scratch` holds while it runs (md counts its rows in
    /// the stripe cache; a controller has no such limit).
    pub(crate) fn kind_stripe_heads(&self) -> u32 {
        match self.config.controller {
            ControllerConfig::Md(md) => self.raid.plan_scratch.counts.rows_cached.min(md.stripe_cache_size),
            ControllerConfig::Hardware(_) => 0,
        }
    }

    /// A member command that is not the rebuild's completed.
    pub(crate) fn kind_foreground_done(&mut self) {
        match self.kind {
            RaidKind::Md => {}
            // The controller's rebuild share counts the host's member commands.
            RaidKind::Controller => {
                if self.raid.rebuild.is_some() {
                    self.rebuild_pump();
                }
            }
        }
    }

    /// Whether a rebuild window may go out now (false: the kind made the rebuild wait).
    pub(crate) fn kind_rebuild_throttle(&mut self) -> bool {
        match self.kind {
            RaidKind::Md => self.md_rebuild_throttle(),
            RaidKind::Controller => self.rebuild_hw_share(),
        }
    }

    /// Commands the kind still lets start on the drives (`u32::MAX`: no limit above the drives).
    pub(crate) fn kind_command_budget(&mut self) -> u32 {
        match self.kind {
            RaidKind::Md => u32::MAX,
            RaidKind::Controller => self.controller_command_budget(),
        }
    }

    /// Whether commands that finished on one drive may let others start on other drives.
    pub(crate) fn kind_shares_commands(&self) -> bool {
        match self.kind {
            RaidKind::Md => false,
            RaidKind::Controller => self.hw.controller.as_ref().is_some_and(|c| c.config.commands_total > 0),
        }
    }

    /// Schedules the kind's own timeline (a controller's BBU learn cycle).
    pub(crate) fn kind_start(&mut self) {
        match self.kind {
            RaidKind::Md => {}
            RaidKind::Controller => self.schedule_bbu_learn(),
        }
    }

    /// Checks the RAID rooms' state (tests call it between steps). md's threads and flush
    /// state exist, idle, under every kind, and are checked in every run.
    pub(crate) fn kind_check(&mut self) {
        self.kind_command_budget();
        self.hw.check();
        self.md.check();
    }
}
