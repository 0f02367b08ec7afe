//! Glue for the simulator: a Python dict becomes a core `SimConfig` (and drives), a core
//! `SimResult` becomes a Python dict. No simulation logic lives here.

use crate::dict::{field, item, sub};
use crate::errors::{self, config_error};
use pyo3::prelude::*;
use pyo3::types::{PyBool, PyDict, PyList, PyString};
use raidlab_core::device::catalog::DriveChoice;
use raidlab_core::device::params::ParamValues;
use raidlab_core::layout::{ArraySpec, Layout};
use raidlab_core::plan::ReadBalance;
use raidlab_core::rng::Prng;
use raidlab_core::settings::{run, Given, Setting};
use raidlab_core::sim::engine::config::{
    centisecs_ns, member_data_kib, member_device_sectors, partition_bytes, pct_ppm, ram_bytes, rmw_level, seconds_ns,
};
use raidlab_core::sim::engine::{
    ArrayEvent, ArrayEventKind, ControllerConfig, DirectionStats, HwConfig, MdConfig, QueueDepths, RebuildConfig, SimConfig,
    SimResult, Simulation,
};
use raidlab_core::sim::engine::DriveFaults;
use raidlab_core::sim::histogram::Histogram;
use raidlab_core::sim::steady::{SteadyMetric, SteadyState};
use raidlab_core::sim::pagecache::{PageCacheConfig, PageCacheStats};
use raidlab_core::sim::block::sched::{QueueLimits, SchedulerKind};
use raidlab_core::sim::workload::{Cursor, Distribution, FsyncScope, Job, MixChoice, Workload};

fn job_from(dict: &Bound<'_, PyDict>, sysbench: bool) -> PyResult<Job> {
    let distribution = sub(dict, "distribution")?;
    let kind: String = field(&distribution, "kind")?;
    let distribution = match kind.as_str() {
        "uniform" => Distribution::Uniform,
        "zipf" => Distribution::Zipf { theta: field(&distribution, "theta")? },
        "pareto" => Distribution::Pareto { h: field(&distribution, "h")? },
        "normal" => Distribution::Normal { stddev_pct: field(&distribution, "stddev_pct")? },
        other => return Err(config_error(format!("unknown distribution '{other}'"))),
    };
    let cursor: String = field(dict, "sequential_cursor")?;
    let scope: String = field(dict, "fsync_scope")?;
    let arrival: String = field(dict, "arrival")?;
    let pairs: Vec<Vec<u64>> = field(dict, "block_sizes")?;
    let mut block_sizes = Vec::with_capacity(pairs.len());
    for pair in pairs {
        let [bytes, weight] = pair[..] else {
            return Err(config_error("block_sizes entries must be [bytes, weight]".into()));
        };
        let weight = u32::try_from(weight).map_err(|_| config_error(format!("block size weight {weight} is too large")))?;
        block_sizes.push((bytes, weight));
    }
    Ok(Job {
        name: field(dict, "name")?,
        threads: field(dict, "threads")?,
        iodepth: field(dict, "iodepth")?,
        read_fraction: field(dict, "read_fraction")?,
        random_fraction: field(dict, "random_fraction")?,
        block_sizes,
        offset_bytes: field(dict, "offset_bytes")?,
        size_bytes: field(dict, "size_bytes")?,
        files: field(dict, "files")?,
        cursor: if cursor == "shared" { Cursor::Shared } else { Cursor::PerThread },
        distribution,
        mix: if sysbench { MixChoice::Ratio } else { MixChoice::Random },
        rate_iops: field(dict, "rate_iops")?,
        poisson_arrivals: arrival == "poisson",
        fsync_every: field(dict, "fsync_every")?,
        fsync_scope: if scope == "all_files" { FsyncScope::AllFiles } else { FsyncScope::Thread },
        fsync_end: field(dict, "fsync_end")?,
        runtime_ns: field(dict, "runtime_ns")?,
        ramp_ns: field(dict, "ramp_ns")?,
        time_based: field(dict, "time_based")?,
        number_ios: field(dict, "number_ios")?,
        total_ios: field(dict, "total_ios")?,
        io_bytes: field(dict, "io_bytes")?,
        block_align_bytes: field(dict, "block_align_bytes")?,
        steady: steady_from(dict)?,
        // Buffered I/O: O_DIRECT off means through the page cache.
        buffered: !field::<bool>(dict, "direct")?,
        invalidate: match dict.get_item("invalidate")? {
            Some(value) => value.extract()?,
            None => true,
        },
        ..Job::default()
    })
    .and_then(|job| stream_options(dict, job))
}

