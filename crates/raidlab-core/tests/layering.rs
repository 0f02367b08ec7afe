//! The crate's layering, checked on its sources (ARCHITECTURE.md, "Invariants"): the shared
//! basics (`time`, `rng`, `bits`, `error`) use no other module, `device/` sits below `sim/` and
//! never names it, the simulator's layers (`sim/<room>/`) name only the layers below them, and
//! `sim/engine/` holds no layer's rules. A path into a module is its name as a whole
//! identifier right next to `::` (`crate::sim::Nanos`, `crate::{sim::Prng}`, `super::sim`), so
//! the check also sees grouped imports and doc links; prose that merely says "sim" passes.

use std::path::{Path, PathBuf};

/// Modules above the shared basics.
const UPPER_MODULES: [&str; 6] = ["device", "layout", "parity", "plan", "reliability", "sim"];

fn src_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("src")
}

/// Every `.rs` file under `dir`, recursively, sorted.
fn rust_files(dir: &Path) -> Vec<PathBuf> {
    let mut files = Vec::new();
    for entry in std::fs::read_dir(dir).unwrap_or_else(|e| panic!("{}: {e}", dir.display())) {
        let path = entry.unwrap().path();
        if path.is_dir() {
            files.extend(rust_files(&path));
        } else if path.extension().is_some_and(|ext| ext == "rs") {
            files.push(path);
        }
    }
    files.sort();
    files
}

fn is_ident_byte(byte: u8) -> bool {
    byte.is_ascii_alphanumeric() || byte == b'_'
}

/// Whether `line` names module `name` in a path: the whole identifier with `::` before or after.
fn names_module(line: &str, name: &str) -> bool {
    let bytes = line.as_bytes();
    line.match_indices(name).any(|(start, _)| {
        let end = start + name.len();
        let whole = (start == 0 || !is_ident_byte(bytes[start - 1])) && (end == bytes.len() || !is_ident_byte(bytes[end]));
        whole && (line[..start].ends_with("::") || line[end..].starts_with("::"))
    })
}

/// `file:line: text` for every line of `files` that names one of `modules`.
fn offending_lines(files: &[PathBuf], modules: &[&str]) -> Vec<String> {
    let mut found = Vec::new();
    for file in files {
        let text = std::fs::read_to_string(file).unwrap_or_else(|e| panic!("{}: {e}", file.display()));
        for (index, line) in text.lines().enumerate() {
            if modules.iter().any(|module| names_module(line, module)) {
                found.push(format!("{}:{}: {}", file.display(), index + 1, line.trim()));
            }
        }
    }
    found
}

#[test]
fn device_never_names_sim() {
    let files = rust_files(&src_dir().join("device"));
    assert!(files.len() > 10, "device/ sources not found under {}", src_dir().display());
    let found = offending_lines(&files, &["sim"]);
    assert!(found.is_empty(), "device/ must not import from sim/ (use crate::time, crate::rng):\n{}", found.join("\n"));
}

#[test]
fn shared_basics_use_no_upper_module() {
    let files: Vec<PathBuf> = ["time.rs", "rng.rs", "bits.rs", "error.rs"].iter().map(|name| src_dir().join(name)).collect();
    let found = offending_lines(&files, &UPPER_MODULES);
    assert!(found.is_empty(), "the shared basics must not use the modules above them:\n{}", found.join("\n"));
}

#[test]
fn the_check_sees_every_form_of_path() {
    for line in ["use crate::sim::Nanos;", "use crate::{sim::Prng, time};", "use super::super::sim;", "[`crate::sim`]"] {
        assert!(names_module(line, "sim"), "{line}");
    }
    for line in ["use crate::device::disksim::import;", "// the sim engine", "let simulated = 1;", "simulation::x"] {
        assert!(!names_module(line, "sim"), "{line}");
    }
}

/// The simulator's rooms (`src/sim/<room>/`), one per layer of the I/O stack from the host down,
/// each with the rooms it may name in a module path: only rooms below it. md and the hardware
/// controller are two RAID kinds side by side and never name each other; `raid/` is what the
/// kinds share and names neither, except `raid/kind.rs`, the one interface that picks a kind.
/// `instance/` is the cloud instance's meter in front of the drives, below the block layer.
const ROOMS: [(&str, &[&str]); 7] = [
    ("host", &["pagecache", "md", "controller", "raid", "block", "instance"]),
    ("pagecache", &["md", "controller", "raid", "block", "instance"]),
    ("md", &["raid", "block", "instance"]),
    ("controller", &["raid", "block", "instance"]),
    ("raid", &["block", "instance"]),
    ("block", &["instance"]),
    ("instance", &[]),
];

/// What every layer may name of the host above it: the host I/O that travels down the stack
/// (as a bio does through Linux's layers).
const HOST_REQUEST: [&str; 3] = ["HostOp", "HostIo", "KERNEL_JOB"];

/// What `sim/engine/` may name of the rooms: the room types it owns, each room's events (which
/// it queues and hands back to the room), the RAID-kind interface, and the room types the public
/// API hands out (results and reports).
const ENGINE_MAY_NAME: [&str; 17] = [
    "HostRoom", "PageCacheRoom", "MdRoom", "ControllerRoom", "RaidRoom", "RaidKind", "BlockRoom",
    "HostEvent", "PageCacheEvent", "MdEvent", "ControllerEvent", "RaidEvent", "BlockEvent",
    "HostOp", "MemberStats", "HostReport", "PageCache",
];

/// The files `sim/engine/` keeps: the event queue, slabs, the `Simulation` that owns the rooms
/// and routes events (mod.rs), the results, and the run's settings (config.rs, the settings'
/// declaration, which names each layer's setting types and is not checked here).
const ENGINE_FILES: [&str; 5] = ["config.rs", "events.rs", "mod.rs", "results.rs", "slab.rs"];

