//! The page cache: buffered I/O on real drive models against O_DIRECT on the same
//! drives, every written sector reaching the drive, a cached file served from memory, md raid5
//! seeing near-full stripes from writeback, and `check()` of the cache's conserved quantities
//! on randomised runs. Run with `--nocapture` for the figures.

use raidlab_core::device::catalog::DriveChoice;
use raidlab_core::layout::{ArraySpec, Level};
use raidlab_core::rng::Prng;
use raidlab_core::sim::engine::{ControllerConfig, HwConfig, MdConfig, SimConfig, SimResult, Simulation};
use raidlab_core::sim::pagecache::{PageCacheConfig, PageCacheStats};
use raidlab_core::sim::block::sched::{QueueLimits, SchedulerKind};
use raidlab_core::sim::workload::{Job, Workload};

const GIB: u64 = 1 << 30;

fn config(level: Level, devices: usize, member_kib: u64, jobs: Vec<Job>, page_cache: PageCacheConfig) -> SimConfig {
    SimConfig {
        seed: 1,
        data_offset_sectors: 264_192,
        controller: ControllerConfig::Md(MdConfig::default()),
        scheduler: SchedulerKind::mq_deadline_default(),
        queue_limits: QueueLimits { nr_requests: 128, max_sectors: 2560 },
        max_time_ns: 3_600_000_000_000,
        max_events: u64::MAX,
        page_cache,
        ..SimConfig::new(ArraySpec { level, layout: None, chunk_kib: 512, member_kib: vec![member_kib; devices] }, Workload { jobs })
    }
}

fn simulation(preset: &str, config: SimConfig) -> Simulation {
    let drive = DriveChoice::resolve(Some(preset), None, &Default::default()).unwrap();
    let drives = (0..config.array.member_kib.len()).map(|i| drive.build(Prng::derive(1, "drive", i as u64), None)).collect();
    Simulation::new(config, drives).unwrap()
}

fn run(preset: &str, config: SimConfig) -> SimResult {
    simulation(preset, config).run()
}

/// A run and its page cache's figures (read before the run is finished).
fn run_buffered(preset: &str, config: SimConfig) -> (SimResult, PageCacheStats) {
    let mut sim = simulation(preset, config);
    sim.run_until(u64::MAX);
    let stats = sim.page_cache().expect("buffered jobs have a page cache").stats();
    (sim.finish(), stats)
}

/// Sequential I/O of `bytes` (a file of that size, once) in `block` calls.
fn seq(name: &str, write: bool, block: u64, bytes: u64, buffered: bool) -> Job {
    Job {
        name: name.into(),
        read_fraction: if write { 0.0 } else { 1.0 },
        block_sizes: vec![(block, 1)],
        size_bytes: bytes,
        block_align_bytes: block.min(4096),
        buffered,
        ..Job::default()
    }
}

fn mb_s(result: &SimResult) -> f64 {
    let job = &result.jobs[0];
    (job.read.bytes + job.write.bytes) as f64 / (job.runtime_ns as f64 / 1e9) / 1e6
}

/// One 7200-rpm nearline drive (a single-member raid0, as `--level 0 --devices 1`).
fn nearline(jobs: Vec<Job>) -> SimConfig {
    config(Level::Raid0, 1, 64 << 20, jobs, PageCacheConfig::default())
}

