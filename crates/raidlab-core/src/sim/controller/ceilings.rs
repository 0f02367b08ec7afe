//! The controller's ceilings as serial resources: each is busy for a time per command or per
//! byte, one job after another, so a load beyond its rate queues and throughput levels off at
//! the rate (the bottleneck of a pipeline of servers).
//!
//! - Command processor: `1 / command_iops` per host command (firmware work per I/O).
//! - Host link (PCI-X, PCIe lanes): bytes / link bandwidth per host transfer.
//! - Cache memory: every byte into or out of the cache.
//! - XOR engine: parity generation over the bytes a parity write touches.
//! - Device buses: a parallel SCSI channel (Ultra320 = 320 MB/s per channel, SCSI Parallel
//!   Interface-4, T10 project 1365D) is shared by the drives on it; SAS/SATA give each drive
//!   its own link and need no shared bus here (the drive model has its own link rate).

use super::config::HwConfig;
use crate::time::Nanos;

/// One server used in turn.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Serial {
    busy_until: Nanos,
    /// Total time in use (for utilisation and checks).
    pub busy_ns: Nanos,
}

impl Serial {
    /// Uses the resource for `duration` from `now` or when it frees; returns when that ends.
    pub fn reserve(&mut self, now: Nanos, duration: Nanos) -> Nanos {
        let start = self.busy_until.max(now);
        self.busy_until = start + duration;
        self.busy_ns += duration;
        self.busy_until
    }

    /// A transfer that, uncontended, ends at `now` (the drive model already timed its own
    /// transfer): it started `duration` earlier or when the bus freed, whichever is later.
    /// Returns when it ends: `now` unless the bus was busy.
    pub fn reserve_ending(&mut self, now: Nanos, duration: Nanos) -> Nanos {
        let start = self.busy_until.max(now.saturating_sub(duration));
        self.busy_until = start + duration;
        self.busy_ns += duration;
        self.busy_until.max(now)
    }

    pub fn busy_until(&self) -> Nanos {
        self.busy_until
    }
}

/// Time to move `bytes` at `rate` bytes per second (0: no limit).
pub fn transfer_ns(bytes: u64, rate: u64) -> Nanos {
    if rate == 0 {
        0
    } else {
        ((bytes as u128 * 1_000_000_000).div_ceil(rate as u128)) as Nanos
    }
}

/// All of a controller's ceilings.
#[derive(Clone, Debug)]
pub struct Ceilings {
    pub processor: Serial,
    pub host_link: Serial,
    pub cache_memory: Serial,
    pub xor: Serial,
    pub channels: Vec<Serial>,
}

impl Ceilings {
    pub fn new(config: &HwConfig) -> Ceilings {
        let channels = if config.channel_bytes_per_second > 0 { config.channels as usize } else { 0 };
        Ceilings {
            processor: Serial::default(),
            host_link: Serial::default(),
            cache_memory: Serial::default(),
            xor: Serial::default(),
            channels: vec![Serial::default(); channels],
        }
    }

    /// When a host command of `bytes` that is ready at `now` has passed the processor, the
    /// cache memory and the host link. `memory_passes`: how often its data crosses the cache
    /// memory (a read from the drives is written into it and read out to the host: 2; a hit or
    /// a write taken into the cache: 1).
    pub fn host_command(&mut self, config: &HwConfig, now: Nanos, bytes: u64, memory_passes: u64) -> Nanos {
        let per_command = if config.command_iops > 0 { 1_000_000_000u64.div_ceil(config.command_iops) } else { 0 };
        let mut at = now;
        if per_command > 0 {
            at = self.processor.reserve(at, per_command);
        }
        let memory = transfer_ns(bytes * memory_passes, config.cache_memory_bytes_per_second);
        if memory > 0 {
            at = self.cache_memory.reserve(at, memory);
        }
        let link = transfer_ns(bytes, config.host_link_bytes_per_second);
        if link > 0 {
            at = self.host_link.reserve(at, link);
        }
        at
    }

    /// When a destage or parity write's XOR work and cache reads are done.
    pub fn parity_write(&mut self, config: &HwConfig, now: Nanos, xor_bytes: u64, cache_bytes: u64) -> Nanos {
        let mut at = now;
        let xor = transfer_ns(xor_bytes, config.xor_bytes_per_second);
        if xor > 0 {
            at = self.xor.reserve(at, xor);
        }
        let memory = transfer_ns(cache_bytes, config.cache_memory_bytes_per_second);
        if memory > 0 {
            at = self.cache_memory.reserve(at, memory);
        }
        at
    }

    /// The channel `member` is on, if drives share buses.
    pub fn channel_of(&self, member: u32) -> Option<usize> {
        if self.channels.is_empty() {
            None
        } else {
            Some(member as usize % self.channels.len())
        }
    }

    /// When a member command of `bytes` the drive finished at `now` has crossed its channel.
    pub fn device_transfer(&mut self, config: &HwConfig, member: u32, now: Nanos, bytes: u64) -> Nanos {
        match self.channel_of(member) {
            None => now,
            Some(c) => self.channels[c].reserve_ending(now, transfer_ns(bytes, config.channel_bytes_per_second)),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_serial_resource_queues_jobs() {
        let mut s = Serial::default();
        assert_eq!(s.reserve(100, 10), 110);
        assert_eq!(s.reserve(100, 10), 120);
        assert_eq!(s.reserve(200, 10), 210);
        assert_eq!(s.busy_ns, 30);
    }

    #[test]
    fn an_uncontended_bus_transfer_adds_nothing() {
        let mut s = Serial::default();
        assert_eq!(s.reserve_ending(1000, 100), 1000);
        // A second drive finishing at the same time waits for the bus.
        assert_eq!(s.reserve_ending(1000, 100), 1100);
        assert_eq!(transfer_ns(320_000_000, 320_000_000), 1_000_000_000);
    }
}
