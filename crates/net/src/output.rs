//! A connection's pending output: bytes, shared bodies and file ranges in
//! order. Memory goes out with writev (several pipelined responses in one
//! call); file ranges with sendfile(2) where the OS has it, or — asked for,
//! or where it has none — with pread and write through a buffer. Partial
//! writes and EAGAIN leave the rest queued.

use super::sock;
use std::collections::VecDeque;
use std::fs::File;
use std::io;
use std::os::fd::{AsRawFd, RawFd};
use std::os::unix::fs::FileExt;
use std::rc::Rc;

/// How file bodies are sent.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FileMode {
    /// sendfile(2), falling back to read/write where the OS lacks it.
    Sendfile,
    /// pread(2) into a buffer and write(2).
    Readwrite,
}

enum Chunk {
    /// Owned bytes and how many went out.
    Bytes(Vec<u8>, usize),
    /// A shared body (cached file contents) and how many went out.
    Shared(Rc<[u8]>, usize),
    /// A byte range of a file still to send.
    File {
        file: Rc<File>,
        offset: u64,
        end: u64,
    },
}

/// Pending output of one connection.
#[derive(Default)]
pub struct Output {
    chunks: VecDeque<Chunk>,
    /// Bytes still to go, memory and file ranges alike.
    queued: u64,
}

/// What a flush achieved.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Flushed {
    /// Everything went out.
    Done,
    /// The socket is full: wait until it is writable.
    Blocked,
}

/// Memory chunks one writev sends at most.
pub const IOV_MAX: usize = 16;

/// Bytes one flush sends from a file at most (keeps one connection from
/// holding the loop).
const FILE_BURST: u64 = 512 * 1024;

impl Output {
    /// Appends bytes (joined with the previous bytes when possible).
    pub fn bytes(&mut self, b: &[u8]) {
        self.queued += b.len() as u64;
        if let Some(Chunk::Bytes(v, _)) = self.chunks.back_mut() {
            v.extend_from_slice(b);
        } else {
            self.chunks.push_back(Chunk::Bytes(b.to_vec(), 0));
        }
    }

    /// Appends a shared body.
    pub fn shared(&mut self, body: Rc<[u8]>) {
        if !body.is_empty() {
            self.queued += body.len() as u64;
            self.chunks.push_back(Chunk::Shared(body, 0));
        }
    }

    /// Appends `len` bytes of `file` from `offset`.
    pub fn file(&mut self, file: Rc<File>, offset: u64, len: u64) {
        if len > 0 {
            self.queued += len;
            self.chunks.push_back(Chunk::File {
                file,
                offset,
                end: offset + len,
            });
        }
    }

    /// The memory bytes still to go, a file range as `<file>` (what a
    /// handler answered, for tests and fuzz targets).
    pub fn pending(&self) -> Vec<u8> {
        let mut v = Vec::new();
        for c in &self.chunks {
            match c {
                Chunk::Bytes(b, sent) => v.extend_from_slice(&b[*sent..]),
                Chunk::Shared(b, sent) => v.extend_from_slice(&b[*sent..]),
                Chunk::File { .. } => v.extend_from_slice(b"<file>"),
            }
        }
        v
    }

    /// The memory bytes still to go, as text (tests of handlers).
    #[cfg(test)]
    pub(crate) fn text_for_tests(&self) -> String {
        String::from_utf8_lossy(&self.pending()).into_owned()
    }

    /// Whether nothing is pending.
    pub fn is_empty(&self) -> bool {
        self.chunks.is_empty()
    }

    /// Bytes still to go: memory and file ranges alike (what bounds how
    /// far a connection's answers may run ahead of its reader).
    pub fn queued(&self) -> u64 {
        self.queued
    }

    /// Sends what it can to `fd`; `buf` is scratch space for read/write
    /// (given 64 KB when first needed, if it is empty).
    /// `last` says the connection closes after this output: on Linux the
    /// memory is then sent with MSG_MORE, so that the close's FIN rides on
    /// the last data segment instead of costing a packet of its own. Memory
    /// before a file range (a response head) is sent with MSG_MORE too, so
    /// that it leaves in one segment with the file's first bytes.
    pub fn flush(
        &mut self,
        fd: RawFd,
        mode: FileMode,
        buf: &mut Vec<u8>,
        last: bool,
    ) -> io::Result<Flushed> {
        while !self.chunks.is_empty() {
            if matches!(self.chunks.front(), Some(Chunk::File { .. })) {
                if self.send_file(fd, mode, buf)? == Flushed::Blocked {
                    return Ok(Flushed::Blocked);
                }
            } else if self.send_memory(fd, last)? == Flushed::Blocked {
                return Ok(Flushed::Blocked);
            }
        }
        Ok(Flushed::Done)
    }

