//! The `scalebench` binary: see the library for everything.

use std::process::ExitCode;

fn main() -> ExitCode {
    // As the init of a guest booted by a `kernel:` system.
    #[cfg(target_os = "linux")]
    if std::process::id() == 1 && std::env::args_os().next().is_some_and(|a| a == "/init") {
        scalebench::systems::guest::init();
    }
    match scalebench::cli::main() {
        Ok(code) => code,
        Err(e) => {
            sys::say!("error: {}", scalebench::cli::error_words(&e));
            scalebench::cli::exit_status(&e)
        }
    }
}
