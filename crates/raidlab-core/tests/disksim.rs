//! DiskSim import and validation-trace replay on the five drives in data/disksim-valid
//! (DiskSim 4.0 validated models, WD fork; see that directory's README).

use std::path::{Path, PathBuf};

use raidlab_core::device::disksim::{self, Imported};
use raidlab_core::device::hdd::{ReadAheadBound, SeekSpec};
use raidlab_core::ErrorKind;

const DRIVES: &[(&str, &str)] = &[
    ("atlas10k", "atlas10k.parv"),
    ("cheetah9LP", "cheetah9LP.parv"),
    ("ibm18es", "ibm18es.parv"),
    ("hp_c2247a", "hp_c2247a.parv"),
    ("dec_rz26", "dec_rz26.parv"),
];

fn data_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../data/disksim-valid")
}

fn import_file(entry: &str) -> raidlab_core::Result<Imported> {
    let dir = data_dir();
    disksim::import(entry, &mut |name: &str| std::fs::read_to_string(dir.join(name)).ok())
}

fn import_texts(entry: &str, files: &[(&str, &str)]) -> raidlab_core::Result<Imported> {
    disksim::import(entry, &mut |name: &str| {
        files.iter().find(|f| f.0 == name).map(|f| f.1.to_string())
    })
}

#[test]
fn imports_the_five_validated_drives() {
    for (stem, parv) in DRIVES {
        let via_parv = import_file(parv).unwrap_or_else(|e| panic!("{parv}: {e}"));
        let via_specs = import_file(&format!("{stem}.diskspecs")).unwrap();
        // The .parv adds the buses' transfer times; everything else must agree.
        let (mut a, mut b) = (via_parv.spec.clone(), via_specs.spec.clone());
        (a.interface_mb_s, a.interface, a.bus.write_mb_s) = (0.0, String::new(), None);
        (b.interface_mb_s, b.interface, b.bus.write_mb_s) = (0.0, String::new(), None);
        assert_eq!(a, b, "{stem}: .parv and .diskspecs disagree");
        let s = &via_parv.spec;
        s.validate().unwrap();
        assert_eq!(s.queue_depth, 1, "{stem}: validated with one command at a time");
        assert!(!via_parv.warnings.is_empty(), "{stem}: unmodelled parameters must be listed");
        assert!(!via_parv.warnings.iter().any(|w| w.contains("sparing scheme")), "{stem}: {:#?}", via_parv.warnings);
        println!("{stem}: {} zones, {} rpm, {} warnings", s.zones.len(), s.rpm, via_parv.warnings.len());
    }
    let atlas = import_file("atlas10k.parv").unwrap();
    let s = &atlas.spec;
    assert_eq!(atlas.name, "QUANTUM_TORNADO_validate");
    // The zones hold 17,966,953 LBNs (DiskSim's checknumblocks overrides 'Block count').
    assert_eq!((s.rpm, s.surfaces, s.capacity_sectors), (10025.0, 6, 17_966_953));
    assert!(atlas.warnings.iter().any(|w| w.contains("'Block count' = 17938986 but the zones hold 17966953")));
    assert_eq!(s.zones.len(), 24);
    assert_eq!(s.zones[0].sectors_per_track, 334);
    assert_eq!((s.zones[0].track_skew_sectors, s.zones[0].cylinder_skew_sectors), (63, 113));
    assert_eq!(s.cylinders(), 10042);
    assert!(matches!(&s.seek, SeekSpec::Table(p) if p.len() == 138 && p[0] == (1, 1.245)));
    assert!((s.head_switch_ms - 0.176).abs() < 1e-12 && (s.write_settle_ms - 0.487).abs() < 1e-12);
    assert!(s.write_cache && s.cache_segments == 10 && s.cache_segment_sectors == 374);
    // "Buffer continuous read" = 4: to the end of the next track, whatever the maximum says.
    assert_eq!((s.buffer.read_ahead_bound, s.read_ahead_sectors), (ReadAheadBound::NextTrack, 374));
    assert!((s.interface_mb_s - 0.512 / 0.099).abs() < 1e-9);
    assert!(s.buffer.read_free_blocks && s.buffer.zero_latency_reads && s.buffer.zero_latency_writes && !s.buffer.read_ahead_on_idle_hit);
    assert!(s.buffer.writes_share_segments && s.buffer.read_hits_on_write_data);
    assert!(!atlas.warnings.iter().any(|w| w.contains("Read any free blocks")), "{:#?}", atlas.warnings);
    // HPL + first ten seek times (HP C2247A): d = 1 from the table, d = 300 from the linear law.
    let hp = import_file("hp_c2247a.parv").unwrap();
    let curve = hp.spec.seek_curve().unwrap();
    assert!((curve.ms(1) - 2.89).abs() < 1e-9);
    assert!((curve.ms(100) - (3.81 + 0.33 * 10.0)).abs() < 1e-9);
    assert!((curve.ms(1000) - (7.75 + 0.0059 * 1000.0)).abs() < 1e-9);
    assert!(!hp.spec.write_cache);
    // The .parv's disk-side bus (0.17010 ms per block read, 0.18686 written) sets the rates.
    assert!((hp.spec.interface_mb_s - 0.512 / 0.17010).abs() < 1e-9);
    let bus = &hp.spec.bus;
    assert!((bus.write_mb_s.unwrap() - 0.512 / 0.18686).abs() < 1e-9);
    assert_eq!((bus.reselect_ms, bus.data_prep_ms), (0.16249, 0.02519));
    assert_eq!((bus.read_completion_ms, bus.write_completion_ms), (0.05665, 0.05045));
    assert_eq!((bus.read_disconnect_ms, bus.min_write_seek_ms, bus.write_start_sectors), ([0.02266, 0.04551], 0.6, 10));
    // Completion overheads come after the data, not before the seek.
    assert_eq!((hp.spec.overhead_ms_read, hp.spec.overhead_ms_write), (0.55821, 0.82391));
    // DEC RZ26: the negative write settle is kept (writes settle faster than reads) and
    // shortens write moves, which never become negative.
    let dec = import_file("dec_rz26.parv").unwrap();
    assert!((dec.spec.write_settle_ms + 0.483).abs() < 1e-12);
    // It holds the bus for whole writes: their data is all in before the media write starts.
    assert_eq!((dec.spec.bus.write_start_sectors, dec.spec.bus.write_completion_ms), (0, 0.113));
    assert!(!dec.warnings.iter().any(|w| w.contains("write settling delay")));
}

