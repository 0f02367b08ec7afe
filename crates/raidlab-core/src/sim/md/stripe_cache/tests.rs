use super::*;
use crate::layout::{ArraySpec, Level};
use crate::rng::Prng;

fn array(level: Level, devices: usize, chunk_kib: u64) -> Array {
    Array::new(&ArraySpec { level, layout: None, chunk_kib, member_kib: vec![4096; devices] }).unwrap()
}

/// Member sectors (read, written) of one batch of head I/O.
fn sectors(io: &HeadIo) -> (u64, u64) {
    let moved = io.members.count_ones() as u64 * io.pages * PAGE_SECTORS;
    if io.write { (0, moved) } else { (moved, 0) }
}

/// Runs raid5d passes and completes every batch until the cache is idle; returns the sectors
/// read and written, checking the cache after every step.
fn drain(cache: &mut StripeCache, failed: u64) -> (u64, u64) {
    let (mut read, mut written) = (0, 0);
    let mut out = Vec::new();
    while cache.has_work() {
        cache.handle(|_| failed, &mut out);
        cache.check();
        for io in out.drain(..) {
            let (r, w) = sectors(&io);
            read += r;
            written += w;
            cache.batch_done(io.batch);
            cache.check();
        }
    }
    (read, written)
}

#[test]
fn sequential_4k_writes_read_two_pages_per_three_written() {
    // raid5 on 4 members: the first write to a row reconstructs (reads the other two data
    // pages); the row's head stays cached with every page up to date, so the writes to its
    // other two data pages, one chunk (16 pages) later each, read nothing.
    let mut cache = StripeCache::new(array(Level::Raid5, 4, 64), 256, RmwLevel::Enable);
    let (mut read, mut written) = (0, 0);
    let mut done = Vec::new();
    for write in 0..3 * 128u32 {
        cache.submit(WriteBio { id: write, sector: write as u64 * 8, sectors: 8, sync: true, plugged: false, submitter: 0 });
        let (r, w) = drain(&mut cache, 0);
        read += r;
        written += w;
        cache.take_completed(&mut done);
        assert_eq!(done, [write], "each write completes once its head is written");
        done.clear();
    }
    let host = 3 * 128 * 8;
    assert_eq!((read * 3, written), (host * 2, host * 2));
    assert_eq!(cache.active(), 0);
}

#[test]
fn random_small_writes_cost_as_stateless_when_rows_are_not_reused() {
    // Rows far apart never meet in the cache: raid5 4 KiB writes read 2 and write 2, raid6 on
    // 6 members 3 + 3, raid6 on 4 members 1 + 3 (rcw reads the one other data page).
    for (level, devices, reads, writes) in [(Level::Raid5, 6, 2, 2), (Level::Raid6, 6, 3, 3), (Level::Raid6, 4, 1, 3)] {
        let a = array(level, devices, 64);
        let rows = a.capacity_sectors() / (a.chunk_sectors() * a.data_disks() as u64);
        let mut cache = StripeCache::new(a.clone(), 16, RmwLevel::Enable);
        for write in 0..rows.min(200) {
            let sector = write * a.chunk_sectors() * a.data_disks() as u64 + 8 * (write % 16);
            cache.submit(WriteBio { id: write as u32, sector, sectors: 8, sync: true, plugged: false, submitter: 0 });
            let (r, w) = drain(&mut cache, 0);
            assert_eq!((r, w), (reads * 8, writes * 8), "raid{} on {devices}", level.number());
        }
    }
}

#[test]
fn a_full_row_written_at_once_reads_nothing() {
    let a = array(Level::Raid5, 4, 64);
    let mut cache = StripeCache::new(a, 256, RmwLevel::Enable);
    cache.submit(WriteBio { id: 0, sector: 0, sectors: 3 * 128, sync: true, plugged: false, submitter: 0 });
    assert_eq!(drain(&mut cache, 0), (0, 4 * 128));
}

#[test]
fn a_writer_blocks_when_no_head_is_free_and_resumes() {
    // 8 heads, one per hash list: a write over 16 rows takes the 8, sleeps, and finishes
    // once the first 8 are written and released.
    let mut cache = StripeCache::new(array(Level::Raid5, 4, 64), 8, RmwLevel::Enable);
    cache.submit(WriteBio { id: 0, sector: 0, sectors: 16 * 8, sync: true, plugged: false, submitter: 0 });
    cache.check();
    assert_eq!((cache.active(), cache.waiting()), (8, 1));
    drain(&mut cache, 0);
    let mut done = Vec::new();
    cache.take_completed(&mut done);
    assert_eq!(done, [0]);
    assert_eq!((cache.active(), cache.waiting()), (0, 0));
}

