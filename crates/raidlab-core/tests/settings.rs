//! The run settings' one declaration (`raidlab_core::settings`): each name declared once, the
//! core's defaults equal to the declared ones, and each range check drawn where declared.

use raidlab_core::layout::{ArraySpec, Level};
use raidlab_core::settings::{self, controller, run, Given, Kind, Number, Setting, Value, CONTROLLER_SETTINGS, RUN_SETTINGS};
use raidlab_core::sim::controller::{CommandOrder, MirrorReads, ReadAheadPolicy, WritePolicy};
use raidlab_core::sim::engine::{ControllerConfig, HwConfig, MdConfig, QueueDepths, RebuildConfig, SimConfig};
use raidlab_core::sim::pagecache::PageCacheConfig;
use raidlab_core::sim::workload::Workload;
use std::collections::BTreeSet;

fn unique(table: &[Setting]) -> Vec<&'static str> {
    let mut seen = BTreeSet::new();
    table.iter().filter(|s| !seen.insert(s.name)).map(|s| s.name).collect()
}

#[test]
fn every_setting_is_declared_once() {
    assert_eq!(unique(RUN_SETTINGS), Vec::<&str>::new(), "run settings declared twice");
    assert_eq!(unique(CONTROLLER_SETTINGS), Vec::<&str>::new(), "controller parameters declared twice");
}

#[test]
fn every_declaration_is_complete_and_consistent() {
    for s in RUN_SETTINGS.iter().chain(CONTROLLER_SETTINGS) {
        assert!(!s.name.is_empty() && !s.doc.is_empty(), "{}: a name and a doc", s.name);
        let numeric = matches!(s.kind, Kind::Int | Kind::Float);
        assert_eq!(numeric, s.min.is_some() && s.max.is_some(), "{}: numbers and only numbers have a range", s.name);
        assert_eq!(s.kind == Kind::Choice, !s.choices.is_empty(), "{}: choices and only choices list them", s.name);
        match (s.kind, s.default) {
            (Kind::Int, Value::Int(v)) => assert!(s.check(v as f64).is_ok(), "{}: default in range", s.name),
            (Kind::Float, Value::Float(v)) => assert!(s.check(v).is_ok(), "{}: default in range", s.name),
            (Kind::Float, Value::Absent) => {}
            (Kind::Bool, Value::Bool(_)) => {}
            (Kind::Choice, Value::Text(v)) => assert!(s.choice_index(v).is_some(), "{}: default is a choice", s.name),
            (Kind::Text | Kind::Structured, _) => {}
            (kind, default) => panic!("{}: a {kind:?} setting with default {default:?}", s.name),
        }
    }
    let scopes: BTreeSet<&str> = RUN_SETTINGS.iter().map(|s| s.scope.name()).collect();
    assert_eq!(scopes, BTreeSet::from(["design", "options"]));
    assert!(CONTROLLER_SETTINGS.iter().all(|s| s.scope.name() == "controller"));
}

/// A number just outside the range: one below/above for whole numbers, the next representable
/// real for real ones.
fn outside(s: &Setting, bound: Number, below: bool) -> f64 {
    let v = bound.as_f64();
    match (s.kind, below) {
        (Kind::Int, true) => v - 1.0,
        (Kind::Int, false) => v + 1.0 + v * f64::EPSILON, // past u64::MAX's rounding too
        (_, true) => v - v.abs().max(1e-300) * 1e-9,
        (_, false) => v + v.abs().max(1e-300) * 1e-9,
    }
}