/// fio's `ss`/`ss_dur`/`ss_ramp`, as the workload dict carries them (optional `steady_state`:
/// {"metric", "limit", "percent", "duration_ns", "ramp_ns"}).
fn steady_from(dict: &Bound<'_, PyDict>) -> PyResult<SteadyState> {
    let Some(ss) = dict.get_item("steady_state")? else { return Ok(SteadyState::default()) };
    if ss.is_none() {
        return Ok(SteadyState::default());
    }
    let ss = ss.downcast_into::<PyDict>().map_err(|_| config_error("'steady_state' must be a dict".into()))?;
    let metric: String = field(&ss, "metric")?;
    let metric = match metric.as_str() {
        "iops" => SteadyMetric::Iops,
        "iops_slope" => SteadyMetric::IopsSlope,
        "bw" => SteadyMetric::Bw,
        "bw_slope" => SteadyMetric::BwSlope,
        other => return Err(config_error(format!("unknown steady-state metric '{other}'"))),
    };
    Ok(SteadyState {
        metric,
        limit: field(&ss, "limit")?,
        percent: field(&ss, "percent")?,
        duration_ns: field(&ss, "duration_ns")?,
        ramp_ns: field(&ss, "ramp_ns")?,
    })
}

/// fio's options that shape the stream: optional keys, the core's defaults if absent.
fn stream_options(dict: &Bound<'_, PyDict>, mut job: Job) -> PyResult<Job> {
    fn or<'py, T: FromPyObject<'py>>(dict: &Bound<'py, PyDict>, key: &str, default: T) -> PyResult<T> {
        if dict.contains(key)? { field(dict, key) } else { Ok(default) }
    }
    job.start_delay_ns = or(dict, "start_delay_ns", job.start_delay_ns)?;
    job.group = or(dict, "group", job.group)?;
    job.think_ns = or(dict, "think_ns", job.think_ns)?;
    job.think_blocks = or(dict, "think_blocks", job.think_blocks)?;
    job.rate_bytes_per_s = or(dict, "rate_bytes_per_s", job.rate_bytes_per_s)?;
    job.loops = or(dict, "loops", job.loops)?;
    job.offset_increment_bytes = or(dict, "offset_increment_bytes", job.offset_increment_bytes)?;
    job.iodepth_low = or(dict, "iodepth_low", job.iodepth_low)?;
    job.size_percent = or(dict, "size_percent", job.size_percent)?;
    job.verify = or(dict, "verify", job.verify)?;
    job.seq_skip_bytes = or(dict, "seq_skip_bytes", job.seq_skip_bytes)?;
    job.zone_bytes = or(dict, "zone_bytes", job.zone_bytes)?;
    job.zone_skip_bytes = or(dict, "zone_skip_bytes", job.zone_skip_bytes)?;
    let zones: Vec<(f64, u64, u64)> = or(dict, "zones", Vec::<Vec<f64>>::new())?
        .into_iter()
        .map(|z| match z[..] {
            [share, start, end] => Ok((share, start as u64, end as u64)),
            _ => Err(config_error("zones entries must be [share, start, end]".into())),
        })
        .collect::<PyResult<_>>()?;
    job.zones = zones;
    let writes: Vec<Vec<u64>> = or(dict, "write_block_sizes", Vec::new())?;
    for pair in writes {
        let [bytes, weight] = pair[..] else {
            return Err(config_error("write_block_sizes entries must be [bytes, weight]".into()));
        };
        let weight = u32::try_from(weight).map_err(|_| config_error(format!("block size weight {weight} is too large")))?;
        job.write_block_sizes.push((bytes, weight));
    }
    job.zones_absolute = or(dict, "zones_absolute", job.zones_absolute)?;
    job.zbd_zone_bytes = or(dict, "zbd_zone_bytes", job.zbd_zone_bytes)?;
    job.zbd_max_open_zones = or(dict, "zbd_max_open_zones", job.zbd_max_open_zones)?;
    job.flow_id = or(dict, "flow_id", job.flow_id)?;
    job.flow_weight = or(dict, "flow_weight", job.flow_weight)?;
    job.flow_sleep_ns = or(dict, "flow_sleep_ns", job.flow_sleep_ns)?;
    job.file_service = or(dict, "file_service", job.file_service)?;
    job.file_service_ios = or(dict, "file_service_ios", job.file_service_ios)?;
    Ok(job)
}