/// LBN → (cylinder, head, physical sector, skewed slot) as DiskSim 4.0 itself maps them: printed
/// by a small C program linked against the built DiskSim's diskmodel library (WD fork,
/// STABLE/DiskSim_Linux_Generic_2.01.016) calling `dm_translate_ltop(.., MAP_FULL, ..)` and
/// `dm_pbn_skew` (slot = angle × blocks per track / 2^32, rounded). Chosen at the first and last
/// LBNs, zone boundaries, on either side of a slip, and for atlas10k the first cylinder switch
/// (surfaces reversed on odd cylinders).
const DISKSIM_MAPPINGS: &[(&str, &[(u64, u32, u32, u32, u32)])] = &[
    // Sparing scheme 9 (spares per zone), mapping scheme 1; slip 55017 in zone 0.
    ("atlas10k", &[
        (0, 0, 0, 0, 0), (2003, 0, 5, 333, 314), (2004, 1, 5, 0, 94), (55016, 27, 3, 240, 232),
        (55017, 27, 3, 242, 234), (867642, 432, 5, 249, 90), (867643, 433, 0, 0, 0),
        (17966952, 10041, 4, 228, 151),
    ]),
    // Scheme 9; slip 168317 in zone 0.
    ("cheetah9LP", &[
        (0, 0, 0, 0, 0), (168316, 55, 2, 168, 68), (168317, 55, 2, 170, 70),
        (2580385, 846, 7, 33, 166), (2580386, 848, 0, 0, 0), (17918386, 6961, 10, 166, 48),
    ]),
    // Scheme 7 (slips to the end); 1950 sectors of empty space, slip 199078 in zone 0.
    ("ibm18es", &[
        (0, 1, 0, 0, 333), (197127, 102, 0, 177, 213), (197128, 102, 0, 179, 215),
        (499196, 256, 4, 389, 69), (499197, 258, 0, 0, 0), (18033752, 11473, 4, 246, 171),
    ]),
    // Scheme 1 (spare tracks); 17 tracks of empty space, track 468 slipped in zone 0.
    ("hp_c2247a", &[
        (0, 1, 4, 0, 64), (43295, 35, 12, 95, 63), (43296, 36, 1, 0, 14), (664799, 534, 9, 95, 77),
        (664800, 559, 0, 0, 14), (2054863, 2046, 1, 55, 10),
    ]),
    // Scheme 3 (one spare per track: 57 of 58 sectors hold LBNs); 406 tracks of empty space.
    ("dec_rz26", &[(0, 29, 0, 0, 0), (56, 29, 0, 56, 56), (57, 29, 1, 0, 7), (2050859, 2598, 13, 56, 31)]),
];

