//! raid5d's CPU as a serial resource (Linux 6.1 drivers/md/raid5.c).
//!
//! Every stripe head md handles costs CPU in the thread that runs `handle_stripe` for it:
//! `raid5d` (which calls `handle_active_stripes(conf, ANY_GROUP, ...)`) and, with sysfs
//! `group_thread_cnt` > 0, the worker threads (`raid5_do_work` → `handle_active_stripes(conf,
//! group_id, worker, ...)`) that take heads from the same lists in parallel. A pass's member I/O
//! is issued when its handling is done (`ops_run_io` at the end of `handle_stripe`) into
//! raid5d's plug, which holds it until raid5d's loop ends (`Raid5dThreads`), and while
//! the threads are busy, heads queued for them wait and gather more writes: how a stream many
//! deep reaches md as fuller stripes.
//!
//! CPU time of one handled head (one 4 KiB row):
//! - `head_overhead_ns` for `handle_stripe` itself (state analysis, locking, bio bookkeeping);
//! - a copy of each newly written 4 KiB page from the bio into the head's page
//!   (`ops_run_biodrain` → `async_copy_data`), skipped with sysfs `skip_copy` (the bio's page is
//!   used directly, `R5_SkipCopy`);
//! - parity: for raid4/5 an xor over the source pages (`ops_run_reconstruct5`, `ops_run_prexor5`
//!   for rmw), for raid6 the P+Q syndrome (`ops_run_reconstruct6` → `async_gen_syndrome`).

use super::HeadIo;
use crate::bits::members_from_last;
use crate::layout::{Array, Level};
use crate::plan::RowWay;
use crate::sim::block::sched::plug::{Plug, BLK_MAX_REQUEST_COUNT, BLK_PLUG_FLUSH_SECTORS};
use crate::time::Nanos;
use crate::PAGE_BYTES;

/// The speeds of the CPU that runs raid5d, with units. Zero rates and overhead mean a free CPU.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Raid5dCpu {
    /// `handle_stripe` per 4 KiB stripe head, besides copy and parity.
    pub head_overhead_ns: Nanos,
    /// Copy of bio pages into the stripe cache (memcpy), bytes per second.
    pub copy_bytes_per_second: u64,
    /// raid4/5 parity (the `xor_blocks` template the kernel picks at boot), source bytes per second.
    pub xor_bytes_per_second: u64,
    /// raid6 P+Q syndrome (`raid6_call.gen_syndrome`), data bytes per second.
    pub gen_bytes_per_second: u64,
}

impl Raid5dCpu {
    /// A CPU that costs nothing: heads are handled the instant raid5d wakes.
    pub const FREE: Raid5dCpu =
        Raid5dCpu { head_overhead_ns: 0, copy_bytes_per_second: 0, xor_bytes_per_second: 0, gen_bytes_per_second: 0 };

    /// A current x86 server core. Sources:
    /// - xor: the kernel's boot benchmark (crypto/xor.c `do_xor_speed`) prints per template MB/sec;
    ///   figures published with kernel patches are 17.9-19.7 GB/s (POWER7, "powerpc: Add VMX
    ///   optimised xor for RAID5"); AVX templates on x86 report the same order (*estimate*,
    ///   not a cited figure). 20 GB/s.
    /// - raid6 gen: lib/raid6/algos.c prints "raid6: using algorithm ... gen() N MB/s"; published
    ///   figures 12.7 GB/s (LoongArch 3A5000 lasx, "raid6: Add LoongArch SIMD syndrome
    ///   calculation") to 2.9 GB/s (Cortex-A57 neonx8, "md/raid6: delta syndrome for ARM NEON");
    ///   AVX2 on x86 the same order as lasx (*estimate*). 12 GB/s.
    /// - copy: one core's kernel memcpy of pages not in cache, ~6 GB/s (*estimate*).
    /// - overhead: Shaohua Li's commit 765d704db1f5 ("raid5: only dispatch IO from raid5d for
    ///   harddisk raid"): 9-disk raid5, sequential writes, large iodepth, Atom CPU: raid5d alone
    ///   ~600 MB/s, i.e. ~55 µs per 32 KiB head on an Atom; skip_copy and 4 worker threads
    ///   1150 MB/s. A server core is ~5x an Atom (*estimate*): ~11 µs per head of which copy and xor take
    ///   ~6 µs at the rates above, leaving 5 µs of handle_stripe. With these, raid5d alone
    ///   caps a 6-member raid5 near 20 KiB / 9.4 µs ≈ 2.2 GB/s, the few GB/s real md reaches on
    ///   NVMe without worker threads.
    pub const SERVER: Raid5dCpu = Raid5dCpu {
        head_overhead_ns: 5_000,
        copy_bytes_per_second: 6_000_000_000,
        xor_bytes_per_second: 20_000_000_000,
        gen_bytes_per_second: 12_000_000_000,
    };

