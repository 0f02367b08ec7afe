//! The engine's side of a hardware RAID controller (its state lives in `sim::controller`):
//! host I/O comes from the host's queue on the logical drive (`host_queue.rs`), meets the
//! cache (write-back absorbs writes, hits are served from memory, misses go to the drives with
//! optional read-ahead), and every acknowledgement passes the controller's ceilings
//! (processor, cache memory, host link). Destages leave the cache oldest row first, between
//! the high and low watermarks; their parity work passes the XOR engine.

use super::ControllerEvent;
use crate::sim::engine::events::Event;
use crate::sim::host::HostOp;
use crate::sim::engine::Simulation;
use crate::sim::raid::Owner;
use crate::layout::Level;
use crate::sim::controller::ceilings::transfer_ns;
use crate::sim::controller::{Controller, ReadAheadPolicy};
use crate::sim::block::sched::{BlockRequest, Scheduler};
use crate::device::Op;
use crate::time::Nanos;
use crate::{PAGE_SECTORS, SECTOR_BYTES};

const PAGE_BYTES: u64 = PAGE_SECTORS * SECTOR_BYTES;

impl Simulation {
    pub(crate) fn controller_event(&mut self, event: ControllerEvent) {
        match event {
            ControllerEvent::ArrayQueueTimer => self.array_queue_timer(),
            ControllerEvent::BlockDone { block } => self.block_done(block),
            ControllerEvent::DestageDone { destage } => self.destage_done(destage),
            ControllerEvent::BbuLearn { start } => self.bbu_learn(start),
        }
    }

    fn controller(&mut self) -> &mut Controller {
        self.hw.controller.as_mut().expect("hardware controller")
    }

    /// A host I/O enters the host's queue on the logical drive.
    #[inline(never)]
    pub(crate) fn array_queue_submit(&mut self, id: u32) {
        let io = self.host.ios.get(id);
        let op = match io.op {
            HostOp::Read => Op::Read,
            HostOp::Write => Op::Write,
            HostOp::Flush => Op::Flush,
        };
        let request = BlockRequest {
            id: id as u64,
            op,
            sector: io.sector,
            sectors: io.sectors.min(u32::MAX as u64) as u32,
            thread: io.thread,
            sync: true,
            inserted: self.now,
        };
        let now = self.now;
        self.hw.queue.as_mut().expect("a controller's queue").insert(now, request);
        self.array_queue_kick();
    }

    /// Sends the controller what the host queue releases and re-arms its timer (CFQ idling).
    pub(crate) fn array_queue_kick(&mut self) {
        let now = self.now;
        let mut ids = std::mem::take(&mut self.hw.dispatched);
        ids.clear();
        let queue = self.hw.queue.as_mut().expect("a controller's queue");
        queue.dispatch(now, &mut ids);
        let timer = queue.scheduler.next_timer();
        if timer != queue.timer_at {
            if let Some(time) = timer {
                self.events.push(time.max(now), Event::Controller(ControllerEvent::ArrayQueueTimer));
            }
            queue.timer_at = timer.map(|t| t.max(now));
        }
        for index in 0..ids.len() {
            self.cache_submit(ids[index] as u32);
        }
        self.hw.dispatched = ids;
    }

    #[inline(never)]
    pub(crate) fn array_queue_timer(&mut self) {
        let queue = self.hw.queue.as_mut().expect("a controller's queue");
        if queue.timer_at == Some(self.now) {
            queue.timer_at = None;
            self.array_queue_kick();
        }
    }

    /// A host I/O the controller finished: the host queue frees its tag.
    #[inline(never)]
    pub(crate) fn array_queue_done(&mut self, id: u32, thread: u32) {
        let now = self.now;
        self.controller().host_commands -= 1;
        self.hw.queue.as_mut().expect("a controller's queue").completed(now, id as u64, thread);
        self.array_queue_kick();
    }

    pub(crate) fn cache_submit(&mut self, id: u32) {
        let io = self.host.ios.get(id);
        let (op, sector, sectors, thread) = (io.op, io.sector, io.sectors, io.thread);
        self.controller().host_commands += 1;
        let write_back = self.controller().write_back();
        match op {
            HostOp::Write if write_back => self.cache_write(id),
            HostOp::Flush if write_back => {
                let at = self.now + self.controller().cache.service_ns(0);
                self.controller_ack(id, at, 0);
            }
            HostOp::Read if self.controller().cache.read_hit(sector, sectors) => {
                let at = self.now + self.controller().cache.service_ns(sectors * SECTOR_BYTES);
                self.controller_ack(id, at, sectors * SECTOR_BYTES);
            }
            HostOp::Read => {
                self.cache_read_ahead(sector, sectors, thread);
                self.submit_array(Owner::Host(id), op, sector, sectors, thread);
            }
            _ => self.submit_array(Owner::Host(id), op, sector, sectors, thread),
        }
    }

