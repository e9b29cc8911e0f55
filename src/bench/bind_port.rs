//! `bind-port`: bind() of a TCP socket to one fixed port at a new loopback
//! address while n sockets already hold that port, each at an address of
//! its own. Without SO_REUSEADDR or SO_REUSEPORT the kernel must make sure
//! no socket holds that address and port already, nor the port at the
//! wildcard address: how it finds the sockets that could conflict is what
//! this benchmark sees.
//!
//! n is the sockets bound to the port at 127.0.0.3, 127.0.0.4, … (one
//! address each, counting up through 127/8 past 127.0.0.255 into
//! 127.0.1.0 and on: room for 16 777 212). The port itself is reserved
//! first by a socket bound to 127.0.0.2 with port 0 (the kernel picks a
//! port no other socket holds, and that socket keeps it, for the whole
//! run, from any other process), which n does not count. The timed
//! operation is one bind() of a socket opened (untimed) just before to the
//! next address and that port; the undo closes the socket bound last, so
//! runs go up and down.
//!
//! Expected: O(n) on Linux before 6.1, where the bind hash table is hashed
//! by port alone and bind() walks every socket holding the port to find a
//! conflict; O(1) from 6.1, which added a second table hashed by port and
//! address ("tcp: Add a bhash2 table hashed by port and address", Joanne
//! Koong), so that a bind to a given address looks at that address's
//! sockets only.
//!
//! Every 127/8 address is local on Linux; the BSDs and macOS configure
//! only 127.0.0.1 on the loopback interface unless told otherwise, and a
//! run there says which address is missing rather than measure anything.

use super::{Benchmark, Info, Run, StartError, StepError, step_error_for};
use crate::ctx::Ctx;
use crate::harness::Resource;
use crate::harness::clock::Stopwatch;
use crate::sys::Knob;
use anyhow::anyhow;
use std::net::{Ipv4Addr, SocketAddr};
use std::os::fd::{AsRawFd, OwnedFd};

/// The `bind-port` benchmark.
pub struct BindPort;

static INFO: Info = Info {
    name: "bind-port",
    n_meaning: "sockets holding the run's port, each at a loopback address of its own",
    timed: "bind() of a TCP socket opened (untimed) just before to that port at the next \
            127/8 address (no SO_REUSEADDR)",
    uses: &[Resource::Descriptors],
    knobs: &[Knob::FilesPerProcess],
    quick_n: 10_000,
    full_n: 10_000,
};

/// The address that reserves the port: 127.0.0.2 (127.0.0.1 is left to
/// everything else).
const RESERVER: u32 = 0x7f00_0002;

/// The first address of the n holders.
const FIRST: u32 = RESERVER + 1;

/// The last address used: 127.255.255.254 (127.255.255.255 is the
/// loopback network's broadcast address).
const LAST: u32 = 0x7fff_fffe;

/// Holders there is room for: from [`FIRST`] to [`LAST`].
pub(crate) const MOST: u64 = (LAST - FIRST) as u64 + 1;

/// The address of holder `i` (0-based), or `None` past [`LAST`].
pub(crate) fn holder_address(i: u64) -> Option<Ipv4Addr> {
    (i < MOST).then(|| Ipv4Addr::from(FIRST + i as u32))
}

/// `ip:port` as a sockaddr_in.
fn sockaddr(ip: Ipv4Addr, port: u16) -> libc::sockaddr_in {
    let mut a = super::bind::loopback_any_port();
    a.sin_port = port.to_be();
    a.sin_addr.s_addr = u32::from(ip).to_be();
    a
}

/// bind() of `fd` to `a`: 0 or the errno.
fn bind_to(fd: i32, a: &libc::sockaddr_in, sw: Option<&mut Stopwatch>) -> i32 {
    let p = a as *const libc::sockaddr_in as *const libc::sockaddr;
    let len = std::mem::size_of::<libc::sockaddr_in>() as libc::socklen_t;
    // SAFETY: binding our own socket to a valid sockaddr_in.
    let r = Stopwatch::maybe(sw, || unsafe { libc::bind(fd, p, len) });
    if r == 0 { 0 } else { crate::sys::errno() }
}

/// A TCP socket, closed on exec (so that no process started meanwhile
/// keeps a holder's port after the run closed it) and when dropped.
struct Sock(OwnedFd);