fn workload_from(dict: &Bound<'_, PyDict>) -> PyResult<Workload> {
    let source = sub(dict, "source")?;
    let tool: String = field(&source, "tool")?;
    let jobs = item(dict, "jobs")?.downcast_into::<PyList>().map_err(|_| config_error("'jobs' must be a list".into()))?;
    let mut parsed = Vec::new();
    for job in jobs.iter() {
        let job = job.downcast_into::<PyDict>().map_err(|_| config_error("each job must be a dict".into()))?;
        parsed.push(job_from(&job, tool == "sysbench")?);
    }
    Ok(Workload { jobs: parsed })
}

pub(crate) fn drive_from(dict: &Bound<'_, PyDict>) -> PyResult<DriveChoice> {
    // An imported DiskSim model: {"disksim": ENTRY, "files": {name: text}}.
    if let Some(entry) = dict.get_item("disksim")? {
        let entry: String = entry.extract()?;
        let files: std::collections::BTreeMap<String, String> = field(dict, "files")?;
        let mut reader = |name: &str| files.get(name).cloned();
        let imported = raidlab_core::device::disksim::import(&entry, &mut reader).map_err(errors::to_py)?;
        let spec = imported.spec;
        return DriveChoice::from_hdd_spec(spec).map_err(errors::to_py);
    }
    let preset: Option<String> = dict.get_item("preset")?.map(|v| v.extract()).transpose()?;
    let kind: Option<String> = dict.get_item("kind")?.map(|v| v.extract()).transpose()?;
    let params: ParamValues = match dict.get_item("params")? {
        Some(p) => p.extract()?,
        None => ParamValues::new(),
    };
    DriveChoice::resolve(preset.as_deref(), kind.as_deref(), &params).map_err(errors::to_py)
}

/// `key` of `dict` (the value of setting `setting`, in its declared unit), checked against the
/// declaration: the one range check of every numeric run setting the glue reads.
fn declared<'py, T: FromPyObject<'py>>(dict: &Bound<'py, PyDict>, key: &str, setting: &Setting) -> PyResult<T> {
    let number: f64 = field(dict, key)?;
    setting.check(number).map_err(errors::to_py)?;
    field(dict, key)
}

fn controller_from(dict: &Bound<'_, PyDict>) -> PyResult<ControllerConfig> {
    let kind: String = field(dict, "kind")?;
    match kind.as_str() {
        "md" => md_from(dict).map(ControllerConfig::Md),
        "hw" => {
            let mut hw = HwConfig { read_ahead: field(dict, "read_ahead")?, ..HwConfig::default() };
            hw_set(&mut hw, "cache_mib", &item(dict, "cache_mib")?)?;
            hw_set(&mut hw, "bbu", &item(dict, "bbu")?)?;
            if let Some(params) = dict.get_item("hw")? {
                let params = params.downcast_into::<PyDict>().map_err(|_| config_error("'hw' must be a dict".into()))?;
                hw_params(&params, &mut hw)?;
            }
            bbu_learn(dict, &mut hw)?;
            hw.validate().map_err(errors::to_py)?;
            Ok(ControllerConfig::Hardware(hw))
        }
        other => Err(config_error(format!("unknown controller '{other}': expected md or hw"))),
    }
}

/// md's knobs (`controller` dict of kind md), each checked by its declaration.
fn md_from(dict: &Bound<'_, PyDict>) -> PyResult<MdConfig> {
    let rmw: u64 = declared(dict, "rmw_level", &run::RMW_LEVEL)?;
    let stripe_cache_size: u32 = declared(dict, "stripe_cache_size", &run::STRIPE_CACHE_SIZE)?;
    let preread_bypass_threshold: u32 = declared(dict, "preread_bypass_threshold", &run::PREREAD_BYPASS_THRESHOLD)?;
    if preread_bypass_threshold > stripe_cache_size {
        return Err(config_error(format!(
            "preread_bypass_threshold must be 0 to stripe_cache_size ({stripe_cache_size}, md's range), got {preread_bypass_threshold}"
        )));
    }
    Ok(MdConfig {
        stripe_cache_size,
        rmw_level: rmw_level(rmw).expect("the declared range is md's levels"),
        read_balance: ReadBalance::Md,
        group_thread_cnt: declared(dict, "group_thread_cnt", &run::GROUP_THREAD_CNT)?,
        skip_copy: field(dict, "skip_copy")?,
        preread_bypass_threshold,
        ..MdConfig::default()
    })
}

/// One controller parameter, converted from Python (a flag, a name or a number) and set by the
/// core, which checks it against its declaration.
fn hw_set(hw: &mut HwConfig, key: &str, value: &Bound<'_, PyAny>) -> PyResult<()> {
    let text: String;
    let given = if value.is_instance_of::<PyBool>() {
        Given::Flag(value.extract()?)
    } else if value.is_instance_of::<PyString>() {
        text = value.extract()?;
        Given::Text(&text)
    } else {
        Given::Number(value.extract().map_err(|_| config_error(format!("controller parameter {key} must be a number")))?)
    };
    hw.set(key, given).map(|_| ()).map_err(errors::to_py)
}

