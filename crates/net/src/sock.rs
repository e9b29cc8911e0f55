//! Thin socket helpers over raw `libc`, so that every call on a measured
//! path is exactly one system call.

use std::io;
use std::mem::{size_of, zeroed};
use std::net::{IpAddr, Ipv4Addr, Ipv6Addr, SocketAddr, SocketAddrV4, SocketAddrV6};
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd, RawFd};
use std::time::Duration;

fn check(r: libc::c_int) -> io::Result<libc::c_int> {
    if r < 0 {
        Err(io::Error::last_os_error())
    } else {
        Ok(r)
    }
}

/// A socket address in C form.
pub struct CAddr {
    storage: libc::sockaddr_storage,
    len: libc::socklen_t,
}

impl CAddr {
    /// Converts a Rust address.
    pub fn new(addr: &SocketAddr) -> CAddr {
        // SAFETY: sockaddr_storage is plain data, large enough for both kinds.
        let mut storage: libc::sockaddr_storage = unsafe { zeroed() };
        let len = match addr {
            SocketAddr::V4(a) => {
                // SAFETY: the storage is large and aligned enough.
                let sin = unsafe { &mut *(&mut storage as *mut _ as *mut libc::sockaddr_in) };
                sin.sin_family = libc::AF_INET as libc::sa_family_t;
                sin.sin_port = a.port().to_be();
                sin.sin_addr.s_addr = u32::from_ne_bytes(a.ip().octets());
                #[cfg(not(any(target_os = "linux", target_os = "android")))]
                {
                    sin.sin_len = size_of::<libc::sockaddr_in>() as u8;
                }
                size_of::<libc::sockaddr_in>()
            }
            SocketAddr::V6(a) => {
                // SAFETY: as above.
                let sin6 = unsafe { &mut *(&mut storage as *mut _ as *mut libc::sockaddr_in6) };
                sin6.sin6_family = libc::AF_INET6 as libc::sa_family_t;
                sin6.sin6_port = a.port().to_be();
                sin6.sin6_addr.s6_addr = a.ip().octets();
                sin6.sin6_scope_id = a.scope_id();
                #[cfg(not(any(target_os = "linux", target_os = "android")))]
                {
                    sin6.sin6_len = size_of::<libc::sockaddr_in6>() as u8;
                }
                size_of::<libc::sockaddr_in6>()
            }
        };
        CAddr {
            storage,
            len: len as libc::socklen_t,
        }
    }

    /// Pointer for the C calls.
    pub fn ptr(&self) -> *const libc::sockaddr {
        &self.storage as *const _ as *const libc::sockaddr
    }

    /// Length for the C calls.
    pub fn len(&self) -> libc::socklen_t {
        self.len
    }

    /// Always false: an address has a length.
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }
}

/// The address a socket is bound to.
pub fn local_addr(fd: RawFd) -> io::Result<SocketAddr> {
    // SAFETY: getsockname fills the storage up to `len`.
    let mut st: libc::sockaddr_storage = unsafe { zeroed() };
    let mut len = size_of::<libc::sockaddr_storage>() as libc::socklen_t;
    check(unsafe { libc::getsockname(fd, &mut st as *mut _ as *mut libc::sockaddr, &mut len) })?;
    match st.ss_family as libc::c_int {
        libc::AF_INET => {
            // SAFETY: the family says it is a sockaddr_in.
            let sin = unsafe { &*(&st as *const _ as *const libc::sockaddr_in) };
            let ip = Ipv4Addr::from(sin.sin_addr.s_addr.to_ne_bytes());
            Ok(SocketAddr::V4(SocketAddrV4::new(
                ip,
                u16::from_be(sin.sin_port),
            )))
        }
        libc::AF_INET6 => {
            // SAFETY: the family says it is a sockaddr_in6.
            let sin6 = unsafe { &*(&st as *const _ as *const libc::sockaddr_in6) };
            let ip = Ipv6Addr::from(sin6.sin6_addr.s6_addr);
            Ok(SocketAddr::V6(SocketAddrV6::new(
                ip,
                u16::from_be(sin6.sin6_port),
                0,
                sin6.sin6_scope_id,
            )))
        }
        f => Err(io::Error::other(format!("unexpected address family {f}"))),
    }
}

/// A new TCP socket for `addr`'s family, blocking, close-on-exec.
pub fn tcp_socket(addr: &SocketAddr) -> io::Result<OwnedFd> {
    let family = match addr.ip() {
        IpAddr::V4(_) => libc::AF_INET,
        IpAddr::V6(_) => libc::AF_INET6,
    };
    // SAFETY: plain socket() call.
    let fd = check(unsafe { libc::socket(family, libc::SOCK_STREAM, 0) })?;
    // SAFETY: we own the new descriptor.
    let fd = unsafe { OwnedFd::from_raw_fd(fd) };
    set_cloexec(fd.as_raw_fd())?;
    Ok(fd)
}

