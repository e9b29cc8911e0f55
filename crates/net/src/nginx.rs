//! nginx as the server under test, the way the DragonFly slides ran it:
//! scalebench writes the configuration (worker processes, reuseport,
//! access log off, sendfile, worker_connections from the open-files
//! limit) in a directory of its own, starts nginx in the foreground as
//! its child, checks that it answers, and stops it — SIGTERM, then
//! SIGKILL after 5 s — when asked or when dropped.

use std::io::{self, Read, Write};
use std::net::{SocketAddr, TcpStream};
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

/// How nginx is to serve.
#[derive(Debug, Clone)]
pub struct Setup {
    /// The directory served.
    pub root: PathBuf,
    /// Where its configuration, pid file and logs go.
    pub dir: PathBuf,
    /// The address to listen on (a port of 0 picks a free one first).
    pub addr: SocketAddr,
    /// Worker processes.
    pub workers: u32,
    /// A SO_REUSEPORT socket per worker (`listen … reuseport`).
    pub reuseport: bool,
}

/// A running nginx.
pub struct Nginx {
    child: Option<Child>,
    /// Where it listens.
    pub addr: SocketAddr,
    /// `nginx/1.22.1`, as `nginx -v` says.
    pub version: String,
    /// The configuration it runs with.
    pub config: String,
    error_log: PathBuf,
}

/// The nginx binary: on the PATH, or in /usr/sbin.
pub fn binary() -> Option<PathBuf> {
    let path = std::env::var_os("PATH").unwrap_or_default();
    std::env::split_paths(&path)
        .chain([PathBuf::from("/usr/sbin"), PathBuf::from("/usr/local/sbin")])
        .map(|d| d.join("nginx"))
        .find(|p| p.is_file())
}

/// Its version, from `nginx -v` (which writes to standard error).
fn version(bin: &Path) -> io::Result<String> {
    let o = Command::new(bin).arg("-v").output()?;
    let text =
        String::from_utf8_lossy(&o.stderr).into_owned() + &String::from_utf8_lossy(&o.stdout);
    Ok(text
        .lines()
        .find_map(|l| l.strip_prefix("nginx version: "))
        .unwrap_or(text.trim())
        .to_string())
}

/// The configuration for `s`, listening on `addr`, each worker allowed
/// `files` open files.
pub fn config(s: &Setup, addr: SocketAddr, files: u64, as_root: bool) -> String {
    let d = s.dir.display();
    let connections = files.saturating_sub(64).max(512);
    format!(
        "# written by scalebench\n\
         daemon off;\n\
         master_process on;\n\
         {user}\
         worker_processes {workers};\n\
         worker_rlimit_nofile {files};\n\
         pid {d}/nginx.pid;\n\
         error_log {d}/error.log warn;\n\
         events {{\n    worker_connections {connections};\n}}\n\
         http {{\n\
         \x20   access_log off;\n\
         \x20   sendfile on;\n\
         \x20   tcp_nopush on;\n\
         \x20   keepalive_requests 10000;\n\
         \x20   default_type application/octet-stream;\n\
         \x20   client_body_temp_path {d}/body;\n\
         \x20   proxy_temp_path {d}/proxy;\n\
         \x20   fastcgi_temp_path {d}/fastcgi;\n\
         \x20   uwsgi_temp_path {d}/uwsgi;\n\
         \x20   scgi_temp_path {d}/scgi;\n\
         \x20   server {{\n\
         \x20       listen {addr}{reuseport} backlog=4096;\n\
         \x20       root {root};\n\
         \x20   }}\n\
         }}\n",
        user = if as_root { "user root;\n" } else { "" },
        workers = s.workers.max(1),
        reuseport = if s.reuseport { " reuseport" } else { "" },
        root = s.root.display(),
    )
}

/// A free port on `addr`'s address when its port is 0 (nginx takes no 0).
fn with_port(addr: SocketAddr) -> io::Result<SocketAddr> {
    if addr.port() != 0 {
        return Ok(addr);
    }
    let l = std::net::TcpListener::bind(addr)?;
    l.local_addr()
}

/// Why nginx could not be started.
#[derive(Debug, thiserror::Error)]
pub enum NginxError {
    /// No nginx here.
    #[error("nginx: not found on the PATH or in /usr/sbin (install nginx)")]
    NotFound,
    /// A step failed at the file system or the OS.
    #[error("{what}")]
    Io {
        /// What was being done or used (`starting /usr/sbin/nginx`).
        what: String,
        /// The OS's error.
        #[source]
        source: io::Error,
    },
    /// nginx started but ended, or did not answer: why, with its error
    /// log's last lines.
    #[error("{0}")]
    NotServing(String),
}