/// A controller's parameters beyond cache/BBU/read-ahead (`controller.hw`), each optional, by
/// the names `settings::CONTROLLER_SETTINGS` declares.
fn hw_params(dict: &Bound<'_, PyDict>, hw: &mut HwConfig) -> PyResult<()> {
    for (key, value) in dict.iter() {
        let key: String = key.extract()?;
        hw_set(hw, &key, &value)?;
    }
    Ok(())
}

/// The BBU learn cycle (`controller.bbu_learn`, optional): [start, duration] in seconds, as the
/// run setting `bbu_learn` declares it.
fn bbu_learn(dict: &Bound<'_, PyDict>, hw: &mut HwConfig) -> PyResult<()> {
    let Some(value) = dict.get_item("bbu_learn")? else { return Ok(()) };
    let times: Vec<f64> = value.extract().map_err(|_| config_error("bbu_learn must be [start_s, duration_s]".into()))?;
    let [start_s, duration_s] = times[..] else {
        return Err(config_error("bbu_learn must be [start_s, duration_s]".into()));
    };
    hw.learn_start_ns = seconds_ns(start_s);
    hw.learn_duration_ns = seconds_ns(duration_s);
    Ok(())
}

fn timeline_from(config: &Bound<'_, PyDict>) -> PyResult<Vec<ArrayEvent>> {
    let Some(list) = config.get_item("timeline")? else { return Ok(Vec::new()) };
    let mut events = Vec::new();
    for entry in list.downcast_into::<PyList>().map_err(|_| config_error("'timeline' must be a list".into()))?.iter() {
        let entry = entry.downcast_into::<PyDict>().map_err(|_| config_error("timeline entries are dicts".into()))?;
        let at_s: f64 = field(&entry, "at_s")?;
        if !(0.0..=1e7).contains(&at_s) {
            return Err(config_error(format!("timeline time {at_s} s is out of range")));
        }
        let member: u32 = field(&entry, "member")?;
        let action: String = field(&entry, "action")?;
        let kind = match action.as_str() {
            "fail" => ArrayEventKind::Fail(member),
            "replace" => ArrayEventKind::Replace(member),
            "latent_error" => ArrayEventKind::LatentError(member),
            other => return Err(config_error(format!("unknown timeline action '{other}'"))),
        };
        events.push(ArrayEvent { at_ns: (at_s * 1e9).round() as u64, kind });
    }
    events.sort();
    Ok(events)
}

fn rebuild_from(config: &Bound<'_, PyDict>) -> PyResult<RebuildConfig> {
    let Some(dict) = config.get_item("rebuild")? else { return Ok(RebuildConfig::default()) };
    let dict = dict.downcast_into::<PyDict>().map_err(|_| config_error("'rebuild' must be a dict".into()))?;
    let rebuild = RebuildConfig {
        speed_limit_min: declared(&dict, "speed_limit_min", &run::SPEED_LIMIT_MIN)?,
        speed_limit_max: declared(&dict, "speed_limit_max", &run::SPEED_LIMIT_MAX)?,
        spare: field(&dict, "spare")?,
        rebuild_priority: declared(&dict, "rebuild_priority", &run::REBUILD_PRIORITY)?,
        // Declared in % of the member; the core counts parts per million.
        start_ppm: match dict.contains("rebuild_start_pct")? {
            true => pct_ppm(declared(&dict, "rebuild_start_pct", &run::REBUILD_START_PCT)?),
            false => RebuildConfig::default().start_ppm,
        },
    };
    if rebuild.speed_limit_min > rebuild.speed_limit_max {
        return Err(config_error("speed limits need 0 < speed_limit_min <= speed_limit_max (KiB/s)".into()));
    }
    Ok(rebuild)
}

