//! The crate's layering, checked on its sources (ARCHITECTURE.md, "Invariants"): the shared
//! basics (`time`, `rng`, `bits`, `error`) use no other module, and `device/` sits below `sim/`
//! and never names it (issue 18, section 5). A path into a module is its name as a whole
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