/// Random writes, passes and completions in random order on small caches: the invariants hold
/// after every step and every write completes exactly once.
#[test]
fn randomised_runs_keep_the_invariants() {
    for seed in 0..40u64 {
        let mut rng = Prng::new(seed);
        let level = [Level::Raid4, Level::Raid5, Level::Raid6][rng.below(3) as usize];
        let devices = 4 + rng.below(5) as usize;
        let chunk_kib = [4, 8, 16, 64][rng.below(4) as usize];
        let a = array(level, devices, chunk_kib);
        let failed = if rng.chance(0.3) { 1u64 << rng.below(devices as u64) } else { 0 };
        let entries = 8 + rng.below(40) as u32;
        let rmw = [RmwLevel::Disable, RmwLevel::Enable, RmwLevel::Prefer][rng.below(3) as usize];
        let mut cache = StripeCache::new(a.clone(), entries, rmw);
        let region = (a.capacity_sectors() / 8).min(4096);
        let (mut next_id, mut in_flight, mut out, mut done) = (0u32, Vec::new(), Vec::new(), Vec::new());
        let mut completed = vec![false; 300];
        for _ in 0..2000 {
            match rng.below(4) {
                3 if rng.chance(0.5) => cache.raid5d_idle(),
                3 => cache.unplug(),
                0 if next_id < 300 => {
                    let sector = rng.below(region);
                    let sectors = 1 + rng.below(96.min(region - sector));
                    let plugged = rng.chance(0.5);
                    // A few threads: one asleep for a head holds its later bios back.
                    let submitter = rng.below(4) as u32;
                    cache.submit(WriteBio { id: next_id, sector, sectors, sync: rng.chance(0.5), plugged, submitter });
                    next_id += 1;
                }
                1 => {
                    cache.handle(|_| failed, &mut out);
                    in_flight.append(&mut out);
                }
                _ if !in_flight.is_empty() => {
                    let io: HeadIo = in_flight.swap_remove(rng.below(in_flight.len() as u64) as usize);
                    assert_eq!(io.members & failed, 0, "I/O to a failed member");
                    cache.batch_done(io.batch);
                }
                _ => {}
            }
            cache.check();
            cache.take_completed(&mut done);
            for id in done.drain(..) {
                assert!(!std::mem::replace(&mut completed[id as usize], true), "seed {seed}: write {id} completed twice");
            }
        }
        for io in in_flight.drain(..) {
            cache.batch_done(io.batch);
        }
        cache.unplug();
        drain(&mut cache, failed);
        cache.take_completed(&mut done);
        for id in done.drain(..) {
            assert!(!std::mem::replace(&mut completed[id as usize], true), "seed {seed}: write {id} completed twice");
        }
        assert!(completed[..next_id as usize].iter().all(|&c| c), "seed {seed}: a write never completed");
        assert_eq!((cache.active(), cache.waiting()), (0, 0), "seed {seed}: heads left active");
    }
}

#[test]
fn non_sync_writes_wait_on_the_delayed_list_and_gather() {
    // Two buffered (non-REQ_SYNC) writes to the same row: the first, needing pre-reads, is
    // delayed while a sync head pre-reads (preread_active_stripes >= IO_THRESHOLD); the second
    // joins it meanwhile, and the row is then written whole without reading.
    let mut cache = StripeCache::new(array(Level::Raid5, 4, 64), 256, RmwLevel::Enable);
    cache.submit(WriteBio { id: 0, sector: 8 * 1000, sectors: 8, sync: true, plugged: false, submitter: 0 });
    cache.submit(WriteBio { id: 1, sector: 0, sectors: 8, sync: false, plugged: false, submitter: 0 });
    let mut out = Vec::new();
    cache.handle(|_| 0, &mut out);
    cache.check();
    assert_eq!(out.len(), 1, "only the sync head pre-reads");
    cache.submit(WriteBio { id: 2, sector: 128, sectors: 8, sync: false, plugged: false, submitter: 0 });
    cache.submit(WriteBio { id: 3, sector: 256, sectors: 8, sync: false, plugged: false, submitter: 0 });
    cache.check();
    let first = out.pop().unwrap();
    cache.batch_done(first.batch);
    let (read, written) = drain(&mut cache, 0);
    cache.check();
    // The sync row wrote 2 pages after its pre-read; the gathered row reads nothing.
    assert_eq!((read, written), (0, 2 * 8 + 4 * 8));
    let mut done = Vec::new();
    cache.take_completed(&mut done);
    done.sort();
    assert_eq!(done, [0, 1, 2, 3]);
}