/// The host's page cache (`page_cache` dict; the core's defaults without one): each setting
/// under its declared name and unit (GiB, %, centiseconds, KiB), converted to the core's bytes
/// and nanoseconds here.
fn page_cache_from(config: &Bound<'_, PyDict>) -> PyResult<PageCacheConfig> {
    let Some(dict) = config.get_item("page_cache")? else { return Ok(PageCacheConfig::default()) };
    let dict = dict.downcast_into::<PyDict>().map_err(|_| config_error("'page_cache' must be a dict".into()))?;
    let defaults = PageCacheConfig::default();
    let page_cache = PageCacheConfig {
        ram_bytes: ram_bytes(declared(&dict, "ram_gib", &run::RAM_GIB)?),
        dirty_ratio: declared(&dict, "dirty_ratio", &run::DIRTY_RATIO)?,
        dirty_background_ratio: declared(&dict, "dirty_background_ratio", &run::DIRTY_BACKGROUND_RATIO)?,
        dirty_bytes: field(&dict, "dirty_bytes")?,
        dirty_background_bytes: field(&dict, "dirty_background_bytes")?,
        dirty_expire_ns: centisecs_ns(declared(&dict, "dirty_expire_centisecs", &run::DIRTY_EXPIRE_CENTISECS)?),
        dirty_writeback_ns: centisecs_ns(declared(&dict, "dirty_writeback_centisecs", &run::DIRTY_WRITEBACK_CENTISECS)?),
        read_ahead_kb: declared(&dict, "read_ahead_kb", &run::READ_AHEAD_KB)?,
        ..defaults
    };
    page_cache.validate().map_err(errors::to_py)?;
    Ok(page_cache)
}

/// Sectors of each member device: the whole drive, or a partition at its start
/// (`array.partition_gib`, absent or 0 for the whole drive): `member_device_sectors`.
fn device_sectors(array: &Bound<'_, PyDict>, capacity_bytes: u64) -> PyResult<u64> {
    let gib: f64 = match array.get_item("partition_gib")? {
        Some(value) if !value.is_none() => declared(array, "partition_gib", &run::PARTITION_GIB)?,
        _ => 0.0,
    };
    member_device_sectors(capacity_bytes, partition_bytes(gib)).map_err(errors::to_py)
}

/// The members' behaviour (from the drive's parameters) and the host's command timeout
/// (`command_timeout_s`; absent: its declared default).
fn drive_faults_from(config: &Bound<'_, PyDict>, drive: &DriveChoice, devices: u32) -> PyResult<DriveFaults> {
    let behaviour = raidlab_core::device::behaviour::for_drive(drive.kind, &drive.values);
    let mut faults = DriveFaults { behaviours: vec![behaviour; devices as usize], ..DriveFaults::default() };
    if config.contains("command_timeout_s")? {
        let seconds: f64 = declared(config, "command_timeout_s", &run::COMMAND_TIMEOUT_S)?;
        faults.command_timeout_ns = seconds_ns(seconds);
    }
    Ok(faults)
}

/// Builds the core configuration and one drive per member.
fn build(config: &Bound<'_, PyDict>) -> PyResult<Simulation> {
    let array = sub(config, "array")?;
    let level_text: String = field(&array, "level")?;
    let level = raidlab_core::layout::member_level(&level_text).map_err(errors::to_py)?;
    let layout: Option<String> = field(&array, "layout")?;
    let layout = layout.map(|name| Layout::parse(level, &name)).transpose().map_err(errors::to_py)?;
    let devices: u32 = field(&array, "devices")?;
    let chunk_kib: u64 = field(&array, "chunk_kib")?;
    let drive = drive_from(&sub(config, "drive")?)?;
    let controller = controller_from(&sub(config, "controller")?)?;
    let seed: u64 = declared(config, "seed", &run::SEED)?;
    let device_sectors = device_sectors(&array, drive.capacity_bytes())?;
    let data_offset_sectors = controller.data_offset_sectors(level, devices, device_sectors, chunk_kib);
    let member_kib = member_data_kib(matches!(controller, ControllerConfig::Md(_)), level, devices, device_sectors, chunk_kib);
    let scheduler_name: String = field(config, "scheduler")?;
    let scheduler = SchedulerKind::parse(&scheduler_name).map_err(errors::to_py)?;
    let nr_requests: u32 = declared(config, "nr_requests", &run::NR_REQUESTS)?;
    let max_sectors_kb: u32 = declared(config, "max_sectors_kb", &run::MAX_SECTORS_KB)?;
    let write_cache = controller.drive_write_cache(asked_write_cache(config)?);
    let drives = (0..devices)
        .map(|index| drive.build(Prng::derive(seed, "drive", index as u64), write_cache))
        .collect();
    let max_time_ns = max_time_ns(config)?;
    let sim_config = SimConfig {
        seed,
        array: ArraySpec { level, layout, chunk_kib, member_kib: vec![member_kib; devices as usize] },
        data_offset_sectors,
        failed: field(config, "failed")?,
        controller,
        scheduler,
        queue_limits: QueueLimits { nr_requests, max_sectors: max_sectors_kb * 2 },
        workload: workload_from(&sub(config, "workload")?)?,
        max_time_ns,
        max_events: declared(config, "max_events", &run::MAX_EVENTS)?,
        timeline: timeline_from(config)?,
        rebuild: rebuild_from(config)?,
        queues: queue_depths(config)?,
        page_cache: page_cache_from(config)?,
        host_limits: crate::host::limits_from(config)?,
        stack: crate::stacked::stack_from(&array, devices, member_kib)?,
        drive_faults: drive_faults_from(config, &drive, devices)?,
        latency_by_second: optional_bool(config, "latency_by_second")?.unwrap_or(false),
    };
    for event in &sim_config.timeline {
        let member = event.kind.member();
        if member >= devices {
            return Err(config_error(format!("member {member} does not exist: the array has members 0 to {}", devices - 1)));
        }
    }
    Simulation::new(sim_config, drives).map_err(errors::to_py)
}