#[test]
fn each_range_check_accepts_its_ends_and_rejects_just_past_them() {
    for s in RUN_SETTINGS.iter().chain(CONTROLLER_SETTINGS).filter(|s| s.min.is_some()) {
        let (min, max) = (s.min.unwrap(), s.max.unwrap());
        assert!(s.check(min.as_f64()).is_ok(), "{} accepts its minimum", s.name);
        assert!(s.check(max.as_f64()).is_ok(), "{} accepts its maximum", s.name);
        for (bound, below) in [(min, true), (max, false)] {
            let past = outside(s, bound, below);
            let error = s.check(past).expect_err(&format!("{} refuses {past}", s.name));
            assert!(error.message.starts_with(&format!("{} = ", s.name)), "{}: {}", s.name, error.message);
            assert!(error.message.contains(&format!("expected {min} to {max}")), "{}", error.message);
        }
        assert!(s.check(f64::NAN).is_err() && s.check(f64::INFINITY).is_err(), "{} refuses non-finite", s.name);
        if s.kind == Kind::Int && max.as_f64() - min.as_f64() >= 1.0 {
            assert!(s.check(min.as_f64() + 0.5).is_err(), "{} refuses a fraction", s.name);
        }
    }
}

#[test]
fn a_run_built_by_the_core_has_the_declared_defaults() {
    let array = ArraySpec { level: Level::Raid5, layout: None, chunk_kib: 512, member_kib: vec![1 << 20; 4] };
    let config = SimConfig::new(array, Workload { jobs: vec![] });
    // What users of `raidlab sim` get: nr_requests 128 (BLKDEV_DEFAULT_RQ), 2 billion events.
    assert_eq!((config.queue_limits.nr_requests, config.queue_limits.max_sectors), (128, 2560));
    assert_eq!(config.max_events, 2_000_000_000);
    assert_eq!(config.seed, run::SEED.default_int());
    assert_eq!(config.max_time_ns as f64, run::MAX_TIME_S.default_float() * 1e9);
    assert_eq!(run::SCHEDULER.default_text(), "mq-deadline");
    assert!(format!("{:?}", config.scheduler).starts_with("MqDeadline"));
    assert_eq!(config.latency_by_second, run::LATENCY_BY_SECOND.default_bool());
    assert_eq!(config.drive_faults.command_timeout_ns as f64, run::COMMAND_TIMEOUT_S.default_float() * 1e9);
    assert_eq!(config.queues, QueueDepths { drive_queue_depth: run::DRIVE_QUEUE_DEPTH.default_int() as u32 });
    assert_eq!(config.controller, ControllerConfig::Md(MdConfig::default()));
    assert!(config.failed.is_empty() && config.timeline.is_empty());
}

#[test]
fn md_and_rebuild_defaults_are_the_declared_ones() {
    let md = MdConfig::default();
    assert_eq!(md.stripe_cache_size as u64, run::STRIPE_CACHE_SIZE.default_int());
    assert_eq!(md.group_thread_cnt as u64, run::GROUP_THREAD_CNT.default_int());
    assert_eq!(md.skip_copy, run::SKIP_COPY.default_bool());
    assert_eq!(md.preread_bypass_threshold as u64, run::PREREAD_BYPASS_THRESHOLD.default_int());
    assert_eq!(md.preread_bypass_threshold, raidlab_core::sim::md::stripe_cache::BYPASS_THRESHOLD);
    assert_eq!(Some(md.rmw_level), raidlab_core::sim::engine::config::rmw_level(run::RMW_LEVEL.default_int()));
    let rebuild = RebuildConfig::default();
    assert_eq!(rebuild.speed_limit_min, run::SPEED_LIMIT_MIN.default_int());
    assert_eq!(rebuild.speed_limit_max, run::SPEED_LIMIT_MAX.default_int());
    assert_eq!(rebuild.spare, run::SPARE.default_bool());
    assert_eq!(rebuild.rebuild_priority as u64, run::REBUILD_PRIORITY.default_int());
    assert_eq!(rebuild.start_ppm, 0);
}

#[test]
fn the_page_cache_defaults_are_the_declared_ones() {
    let cache = PageCacheConfig::default();
    assert_eq!(cache.ram_bytes as f64, run::RAM_GIB.default_float() * (1u64 << 30) as f64);
    assert_eq!(cache.dirty_ratio as u64, run::DIRTY_RATIO.default_int());
    assert_eq!(cache.dirty_background_ratio as u64, run::DIRTY_BACKGROUND_RATIO.default_int());
    assert_eq!(cache.dirty_expire_ns, run::DIRTY_EXPIRE_CENTISECS.default_int() * 10_000_000);
    assert_eq!(cache.dirty_writeback_ns, run::DIRTY_WRITEBACK_CENTISECS.default_int() * 10_000_000);
    assert_eq!(cache.read_ahead_kb as u64, run::READ_AHEAD_KB.default_int());
}