#[test]
fn a_blocked_bio_leaves_whole_heads_behind_it() {
    // raid5 4 x 512 KiB, 16 heads: a 1 MiB write over chunks 0 and 1 of the first row. md adds
    // all of a bio's pages in a head at once (`add_all_stripe_bios`), so the 16 heads it gets
    // before it sleeps hold both data pages, and their rcw reads only the third: 16 pages.
    let mut cache = StripeCache::new(array(Level::Raid5, 4, 512), 16, RmwLevel::Enable);
    cache.submit(WriteBio { id: 0, sector: 0, sectors: 2048, sync: true, plugged: false, submitter: 0 });
    assert_eq!((cache.active(), cache.waiting()), (16, 1));
    let mut out = Vec::new();
    cache.handle(|_| 0, &mut out);
    let read: u64 = out.iter().map(|io| sectors(io).0).sum();
    assert_eq!(read, 16 * 8, "one page read per head");
    assert!(out.iter().all(|io| io.members == 0b100), "only member 2 is read");
}

#[test]
fn writes_larger_than_md_max_sectors_arrive_as_pieces() {
    // raid5 4 x 512 KiB: a 1536 KiB full-stripe write reaches md as 1024 KiB + 512 KiB
    // (RAID5_MAX_REQ_STRIPES); with room for every head the pieces meet and nothing is read.
    let mut cache = StripeCache::new(array(Level::Raid5, 4, 512), 256, RmwLevel::Enable);
    cache.submit(WriteBio { id: 0, sector: 0, sectors: 3072, sync: true, plugged: false, submitter: 0 });
    assert_eq!(drain(&mut cache, 0), (0, 4 * 1024));
    // With 96 heads the first piece (chunks 0 and 1) sleeps after 96 heads, and raid5d handles
    // them with two of three data pages: each reads the third. Unsplit, the bio would have put
    // all three pages in each head (a full-stripe write, no reads).
    let mut cache = StripeCache::new(array(Level::Raid5, 4, 512), 96, RmwLevel::Enable);
    cache.submit(WriteBio { id: 0, sector: 0, sectors: 3072, sync: true, plugged: false, submitter: 0 });
    let mut out = Vec::new();
    cache.handle(|_| 0, &mut out);
    let read: u64 = out.iter().map(|io| sectors(io).0).sum();
    assert_eq!(read, 96 * 8);
    assert!(out.iter().all(|io| io.members == 0b100 && !io.write));
    for io in out.drain(..) {
        cache.batch_done(io.batch);
    }
    drain(&mut cache, 0);
    let mut done = Vec::new();
    cache.take_completed(&mut done);
    assert_eq!(done, [0]);
}

#[test]
fn raid5d_grows_the_cache_by_one_head_when_a_writer_went_without() {
    // R5_ALLOC_MORE / grow_one_stripe at the end of raid5d, then R5_DID_ALLOC until a release.
    let mut cache = StripeCache::new(array(Level::Raid5, 4, 64), 8, RmwLevel::Enable);
    cache.submit(WriteBio { id: 0, sector: 0, sectors: 16 * 8, sync: true, plugged: false, submitter: 0 });
    assert_eq!(cache.waiting(), 1);
    cache.raid5d_idle();
    cache.check();
    assert_eq!(cache.size(), 9, "one head more");
    cache.submit(WriteBio { id: 1, sector: 8 * 4096, sectors: 8, sync: true, plugged: false, submitter: 0 });
    cache.raid5d_idle();
    assert_eq!(cache.size(), 9, "no second head before a release");
    drain(&mut cache, 0);
    cache.check();
    let mut done = Vec::new();
    cache.take_completed(&mut done);
    done.sort();
    assert_eq!(done, [0, 1]);
    cache.raid5d_idle();
    assert_eq!(cache.size(), 9, "nobody went without since");
}

#[test]
fn a_bio_that_starts_mid_chunk_is_walked_from_the_next_chunks_start() {
    // raid5 x4, 16 KiB chunks (4 page slots), left-symmetric: row 0 has data chunks 0-2 on
    // members 0-2 and P on member 3. A plugged bio from slot 2 of chunk 0 to the end of chunk 1
    // runs past chunk 0 and member 1 holds the next chunk, so md walks it from chunk 1's first
    // page (raid5_bio_lowest_chunk_sector): the heads join the plug in slot order 0, 1, 2, 3,
    // not 2, 3, 0, 1 as the bio's own order would have them.
    let mut cache = StripeCache::new(array(Level::Raid5, 4, 16), 256, RmwLevel::Enable);
    cache.submit(WriteBio { id: 0, sector: 16, sectors: 48, sync: true, plugged: true, submitter: 0 });
    let order: Vec<u64> = cache.plug_list.iter().map(|&i| cache.heads[i as usize].sector).collect();
    assert_eq!(order, vec![0, 8, 16, 24]);
    // A bio that fits in its chunk keeps its own order.
    let mut cache = StripeCache::new(array(Level::Raid5, 4, 16), 256, RmwLevel::Enable);
    cache.submit(WriteBio { id: 0, sector: 16, sectors: 16, sync: true, plugged: true, submitter: 0 });
    let order: Vec<u64> = cache.plug_list.iter().map(|&i| cache.heads[i as usize].sector).collect();
    assert_eq!(order, vec![16, 24]);
}