/// The run's bound on simulated time, checked against its declaration.
fn max_time_ns(config: &Bound<'_, PyDict>) -> PyResult<u64> {
    let max_time_s: f64 = declared(config, "max_time_s", &run::MAX_TIME_S)?;
    Ok((max_time_s * 1e9) as u64)
}

/// The drives' command queue depth (`drive_queue_depth`; absent: its declared default).
fn queue_depths(config: &Bound<'_, PyDict>) -> PyResult<QueueDepths> {
    if !config.contains("drive_queue_depth")? {
        return Ok(QueueDepths::default());
    }
    Ok(QueueDepths { drive_queue_depth: declared(config, "drive_queue_depth", &run::DRIVE_QUEUE_DEPTH)? })
}

/// `key` of the configuration as a flag: None when absent or None.
/// `drive_write_cache` as declared (default, on or off; absent: default): on or off where
/// asked, None for the default (the core's `ControllerConfig::drive_write_cache` decides).
fn asked_write_cache(config: &Bound<'_, PyDict>) -> PyResult<Option<bool>> {
    let Some(value) = config.get_item("drive_write_cache")? else { return Ok(None) };
    let setting = &run::DRIVE_WRITE_CACHE;
    let text: String = value.extract().map_err(|_| {
        config_error(format!("{} must be one of {}", setting.name, setting.choices.join(", ")))
    })?;
    setting.check_choice(&text).map_err(errors::to_py)?;
    Ok(match text.as_str() {
        "on" => Some(true),
        "off" => Some(false),
        _ => None,
    })
}

fn optional_bool(config: &Bound<'_, PyDict>, key: &str) -> PyResult<Option<bool>> {
    match config.get_item(key)? {
        Some(value) if !value.is_none() => {
            value.extract::<bool>().map(Some).map_err(|_| config_error(format!("{key} must be true or false")))
        }
        _ => Ok(None),
    }
}

/// Percentiles (ns) of latency buckets given as [lowest ns, count], as a series point's
/// `lat_bins_by_job[j]["read"|"write"]` carry them (merged over any seconds and jobs, in any
/// order): each the midpoint of its bucket (the run's own percentiles are too, except that
/// they are clamped to the exact minimum and maximum).
#[pyfunction]
pub fn latency_percentiles(bins: Vec<[u64; 2]>, percentiles: Vec<f64>) -> PyResult<Vec<u64>> {
    let bins: Vec<(u64, u64)> = bins.into_iter().map(|[low, count]| (low, count)).collect();
    let histogram = Histogram::from_lows(&bins).map_err(config_error)?;
    percentiles
        .iter()
        .map(|&p| {
            if (0.0..=100.0).contains(&p) {
                Ok(histogram.percentile(p))
            } else {
                Err(config_error(format!("percentile {p} is out of range: 0 to 100")))
            }
        })
        .collect()
}

fn latency_dict<'py>(py: Python<'py>, histogram: &Histogram) -> PyResult<Bound<'py, PyDict>> {
    let dict = PyDict::new(py);
    dict.set_item("min", histogram.min())?;
    dict.set_item("max", histogram.max())?;
    dict.set_item("mean", histogram.mean())?;
    dict.set_item("stddev", histogram.stddev())?;
    dict.set_item("N", histogram.count())?;
    let percentiles: Vec<u64> = raidlab_core::sim::histogram::FIO_PERCENTILES.iter().map(|&p| histogram.percentile(p)).collect();
    dict.set_item("percentiles", percentiles)?;
    dict.set_item("buckets", histogram.buckets())?;
    Ok(dict)
}

fn direction_dict<'py>(py: Python<'py>, stats: &DirectionStats) -> PyResult<Bound<'py, PyDict>> {
    let direction = PyDict::new(py);
    direction.set_item("ios", stats.ios)?;
    direction.set_item("bytes", stats.bytes)?;
    direction.set_item("lat_ns", latency_dict(py, &stats.latency)?)?;
    Ok(direction)
}