/// The items `line` names from module `module`: each item of `module::{a, b}`, the item of
/// `module::a`, or `*` where a path ends at the module itself (`use crate::sim::md;`).
fn items_named(line: &str, module: &str) -> Vec<String> {
    let bytes = line.as_bytes();
    let mut items = Vec::new();
    for (start, _) in line.match_indices(module) {
        let end = start + module.len();
        let whole = (start == 0 || !is_ident_byte(bytes[start - 1])) && (end == bytes.len() || !is_ident_byte(bytes[end]));
        if !whole {
            continue;
        }
        let rest = &line[end..];
        if let Some(group) = rest.strip_prefix("::{") {
            let group = &group[..group.find('}').unwrap_or(group.len())];
            items.extend(group.split(',').map(|item| item.trim().split("::").next().unwrap_or("").to_string()).filter(|i| !i.is_empty()));
        } else if let Some(path) = rest.strip_prefix("::") {
            items.push(path.chars().take_while(|&c| c.is_ascii_alphanumeric() || c == '_').collect());
        } else if line[..start].ends_with("::") {
            items.push("*".to_string());
        }
    }
    items
}

/// `file:line: text` for every line of `files` that names an item of one of `modules` not in
/// `allowed`.
fn lines_naming(files: &[PathBuf], modules: &[&str], allowed: &[&str]) -> Vec<String> {
    let mut found = Vec::new();
    for file in files {
        let text = std::fs::read_to_string(file).unwrap_or_else(|e| panic!("{}: {e}", file.display()));
        for (index, line) in text.lines().enumerate() {
            let named = modules.iter().flat_map(|module| items_named(line, module));
            if named.into_iter().any(|item| !allowed.contains(&item.as_str())) {
                found.push(format!("{}:{}: {}", file.display(), index + 1, line.trim()));
            }
        }
    }
    found
}

fn room_names() -> Vec<&'static str> {
    ROOMS.iter().map(|(room, _)| *room).collect()
}

#[test]
fn each_layer_of_the_simulator_names_only_the_layers_below_it() {
    let sim = src_dir().join("sim");
    let mut found = Vec::new();
    for (room, below) in ROOMS {
        let files = rust_files(&sim.join(room));
        assert!(!files.is_empty(), "no sources in sim/{room}");
        let above: Vec<&str> = room_names().into_iter().filter(|r| *r != room && !below.contains(r)).collect();
        let (kind, others): (Vec<PathBuf>, Vec<PathBuf>) = files.into_iter().partition(|f| f.ends_with("raid/kind.rs"));
        found.extend(lines_naming(&others, &above, &HOST_REQUEST));
        // The RAID-kind interface picks md or the controller: it may name both.
        let above: Vec<&str> = above.into_iter().filter(|r| !["md", "controller"].contains(r)).collect();
        found.extend(lines_naming(&kind, &above, &HOST_REQUEST));
    }
    assert!(found.is_empty(), "a layer names a layer above it (or the other RAID kind):\n{}", found.join("\n"));
}

#[test]
fn the_engine_routes_events_and_holds_no_layers_rules() {
    let engine = src_dir().join("sim").join("engine");
    let files = rust_files(&engine);
    let names: Vec<String> = files.iter().map(|f| f.file_name().unwrap().to_string_lossy().into_owned()).collect();
    let extra: Vec<&String> = names.iter().filter(|n| !ENGINE_FILES.contains(&n.as_str())).collect();
    assert!(extra.is_empty(), "sim/engine/ keeps the event loop only; a layer's code goes in its room: {extra:?}");
    let checked: Vec<PathBuf> = files.into_iter().filter(|f| !f.ends_with("config.rs")).collect();
    let found = lines_naming(&checked, &room_names(), &ENGINE_MAY_NAME);
    assert!(found.is_empty(), "sim/engine/ names a layer's internals (route to the room instead):\n{}", found.join("\n"));
    let mut branching = Vec::new();
    for file in &checked {
        let text = std::fs::read_to_string(file).unwrap();
        for (index, line) in text.lines().enumerate() {
            if line.contains("ControllerConfig::Md") || line.contains("ControllerConfig::Hardware") {
                branching.push(format!("{}:{}: {}", file.display(), index + 1, line.trim()));
            }
        }
    }
    assert!(branching.is_empty(), "sim/engine/ picks a RAID kind itself (sim/raid/kind.rs does):\n{}", branching.join("\n"));
}

#[test]
fn the_room_check_reads_every_form_of_path() {
    assert_eq!(items_named("use crate::sim::md::{MdRoom, faults::FaultState};", "md"), ["MdRoom", "faults"]);
    assert_eq!(items_named("use crate::sim::{md::StripeCache, block::BlockRoom};", "md"), ["StripeCache"]);
    assert_eq!(items_named("let c: crate::sim::controller::Controller;", "controller"), ["Controller"]);
    assert_eq!(items_named("use super::super::md;", "md"), ["*"]);
    for line in ["self.md.stripes.is_some()", "// md's stripe cache", "let md = 1;", "(`sim/md`)"] {
        assert!(items_named(line, "md").is_empty(), "{line}");
    }
    let line = ["use crate::sim::md::StripeCache;".to_string()];
    let dir = std::env::temp_dir().join(format!("raidlab-layering-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let file = dir.join("x.rs");
    std::fs::write(&file, &line[0]).unwrap();
    assert_eq!(lines_naming(&[file.clone()], &["md"], &ENGINE_MAY_NAME).len(), 1);
    assert!(lines_naming(&[file.clone()], &["md"], &["StripeCache"]).is_empty());
    std::fs::remove_dir_all(&dir).unwrap();
}