impl Sock {
    fn open() -> std::io::Result<Sock> {
        let any = SocketAddr::new(Ipv4Addr::LOCALHOST.into(), 0);
        crate::net::sock::tcp_socket(&any).map(Sock)
    }

    fn fd(&self) -> i32 {
        self.0.as_raw_fd()
    }
}

/// Why `ip` cannot be bound here, in words, for a start error.
fn not_local(ip: Ipv4Addr, n: u64, errno: i32) -> StartError {
    StartError::Unsupported(format!(
        "bind-port needs the loopback addresses 127.0.0.2 to {ip} for n = {n}, but {ip} is not \
         an address of this system (bind() failed with {}): {} configures only 127.0.0.1 on its \
         loopback interface unless more are added (or run with a smaller --max)",
        crate::sys::errno_name(errno),
        std::env::consts::OS
    ))
}

/// Reserves a port: binds a socket to 127.0.0.2 port 0 and reads back
/// the port the kernel chose.
fn reserve(n: u64) -> Result<(Sock, u16), StartError> {
    let s = Sock::open().map_err(|e| anyhow!("socket(): {e}"))?;
    let e = bind_to(s.fd(), &sockaddr(Ipv4Addr::from(RESERVER), 0), None);
    if e == libc::EADDRNOTAVAIL {
        return Err(not_local(Ipv4Addr::from(RESERVER), n, e));
    }
    if e != 0 {
        let err = std::io::Error::from_raw_os_error(e);
        return Err(anyhow!("bind(127.0.0.2:0) to reserve a port: {err}").into());
    }
    let port = crate::net::sock::local_addr(s.fd())
        .map_err(|e| anyhow!("getsockname() of the port's reserving socket: {e}"))?
        .port();
    Ok((s, port))
}

/// Checks that the last address a run of `n` needs can be bound (the
/// BSDs and macOS have only the addresses configured).
fn check_last(n: u64) -> Result<(), StartError> {
    let Some(last) = n.checked_sub(1).and_then(holder_address) else {
        return Ok(());
    };
    let s = Sock::open().map_err(|e| anyhow!("socket(): {e}"))?;
    match bind_to(s.fd(), &sockaddr(last, 0), None) {
        0 => Ok(()),
        e if e == libc::EADDRNOTAVAIL => Err(not_local(last, n, e)),
        e => {
            let err = std::io::Error::from_raw_os_error(e);
            Err(anyhow!("bind({last}:0) to check the address: {err}").into())
        }
    }
}

struct BindPortRun {
    /// Keeps the port for the run.
    _reserver: Sock,
    port: u16,
    /// The holders, in the order of their addresses.
    bound: Vec<Sock>,
}

impl Benchmark for BindPort {
    fn info(&self) -> &'static Info {
        &INFO
    }

    /// Closing the socket bound last frees its address; the next bind
    /// takes it again.
    fn downwards(&self) -> bool {
        true
    }

    fn start(&self, _ctx: &Ctx, _variant: Option<&str>, n: u64) -> Result<Box<dyn Run>, StartError> {
        Ok(Box::new(BindPortRun::new(n)?))
    }
}

impl BindPortRun {
    /// A run that will hold up to `n` sockets: the port reserved, the last
    /// address checked.
    fn new(n: u64) -> Result<BindPortRun, StartError> {
        if n > MOST {
            return Err(anyhow!(
                "bind-port: n = {n} is more holders than 127/8 has addresses for: from \
                 127.0.0.3 to 127.255.255.254 there are {MOST}"
            )
            .into());
        }
        let (reserver, port) = reserve(n)?;
        check_last(n)?;
        Ok(BindPortRun {
            _reserver: reserver,
            port,
            bound: Vec::with_capacity(n as usize),
        })
    }
}

impl Run for BindPortRun {
    fn held(&self) -> u64 {
        self.bound.len() as u64
    }

