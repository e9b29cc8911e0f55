//! Network namespaces and batched UDP sends: what the test bed
//! (scalebench's `testbed`) and the `forward` workload need from the OS.
//!
//! Network namespaces are Linux's; elsewhere [`supported`] says so and the
//! rest returns `Unsupported`. A thread may join another network namespace
//! (`setns(2)` with `CLONE_NEWNET` acts on the calling thread only), and a
//! socket or a `/proc/thread-self/net` file opened there stays in that
//! namespace for its whole life: [`run_in`] runs a closure on a fresh
//! thread inside a namespace, so the caller's own threads never move.

use std::io;
use std::net::{SocketAddrV4, UdpSocket};
use std::path::{Path, PathBuf};

/// Whether this OS has network namespaces: `Err` names the OS otherwise.
pub fn supported() -> Result<(), String> {
    if cfg!(target_os = "linux") {
        Ok(())
    } else {
        Err(format!(
            "unsupported on {}: network namespaces are Linux's",
            std::env::consts::OS
        ))
    }
}

/// Whether this process may make network namespaces, links and routes:
/// `Err` says what is missing (root, or CAP_NET_ADMIN with CAP_SYS_ADMIN).
pub fn privileged() -> Result<(), String> {
    supported()?;
    // CAP_NET_ADMIN = 12 (links, addresses, routes, qdiscs), CAP_SYS_ADMIN
    // = 21 (`ip netns add` mounts the namespace; setns).
    let caps = std::fs::read_to_string("/proc/self/status")
        .ok()
        .and_then(|s| {
            s.lines()
                .find_map(|l| l.strip_prefix("CapEff:"))
                .and_then(|v| u64::from_str_radix(v.trim(), 16).ok())
        })
        .unwrap_or(0);
    let want = [(12, "CAP_NET_ADMIN"), (21, "CAP_SYS_ADMIN")];
    let missing: Vec<&str> = want
        .iter()
        .filter(|(bit, _)| caps & (1u64 << bit) == 0)
        .map(|(_, n)| *n)
        .collect();
    if missing.is_empty() {
        Ok(())
    } else {
        Err(format!(
            "network namespaces need root (CAP_NET_ADMIN and CAP_SYS_ADMIN; this process lacks {})",
            missing.join(" and ")
        ))
    }
}

/// Runs `f` on a new thread that has joined the network namespace `ns`
/// (a file such as `/run/netns/NAME`) and returns what it returned.
/// Sockets and `/proc/thread-self/net/…` files it opens belong to that
/// namespace; the calling thread stays where it is.
pub fn run_in<T: Send>(ns: &Path, f: impl FnOnce() -> T + Send) -> io::Result<T> {
    supported().map_err(|e| io::Error::new(io::ErrorKind::Unsupported, e))?;
    let file = std::fs::File::open(ns)?;
    std::thread::scope(|s| {
        let h = s.spawn(|| {
            join(&file)?;
            Ok(f())
        });
        match h.join() {
            Ok(r) => r,
            Err(p) => std::panic::resume_unwind(p),
        }
    })
}

#[cfg(target_os = "linux")]
fn join(ns: &std::fs::File) -> io::Result<()> {
    use std::os::fd::AsRawFd;
    // SAFETY: setns on a descriptor we own; it moves this thread only.
    if unsafe { libc::setns(ns.as_raw_fd(), libc::CLONE_NEWNET) } != 0 {
        return Err(io::Error::last_os_error());
    }
    Ok(())
}

#[cfg(not(target_os = "linux"))]
fn join(_ns: &std::fs::File) -> io::Result<()> {
    Err(io::ErrorKind::Unsupported.into())
}

/// The file of the sysctl `name` (`net.ipv4.ip_forward`) as the
/// network namespace of the thread reading it sees it (Linux).
pub fn sysctl_path(name: &str) -> PathBuf {
    Path::new("/proc/sys").join(name.replace('.', "/"))
}

