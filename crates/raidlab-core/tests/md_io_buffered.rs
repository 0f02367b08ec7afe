//! The buffered cases of `data/md-io` (issue 19): 64 MiB written in 1 MiB `write()` calls
//! through the page cache of the recording VM (512 MiB RAM), then one `fsync`, on md raid5 of
//! four members (chunk 64 KiB and 512 KiB). md received the page cache's writeback and wrote
//! near-full stripes; the replay must put member read and write sectors per host sector within
//! the recorded range widened by 0.05 + 10 % (issue 18's slack for timing-dependent cases).
//! Run with `--nocapture` for the figures.

mod common;

use common::md_io::{self, Range};
use raidlab_core::sim::engine::Simulation;
use raidlab_core::sim::pagecache::PageCacheConfig;
use raidlab_core::sim::workload::{Job, Workload};
use serde_json::Value;

/// The recording VM's RAM (data/md-io/README.md); the vm sysctls at the kernel's defaults.
const VM_RAM_BYTES: u64 = 512 << 20;

/// Cases the replay does not match yet, and what is known about why.
const KNOWN_GAPS: &[(&str, &str)] = &[(
    "g1-r5-4x512k-seqw-buffered-bs1024k-t1",
    "member reads 0.23 per host sector (0.26 before raid5d's plug) against md's 0.07-0.09: a 1.5 MiB stripe needs 128 of the 256 \
     heads; the fsync's REQ_SYNC writeback sleeps for free heads part way through a stripe, its plug \
     is flushed (modelled: raid5_unplug from schedule) and raid5d pre-reads the partial stripe at \
     once (STRIPE_PREREAD_ACTIVE). md on the 1-vCPU recording VM pre-read about a third as many \
     stripes: which of raid5d and the woken writer runs first decides it, and the simulator has \
     no model of the guest's scheduler. With stripe_cache_size 1024 the replay is within range",
)];

fn buffered_job(case: &Value) -> Job {
    let load = &case["load"];
    let bs = load["bs"].as_u64().unwrap();
    let ios: u64 = load["loadgen"]["ios"].as_str().unwrap().parse().unwrap();
    assert_eq!((load["op"].as_str(), load["pattern"].as_str(), load["threads"].as_u64()), (Some("write"), Some("seq"), Some(1)));
    Job {
        name: case["id"].as_str().unwrap().into(),
        read_fraction: 0.0,
        block_sizes: vec![(bs, 1)],
        size_bytes: ios * bs,
        block_align_bytes: bs,
        // "plain write() then one fsync" (README): fio's end_fsync.
        fsync_end: true,
        buffered: true,
        ..Job::default()
    }
}

fn figure(case: &Value, key: &str) -> f64 {
    case["derived"][key].as_f64().unwrap()
}

#[test]
fn buffered_writes_through_the_page_cache_reach_md_as_near_full_stripes() {
    let cases = md_io::load_cases();
    let by_id = md_io::runs_by_id(&cases, |case| case["load"]["mode"] == "buffered");
    assert_eq!(by_id.len(), 2, "the two buffered cases of data/md-io");
    for (id, runs) in &by_id {
        let mut config = md_io::base_config(runs[0], Workload { jobs: vec![buffered_job(runs[0])] });
        config.page_cache = PageCacheConfig { ram_bytes: VM_RAM_BYTES, ..PageCacheConfig::default() };
        let capacity_bytes = (config.array.member_kib[0] + 4096) * 1024;
        let drives = (0..config.array.member_kib.len()).map(|_| md_io::VmDisk::boxed(capacity_bytes)).collect();
        let mut sim = Simulation::new(config, drives).expect("a valid case");
        sim.run_until(u64::MAX);
        let cache = sim.page_cache().expect("a buffered run has a page cache").stats();
        let result = sim.finish();
        assert!(result.truncated.is_none(), "{id}: run truncated");
        let host_sectors = result.jobs[0].write.bytes / 512;
        assert_eq!(result.jobs[0].flush.ios, 1, "{id}: the fsync completed");
        let reads: u64 = result.members.iter().map(|m| m.read_sectors).sum();
        let writes: u64 = result.members.iter().map(|m| m.write_sectors).sum();
        let (read, write) = (reads as f64 / host_sectors as f64, writes as f64 / host_sectors as f64);
        let read_range = Range::of(&runs.iter().map(|r| figure(r, "member_read_sectors_per_host_sector")).collect::<Vec<_>>());
        let write_range = Range::of(&runs.iter().map(|r| figure(r, "member_write_sectors_per_host_sector")).collect::<Vec<_>>());
        println!("{id}: read/host {read:.4} (md {:.4}-{:.4}), write/host {write:.4} (md {:.4}-{:.4})", read_range.low, read_range.high, write_range.low, write_range.high);
        assert!(write_range.widened(false).contains(write), "{id}: member write sectors per host sector {write:.4} outside {write_range:?} widened");
        if let Some((_, why)) = KNOWN_GAPS.iter().find(|(gap, _)| gap == id) {
            assert!(!read_range.widened(false).contains(read), "{id} matches now: remove it from KNOWN_GAPS");
            println!("known gap {id}: {why}");
            continue;
        }
        assert!(read_range.widened(false).contains(read), "{id}: member read sectors per host sector {read:.4} outside {read_range:?} widened");
        assert_eq!(cache.written_back_bytes, result.jobs[0].write.bytes, "{id}: every written page was written back");
    }
}