    /// Acknowledges a host I/O whose data is ready at `ready`, once it has passed the
    /// controller's processor, cache memory and host link.
    fn controller_ack(&mut self, id: u32, ready: Nanos, bytes: u64) {
        let controller = self.controller();
        let at = controller.ceilings.host_command(&controller.config, ready, bytes, 1);
        self.complete_host_at(at, id);
    }

    /// A host I/O's array operation finished on the drives.
    #[inline(never)]
    pub(crate) fn controller_host_done(&mut self, id: u32) {
        let io = self.host.ios.get(id);
        let bytes = io.sectors * SECTOR_BYTES;
        let write = io.op == HostOp::Write;
        let (sector, sectors, read) = (io.sector, io.sectors, io.op == HostOp::Read);
        let controller = self.hw.controller.as_mut().expect("hardware controller");
        if read {
            controller.cache.keep_read(sector, sectors);
        }
        let mut ready = self.now;
        if write && is_parity(self.raid.planner.array().level()) {
            ready = controller.ceilings.parity_write(&controller.config, ready, bytes, 0);
        }
        // Data from the drives is written into cache memory and read out to the host; a
        // write-through write is taken in and sent out to the drives.
        let at = controller.ceilings.host_command(&controller.config, ready, bytes, 2);
        if at == self.now {
            self.host_complete(id);
        } else {
            self.complete_host_at(at, id);
        }
    }

    /// Absorbs a write if the cache has room; otherwise it waits for a destage to finish.
    fn cache_write(&mut self, id: u32) {
        let io = self.host.ios.get(id);
        let (sector, sectors) = (io.sector, io.sectors);
        let now = self.now;
        let cache = &mut self.controller().cache;
        let needed = cache.new_pages(sector, sectors) * PAGE_BYTES;
        if !cache.waiting_writes.is_empty() || !cache.has_room(needed) {
            assert!(needed <= cache.write_capacity(), "a write larger than the cache's write share");
            cache.waiting_writes.push_back(id);
        } else {
            cache.mark_dirty(sector, sectors);
            let at = now + cache.service_ns(sectors * SECTOR_BYTES);
            self.controller_ack(id, at, sectors * SECTOR_BYTES);
        }
        self.cache_destage_more();
    }

    /// Prefetches ahead of a read that missed: always, or (adaptive) after a sequential one.
    fn cache_read_ahead(&mut self, sector: u64, sectors: u64, thread: u32) {
        let cache = &mut self.controller().cache;
        let sequential = cache.last_read_end == sector;
        cache.last_read_end = sector + sectors;
        let wanted = match cache.config.read_ahead_mode() {
            ReadAheadPolicy::None => false,
            ReadAheadPolicy::Always => true,
            ReadAheadPolicy::Adaptive => sequential,
        };
        if !wanted {
            return;
        }
        let start = sector + sectors;
        let end = ((start / cache.row_sectors + 2) * cache.row_sectors).min(cache.capacity_sectors);
        if end <= start || cache.readahead.1 >= end {
            return;
        }
        cache.readahead = (start, end);
        // The prefetched data is written into cache memory as it arrives (read out again on a hit).
        let now = self.now;
        let controller = self.controller();
        let memory = transfer_ns((end - start) * SECTOR_BYTES, controller.config.cache_memory_bytes_per_second);
        if memory > 0 {
            controller.ceilings.cache_memory.reserve(now, memory);
        }
        self.submit_array(Owner::Prefetch, HostOp::Read, start, end - start, thread);
    }

    /// Starts destages while the watermarks (or writes waiting for room) call for them.
    fn cache_destage_more(&mut self) {
        let mut extents = Vec::new();
        loop {
            let cache = &mut self.controller().cache;
            let busy = cache.destages.len() as u32 >= cache.config.destage_concurrency;
            if busy || !cache.wants_destage() {
                return;
            }
            extents.clear();
            let Some(bytes) = cache.take_oldest(&mut extents) else { return };
            let destage = cache.start_destage(extents.len() as u32, bytes);
            for &(sector, sectors) in &extents {
                self.submit_array(Owner::Destage(destage), HostOp::Write, sector, sectors, u32::MAX);
            }
        }
    }