/// Whether the kernel has IPv6 (Linux: its sysctls exist).
pub fn has_ipv6() -> bool {
    Path::new("/proc/sys/net/ipv6").exists()
}

/// The inode of the network namespace this process is in.
pub fn current() -> Option<u64> {
    inode(Path::new("/proc/self/ns/net"))
}

/// The interface counters (`/proc/net/dev`) of the network namespace the
/// calling thread is in (Linux).
pub fn net_dev() -> io::Result<std::fs::File> {
    std::fs::File::open("/proc/thread-self/net/dev")
}

/// The identity of a namespace file (its inode): `/run/netns/NAME` and
/// `/proc/PID/ns/net` of a process inside it have the same one.
pub fn inode(path: &Path) -> Option<u64> {
    use std::os::unix::fs::MetadataExt;
    std::fs::metadata(path).ok().map(|m| m.ino())
}

/// Batches of UDP datagrams of one payload to a list of destinations taken
/// in turn: `sendmmsg(2)` on Linux (one system call per batch), a loop of
/// `sendto` elsewhere. Nothing is allocated per send.
pub struct UdpBatch {
    dests: Vec<SocketAddrV4>,
    payload: Vec<u8>,
    next: usize,
    batch: usize,
    #[cfg(target_os = "linux")]
    raw: linux::Raw,
}

impl UdpBatch {
    /// At most `batch` (1–1024) datagrams of `payload` per [`send`](Self::send),
    /// to `dests` in turn.
    pub fn new(dests: &[SocketAddrV4], payload: &[u8], batch: usize) -> UdpBatch {
        let batch = batch.clamp(1, 1024);
        UdpBatch {
            #[cfg(target_os = "linux")]
            raw: linux::Raw::new(dests, batch),
            dests: dests.to_vec(),
            payload: payload.to_vec(),
            next: 0,
            batch,
        }
    }

    /// The most datagrams one call sends.
    pub fn batch(&self) -> usize {
        self.batch
    }

    /// Sends up to `n` datagrams (at most [`batch`](Self::batch)) without
    /// blocking; returns how many the kernel took (0 when the socket
    /// would block).
    pub fn send(&mut self, sock: &UdpSocket, n: usize) -> io::Result<usize> {
        if self.dests.is_empty() || n == 0 {
            return Ok(0);
        }
        let n = n.min(self.batch());
        #[cfg(target_os = "linux")]
        let sent = self.raw.send(sock, &self.payload, self.next, n);
        #[cfg(not(target_os = "linux"))]
        let sent = {
            let mut k = 0;
            let mut r = Ok(0);
            while k < n {
                let d = self.dests[(self.next + k) % self.dests.len()];
                match sock.send_to(&self.payload, d) {
                    Ok(_) => k += 1,
                    Err(e) if e.kind() == io::ErrorKind::WouldBlock => break,
                    Err(e) => {
                        r = Err(e);
                        break;
                    }
                }
            }
            if k > 0 { Ok(k) } else { r }
        };
        let sent = match sent {
            Err(e) if e.kind() == io::ErrorKind::WouldBlock => 0,
            other => other?,
        };
        self.next = (self.next + sent) % self.dests.len();
        Ok(sent)
    }
}

#[cfg(target_os = "linux")]
mod linux {
    use std::io;
    use std::net::{SocketAddrV4, UdpSocket};
    use std::os::fd::AsRawFd;

    /// The C structures of one `sendmmsg` batch; pointers are set on every
    /// send (the vectors never grow, so their buffers never move).
    pub(super) struct Raw {
        addrs: Vec<libc::sockaddr_in>,
        iov: Vec<libc::iovec>,
        hdrs: Vec<libc::mmsghdr>,
    }

    // SAFETY: the raw pointers only ever point into the struct's own
    // vectors and the caller's payload during a call.
    unsafe impl Send for Raw {}

