//! fio's stream options that place I/O: strided and zbd zones, zoned
//! distributions, per-direction block sizes and file service, apart from the host's loop.

use crate::sim::offsets::Region;
use crate::sim::workload::Job;
use crate::rng::Prng;

/// fio `zonemode=strided`: a position in the zones laid out with `zone_skip_bytes` gaps.
pub fn strided(job: &Job, offset: u64) -> u64 {
    if job.zone_bytes == 0 || job.zone_skip_bytes == 0 {
        return offset;
    }
    offset / job.zone_bytes * (job.zone_bytes + job.zone_skip_bytes) + offset % job.zone_bytes
}

/// fio `random_distribution=zoned` (io_u.c `__get_next_rand_offset_zoned`): a zone by its
/// share of accesses, then a uniform aligned offset inside it.
pub fn zoned_offset(job: &Job, region: &Region, bytes: u64, rng: &mut Prng) -> u64 {
    let mut pick = rng.unit_f64();
    let mut zone = job.zones[job.zones.len() - 1];
    for &candidate in &job.zones {
        if pick < candidate.0 {
            zone = candidate;
            break;
        }
        pick -= candidate.0;
    }
    let (start, end) = if job.zones_absolute {
        (zone.1.min(region.bytes), zone.2.min(region.bytes))
    } else {
        let at = |millionths: u64| (region.bytes as u128 * millionths as u128 / 1_000_000) as u64;
        (at(zone.1), at(zone.2))
    };
    let align = job.block_align_bytes;
    let first = start.div_ceil(align) * align;
    let last = end.max(first + bytes).min(region.bytes).saturating_sub(bytes);
    let slots = last.saturating_sub(first) / align + 1;
    (first + rng.below(slots) * align).min(region.bytes - bytes)
}

/// Emulated zones of fio `zonemode=zbd` on a regular device: each empty at the start, written
/// only at its write pointer; a zone that fills is reset (fio resets full zones to keep a
/// time-based job writing).
#[derive(Debug, Default)]
pub struct ZbdZones {
    pointers: std::collections::BTreeMap<u64, u64>,
    open: Vec<u64>,
}

impl ZbdZones {
    pub fn write_pointer(&mut self, job: &Job, region: &Region, offset: u64, bytes: u64, rng: &mut Prng) -> u64 {
        let size = job.zbd_zone_bytes;
        let mut zone = offset / size;
        if zone * size + bytes > region.bytes {
            zone = 0; // a last partial zone too small for the block
        }
        if !self.open.contains(&zone) {
            let limit = job.zbd_max_open_zones as usize;
            if limit > 0 && self.open.len() >= limit {
                zone = self.open[rng.below(self.open.len() as u64) as usize];
            } else {
                self.open.push(zone);
            }
        }
        let zone_end = ((zone + 1) * size).min(region.bytes);
        let pointer = self.pointers.entry(zone).or_insert(zone * size);
        if *pointer + bytes > zone_end {
            *pointer = zone * size; // full: reset, as zbd.c does before writing it again
        }
        let at = *pointer;
        *pointer += bytes;
        if *pointer + bytes > zone_end {
            self.open.retain(|&z| z != zone);
        }
        at
    }
}

/// A size from a (bytes, weight) mix (fio `bssplit` for one direction).
pub fn pick_size(sizes: &[(u64, u32)], rng: &mut Prng) -> u64 {
    if sizes.len() == 1 {
        return sizes[0].0;
    }
    let total: u64 = sizes.iter().map(|&(_, w)| w as u64).sum();
    let mut pick = rng.below(total);
    for &(bytes, weight) in sizes {
        if pick < weight as u64 {
            return bytes;
        }
        pick -= weight as u64;
    }
    unreachable!("weights cover the draw")
}

/// Sequential I/O under fio's `roundrobin` or `random` file service: the thread's next file
/// (after `file_service_ios` I/Os on one), at that file's own position, wrapping in the file.
pub fn served_file(job: &Job, region: &Region, bytes: u64, s: &mut FileService, rng: &mut Prng) -> (u64, u64) {
    let files = region.bytes / region.file_bytes;
    if s.cursors.len() as u64 != files {
        s.cursors = vec![0; files as usize];
    }
    if s.ios >= job.file_service_ios.max(1) {
        s.index = if job.file_service == 2 { rng.below(files) } else { (s.index + 1) % files };
        s.ios = 0;
    }
    s.ios += 1;
    let file = s.index as usize;
    if s.cursors[file] >= region.file_bytes {
        s.cursors[file] = 0;
    }
    let at = s.cursors[file];
    let length = bytes.min(region.file_bytes - at);
    s.cursors[file] = at + length;
    (file as u64 * region.file_bytes + at, length)
}

/// A thread's place in fio's file service: a position per file, the current file, its I/Os.
#[derive(Clone, Debug, Default)]
pub struct FileService {
    cursors: Vec<u64>,
    index: u64,
    ios: u32,
}