    /// Points `iov` at the leading memory chunks (up to a file range or
    /// `iov.len()` chunks); returns how many entries it filled. The chunks
    /// do not move until [`Output::consume`] or the next append.
    pub fn gather(&self, iov: &mut [libc::iovec]) -> usize {
        let mut n = 0;
        for c in self.chunks.iter().take(iov.len()) {
            let rest: &[u8] = match c {
                Chunk::Bytes(v, sent) => &v[*sent..],
                Chunk::Shared(v, sent) => &v[*sent..],
                Chunk::File { .. } => break,
            };
            iov[n] = libc::iovec {
                iov_base: rest.as_ptr() as *mut libc::c_void,
                iov_len: rest.len(),
            };
            n += 1;
        }
        n
    }

    /// Drops `n` bytes sent from the leading memory chunks.
    pub fn consume(&mut self, mut n: usize) {
        while n > 0 {
            let Some(front) = self.chunks.front_mut() else {
                break;
            };
            let (len, sent) = match front {
                Chunk::Bytes(v, sent) => (v.len(), sent),
                Chunk::Shared(v, sent) => (v.len(), sent),
                Chunk::File { .. } => break,
            };
            let take = n.min(len - *sent);
            *sent += take;
            n -= take;
            self.queued -= take as u64;
            if *sent == len {
                self.chunks.pop_front();
            }
        }
    }

    /// Whether what goes out next is a file range.
    pub fn file_next(&self) -> bool {
        matches!(self.chunks.front(), Some(Chunk::File { .. }))
    }

    /// Whether a file range is queued anywhere (a response head before it
    /// goes with MSG_MORE).
    pub fn has_file(&self) -> bool {
        self.chunks.iter().any(|c| matches!(c, Chunk::File { .. }))
    }

    /// writev (sendmsg) of the leading memory chunks.
    fn send_memory(&mut self, fd: RawFd, last: bool) -> io::Result<Flushed> {
        let mut iov = [libc::iovec {
            iov_base: std::ptr::null_mut(),
            iov_len: 0,
        }; IOV_MAX];
        #[cfg(not(any(target_os = "linux", target_os = "android")))]
        let _ = last;
        let n = self.gather(&mut iov);
        let iov = &mut iov[..n];
        // On Linux, memory followed by a file range (a response head before
        // its body) goes with MSG_MORE so that the head and the first pages
        // of the body leave as one segment; so does the last output of a
        // closing connection (its FIN rides on the last data segment).
        let more = self.has_file() || last;
        let r = if more && cfg!(any(target_os = "linux", target_os = "android")) {
            #[cfg(any(target_os = "linux", target_os = "android"))]
            {
                // SAFETY: msghdr is plain data; the iovecs live until the call returns.
                let mut msg: libc::msghdr = unsafe { std::mem::zeroed() };
                msg.msg_iov = iov.as_mut_ptr();
                msg.msg_iovlen = iov.len() as _;
                // SAFETY: as above.
                unsafe { libc::sendmsg(fd, &msg, libc::MSG_MORE | libc::MSG_NOSIGNAL) }
            }
            #[cfg(not(any(target_os = "linux", target_os = "android")))]
            unreachable!()
        } else {
            // SAFETY: the iovecs point into chunks that live until the call returns.
            unsafe { libc::writev(fd, iov.as_ptr(), iov.len() as libc::c_int) }
        };
        if r < 0 {
            let e = io::Error::last_os_error();
            return match e.kind() {
                io::ErrorKind::WouldBlock => Ok(Flushed::Blocked),
                // Nothing went out: the caller's loop tries again.
                io::ErrorKind::Interrupted => Ok(Flushed::Done),
                _ => Err(e),
            };
        }
        self.consume(r as usize);
        Ok(Flushed::Done)
    }

