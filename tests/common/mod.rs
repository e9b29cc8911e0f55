//! Helpers shared by the integration tests.

#![allow(dead_code)]

use serde_json::Value;
use std::path::Path;
use std::process::Command;

/// The scalebench binary under test.
pub fn bin() -> Command {
    Command::new(env!("CARGO_BIN_EXE_scalebench"))
}

/// Reads a JSON file.
pub fn load(path: &Path) -> Value {
    serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap()
}

/// Checks a result file against docs/results-schema.json.
pub fn assert_valid(doc: &Value) {
    let schema: Value = serde_json::from_str(
        &std::fs::read_to_string(concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/docs/results-schema.json"
        ))
        .unwrap(),
    )
    .unwrap();
    let v = jsonschema::validator_for(&schema).expect("schema compiles");
    let errors: Vec<String> = v
        .iter_errors(doc)
        .map(|e| format!("{} at {}", e, e.instance_path()))
        .collect();
    assert!(
        errors.is_empty(),
        "result file does not match the schema:\n{}",
        errors.join("\n")
    );
}