    fn op(&mut self, sw: &mut Stopwatch) -> Result<(), StepError> {
        let held = self.held();
        let ip = holder_address(held)
            .ok_or_else(|| anyhow!("no loopback address left for holder {}", held + 1))?;
        let s = Sock::open().map_err(|e| {
            let errno = e.raw_os_error().unwrap_or(0);
            let limits = [libc::EMFILE, libc::ENFILE, libc::ENOBUFS, libc::ENOMEM];
            step_error_for("socket()", held, Resource::Descriptors, &limits, errno)
        })?;
        let e = bind_to(s.fd(), &sockaddr(ip, self.port), Some(sw));
        if e != 0 {
            let call = format!("bind({ip}:{})", self.port);
            return Err(step_error_for(&call, held, Resource::Descriptors, &[], e));
        }
        self.bound.push(s);
        Ok(())
    }

    fn undo(&mut self, _sw: &mut Stopwatch) -> Result<(), StepError> {
        self.bound.pop();
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::harness::clock::Clock;
    use crate::results::TimerKind;

    #[test]
    fn holders_count_up_through_127_8_past_each_byte() {
        assert_eq!(holder_address(0), Some(Ipv4Addr::new(127, 0, 0, 3)));
        assert_eq!(holder_address(252), Some(Ipv4Addr::new(127, 0, 0, 255)));
        assert_eq!(holder_address(253), Some(Ipv4Addr::new(127, 0, 1, 0)));
        assert_eq!(holder_address(MOST - 1), Some(Ipv4Addr::new(127, 255, 255, 254)));
        assert_eq!(holder_address(MOST), None);
        assert_eq!(MOST, 16_777_212);
        let a = sockaddr(Ipv4Addr::new(127, 1, 2, 3), 4567);
        assert_eq!(u16::from_be(a.sin_port), 4567);
        assert_eq!(a.sin_addr.s_addr.to_ne_bytes(), [127, 1, 2, 3]);
    }

    #[test]
    fn too_many_holders_are_refused_by_name() {
        let clock = Clock::new(TimerKind::Monotonic).unwrap();
        let dir = tempfile::tempdir().unwrap();
        let ctx = Ctx::new(dir.path(), &clock);
        let Err(e) = BindPort.start(&ctx, None, MOST + 1) else {
            panic!("started a run of {} holders", MOST + 1);
        };
        assert!(e.to_string().contains("bind-port: n = 16777213"), "{e}");
    }

    #[test]
    fn a_run_binds_its_port_at_address_after_address_and_undoes() {
        let clock = Clock::new(TimerKind::Monotonic).unwrap();
        let mut run = match BindPortRun::new(300) {
            Ok(r) => r,
            Err(StartError::Unsupported(why)) if !crate::sys::whole_loopback_net() => {
                assert!(why.contains("127.0.0.2"), "{why}");
                return;
            }
            Err(e) => panic!("{e}"),
        };
        let mut sw = Stopwatch::new(&clock);
        for i in 0..300 {
            assert_eq!(run.held(), i);
            run.op(&mut sw).unwrap();
            assert!(sw.take_ns().is_some());
        }
        // Every holder has the port at its own address.
        let mut seen = std::collections::HashSet::new();
        for (i, s) in run.bound.iter().enumerate() {
            let a = crate::net::sock::local_addr(s.fd()).unwrap();
            assert_eq!(a.port(), run.port);
            assert_eq!(a.ip(), std::net::IpAddr::V4(holder_address(i as u64).unwrap()));
            assert!(seen.insert(a));
        }
        // Nothing else can take the reserved port at 127.0.0.2.
        let s = Sock::open().unwrap();
        let e = bind_to(s.fd(), &sockaddr(Ipv4Addr::from(RESERVER), run.port), None);
        assert_eq!(e, libc::EADDRINUSE);
        // Undone, an address binds again: the last one (127.0.1.46, which
        // nothing else here binds; 127.0.0.3 may meanwhile be any other
        // test's source address with that port).
        run.undo(&mut sw).unwrap();
        // Other tests of this process fork: a child holds a copy of every
        // descriptor until it execs, so the port a closed holder had may
        // stay taken for a moment (in a run nothing forks beside it).
        let mut tries = 0;
        while let Err(e) = run.op(&mut sw) {
            tries += 1;
            assert!(
                tries < 500 && e.to_string().contains("EADDRINUSE"),
                "{e} after {tries} tries"
            );
            std::thread::sleep(std::time::Duration::from_millis(10));
        }
        assert_eq!(run.held(), 300);
        for i in (0..300).rev() {
            run.undo(&mut sw).unwrap();
            assert_eq!(run.held(), i);
        }
    }
}