fn timeline_dicts<'py>(py: Python<'py>, result: &SimResult, dict: &Bound<'py, PyDict>) -> PyResult<()> {
    let phases = PyList::empty(py);
    for phase in &result.phases {
        let entry = PyDict::new(py);
        entry.set_item("name", phase.name)?;
        entry.set_item("start_ns", phase.start_ns)?;
        entry.set_item("end_ns", phase.end_ns)?;
        entry.set_item("read", direction_dict(py, &phase.read)?)?;
        entry.set_item("write", direction_dict(py, &phase.write)?)?;
        phases.append(entry)?;
    }
    dict.set_item("phases", phases)?;
    let series = PyList::empty(py);
    for point in &result.series {
        let entry = PyDict::new(py);
        entry.set_item("start_ns", point.start_ns)?;
        entry.set_item("read_ios", point.read_ios)?;
        entry.set_item("write_ios", point.write_ios)?;
        entry.set_item("latency_ns_p50", point.latency_ns_p50)?;
        entry.set_item("latency_ns_p99", point.latency_ns_p99)?;
        entry.set_item("latency_ns_p95", point.latency_ns_p95)?;
        entry.set_item("flush_ios", point.flush_ios)?;
        entry.set_item("rebuild_pct", point.rebuild_pct)?;
        if !point.latency_ns_by_job.is_empty() {
            // Per job, each direction's buckets as [lowest ns, count]: `latency_percentiles`
            // takes them back.
            let jobs = PyList::empty(py);
            for [read, write] in &point.latency_ns_by_job {
                let bins = PyDict::new(py);
                bins.set_item("read", read.lows().map(|(low, n)| [low, n]).collect::<Vec<_>>())?;
                bins.set_item("write", write.lows().map(|(low, n)| [low, n]).collect::<Vec<_>>())?;
                jobs.append(bins)?;
            }
            entry.set_item("lat_bins_by_job", jobs)?;
        }
        series.append(entry)?;
    }
    dict.set_item("series", series)?;
    let rebuilds = PyList::empty(py);
    for rebuild in &result.rebuilds {
        let entry = PyDict::new(py);
        entry.set_item("member", rebuild.member)?;
        entry.set_item("start_ns", rebuild.start_ns)?;
        entry.set_item("end_ns", rebuild.end_ns)?;
        entry.set_item("aborted_ns", rebuild.aborted_ns)?;
        entry.set_item("done_sectors", rebuild.done_sectors)?;
        entry.set_item("total_sectors", rebuild.total_sectors)?;
        entry.set_item("start_sector", rebuild.start_sector)?;
        entry.set_item("estimated_duration_ns", rebuild.estimated_duration_ns)?;
        rebuilds.append(entry)?;
    }
    dict.set_item("rebuilds", rebuilds)?;
    match &result.data_loss {
        Some(loss) => {
            let entry = PyDict::new(py);
            entry.set_item("at_ns", loss.at_ns)?;
            entry.set_item("failed", loss.failed.clone())?;
            dict.set_item("data_loss", entry)?;
        }
        None => dict.set_item("data_loss", py.None())?,
    }
    Ok(())
}

fn result_dict<'py>(py: Python<'py>, result: &SimResult) -> PyResult<Bound<'py, PyDict>> {
    let jobs = PyList::empty(py);
    for job in &result.jobs {
        let entry = PyDict::new(py);
        entry.set_item("name", &job.name)?;
        entry.set_item("runtime_ns", job.runtime_ns)?;
        entry.set_item("ramp_ns", job.ramp_ns)?;
        entry.set_item("start_ns", job.start_ns)?;
        entry.set_item("finished", job.finished)?;
        for (key, stats) in [("read", &job.read), ("write", &job.write), ("flush", &job.flush)] {
            let direction = PyDict::new(py);
            direction.set_item("ios", stats.ios)?;
            direction.set_item("bytes", stats.bytes)?;
            direction.set_item("lat_ns", latency_dict(py, &stats.latency)?)?;
            entry.set_item(key, direction)?;
        }
        // One distribution over every event, as sysbench reports latency.
        let mut all = job.read.latency.clone();
        all.merge(&job.write.latency);
        all.merge(&job.flush.latency);
        entry.set_item("all_lat_ns", latency_dict(py, &all)?)?;
        jobs.append(entry)?;
    }
    let members = PyList::empty(py);
    for member in &result.members {
        let entry = PyDict::new(py);
        entry.set_item("read_ios", member.read_ios)?;
        entry.set_item("write_ios", member.write_ios)?;
        entry.set_item("flush_ios", member.flush_ios)?;
        entry.set_item("read_sectors", member.read_sectors)?;
        entry.set_item("write_sectors", member.write_sectors)?;
        entry.set_item("busy_ns", member.busy_ns)?;
        entry.set_item("queue_area", member.queue_area as f64)?;
        entry.set_item("read_merges", member.read_merges)?;
        entry.set_item("write_merges", member.write_merges)?;
        entry.set_item("read_area", member.read_area as f64)?;
        entry.set_item("write_area", member.write_area as f64)?;
        members.append(entry)?;
    }
    let dict = PyDict::new(py);
    dict.set_item("jobs", jobs)?;
    dict.set_item("members", members)?;
    dict.set_item("host_busy_ns", result.host_busy_ns)?;
    dict.set_item("end_ns", result.end_ns)?;
    dict.set_item("events", result.events)?;
    dict.set_item("truncated", result.truncated.clone())?;
    dict.set_item("steady_state_ns", result.steady_state_ns)?;
    dict.set_item("seed", result.seed)?;
    timeline_dicts(py, result, &dict)?;
    Ok(dict)
}