    /// sendfile (or pread + write) of the leading file range.
    fn send_file(&mut self, fd: RawFd, mode: FileMode, buf: &mut Vec<u8>) -> io::Result<Flushed> {
        let Some(Chunk::File { file, offset, end }) = self.chunks.front_mut() else {
            return Ok(Flushed::Done);
        };
        let budget = (*end - *offset).min(FILE_BURST);
        let mut sent_total = 0u64;
        while sent_total < budget {
            let want = (budget - sent_total) as usize;
            let r = match mode {
                FileMode::Sendfile => match sys::sendfile(fd, file.as_raw_fd(), *offset, want) {
                    Err(e) if e.kind() == io::ErrorKind::Unsupported => {
                        read_write(fd, file, *offset, want, buf)
                    }
                    other => other,
                },
                FileMode::Readwrite => read_write(fd, file, *offset, want, buf),
            };
            match r {
                Ok(0) => {
                    // The file shrank under us: nothing more can be sent.
                    return Err(io::Error::new(
                        io::ErrorKind::UnexpectedEof,
                        "file shorter than announced",
                    ));
                }
                Ok(k) => {
                    *offset += k as u64;
                    sent_total += k as u64;
                    self.queued -= k as u64;
                }
                Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                Err(e) if e.kind() == io::ErrorKind::WouldBlock => return Ok(Flushed::Blocked),
                Err(e) => return Err(e),
            }
        }
        if *offset >= *end {
            self.chunks.pop_front();
            Ok(Flushed::Done)
        } else {
            // Burst used up: let other connections have a turn.
            Ok(Flushed::Blocked)
        }
    }
}

/// Scratch space [`read_write`] gives itself when it is handed none.
const SCRATCH: usize = 64 * 1024;

/// pread into `buf` and write what it can; returns bytes written. A short
/// write re-reads the rest next time (the offset only moves by what went
/// out).
fn read_write(
    fd: RawFd,
    file: &File,
    offset: u64,
    want: usize,
    buf: &mut Vec<u8>,
) -> io::Result<usize> {
    if buf.is_empty() {
        buf.resize(SCRATCH, 0);
    }
    let n = want.min(buf.len());
    let got = file.read_at(&mut buf[..n], offset)?;
    if got == 0 {
        return Ok(0);
    }
    sock::write(fd, &buf[..got])
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::{Read, Write};
    use std::os::unix::net::UnixStream;

    fn drain(mut s: UnixStream) -> Vec<u8> {
        let mut v = Vec::new();
        s.read_to_end(&mut v).unwrap();
        v
    }

    #[test]
    fn everything_goes_out_in_order_in_both_modes() {
        for mode in [FileMode::Sendfile, FileMode::Readwrite] {
            let dir = tempfile::tempdir().unwrap();
            let path = dir.path().join("f");
            let content: Vec<u8> = (0..300_000u32).map(|i| (i % 251) as u8).collect();
            std::fs::write(&path, &content).unwrap();
            let file = Rc::new(File::open(&path).unwrap());
            let (a, b) = UnixStream::pair().unwrap();
            a.set_nonblocking(true).unwrap();
            let reader = std::thread::spawn(move || drain(b));
            let mut o = Output::default();
            o.bytes(b"head1;");
            o.shared(Rc::from(&b"shared;"[..]));
            o.file(file.clone(), 10, 250_000);
            o.bytes(b";tail");
            assert_eq!(o.queued(), 6 + 7 + 250_000 + 5);
            let mut buf = vec![0u8; 16 * 1024];
            let mut rounds = 0;
            while o.flush(a.as_raw_fd(), mode, &mut buf, false).unwrap() == Flushed::Blocked {
                rounds += 1;
                assert!(rounds < 100_000);
                std::thread::sleep(std::time::Duration::from_micros(50));
            }
            assert!(o.is_empty());
            assert_eq!(o.queued(), 0, "{mode:?}");
            drop(a);
            let got = reader.join().unwrap();
            let mut want = b"head1;shared;".to_vec();
            want.extend_from_slice(&content[10..250_010]);
            want.extend_from_slice(b";tail");
            assert_eq!(got.len(), want.len(), "{mode:?}");
            assert!(got == want, "{mode:?}: content differs");
        }
    }

    #[test]
    fn a_closed_peer_is_an_error() {
        let (a, b) = UnixStream::pair().unwrap();
        drop(b);
        let mut o = Output::default();
        o.bytes(b"x");
        let mut buf = vec![0u8; 16];
        assert!(
            o.flush(a.as_raw_fd(), FileMode::Sendfile, &mut buf, true)
                .is_err()
        );
        let _ = (&a).write(b"");
    }
}
