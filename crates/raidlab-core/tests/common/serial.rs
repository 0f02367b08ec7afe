//! A serial test disk (one command at a time, in order, a fixed cost plus a per-sector
//! transfer) and the fingerprint the pinned tests compare results by.

use raidlab_core::device::{Command, Completion, Drive, DriveInfo, Op};
use raidlab_core::sim::engine::SimResult;
use raidlab_core::time::Nanos;
use std::collections::VecDeque;

/// Serves one command at a time, FCFS, in `command_ns + per_sector_ns × sectors` (a flush:
/// `flush_ns`, 1 µs unless given).
pub struct SerialDisk {
    info: DriveInfo,
    command_ns: Nanos,
    per_sector_ns: Nanos,
    flush_ns: Nanos,
    queue: VecDeque<(u64, Nanos)>,
    busy_ns: Nanos,
}

impl SerialDisk {
    pub fn boxed(info: DriveInfo, command_ns: Nanos, per_sector_ns: Nanos) -> Box<dyn Drive> {
        SerialDisk::with_flush(info, command_ns, per_sector_ns, 1_000)
    }

    pub fn with_flush(info: DriveInfo, command_ns: Nanos, per_sector_ns: Nanos, flush_ns: Nanos) -> Box<dyn Drive> {
        Box::new(SerialDisk { info, command_ns, per_sector_ns, flush_ns, queue: VecDeque::new(), busy_ns: 0 })
    }
}

impl Drive for SerialDisk {
    fn info(&self) -> &DriveInfo {
        &self.info
    }
    fn queue_depth(&self) -> u32 {
        32
    }
    fn submit(&mut self, now: Nanos, command: Command) {
        let cost = if command.op == Op::Flush { self.flush_ns } else { self.command_ns + self.per_sector_ns * command.sectors as u64 };
        let start = self.queue.back().map_or(now, |&(_, end)| end.max(now));
        self.queue.push_back((command.id, start + cost));
        self.busy_ns += cost;
    }
    fn next_event(&self) -> Option<Nanos> {
        self.queue.front().map(|&(_, end)| end)
    }
    fn advance(&mut self, now: Nanos, completed: &mut Vec<Completion>) {
        while let Some(&(id, end)) = self.queue.front() {
            if end > now {
                break;
            }
            self.queue.pop_front();
            completed.push(Completion { id, time: end });
        }
    }
    fn busy_nanos(&self) -> Nanos {
        self.busy_ns
    }
}

/// FNV-1a of a result's debug text: what the pinned runs compare across machines and releases.
pub fn fingerprint(result: &SimResult) -> u64 {
    let text = format!("{result:?}");
    text.bytes().fold(0xcbf2_9ce4_8422_2325u64, |h, b| (h ^ b as u64).wrapping_mul(0x0100_0000_01b3))
}