    /// One array operation of a destage finished; the whole destage passes the XOR engine
    /// (parity levels) and the cache memory before its room is free.
    #[inline(never)]
    pub(crate) fn cache_destaged(&mut self, destage: u64) {
        let parity = is_parity(self.raid.planner.array().level());
        let now = self.now;
        let controller = self.controller();
        let Some(&crate::sim::controller::cache::Destage { bytes, .. }) = controller.cache.destages.get(&destage) else {
            unreachable!("a destage in flight")
        };
        if !controller.cache.destage_op_done(destage) {
            return;
        }
        let xor_bytes = if parity { bytes } else { 0 };
        let at = controller.ceilings.parity_write(&controller.config, now, xor_bytes, bytes);
        if at > now {
            controller.cache.destaging_bytes += bytes;
            controller.cache.parity_pending.push((destage, bytes));
            self.events.push(at, Event::Controller(ControllerEvent::DestageDone { destage }));
        } else {
            self.cache_room_freed();
        }
    }

    /// A destage's parity work ended: its room is free.
    #[inline(never)]
    pub(crate) fn destage_done(&mut self, destage: u64) {
        let cache = &mut self.controller().cache;
        let index = cache.parity_pending.iter().position(|&(id, _)| id == destage).expect("a destage in the XOR engine");
        let (_, bytes) = cache.parity_pending.swap_remove(index);
        cache.destaging_bytes -= bytes;
        self.cache_room_freed();
    }

    fn cache_room_freed(&mut self) {
        if !self.controller().write_back() {
            self.cache_writes_through();
        }
        while let Some(&id) = self.controller().cache.waiting_writes.front() {
            let io = self.host.ios.get(id);
            let (sector, sectors) = (io.sector, io.sectors);
            let now = self.now;
            let cache = &mut self.controller().cache;
            if !cache.has_room(cache.new_pages(sector, sectors) * PAGE_BYTES) {
                break;
            }
            cache.waiting_writes.pop_front();
            cache.mark_dirty(sector, sectors);
            let at = now + cache.service_ns(sectors * SECTOR_BYTES);
            self.controller_ack(id, at, sectors * SECTOR_BYTES);
        }
        self.cache_destage_more();
    }

    /// Schedules the BBU's learn cycle (`learn_start_ns`, `learn_duration_ns`).
    pub(crate) fn schedule_bbu_learn(&mut self) {
        let Some(controller) = self.hw.controller.as_ref() else { return };
        let (start, duration) = (controller.config.learn_start_ns, controller.config.learn_duration_ns);
        if duration > 0 {
            self.events.push(start, Event::Controller(ControllerEvent::BbuLearn { start: true }));
            self.events.push(start.saturating_add(duration), Event::Controller(ControllerEvent::BbuLearn { start: false }));
        }
    }

    /// The learn cycle starts or ends: the cache leaves or re-enters write-back (a phase of
    /// its own in the results). Leaving it, the dirty data destages and writes waiting for
    /// room go to the drives.
    #[inline(never)]
    pub(crate) fn bbu_learn(&mut self, start: bool) {
        self.controller().set_learning(start);
        self.note_phase();
        if !self.controller().write_back() {
            self.cache_writes_through();
        }
        self.cache_destage_more();
    }

    /// Writes waiting for cache room when the cache is write-through go to the drives.
    fn cache_writes_through(&mut self) {
        while let Some(id) = self.controller().cache.waiting_writes.pop_front() {
            let io = self.host.ios.get(id);
            let (sector, sectors, thread) = (io.sector, io.sectors, io.thread);
            self.submit_array(Owner::Host(id), HostOp::Write, sector, sectors, thread);
        }
    }

    /// Commands a controller's firmware may still start on the drives (`commands_total`).
    pub(crate) fn controller_command_budget(&mut self) -> u32 {
        let Some(controller) = self.hw.controller.as_mut() else { return u32::MAX };
        if controller.config.commands_total == 0 {
            return u32::MAX;
        }
        let out: u32 = self.block.members.iter().map(|m| m.in_drive()).sum();
        controller.commands_out = out;
        controller.config.commands_total.saturating_sub(out)
    }

    /// A drive finished block `block` at `now`: it crosses the drive's channel (shared
    /// parallel SCSI bus) before the controller has it.
    pub(crate) fn controller_block_finished(&mut self, member: u32, block: u64) {
        let sectors = self.block.blocks.get(block as u32).sectors;
        let now = self.now;
        let Some(controller) = self.hw.controller.as_mut() else {
            self.block_done(block);
            return;
        };
        let at = controller.ceilings.device_transfer(&controller.config, member, now, sectors * SECTOR_BYTES);
        if at > now {
            self.events.push(at, Event::Controller(ControllerEvent::BlockDone { block }));
        } else {
            self.block_done(block);
        }
    }
}

fn is_parity(level: Level) -> bool {
    matches!(level, Level::Raid4 | Level::Raid5 | Level::Raid6)
}