    fn bytes_ns(bytes: u64, rate: u64) -> Nanos {
        if rate == 0 { 0 } else { (bytes as u128 * 1_000_000_000 / rate as u128) as Nanos }
    }

    /// CPU time to handle the heads of one group of a pass (`io.pages` heads alike).
    pub fn cost(&self, array: &Array, io: &HeadIo, skip_copy: bool) -> Nanos {
        let overhead = self.head_overhead_ns * io.pages;
        if !io.write {
            return overhead;
        }
        let parity_bits = (1u64 << io.p) | io.q.map_or(0, |q| 1u64 << q);
        let written = crate::bits::count(io.members & !parity_bits) as u64;
        let page_bytes = PAGE_BYTES * io.pages;
        let copy = if skip_copy { 0 } else { Self::bytes_ns(written * page_bytes, self.copy_bytes_per_second) };
        let data = array.data_disks() as u64;
        let parity = match (array.level(), io.way) {
            // rmw: old data xored out (prexor) and new data in, over the old parity.
            (Level::Raid6, RowWay::Rmw) => Self::bytes_ns((2 * written + 2) * page_bytes, self.gen_bytes_per_second),
            (Level::Raid6, _) => Self::bytes_ns(data * page_bytes, self.gen_bytes_per_second),
            (_, RowWay::Rmw) => Self::bytes_ns((2 * written + 1) * page_bytes, self.xor_bytes_per_second),
            _ => Self::bytes_ns(data * page_bytes, self.xor_bytes_per_second),
        };
        overhead + copy + parity
    }
}

/// MAX_STRIPE_BATCH (raid5.h): heads `handle_active_stripes` takes off the lists at a time.
pub const MAX_STRIPE_BATCH: usize = 8;

/// raid5d and its worker threads: when they are free again, the pass being handled (its member
/// I/O is issued when its handling is done), and raid5d's plug.
///
/// raid5d runs its whole loop under a block plug (`raid5d`: `blk_start_plug` before the loop,
/// `blk_finish_plug` after it), so the 4 KiB member bios that `ops_run_io` issues for each
/// handled head wait in the plug, merge there into large requests, and reach the member queues
/// when raid5d has nothing left to handle, or earlier when the plug fills (`Plug`). That is why
/// md's member requests are hundreds of KiB under a streaming write, and why a stream's writes
/// complete a loop at a time. Not modelled: with `group_thread_cnt` workers each runs its own
/// plug (`raid5_do_work`), and md then defers write bios on rotational members to raid5d's
/// `flush_deferred_bios` (`batch_bio_dispatch`); here raid5d and its workers share one plug.
#[derive(Debug)]
pub struct Raid5dThreads {
    /// Threads handling heads in parallel: raid5d plus `group_thread_cnt` workers.
    pub threads: u64,
    pub busy_until: Nanos,
    pub issuing: Vec<HeadIo>,
    /// raid5d's plug over the array's members, and the handled heads whose I/O it holds.
    pub plug: Plug,
    pub plugged: Vec<HeadIo>,
}

impl Raid5dThreads {
    /// raid5d of an array of `members`, whose queues take requests of up to `max_sectors`.
    pub fn new(group_thread_cnt: u32, members: usize, max_sectors: u32) -> Raid5dThreads {
        Raid5dThreads {
            threads: 1 + group_thread_cnt as u64,
            busy_until: 0,
            issuing: Vec::new(),
            plug: Plug::new(members, max_sectors),
            plugged: Vec::new(),
        }
    }

    /// Whether `ios` would pass through an empty plug untouched: it holds nothing, and the
    /// heads are too few to fill it (fewer requests than `BLK_MAX_REQUEST_COUNT`, and fewer
    /// pages in all than make a `BLK_PLUG_FLUSH_SIZE` request).
    pub fn plug_is_passed_by(&self, ios: &[HeadIo]) -> bool {
        // (The plug holds requests exactly when heads wait in `plugged`: `check`.)
        if !self.plugged.is_empty() {
            return false;
        }
        let (mut requests, mut pages) = (0u64, 0u64);
        for io in ios {
            let run_sectors = io.pages * crate::PAGE_SECTORS;
            requests += crate::bits::count(io.members) as u64 * run_sectors.div_ceil(self.plug.max_sectors());
            pages += io.pages;
        }
        requests < BLK_MAX_REQUEST_COUNT as u64 && pages * crate::PAGE_SECTORS < BLK_PLUG_FLUSH_SECTORS
    }