/// A new non-blocking, close-on-exec TCP socket for `addr`'s family: one
/// system call where the OS takes the flags in socket() (all but macOS).
pub fn tcp_socket_nonblocking(addr: &SocketAddr) -> io::Result<OwnedFd> {
    let family = match addr.ip() {
        IpAddr::V4(_) => libc::AF_INET,
        IpAddr::V6(_) => libc::AF_INET6,
    };
    #[cfg(not(target_vendor = "apple"))]
    {
        // SAFETY: plain socket() call.
        let fd = check(unsafe {
            libc::socket(
                family,
                libc::SOCK_STREAM | libc::SOCK_NONBLOCK | libc::SOCK_CLOEXEC,
                0,
            )
        })?;
        // SAFETY: we own the new descriptor.
        Ok(unsafe { OwnedFd::from_raw_fd(fd) })
    }
    #[cfg(target_vendor = "apple")]
    {
        let _ = family;
        let fd = tcp_socket(addr)?;
        set_nonblocking(fd.as_raw_fd(), true)?;
        Ok(fd)
    }
}

fn set_cloexec(fd: RawFd) -> io::Result<()> {
    // SAFETY: fcntl on our own descriptor.
    check(unsafe { libc::fcntl(fd, libc::F_SETFD, libc::FD_CLOEXEC) })?;
    Ok(())
}

fn setsockopt_int(
    fd: RawFd,
    level: libc::c_int,
    opt: libc::c_int,
    v: libc::c_int,
) -> io::Result<()> {
    // SAFETY: passing a valid int option.
    check(unsafe {
        libc::setsockopt(
            fd,
            level,
            opt,
            &v as *const _ as *const libc::c_void,
            size_of::<libc::c_int>() as libc::socklen_t,
        )
    })?;
    Ok(())
}

/// A non-blocking listening socket bound to `addr` (port 0: any free port),
/// with the given backlog. IPv6 sockets are IPv6-only.
pub fn listen(addr: &SocketAddr, backlog: i32) -> io::Result<OwnedFd> {
    listen_with(addr, backlog, false)
}

/// [`listen`], with SO_REUSEPORT when `reuseport` (several sockets, one
/// per worker, on the same port).
pub fn listen_with(addr: &SocketAddr, backlog: i32, reuseport: bool) -> io::Result<OwnedFd> {
    let fd = tcp_socket(addr)?;
    let raw = fd.as_raw_fd();
    setsockopt_int(raw, libc::SOL_SOCKET, libc::SO_REUSEADDR, 1)?;
    if reuseport {
        setsockopt_int(raw, libc::SOL_SOCKET, libc::SO_REUSEPORT, 1)?;
    }
    if addr.is_ipv6() {
        setsockopt_int(raw, libc::IPPROTO_IPV6, libc::IPV6_V6ONLY, 1)?;
    }
    let c = CAddr::new(addr);
    // SAFETY: binding our socket to a valid address.
    check(unsafe { libc::bind(raw, c.ptr(), c.len()) })?;
    // SAFETY: plain listen() call.
    check(unsafe { libc::listen(raw, backlog) })?;
    set_nonblocking(raw, true)?;
    Ok(fd)
}

/// Accepts one connection, non-blocking and close-on-exec.
#[inline]
pub fn accept(listener: RawFd) -> io::Result<RawFd> {
    #[cfg(not(target_vendor = "apple"))]
    {
        // SAFETY: accept4 with null address arguments.
        check(unsafe {
            libc::accept4(
                listener,
                std::ptr::null_mut(),
                std::ptr::null_mut(),
                libc::SOCK_NONBLOCK | libc::SOCK_CLOEXEC,
            )
        })
    }
    #[cfg(target_vendor = "apple")]
    {
        // SAFETY: accept with null address arguments.
        let fd =
            check(unsafe { libc::accept(listener, std::ptr::null_mut(), std::ptr::null_mut()) })?;
        set_cloexec(fd)?;
        set_nonblocking(fd, true)?;
        Ok(fd)
    }
}

/// Sets or clears O_NONBLOCK.
pub fn set_nonblocking(fd: RawFd, on: bool) -> io::Result<()> {
    // SAFETY: fcntl on our own descriptor.
    let flags = check(unsafe { libc::fcntl(fd, libc::F_GETFL) })?;
    let flags = if on {
        flags | libc::O_NONBLOCK
    } else {
        flags & !libc::O_NONBLOCK
    };
    // SAFETY: as above.
    check(unsafe { libc::fcntl(fd, libc::F_SETFL, flags) })?;
    Ok(())
}

/// Disables Nagle's algorithm.
pub fn set_nodelay(fd: RawFd) -> io::Result<()> {
    setsockopt_int(fd, libc::IPPROTO_TCP, libc::TCP_NODELAY, 1)
}