/// What the host's page cache did (runs with buffered jobs).
fn page_cache_dict<'py>(py: Python<'py>, cache: &PageCacheStats) -> PyResult<Bound<'py, PyDict>> {
    let entry = PyDict::new(py);
    let asked = cache.read_hit_pages + cache.read_miss_pages;
    entry.set_item("hit_ratio", if asked > 0 { cache.read_hit_pages as f64 / asked as f64 } else { 0.0 })?;
    entry.set_item("read_hit_pages", cache.read_hit_pages)?;
    entry.set_item("read_miss_pages", cache.read_miss_pages)?;
    entry.set_item("read_from_array_bytes", cache.read_from_array_bytes)?;
    entry.set_item("written_back_bytes", cache.written_back_bytes)?;
    entry.set_item("throttled_ns", cache.throttled_ns)?;
    entry.set_item("peak_dirty_bytes", cache.peak_dirty_bytes)?;
    entry.set_item("evicted_pages", cache.evicted_pages)?;
    entry.set_item("ram_bytes", cache.ram_bytes)?;
    Ok(entry)
}

/// A configured simulation the Python side steps through (to show progress).
#[pyclass(name = "CoreSimulation", module = "raidlab._core", unsendable)]
pub struct CoreSimulation {
    inner: Option<Simulation>,
}

impl CoreSimulation {
    fn sim(&mut self) -> PyResult<&mut Simulation> {
        self.inner.as_mut().ok_or_else(|| config_error("the simulation has already finished".into()))
    }
}

#[pymethods]
impl CoreSimulation {
    #[new]
    fn new(config: &Bound<'_, PyDict>) -> PyResult<CoreSimulation> {
        Ok(CoreSimulation { inner: Some(build(config)?) })
    }

    /// Runs up to simulated time `until_ns` (drives are not Send, so the GIL stays held).
    fn run_until(&mut self, py: Python<'_>, until_ns: u64) -> PyResult<()> {
        let sim = self.sim()?;
        let _ = py;
        sim.run_until(until_ns);
        Ok(())
    }

    #[getter]
    fn now_ns(&mut self) -> PyResult<u64> {
        Ok(self.sim()?.now())
    }

    #[getter]
    fn stop_ns(&mut self) -> PyResult<u64> {
        Ok(self.sim()?.stop_ns())
    }

    #[getter]
    fn finished(&mut self) -> PyResult<bool> {
        Ok(self.sim()?.finished())
    }

    /// Ends the run and returns the result dict.
    fn result<'py>(&mut self, py: Python<'py>) -> PyResult<Bound<'py, PyDict>> {
        let sim = self.inner.take().ok_or_else(|| config_error("the result was already taken".into()))?;
        let page_cache = sim.page_cache().map(|cache| cache.stats());
        let host = sim.host_report();
        let drive_events = PyList::empty(py);
        for event in sim.drive_events() {
            let entry = PyDict::new(py);
            entry.set_item("at_ns", event.at_ns)?;
            entry.set_item("member", event.member)?;
            entry.set_item("event", event.what)?;
            drive_events.append(entry)?;
        }
        let result = sim.finish();
        let dict = result_dict(py, &result)?;
        if let Some(report) = host {
            dict.set_item("host", crate::host::report_dict(py, &report)?)?;
        }
        dict.set_item("drive_events", drive_events)?;
        if let Some(cache) = page_cache {
            dict.set_item("page_cache", page_cache_dict(py, &cache)?)?;
        }
        Ok(dict)
    }
}