#[test]
fn lbns_map_to_the_places_disksim_maps_them_to() {
    for (stem, expected) in DISKSIM_MAPPINGS {
        let geo = import_file(&format!("{stem}.parv")).unwrap().spec.geometry().unwrap();
        for &(lba, cylinder, head, sector, slot) in expected.iter() {
            let l = geo.locate(lba);
            assert_eq!((l.cylinder, l.head, l.physical_sector, l.slot), (cylinder, head, sector, slot), "{stem} LBN {lba}");
        }
        assert_eq!(geo.capacity_sectors(), expected.last().unwrap().0 + 1, "{stem}: capacity");
    }
    // A slip or a spare ends the run of consecutive sectors before it.
    let atlas = import_file("atlas10k.parv").unwrap().spec.geometry().unwrap();
    let (before, after) = (atlas.locate(55016), atlas.locate(55017));
    assert_eq!((before.contiguous(), before.left_on_track()), (1, 334 - 240 - 1), "slot 241 is slipped");
    assert_eq!((after.sector, after.physical_sector), (240 + 1, 242), "one LBN before it on the track");
    let dec = import_file("dec_rz26.parv").unwrap().spec.geometry().unwrap();
    assert_eq!(dec.locate(0).left_on_track(), 57, "the 58th slot is the track's spare");
}

#[test]
fn bad_sparing_data_names_the_file_and_zone() {
    let spared = |scheme: &str, zone_extra: &str| {
        MODEL
            .replace("Zones = [", &format!("Sparing scheme used = {scheme},\n      Zones = ["))
            .replace("Skew for cylinder switch = 9", &format!("Skew for cylinder switch = 9, {zone_extra}"))
    };
    let files = |m: &str| -> Vec<(&'static str, String)> {
        vec![("d.diskspecs", DISK.into()), ("m.model", m.into()), ("m.seek", SEEK.into())]
    };
    for (model, needle) in [
        (spared("9", "Number of spares = 1, slips = [5, 9]"), "m.model:7: zone 0: 2 slips exceed the 1 spares"),
        (spared("9", "Number of spares = 2, slips = [5, 5]"), "m.model:8: zone 0: a slip is listed twice"),
        (spared("3", "Number of spares = 100"), "m.model:7: zone 0: 100 spares per track leave no sector"),
        (spared("1", "Number of spares = 300"), "m.model:7: zone 0: 300 spares and 0 sectors of empty space exceed the zone"),
    ] {
        let f = files(&model);
        let refs: Vec<(&str, &str)> = f.iter().map(|(a, b)| (*a, b.as_str())).collect();
        expect_error(&refs, needle);
    }
    // An unmodelled scheme keeps the plain layout and says so.
    let m = spared("8", "Number of spares = 1");
    let got = import_texts("d.diskspecs", &[("d.diskspecs", DISK), ("m.model", &m), ("m.seek", SEEK)]).unwrap();
    assert!(got.warnings.iter().any(|w| w.contains("sparing scheme 8 (rangesize 0) not modelled")), "{:#?}", got.warnings);
    assert_eq!(got.spec.capacity_sectors, 20000);
}

const MODEL: &str = "dm_disk M {
   Number of data surfaces = 2,
   Number of cylinders = 100,
   Block count = 20000,
   Layout Model = dm_layout_g1 {
      Zones = [ dm_layout_g1_zone { First cylinder number = 0, Last cylinder number = 99,
         Blocks per track = 100, Skew for track switch = 5, Skew for cylinder switch = 9 } ]
   },
   Mechanical Model = dm_mech_g1 {
      Seek type = extracted, Full seek curve = m.seek, Head switch time = 0.5,
      Rotation speed (in rpms) = 7200
   }
}
";

const DISK: &str = "disksim_disk D {
  Model = source m.model,
  Bulk sector transfer time = 0.01,
  Max queue length = 1,
  Number of buffer segments = 2,
  Segment size (in blks) = 64,
  Fast write level = 0,
  Read hit over. after read = 0.1, Read hit over. after write = 0.1,
  Read miss over. after read = 0.2, Read miss over. after write = 0.2,
  Write hit over. after read = 0.3, Write hit over. after write = 0.3,
  Write miss over. after read = 0.4, Write miss over. after write = 0.4,
  Mystery knob = 7
}
";

const SEEK: &str = "Seek distances measured: 2\n1, 1.0\n99, 9.0\n";

#[test]
fn a_minimal_spec_imports_and_lists_unknown_parameters() {
    let got = import_texts("d.diskspecs", &[("d.diskspecs", DISK), ("m.model", MODEL), ("m.seek", SEEK)]).unwrap();
    assert_eq!(got.spec.capacity_sectors, 20000);
    assert!((got.spec.overhead_ms_write - 0.4).abs() < 1e-12);
    assert!(got.warnings.iter().any(|w| w.contains("'Mystery knob' = 7 is not modelled")), "{:#?}", got.warnings);
}

fn expect_error(files: &[(&str, &str)], needle: &str) {
    let err = import_texts(files[0].0, files).unwrap_err();
    assert_eq!(err.kind, ErrorKind::InvalidDevice);
    assert!(!err.message.contains('\n'), "one line: {}", err.message);
    assert!(err.message.contains(needle), "expected '{needle}' in: {}", err.message);
}