impl Nginx {
    /// Writes the configuration and starts nginx; returns once it answers
    /// an HTTP request (within 10 s), or the error naming what failed,
    /// with its error log.
    pub fn start(s: &Setup) -> Result<Nginx, NginxError> {
        let io = |what: String| move |source| NginxError::Io { what, source };
        let bin = binary().ok_or(NginxError::NotFound)?;
        let version = version(&bin).map_err(io(bin.display().to_string()))?;
        std::fs::create_dir_all(&s.dir).map_err(io(s.dir.display().to_string()))?;
        let addr = with_port(s.addr).map_err(io(format!("a port on {}", s.addr)))?;
        let files = sys::open_files_limit().unwrap_or(1024);
        // SAFETY: geteuid has no failure.
        let as_root = unsafe { libc::geteuid() } == 0;
        let config = config(s, addr, files, as_root);
        let conf = s.dir.join("nginx.conf");
        std::fs::write(&conf, &config).map_err(io(conf.display().to_string()))?;
        let error_log = s.dir.join("error.log");
        let mut cmd = Command::new(&bin);
        cmd.arg("-c")
            .arg(&conf)
            .arg("-p")
            .arg(&s.dir)
            .arg("-e")
            .arg(&error_log);
        cmd.stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::null());
        // SAFETY: only async-signal-safe calls between fork and exec.
        unsafe {
            cmd.pre_exec(|| {
                sys::die_with_parent(libc::SIGTERM);
                Ok(())
            })
        };
        let child = cmd
            .spawn()
            .map_err(io(format!("starting {}", bin.display())))?;
        let mut n = Nginx {
            child: Some(child),
            addr,
            version,
            config,
            error_log,
        };
        n.wait_answering(Duration::from_secs(10))
            .map_err(NginxError::NotServing)?;
        Ok(n)
    }

    /// Waits until a GET is answered with an HTTP status line.
    fn wait_answering(&mut self, limit: Duration) -> Result<(), String> {
        let deadline = Instant::now() + limit;
        loop {
            if let Some(st) = self
                .child
                .as_mut()
                .and_then(|c| c.try_wait().ok().flatten())
            {
                return Err(format!("nginx ended ({st}): {}", self.log_tail()));
            }
            if answers(self.addr) {
                return Ok(());
            }
            if Instant::now() >= deadline || sys::stop::interrupted() {
                return Err(format!(
                    "nginx did not answer on {} within {} s: {}",
                    self.addr,
                    limit.as_secs(),
                    self.log_tail()
                ));
            }
            std::thread::sleep(Duration::from_millis(50));
        }
    }

    /// Whether it is still running.
    pub fn running(&mut self) -> bool {
        self.child
            .as_mut()
            .is_some_and(|c| matches!(c.try_wait(), Ok(None)))
    }

    /// The end of its error log, for errors.
    fn log_tail(&self) -> String {
        let log = std::fs::read_to_string(&self.error_log).unwrap_or_default();
        let lines: Vec<&str> = log.lines().rev().take(3).collect();
        if lines.is_empty() {
            "(its error log is empty)".into()
        } else {
            lines.into_iter().rev().collect::<Vec<_>>().join(" | ")
        }
    }

    /// Stops it: SIGTERM (its fast shutdown, which ends its workers), then
    /// SIGKILL after 5 s; reaps it.
    pub fn stop(&mut self) {
        let Some(mut c) = self.child.take() else {
            return;
        };
        // SAFETY: signalling our own child, not yet reaped.
        unsafe { libc::kill(c.id() as i32, libc::SIGTERM) };
        let deadline = Instant::now() + Duration::from_secs(5);
        while matches!(c.try_wait(), Ok(None)) && Instant::now() < deadline {
            std::thread::sleep(Duration::from_millis(20));
        }
        let _ = c.kill();
        let _ = c.wait();
    }
}

impl Drop for Nginx {
    fn drop(&mut self) {
        self.stop();
    }
}

/// Whether `addr` answers `GET /` with an HTTP status line.
fn answers(addr: SocketAddr) -> bool {
    let Ok(mut s) = TcpStream::connect_timeout(&addr, Duration::from_millis(500)) else {
        return false;
    };
    let _ = s.set_read_timeout(Some(Duration::from_secs(2)));
    if s.write_all(b"GET / HTTP/1.0\r\n\r\n").is_err() {
        return false;
    }
    let mut b = [0u8; 12];
    matches!(s.read(&mut b), Ok(n) if n >= 9 && b.starts_with(b"HTTP/1."))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_configuration_names_what_the_slides_set() {
        let s = Setup {
            root: "/srv/www".into(),
            dir: "/tmp/x".into(),
            addr: "127.0.0.1:0".parse().unwrap(),
            workers: 32,
            reuseport: true,
        };
        let c = config(&s, "127.0.0.1:8080".parse().unwrap(), 20_000, true);
        for want in [
            "worker_processes 32;",
            "listen 127.0.0.1:8080 reuseport backlog=4096;",
            "access_log off;",
            "sendfile on;",
            "worker_connections 19936;",
            "worker_rlimit_nofile 20000;",
            "root /srv/www;",
            "user root;",
            "pid /tmp/x/nginx.pid;",
            "daemon off;",
        ] {
            assert!(c.contains(want), "{want} in\n{c}");
        }
        let c = config(
            &Setup {
                reuseport: false,
                ..s
            },
            "[::1]:80".parse().unwrap(),
            100,
            false,
        );
        assert!(c.contains("listen [::1]:80 backlog=4096;"), "{c}");
        assert!(
            c.contains("worker_connections 512;") && !c.contains("user "),
            "{c}"
        );
    }
}
