//! The agent protocols' parsers, on any bytes: the hello a driving
//! scalebench reads from another build's `__hello` (`hosts::agent::Hello::
//! parse`, and `check_hello` on top of it), and the lines of the guest
//! protocol on the virtio port (`systems::guest::parse_command`, what a
//! guest reads from the host; `parse_ready` and `parse_done`, what the
//! host reads from a guest).
//!
//! Besides not panicking: what parses, written again as its writer writes
//! it, parses back equal; `check_hello` accepts exactly the hellos of
//! this protocol number; a parsed hello is written within the bounds the
//! parser holds a hello to.
#![no_main]

use libfuzzer_sys::fuzz_target;
use scalebench::hosts::agent::{self, Hello};
use scalebench::systems::guest::{self, Command};

fuzz_target!(|data: &[u8]| {
    let text = String::from_utf8_lossy(data);
    let text = text.as_ref();

    let parsed = Hello::parse(text);
    if let Ok(h) = &parsed {
        let line = h.to_line();
        assert!(line.len() <= agent::MAX_HELLO, "{} bytes", line.len());
        assert_eq!(Hello::parse(&line).as_ref(), Ok(h), "{line}");
        assert_eq!(Hello::parse(&format!("{line}\n")).as_ref(), Ok(h));
        assert_eq!(h.to_string(), line);
        assert!(h.describe().contains("agent protocol"));
        assert_eq!(
            h.same_build(h),
            h.build.as_deref().is_some_and(|b| b != "unknown")
        );
        assert_eq!(agent::compatible(h), h.protocol == agent::PROTOCOL);
    }
    match (agent::check_hello(text), &parsed) {
        (Ok(c), Ok(h)) => {
            assert_eq!(&c, h);
            assert_eq!(c.protocol, agent::PROTOCOL);
        }
        (Err(e), Ok(h)) => {
            assert_ne!(h.protocol, agent::PROTOCOL, "refused: {e}");
            assert!(e.contains(&format!("protocol {}", h.protocol)), "{e}");
        }
        (Err(e), Err(p)) => assert_eq!(&e, p),
        (Ok(c), Err(p)) => panic!("check_hello accepted {c:?}, parse refused: {p}"),
    }

    match guest::parse_command(text) {
        Ok(Command::Run(args)) => {
            let again = guest::parse_command(&guest::run_line(&args));
            assert_eq!(again, Ok(Command::Run(args)));
        }
        Ok(Command::Clock(d)) => {
            let again = guest::parse_command(&guest::clock_line(d));
            assert_eq!(again, Ok(Command::Clock(d)));
        }
        Ok(Command::PowerOff) => {
            assert_eq!(guest::parse_command("poweroff\n"), Ok(Command::PowerOff));
        }
        Err(_) => {}
    }
    if let Ok(release) = guest::parse_ready(text) {
        assert!(!release.is_empty());
        let line = format!("ready {} {release}\n", guest::PROTOCOL);
        assert_eq!(guest::parse_ready(&line), Ok(release));
    }
    if let Ok(code) = guest::parse_done(text) {
        assert_eq!(guest::parse_done(&format!("done {code}\n")), Ok(code));
    }
});
