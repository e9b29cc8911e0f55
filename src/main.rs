//! The `scalebench` binary: see the library for everything.

use std::process::ExitCode;

fn main() -> ExitCode {
    match scalebench::cli::main() {
        Ok(code) => code,
        Err(e) => {
            eprintln!("error: {}", scalebench::cli::error_words(&e));
            ExitCode::FAILURE
        }
    }
}