#[test]
fn the_generic_controller_is_the_declared_defaults() {
    let hw = HwConfig::default();
    // The generic controller's values, as they were before the declaration drove them.
    assert_eq!((hw.cache_bytes, hw.bbu, hw.read_ahead), (256 << 20, true, false));
    assert_eq!((hw.command_overhead_ns, hw.cache_bytes_per_second), (30_000, 1_000_000_000));
    assert_eq!((hw.destage_start_fraction, hw.destage_stop_fraction, hw.destage_concurrency), (0.10, 0.10, 16));
    assert_eq!((hw.write_policy, hw.read_ahead_policy), (WritePolicy::WriteBack, ReadAheadPolicy::None));
    assert_eq!((hw.mirror_reads, hw.command_order), (MirrorReads::Nearest, CommandOrder::Fifo));
    assert_eq!((hw.commands_per_drive, hw.commands_total, hw.host_queue_depth, hw.command_iops, hw.channels), (0, 0, 0, 0, 0));
    assert_eq!((hw.host_link_bytes_per_second, hw.channel_bytes_per_second), (0, 0));
    assert_eq!((hw.xor_bytes_per_second, hw.cache_memory_bytes_per_second, hw.read_cache_fraction), (0, 0, 0.0));
    assert_eq!((hw.learn_start_ns, hw.learn_duration_ns, hw.learn_keeps_write_back), (0, 0, false));
}

#[test]
fn a_run_setting_standing_for_a_controller_parameter_agrees_with_it() {
    for (option, param) in [
        (run::CACHE_MIB, controller::CACHE_MIB),
        (run::BBU, controller::BBU),
        (run::DRIVE_QUEUE_DEPTH, controller::DRIVE_QUEUE_DEPTH),
        (run::REBUILD_PRIORITY, controller::REBUILD_RATE_PCT),
    ] {
        assert_eq!((option.default, option.min, option.max), (param.default, param.min, param.max), "{}", option.name);
    }
}

#[test]
fn a_controller_parameter_is_checked_by_its_declaration() {
    let mut hw = HwConfig::default();
    assert!(hw.set("commands_per_drive", Given::Number(8.0)).unwrap());
    assert_eq!(hw.commands_per_drive, 8);
    let error = hw.set("commands_per_drive", Given::Number(-1.0)).unwrap_err();
    assert_eq!(error.message, "commands_per_drive = -1 is out of range: expected 0 to 65536 commands");
    let error = hw.set("write_policy", Given::Text("sometimes")).unwrap_err();
    assert_eq!(error.message, "write_policy 'sometimes': expected one of write-back, write-through, always-write-back");
    assert!(hw.set("no_such_knob", Given::Number(1.0)).is_err());
    assert!(hw.set("bbu", Given::Number(1.0)).is_err(), "a flag is not a number");
    // Parameters held elsewhere in the run's configuration are checked but not kept here.
    assert!(!hw.set("rebuild_rate_pct", Given::Number(50.0)).unwrap());
    assert!(hw.set("rebuild_rate_pct", Given::Number(0.0)).is_err());
    assert!(hw.set("host_link_mb_s", Given::Number(0.0000001)).unwrap());
    assert_eq!(hw.host_link_bytes_per_second, 1, "a positive rate never rounds to no limit");
}

#[test]
fn lookups_find_each_declaration_by_its_name() {
    for s in RUN_SETTINGS {
        assert_eq!(settings::run_setting(s.name), Some(s));
    }
    for s in CONTROLLER_SETTINGS {
        assert_eq!(settings::controller_setting(s.name), Some(s));
    }
    assert_eq!(settings::run_setting("stripe_cache_entries"), None);
}