#[test]
fn malformed_specs_name_the_file_and_line() {
    // Missing '=' on line 3 of the disk spec.
    let broken = DISK.replace("Bulk sector transfer time = 0.01", "Bulk sector transfer time 0.01");
    expect_error(&[("d.diskspecs", &broken), ("m.model", MODEL), ("m.seek", SEEK)], "d.diskspecs:3:");
    // Unclosed block in the model (reported at end of file, naming where it opened).
    let unclosed = MODEL.trim_end().trim_end_matches('}');
    expect_error(&[("d.diskspecs", DISK), ("m.model", unclosed), ("m.seek", SEEK)], "m.model:");
    // A word where a number is needed, line 4 of the model.
    let wordy = MODEL.replace("Block count = 20000", "Block count = lots");
    expect_error(&[("d.diskspecs", DISK), ("m.model", &wordy), ("m.seek", SEEK)], "m.model:4:");
    // A bad seek-curve line.
    expect_error(&[("d.diskspecs", DISK), ("m.model", MODEL), ("m.seek", "Seek distances measured: 2\n1, 1.0\nfar, 9\n")], "m.seek:3:");
    // A missing include names the line that sources it.
    expect_error(&[("d.diskspecs", DISK)], "d.diskspecs:2: cannot read 'm.model'");
    // Stray closing bracket.
    expect_error(&[("d.diskspecs", "disksim_disk D { Model = ] }")], "d.diskspecs:1:");
}

/// DiskSim's own demerit on each validation trace (data/disksim-valid/README.md).
fn published_ms(stem: &str) -> f64 {
    match stem {
        "atlas10k" => 0.268,
        "cheetah9LP" => 0.107,
        "ibm18es" => 0.135,
        "hp_c2247a" => 0.090,
        "dec_rz26" => 0.340,
        other => panic!("no published demerit for {other}"),
    }
}

#[test]
fn replays_validation_traces_within_a_quarter_of_disksims_demerit() {
    for (stem, parv) in DRIVES {
        let imported = import_file(parv).unwrap();
        let text = std::fs::read_to_string(data_dir().join(format!("{stem}.trace"))).unwrap();
        let records = disksim::parse_trace(&format!("{stem}.trace"), &text).unwrap();
        let n = records.len();
        let result = disksim::replay(&imported.spec, &records[..n], None).unwrap();
        let demerit = result.demerit_ms(10_000);
        // The bound the import must meet: at most 1.25 × DiskSim's own demerit on the same trace.
        assert!(demerit <= 1.25 * published_ms(stem), "{stem}: demerit {demerit} ms");
        println!(
            "{stem}: {n} requests, measured mean {:.3} ms, simulated {:.3} ms, demerit {:.3} ms",
            result.mean_measured_ms(),
            result.mean_simulated_ms(),
            demerit
        );
    }
}

#[test]
fn demerit_is_zero_for_identical_and_the_shift_for_shifted_samples() {
    let a: Vec<f64> = (0..1000).map(|i| i as f64 / 100.0).collect();
    let b: Vec<f64> = a.iter().map(|x| x + 0.5).collect();
    assert_eq!(disksim::demerit_ms(&a, &a, 10_000), 0.0);
    assert!((disksim::demerit_ms(&a, &b, 10_000) - 0.5).abs() < 1e-9);
}

/// DiskSim's atlas_III lists some slips out of order; DiskSim takes them and counts them in the
/// file's order (`g1_ltop_sectperzonespare`). The drive imports and replays its validation trace
/// within 1.25 × DiskSim's own demerit (0.378 ms, valid/runvalid).
#[test]
fn atlas_iii_with_unsorted_slips_imports_and_replays() {
    let imported = import_file("atlas_III.parv").unwrap();
    let geometry = imported.spec.geometry().unwrap();
    // Zone 1's slips end "..., 2773980, 594314, 596834, 586755, ...": every LBN still maps
    // inside the zone and LBNs keep their order along the zone.
    let mut last = None;
    for lba in (400_000..700_000).step_by(997) {
        let location = geometry.locate(lba);
        let place = (location.cylinder, location.head);
        if let Some(previous) = last {
            assert!(place >= previous, "LBN {lba} maps before the LBN before it");
        }
        last = Some(place);
    }
    let text = std::fs::read_to_string(data_dir().join("atlas_III.trace")).unwrap();
    let records = disksim::parse_trace("atlas_III.trace", &text).unwrap();
    let demerit = disksim::replay(&imported.spec, &records, None).unwrap().demerit_ms(10_000);
    assert!(demerit <= 1.25 * 0.378, "atlas_III: demerit {demerit} ms");
}