/// Makes close() abort the connection (RST) instead of the orderly FIN
/// handshake, so that no TIME_WAIT socket is left behind to hold a port.
pub fn set_linger_zero(fd: RawFd) -> io::Result<()> {
    let l = libc::linger {
        l_onoff: 1,
        l_linger: 0,
    };
    // SAFETY: passing a valid linger option.
    check(unsafe {
        libc::setsockopt(
            fd,
            libc::SOL_SOCKET,
            libc::SO_LINGER,
            &l as *const _ as *const libc::c_void,
            size_of::<libc::linger>() as libc::socklen_t,
        )
    })?;
    Ok(())
}

/// Bounds every blocking send, receive (and, on Linux, connect) on `fd`.
pub fn set_timeouts(fd: RawFd, t: Duration) -> io::Result<()> {
    let tv = libc::timeval {
        tv_sec: t.as_secs() as _,
        tv_usec: t.subsec_micros() as _,
    };
    for opt in [libc::SO_RCVTIMEO, libc::SO_SNDTIMEO] {
        // SAFETY: passing a valid timeval option.
        check(unsafe {
            libc::setsockopt(
                fd,
                libc::SOL_SOCKET,
                opt,
                &tv as *const _ as *const libc::c_void,
                size_of::<libc::timeval>() as libc::socklen_t,
            )
        })?;
    }
    Ok(())
}

/// bind() to `addr` (port 0: the OS picks one, at bind() or, after
/// [`sys::bind_address_no_port`], at connect()).
pub fn bind(fd: RawFd, addr: &SocketAddr) -> io::Result<()> {
    let a = CAddr::new(addr);
    // SAFETY: binding our socket to a valid address.
    check(unsafe { libc::bind(fd, a.ptr(), a.len()) })?;
    Ok(())
}

/// connect(): exactly one system call, retried only on EINTR.
#[inline]
pub fn connect(fd: RawFd, addr: &CAddr) -> io::Result<()> {
    // SAFETY: connecting our socket to a valid address.
    check(unsafe { libc::connect(fd, addr.ptr(), addr.len()) })?;
    Ok(())
}

/// The pending error of a socket (SO_ERROR; how a non-blocking connect
/// that failed says why), `None` when there is none.
pub fn take_error(fd: RawFd) -> io::Result<Option<i32>> {
    let mut v: libc::c_int = 0;
    let mut len = size_of::<libc::c_int>() as libc::socklen_t;
    // SAFETY: reading an int option into a live int.
    check(unsafe {
        libc::getsockopt(
            fd,
            libc::SOL_SOCKET,
            libc::SO_ERROR,
            &mut v as *mut _ as *mut libc::c_void,
            &mut len,
        )
    })?;
    Ok((v != 0).then_some(v))
}

/// Whether a socket is connected to its peer (getpeername() succeeds: a
/// non-blocking connect() has completed).
pub fn is_connected(fd: RawFd) -> bool {
    // SAFETY: getpeername fills the storage up to `len`.
    let mut st: libc::sockaddr_storage = unsafe { zeroed() };
    let mut len = size_of::<libc::sockaddr_storage>() as libc::socklen_t;
    unsafe { libc::getpeername(fd, &mut st as *mut _ as *mut libc::sockaddr, &mut len) == 0 }
}

/// read() into `buf`.
#[inline]
pub fn read(fd: RawFd, buf: &mut [u8]) -> io::Result<usize> {
    // SAFETY: reading into a live buffer.
    let r = unsafe { libc::read(fd, buf.as_mut_ptr().cast(), buf.len()) };
    if r < 0 {
        Err(io::Error::last_os_error())
    } else {
        Ok(r as usize)
    }
}

/// write() from `buf`.
#[inline]
pub fn write(fd: RawFd, buf: &[u8]) -> io::Result<usize> {
    // SAFETY: writing from a live buffer.
    let r = unsafe { libc::write(fd, buf.as_ptr().cast(), buf.len()) };
    if r < 0 {
        Err(io::Error::last_os_error())
    } else {
        Ok(r as usize)
    }
}

/// Closes a raw descriptor.
pub fn close(fd: RawFd) {
    // SAFETY: closing a descriptor the caller owns.
    unsafe { libc::close(fd) };
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn listen_on_port_zero_reports_the_real_port() {
        for a in ["127.0.0.1:0", "[::1]:0"] {
            let addr: SocketAddr = a.parse().unwrap();
            let Ok(l) = listen(&addr, 16) else {
                assert!(addr.is_ipv6(), "IPv4 loopback must work");
                continue; // no IPv6 loopback on this host
            };
            let got = local_addr(l.as_raw_fd()).unwrap();
            assert_eq!(got.ip(), addr.ip());
            assert_ne!(got.port(), 0);
            let c = tcp_socket(&got).unwrap();
            connect(c.as_raw_fd(), &CAddr::new(&got)).unwrap();
        }
    }
}