    impl Raw {
        pub(super) fn new(dests: &[SocketAddrV4], batch: usize) -> Raw {
            let addrs = dests
                .iter()
                .map(|d| libc::sockaddr_in {
                    sin_family: libc::AF_INET as libc::sa_family_t,
                    sin_port: d.port().to_be(),
                    sin_addr: libc::in_addr {
                        s_addr: u32::from(*d.ip()).to_be(),
                    },
                    sin_zero: [0; 8],
                })
                .collect();
            Raw {
                addrs,
                iov: vec![
                    libc::iovec {
                        iov_base: std::ptr::null_mut(),
                        iov_len: 0,
                    };
                    batch
                ],
                // SAFETY: mmsghdr is plain data; all-zero is a valid value.
                hdrs: vec![unsafe { std::mem::zeroed() }; batch],
            }
        }

        pub(super) fn send(
            &mut self,
            sock: &UdpSocket,
            payload: &[u8],
            first: usize,
            n: usize,
        ) -> io::Result<usize> {
            let len = self.addrs.len();
            for i in 0..n {
                self.iov[i] = libc::iovec {
                    iov_base: payload.as_ptr() as *mut libc::c_void,
                    iov_len: payload.len(),
                };
                let h = &mut self.hdrs[i];
                h.msg_hdr.msg_name =
                    &mut self.addrs[(first + i) % len] as *mut _ as *mut libc::c_void;
                h.msg_hdr.msg_namelen = std::mem::size_of::<libc::sockaddr_in>() as libc::socklen_t;
                h.msg_hdr.msg_iov = &mut self.iov[i];
                h.msg_hdr.msg_iovlen = 1;
                h.msg_len = 0;
            }
            // SAFETY: n headers, each pointing at a live address and iovec
            // over the payload, which outlive the call.
            let r = unsafe {
                libc::sendmmsg(
                    sock.as_raw_fd(),
                    self.hdrs.as_mut_ptr(),
                    n as libc::c_uint,
                    libc::MSG_DONTWAIT as _, // c_int on glibc, c_uint on musl
                )
            };
            if r < 0 {
                Err(io::Error::last_os_error())
            } else {
                Ok(r as usize)
            }
        }
    }
}

#[cfg(all(test, target_os = "linux"))]
mod tests {
    use super::*;

    #[test]
    fn batches_reach_every_destination_in_turn() {
        let rx: Vec<UdpSocket> = (0..3)
            .map(|_| UdpSocket::bind("127.0.0.1:0").unwrap())
            .collect();
        let dests: Vec<SocketAddrV4> = rx
            .iter()
            .map(|s| match s.local_addr().unwrap() {
                std::net::SocketAddr::V4(a) => a,
                _ => unreachable!(),
            })
            .collect();
        let tx = UdpSocket::bind("127.0.0.1:0").unwrap();
        let mut b = UdpBatch::new(&dests, &[7u8; 64], 4);
        assert_eq!(b.batch(), 4);
        assert_eq!(b.send(&tx, 10).unwrap(), 4, "at most one batch");
        assert_eq!(b.send(&tx, 2).unwrap(), 2);
        // 6 datagrams over 3 receivers in turn: 2 each.
        let mut buf = [0u8; 128];
        for r in &rx {
            r.set_read_timeout(Some(std::time::Duration::from_secs(2)))
                .unwrap();
            for _ in 0..2 {
                assert_eq!(r.recv(&mut buf).unwrap(), 64);
            }
            r.set_nonblocking(true).unwrap();
            assert!(r.recv(&mut buf).is_err(), "no third datagram");
        }
    }

    #[test]
    fn support_and_privilege_are_said_in_words() {
        assert!(supported().is_ok());
        // SAFETY: geteuid has no preconditions.
        if unsafe { libc::geteuid() } == 0 {
            assert_eq!(privileged(), Ok(()));
        } else {
            assert!(privileged().unwrap_err().contains("root"));
        }
    }
}