    /// Handled heads' member bios go into the plug: one 4 KiB page per member and head
    /// (`ops_run_io`, walking the devices from the last: `for (i = disks; i--; )`). The first
    /// head's pages make or join each member's request; the next heads' pages of the group run
    /// on behind them, each member's as one run (they merge; where a run outgrows the largest
    /// request, the kernel's interleaving of members is not kept). Returns whether the plug
    /// filled on the way, so that the I/O it held before this group must leave now (the heads
    /// of one pass are plugged at one instant; where inside them the kernel's plug filled is
    /// not kept). The caller keeps the group in `plugged`.
    pub fn plug_head(&mut self, io: &HeadIo) -> bool {
        let page = crate::PAGE_SECTORS;
        let mut filled = false;
        for member in members_from_last(io.members) {
            filled |= self.plug.add(member, io.write, io.sector, page);
        }
        if io.pages > 1 {
            for member in members_from_last(io.members) {
                filled |= self.plug.add(member, io.write, io.sector + page, (io.pages - 1) * page);
            }
        }
        filled && !self.plugged.is_empty()
    }

    /// The plug's invariants: its bookkeeping holds requests exactly while heads' I/O waits in
    /// it (tests call this between steps).
    pub fn check(&self) {
        self.plug.check();
        assert_eq!(self.plug.is_empty(), self.plugged.is_empty(), "the plug's requests and the heads it holds");
    }

    /// Heads one pass takes: a batch per thread.
    pub fn batch_heads(&self) -> usize {
        MAX_STRIPE_BATCH * self.threads as usize
    }

    /// Wall time of a pass: its heads spread over the threads (each head is handled by one
    /// thread; with fewer heads than threads, some idle).
    pub fn pass_ns(&self, cpu: &Raid5dCpu, array: &Array, ios: &[HeadIo], skip_copy: bool) -> Nanos {
        let total: Nanos = ios.iter().map(|io| cpu.cost(array, io, skip_copy)).sum();
        let heads: u64 = ios.iter().map(|io| io.pages).sum();
        let threads = self.threads.min(heads.max(1));
        total.div_ceil(threads)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::layout::ArraySpec;

    fn array(level: Level) -> Array {
        Array::new(&ArraySpec { level, layout: None, chunk_kib: 64, member_kib: vec![4096; 6] }).unwrap()
    }

    fn head(write: bool, way: RowWay, members: u64, q: Option<u32>) -> HeadIo {
        HeadIo { batch: 0, sector: 0, pages: 2, members, write, way, p: 5, q }
    }

    const CPU: Raid5dCpu = Raid5dCpu {
        head_overhead_ns: 1_000,
        copy_bytes_per_second: 4_096_000_000,
        xor_bytes_per_second: 8_192_000_000,
        gen_bytes_per_second: 4_096_000_000,
    };

    #[test]
    fn a_head_costs_overhead_copy_and_parity_per_page() {
        let raid5 = array(Level::Raid5);
        // Full row of 6: 5 data pages copied (1 µs each) and xored (0.5 µs each), per head.
        let full = head(true, RowWay::Rcw, 0b111111, None);
        assert_eq!(CPU.cost(&raid5, &full, false), 2 * (1_000 + 5 * 1_000 + 5 * 500));
        assert_eq!(CPU.cost(&raid5, &full, true), 2 * (1_000 + 5 * 500));
        // rmw of one data page: copy 1, xor old data + new data + old parity.
        let rmw = head(true, RowWay::Rmw, 0b100001, None);
        assert_eq!(CPU.cost(&raid5, &rmw, false), 2 * (1_000 + 1_000 + 3 * 500));
        // Pre-reads cost handle_stripe only.
        assert_eq!(CPU.cost(&raid5, &head(false, RowWay::Rmw, 0b100001, None), false), 2 * 1_000);
        // raid6: 4 data pages through gen (1 µs each).
        let raid6 = array(Level::Raid6);
        let full6 = HeadIo { p: 4, ..head(true, RowWay::Rcw, 0b111111, Some(5)) };
        assert_eq!(CPU.cost(&raid6, &full6, false), 2 * (1_000 + 4 * 1_000 + 4 * 1_000));
        assert_eq!(Raid5dCpu::FREE.cost(&raid6, &full6, false), 0);
    }

    #[test]
    fn worker_threads_share_a_pass_by_heads() {
        let raid5 = array(Level::Raid5);
        let ios = [head(true, RowWay::Rcw, 0b111111, None); 4];
        let alone = Raid5dThreads::new(0, 6, 2560).pass_ns(&CPU, &raid5, &ios, false);
        assert_eq!(alone, 4 * 2 * 8_500);
        assert_eq!(Raid5dThreads::new(3, 6, 2560).pass_ns(&CPU, &raid5, &ios, false), alone / 4);
        // More threads than heads: the extra ones idle.
        assert_eq!(Raid5dThreads::new(100, 6, 2560).pass_ns(&CPU, &raid5, &ios, false), alone / 8);
        assert_eq!(Raid5dThreads::new(3, 6, 2560).batch_heads(), 32);
    }
}
