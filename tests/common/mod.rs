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

/// A child process a test started: stopped and reaped on drop — its input
/// closed, SIGTERM (nginx's master then stops its workers), SIGKILL if it
/// lingers.
pub struct Child(pub std::process::Child);

impl Drop for Child {
    fn drop(&mut self) {
        drop(self.0.stdin.take());
        // SAFETY: signalling our own child.
        unsafe { libc::kill(self.0.id() as i32, libc::SIGTERM) };
        for _ in 0..200 {
            if matches!(self.0.try_wait(), Ok(Some(_))) {
                return;
            }
            std::thread::sleep(std::time::Duration::from_millis(10));
        }
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

/// Starts `cmd` with its input and output piped and reads the first line
/// it prints, which must begin with `prefix` (a server announcing where it
/// listens); returns the child and the rest of that line.
pub fn spawn_announcing(cmd: &mut Command, prefix: &str) -> (Child, String) {
    use std::io::BufRead;
    let mut child = Child(
        cmd.stdin(std::process::Stdio::piped())
            .stdout(std::process::Stdio::piped())
            .spawn()
            .expect("the server starts"),
    );
    let mut line = String::new();
    std::io::BufReader::new(child.0.stdout.as_mut().expect("piped"))
        .read_line(&mut line)
        .expect("the server prints a line");
    let rest = line
        .trim()
        .strip_prefix(prefix)
        .unwrap_or_else(|| panic!("expected {prefix:?}…, got {line:?}"))
        .to_string();
    (child, rest)
}
