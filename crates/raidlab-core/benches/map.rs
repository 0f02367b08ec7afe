//! Logical → physical mapping throughput for raid5, raid6 and raid10 (issue target: at least
//! 50 million maps per second per core). Each iteration maps a batch of 4096 pseudo-random
//! sectors spread over a 6-drive array of 4 TB members with md's default 512 KiB chunk.

use criterion::{black_box, criterion_group, criterion_main, Criterion, Throughput};
use raidlab_core::layout::{Array, ArraySpec, Copies, Layout, Level};

const BATCH: usize = 4096;

fn array(level: Level, layout: &str) -> Array {
    let spec = ArraySpec {
        level,
        layout: Some(Layout::parse(level, layout).unwrap()),
        chunk_kib: 512,
        member_kib: vec![4_000_000_000_000 / 1024; 6],
    };
    Array::new(&spec).unwrap()
}

/// Sectors from a fixed multiplicative sequence, so every run maps the same addresses.
fn sectors(capacity: u64) -> Vec<u64> {
    let mut x = 0x9e37_79b9_7f4a_7c15u64;
    (0..BATCH)
        .map(|_| {
            x = x.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
            (x >> 11) % capacity
        })
        .collect()
}

fn bench_maps(c: &mut Criterion) {
    let mut group = c.benchmark_group("map");
    group.throughput(Throughput::Elements(BATCH as u64));
    let cases = [
        ("raid5_left_symmetric", Level::Raid5, "left-symmetric"),
        ("raid6_left_symmetric", Level::Raid6, "left-symmetric"),
        ("raid10_n2", Level::Raid10, "n2"),
        ("raid10_f2", Level::Raid10, "f2"),
        ("raid10_o2", Level::Raid10, "o2"),
    ];
    for (name, level, layout) in cases {
        let array = array(level, layout);
        let inputs = sectors(array.capacity_sectors());
        group.bench_function(format!("{name}/primary"), |b| {
            b.iter(|| {
                let mut sum = 0u64;
                for &s in &inputs {
                    let l = array.map_primary(black_box(s));
                    sum = sum.wrapping_add(l.sector ^ l.member as u64);
                }
                sum
            })
        });
        let mut copies = Copies::new();
        group.bench_function(format!("{name}/all_copies"), |b| {
            b.iter(|| {
                let mut sum = 0u64;
                for &s in &inputs {
                    array.map(black_box(s), &mut copies);
                    sum = sum.wrapping_add(copies.as_slice()[copies.len() - 1].sector);
                }
                sum
            })
        });
    }
    group.finish();
}

criterion_group! {
    name = benches;
    config = Criterion::default().sample_size(20).measurement_time(std::time::Duration::from_secs(2));
    targets = bench_maps
}
criterion_main!(benches);
