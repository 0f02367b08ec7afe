//! Fuzzing of the DiskSim readers: arbitrary text and real files with one number
//! mutated must give Ok or an Err, never a panic, through the parameter parser, the importer,
//! the seek-file and trace parsers and a short replay. Bounded: a few hundred cases each.

use proptest::prelude::*;
use raidlab_core::device::disksim::{self, parse};

const MODEL: &str = "dm_disk M {
   Number of data surfaces = 2,
   Number of cylinders = 100,
   Block count = 19000,
   Layout Model = dm_layout_g1 {
      Sparing scheme used = 0, Rangesize for sparing = 0, LBN-to-PBN mapping scheme = 0,
      Zones = [ dm_layout_g1_zone { First cylinder number = 0, Last cylinder number = 49,
         Blocks per track = 100, Offset of first block = 0, Empty space at zone front = 0,
         Skew for track switch = 5, Skew for cylinder switch = 9, Number of spares = 0,
         slips = [], defects = [] },
         dm_layout_g1_zone { First cylinder number = 50, Last cylinder number = 99,
         Blocks per track = 90, Offset of first block = 3, Empty space at zone front = 0,
         Skew for track switch = 4, Skew for cylinder switch = 8, Number of spares = 0,
         slips = [], defects = [] } ]
   },
   Mechanical Model = dm_mech_g1 {
      Seek type = extracted, Full seek curve = m.seek, Head switch time = 0.5,
      Add. write settling delay = 0.1, Rotation speed (in rpms) = 7200, Percent error in rpms = 0
   }
}
";

const DISK: &str = "disksim_disk D {
  Model = source m.model,
  Time scale for overheads = 1, Per-request overhead time = 0.05,
  Bulk sector transfer time = 0.01, Max queue length = 1,
  Enable caching in buffer = 1, Number of buffer segments = 2, Segment size (in blks) = 64,
  Maximum read-ahead (blks) = 32, Buffer continuous read = 3, Fast write level = 2,
  Maximum number of write segments = 1, High (read) water mark = 0.75, Set watermark by reqsize = 1,
  Read completion overhead = 0.01, Write completion overhead = 0.01, Data preparation overhead = 0.02,
  First reselect overhead = 0.03, Read disconnect afterread = 0.04, Read disconnect afterwrite = 0.05,
  Minimum seek delay = 0.1, Hold bus entire write xfer = 0,
  Read hit over. after read = 0.1, Read hit over. after write = 0.1,
  Read miss over. after read = 0.2, Read miss over. after write = 0.2,
  Write hit over. after read = 0.3, Write hit over. after write = 0.3,
  Write miss over. after read = 0.4, Write miss over. after write = 0.4
}
";

const SEEK: &str = "Seek distances measured: 3\n1, 1.0\n10, 3.5\n99, 9.0\n";

const TRACE: &str = "R Miss 100 8 5.0 1000.0\nW Hit 18000 16 663.0 45422.0\nR Hit 0 1 6657.0 0\n";

/// Numbers that have broken parsers: huge, tiny, negative, not-a-number, past every integer width.
fn nasty_number() -> impl Strategy<Value = String> {
    prop_oneof![
        prop::sample::select(vec![
            "1e300", "-1e300", "1e-300", "-1", "-0", "0", "nan", "NaN", "inf", "-inf", "1e15", "1e16",
            "4294967295", "4294967296", "18446744073709551615", "18446744073709551616",
            "99999999999999999999999999", "0x10", "1.5", "", "9007199254740993", "3.6e9", "3600000001",
        ])
        .prop_map(String::from),
        any::<u64>().prop_map(|x| x.to_string()),
        any::<i64>().prop_map(|x| x.to_string()),
        any::<f64>().prop_map(|x| x.to_string()),
        (0u32..2000).prop_map(|x| x.to_string()),
    ]
}

/// The byte ranges of the numbers in `text` (runs of digits, '.', and an exponent).
fn number_spans(text: &str) -> Vec<(usize, usize)> {
    let bytes = text.as_bytes();
    let mut spans = Vec::new();
    let mut i = 0;
    while i < bytes.len() {
        let starts = bytes[i].is_ascii_digit() && (i == 0 || !bytes[i - 1].is_ascii_alphanumeric());
        if !starts {
            i += 1;
            continue;
        }
        let start = i;
        while i < bytes.len() && (bytes[i].is_ascii_digit() || bytes[i] == b'.') {
            i += 1;
        }
        spans.push((start, i));
    }
    spans
}

/// `text` with its `which`-th number (modulo their count) replaced by `by`.
fn mutate(text: &str, which: usize, by: &str) -> String {
    let spans = number_spans(text);
    if spans.is_empty() {
        return text.to_string();
    }
    let (a, b) = spans[which % spans.len()];
    format!("{}{by}{}", &text[..a], &text[b..])
}

/// Imports from the three texts and, when that works, replays `trace` (when it parses).
fn import_and_replay(disk: &str, model: &str, seek: &str, trace: &str) {
    let files = [("d.diskspecs", disk), ("m.model", model), ("m.seek", seek)];
    let imported = disksim::import("d.diskspecs", &mut |name: &str| {
        files.iter().find(|f| f.0 == name).map(|f| f.1.to_string())
    });
    let Ok(imported) = imported else { return };
    if let Ok(records) = disksim::parse_trace("t.trace", trace) {
        let _ = disksim::replay(&imported.spec, &records, None);
    }
}

