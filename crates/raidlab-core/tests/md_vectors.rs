//! Reproduces every layout recorded from the real Linux md driver in `data/md-vectors`:
//! map, Q coefficient exponents, capacity, io_min and io_opt.

use raidlab_core::layout::{Array, ArraySpec, Cell, Layout, Level};
use serde_json::Value;
use std::path::PathBuf;

fn vectors() -> Vec<Value> {
    let path = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../data/md-vectors/vectors.json");
    let text = std::fs::read_to_string(&path)
        .unwrap_or_else(|e| panic!("cannot read {}: {e}", path.display()));
    serde_json::from_str::<Value>(&text).unwrap().as_array().unwrap().clone()
}

fn array_of(vector: &Value) -> Array {
    let level = Level::parse(&vector["level"].to_string()).unwrap();
    let layout = vector["layout"].as_str().map(|name| Layout::parse(level, name).unwrap());
    let spec = ArraySpec {
        level,
        layout,
        chunk_kib: vector["chunk_kib"].as_u64().unwrap(),
        member_kib: vector["member_kib_list"].as_array().unwrap().iter().map(|v| v.as_u64().unwrap()).collect(),
    };
    Array::new(&spec).unwrap()
}

fn expected_cell(value: &Value) -> String {
    match value {
        Value::Null => "-".into(),
        Value::String(s) => s.clone(),
        other => other.to_string(),
    }
}

fn actual_cell(array: &Array, member: u32, entry: u64) -> String {
    let chunk_sectors = array.chunk_sectors();
    match array.unmap(member, entry * chunk_sectors) {
        Cell::Data(sector) => {
            assert_eq!(sector % chunk_sectors, 0);
            (sector / chunk_sectors).to_string()
        }
        Cell::P => "P".into(),
        Cell::Q => "Q".into(),
        Cell::Unused => "-".into(),
    }
}

#[test]
fn every_md_vector_reproduced() {
    let mut failures = Vec::new();
    let all = vectors();
    assert!(all.len() >= 90, "expected the full vector set");
    for vector in &all {
        let id = vector["id"].as_str().unwrap();
        let array = array_of(vector);
        let md = &vector["md"];
        if array.capacity_bytes() != md["array_bytes"].as_u64().unwrap() {
            failures.push(format!("{id}: capacity {} != {}", array.capacity_bytes(), md["array_bytes"]));
        }
        if array.io_min_bytes() != md["io_min_bytes"].as_u64().unwrap() {
            failures.push(format!("{id}: io_min {} != {}", array.io_min_bytes(), md["io_min_bytes"]));
        }
        if array.io_opt_bytes() != md["io_opt_bytes"].as_u64().unwrap() {
            failures.push(format!("{id}: io_opt {} != {}", array.io_opt_bytes(), md["io_opt_bytes"]));
        }
        for (member, column) in vector["map"].as_array().unwrap().iter().enumerate() {
            for (entry, value) in column.as_array().unwrap().iter().enumerate() {
                let got = actual_cell(&array, member as u32, entry as u64);
                let want = expected_cell(value);
                if got != want {
                    failures.push(format!("{id}: member {member} entry {entry}: {got} != {want}"));
                }
            }
        }
        if let Some(q) = vector.get("q_log_coeff").filter(|q| !q.is_null()) {
            for (member, column) in q.as_array().unwrap().iter().enumerate() {
                for (entry, value) in column.as_array().unwrap().iter().enumerate() {
                    let stripe = array.stripe(entry as u64).unwrap();
                    let got = stripe
                        .data_index(member as u32)
                        .map(|i| stripe.q_slot[i as usize].to_string())
                        .unwrap_or("-".into());
                    let want = expected_cell(value);
                    if got != want {
                        failures.push(format!("{id}: q member {member} row {entry}: {got} != {want}"));
                    }
                }
            }
        }
    }
    let shown: Vec<_> = failures.iter().take(40).collect();
    assert!(failures.is_empty(), "{} mismatches:\n{:#?}", failures.len(), shown);
}