#[test]
fn buffered_8k_streams_on_one_nearline_drive_reach_80_percent_of_1m_direct() {
    let direct = |write| Job { iodepth: 4, ..seq("direct", write, 1 << 20, 4 * GIB, false) };
    let write_direct = mb_s(&run("nearline-7200", nearline(vec![direct(true)])));
    let read_direct = mb_s(&run("nearline-7200", nearline(vec![direct(false)])));
    let writes = Job { fsync_end: true, ..seq("w", true, 8192, 4 * GIB, true) };
    let (written, cache) = run_buffered("nearline-7200", nearline(vec![writes]));
    let write_buffered = mb_s(&written);
    let read_buffered = mb_s(&run("nearline-7200", nearline(vec![seq("r", false, 8192, 4 * GIB, true)])));
    println!("nearline-7200 MB/s: write 1M direct QD4 {write_direct:.1}, 8K buffered+end_fsync {write_buffered:.1}; read 1M direct QD4 {read_direct:.1}, 8K buffered {read_buffered:.1}");
    assert!(write_buffered >= 0.8 * write_direct, "buffered writes {write_buffered:.1} MB/s vs direct {write_direct:.1}");
    assert!(read_buffered >= 0.8 * read_direct, "buffered reads {read_buffered:.1} MB/s vs direct {read_direct:.1}");
    // Every written sector reached the drive before the run ended, and the fsync flushed it.
    let member = &written.members[0];
    assert_eq!(member.write_sectors, 4 * GIB / 512);
    assert_eq!(written.jobs[0].flush.ios, 1);
    assert!(member.flush_ios >= 1);
    assert_eq!(cache.written_back_bytes, 4 * GIB);
    assert!(cache.peak_dirty_bytes >= 4 * GIB - (1 << 20), "the 4 GiB fit under the background limit of 64 GiB RAM");
}

#[test]
fn a_1g_file_read_randomly_for_60s_is_served_from_the_cache_after_the_first_pass() {
    let job = Job {
        name: "rand".into(),
        random_fraction: 1.0,
        block_sizes: vec![(128 << 10, 1)],
        block_align_bytes: 128 << 10,
        size_bytes: GIB,
        iodepth: 1,
        threads: 4,
        runtime_ns: 60_000_000_000,
        time_based: true,
        buffered: true,
        ..Job::default()
    };
    let (result, cache) = run_buffered("nearline-7200", nearline(vec![job.clone()]));
    let drive_read_bytes = result.members[0].read_sectors * 512;
    let host_read = result.jobs[0].read.bytes;
    println!(
        "random 128K reads of 1 GiB for 60 s: host {:.1} GiB, drive {:.3} GiB, hit ratio {:.3}",
        host_read as f64 / GIB as f64,
        drive_read_bytes as f64 / GIB as f64,
        cache.read_hit_pages as f64 / (cache.read_hit_pages + cache.read_miss_pages) as f64
    );
    assert!(drive_read_bytes <= GIB + GIB / 4, "drive read {drive_read_bytes} bytes");
    assert!(host_read >= 10 * GIB, "after the first pass reads come from memory: {host_read} bytes");
    // The same reads with O_DIRECT stay at the drive's random rate.
    let direct = run("nearline-7200", nearline(vec![Job { buffered: false, ..job }]));
    let direct_read = direct.jobs[0].read.bytes;
    assert!(direct.members[0].read_sectors * 512 >= direct_read, "O_DIRECT reads all go to the drive");
    assert!(host_read >= 50 * direct_read, "cached {host_read} vs O_DIRECT {direct_read} bytes");
}

/// bonnie++-style streaming (8 KiB writes of a file twice RAM, then 8 KiB reads) on md raid5.
fn bonnie_raid5(preset: &str, devices: usize, chunk_kib: u64, ram: u64) -> (SimResult, SimResult) {
    let page_cache = PageCacheConfig { ram_bytes: ram, ..PageCacheConfig::default() };
    let mut write = config(Level::Raid5, devices, 64 << 20, vec![Job { fsync_end: true, ..seq("w", true, 8192, 2 * ram, true) }], page_cache);
    write.array.chunk_kib = chunk_kib;
    let mut read = write.clone();
    read.workload = Workload { jobs: vec![seq("r", false, 8192, 2 * ram, true)] };
    (run(preset, write), run(preset, read))
}