#[test]
fn the_fuzz_corpus_imports_and_replays() {
    let files = [("d.diskspecs", DISK), ("m.model", MODEL), ("m.seek", SEEK)];
    let imported = disksim::import("d.diskspecs", &mut |name: &str| {
        files.iter().find(|f| f.0 == name).map(|f| f.1.to_string())
    })
    .unwrap();
    let records = disksim::parse_trace("t.trace", TRACE).unwrap();
    assert_eq!(disksim::replay(&imported.spec, &records, None).unwrap().simulated_ms.len(), 3);
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 400, failure_persistence: None, ..ProptestConfig::default() })]

    #[test]
    fn arbitrary_text_never_panics_a_reader(text in "(?s).{0,300}", words in prop::collection::vec("[RW#{}\\[\\],=a-z0-9 .e+-]{0,12}", 0..30)) {
        let joined = words.join(" ");
        for t in [text.as_str(), joined.as_str()] {
            let _ = parse::parse_file("f", t);
            let _ = disksim::parse_trace("t", t);
            let _ = disksim::parse_seek_file("s", t);
            import_and_replay(t, MODEL, SEEK, TRACE);
            import_and_replay(DISK, t, SEEK, TRACE);
        }
    }

    #[test]
    fn mutated_numbers_never_panic_the_importer_or_replay(file in 0usize..4, edits in prop::collection::vec((0usize..1000, nasty_number()), 1..4)) {
        let mut texts = [DISK.to_string(), MODEL.to_string(), SEEK.to_string(), TRACE.to_string()];
        for (which, by) in &edits {
            texts[file] = mutate(&texts[file], *which, by);
        }
        import_and_replay(&texts[0], &texts[1], &texts[2], &texts[3]);
    }

    #[test]
    fn a_mutated_validation_trace_line_is_ok_or_an_error_naming_its_line(which in 0usize..100, by in nasty_number()) {
        let text = mutate(TRACE, which, &by);
        match disksim::parse_trace("t.trace", &text) {
            Ok(records) => prop_assert_eq!(records.len(), 3),
            Err(e) => prop_assert!(e.message.starts_with("t.trace:") && !e.message.contains('\n'), "{}", e.message),
        }
    }
}

#[test]
fn trace_numbers_out_of_range_are_errors_naming_the_line() {
    let cases = [
        ("R Miss 100 8 5.0 1e300\n", "t.trace:1: inter-arrival time '1e300' is not 0 to"),
        ("R Miss 100 8 5.0 1.0\nR Miss 18446744073709551615 8 5.0 1\n", "t.trace:2: LBN '18446744073709551615'"),
        ("R Miss 100 0 5.0 1.0\n", "t.trace:1: size '0' is not 1 to 65536 sectors"),
        ("R Miss 100 8 nan 1.0\n", "t.trace:1: service time 'nan'"),
        ("", "t.trace: trace has no requests"),
        ("# only a comment\n\n", "t.trace: trace has no requests"),
    ];
    for (text, needle) in cases {
        let err = disksim::parse_trace("t.trace", text).unwrap_err();
        assert!(err.message.starts_with(needle), "expected '{needle}' in: {}", err.message);
    }
}

/// Gaps at the per-line cap add up past 2^53 ns only over ~2,500 lines; the replay refuses the
/// arrival that would pass it, naming its line, rather than wrapping the clock.
#[test]
fn arrivals_past_the_replay_limit_are_an_error_not_a_wrapped_clock() {
    let files = [("d.diskspecs", DISK), ("m.model", MODEL), ("m.seek", SEEK)];
    let imported = disksim::import("d.diskspecs", &mut |name: &str| {
        files.iter().find(|f| f.0 == name).map(|f| f.1.to_string())
    })
    .unwrap();
    let text: String = (0..3000).map(|_| "R Miss 100 8 5.0 3600000000\n").collect();
    let records = disksim::parse_trace("t.trace", &text).unwrap();
    let err = disksim::replay(&imported.spec, &records, None).unwrap_err();
    assert!(err.message.starts_with("trace line 2502: the next arrival"), "{}", err.message);
    assert!(disksim::replay(&imported.spec, &records[..2000], None).is_ok());
}

/// Sizes the drive model allocates by, and times, are refused past their bounds with the line
/// that gives them (1e9 segments were taken as given; a time only failed the whole disk block).
#[test]
fn sizes_and_times_are_range_checked_naming_their_line() {
    let cases = [
        ("Number of buffer segments = 2", "Number of buffer segments = 1000000000", "d.diskspecs:5: 'Number of buffer segments' = 1000000000 is out of range: at most 1024"),
        ("Segment size (in blks) = 64", "Segment size (in blks) = 100000000000000", "d.diskspecs:5: 'Segment size (in blks)' = 100000000000000 is out of range"),
        ("Maximum number of write segments = 1", "Maximum number of write segments = 100000000000000", "d.diskspecs:7: 'Maximum number of write segments'"),
        ("Read hit over. after read = 0.1", "Read hit over. after read = 5000", "d.diskspecs:11: 'Read hit over. after read' = 5000 is out of range: 0 to 1000"),
        ("Bulk sector transfer time = 0.01", "Bulk sector transfer time = -1", "d.diskspecs:4: 'Bulk sector transfer time' = -1 is out of range"),
    ];
    for (from, to, needle) in cases {
        let disk = DISK.replace(from, to);
        let files = [("d.diskspecs", disk.as_str()), ("m.model", MODEL), ("m.seek", SEEK)];
        let err = disksim::import("d.diskspecs", &mut |name: &str| files.iter().find(|f| f.0 == name).map(|f| f.1.to_string())).unwrap_err();
        assert!(err.message.starts_with(needle), "expected '{needle}' in: {}", err.message);
    }
}