#[test]
fn bonnie_style_streaming_on_md_raid5_writes_near_full_stripes() {
    let (written, read) = bonnie_raid5("nearline-7200", 4, 64, GIB);
    let host_sectors = written.jobs[0].write.bytes / 512;
    let prereads: u64 = written.members.iter().map(|m| m.read_sectors).sum();
    println!(
        "raid5 4x64K bonnie 2 GiB: write {:.1} MB/s, pre-reads/host {:.4}, read {:.1} MB/s",
        mb_s(&written),
        prereads as f64 / host_sectors as f64,
        mb_s(&read)
    );
    assert!((prereads as f64) <= 0.05 * host_sectors as f64, "{prereads} pre-read sectors for {host_sectors} written");
}

#[test]
fn ten_10k_sata_drives_in_raid5_stream_buffered_writes_at_4_drives_worth() {
    let single = mb_s(&run(
        "raptor-wd1500adfd",
        config(Level::Raid0, 1, 64 << 20, vec![Job { iodepth: 4, ..seq("d", true, 1 << 20, GIB, false) }], PageCacheConfig::default()),
    ));
    let (written, read) = bonnie_raid5("raptor-wd1500adfd", 10, 512, GIB);
    let array = mb_s(&written);
    println!("raptor single drive 1M direct {single:.1} MB/s; raid5 x10 bonnie write {array:.1} MB/s, read {:.1} MB/s", mb_s(&read));
    assert!(array >= 4.0 * single, "raid5 x10 {array:.1} MB/s vs one drive {single:.1}");
}

#[test]
fn page_cache_invariants_hold_through_randomised_buffered_runs() {
    for seed in 0..12u64 {
        let mut rng = Prng::derive(seed, "pagecache-test", 0);
        let jobs = (0..1 + rng.below(3))
            .map(|i| Job {
                name: format!("j{i}"),
                threads: 1 + rng.below(3) as u32,
                iodepth: 1 + rng.below(4) as u32,
                read_fraction: [0.0, 0.5, 1.0][rng.below(3) as usize],
                random_fraction: [0.0, 1.0][rng.below(2) as usize],
                block_sizes: vec![([4096, 8192, 65536, 1 << 20][rng.below(4) as usize], 1)],
                size_bytes: [64 << 20, 256 << 20][rng.below(2) as usize],
                offset_bytes: rng.below(4) * (64 << 20),
                files: 1 + rng.below(2) as u32,
                fsync_every: [0, 0, 16][rng.below(3) as usize],
                fsync_end: rng.chance(0.5),
                time_based: i == 0 && rng.chance(0.5),
                buffered: true,
                invalidate: rng.chance(0.7),
                ..Job::default()
            })
            .map(|job| Job { runtime_ns: if job.time_based { 1_000_000_000 } else { 0 }, ..job })
            .collect::<Vec<_>>();
        let timed = jobs.iter().any(|j| j.time_based);
        let ram = [32 << 20, 128 << 20, 1 << 30][rng.below(3) as usize];
        let page_cache = PageCacheConfig { ram_bytes: ram, dirty_expire_ns: 1_000_000_000, dirty_writeback_ns: 500_000_000, ..PageCacheConfig::default() };
        let level = [Level::Raid0, Level::Raid5, Level::Raid1][rng.below(3) as usize];
        let mut config = config(level, 3, 4 << 20, jobs, page_cache);
        if rng.chance(0.25) {
            config.controller = ControllerConfig::Hardware(HwConfig::default());
        }
        // A battery-backed controller acknowledges writes from its cache and destages later.
        let absorbs = matches!(config.controller, ControllerConfig::Hardware(_));
        let mut sim = simulation("nvme-tlc", config);
        let mut until = 0;
        while !sim.finished() {
            until += 20_000_000;
            sim.run_until(until);
            sim.page_cache().expect("buffered jobs have a page cache").check();
        }
        let cache = sim.page_cache().unwrap();
        assert!(timed || cache.dirty_pages() + cache.writeback_pages() == 0, "seed {seed}: a finished run left dirty pages");
        let stats = cache.stats();
        let result = sim.finish();
        let written: u64 = result.members.iter().map(|m| m.write_sectors).sum();
        assert!(absorbs || written * 512 >= stats.written_back_bytes, "seed {seed}: written back {} bytes, members wrote {}", stats.written_back_bytes, written * 512);
    }
}
