//! `--pg-server`: a libpq connection string, checked before anything runs.
//!
//! libpq fills in whatever a connection string leaves out from the
//! environment and its defaults — for a string that names no server, the
//! local server's unix socket. pgbench -i drops and remakes its tables
//! there, so a string that does not name a server (`garbage`, `''`,
//! `port=5432`) is refused here rather than left to those defaults. Both of
//! libpq's forms are read: `key=value` pairs (values optionally in single
//! quotes with `\'` and `\\` escapes) and `postgresql://` URIs.

/// What a connection string names.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Conninfo {
    /// The hosts it names (`host=`, `hostaddr=` or the URI's host part;
    /// several when comma separated); empty when only `service=` names the
    /// server.
    pub hosts: Vec<String>,
    /// The `service=` entry it names, if any.
    pub service: Option<String>,
}

/// libpq's connection keywords (PostgreSQL 16's list); any other is a typo
/// libpq would refuse later, after the run started.
const KEYWORDS: &[&str] = &[
    "host",
    "hostaddr",
    "port",
    "dbname",
    "user",
    "password",
    "passfile",
    "channel_binding",
    "connect_timeout",
    "client_encoding",
    "options",
    "application_name",
    "fallback_application_name",
    "keepalives",
    "keepalives_idle",
    "keepalives_interval",
    "keepalives_count",
    "tcp_user_timeout",
    "replication",
    "gssencmode",
    "sslmode",
    "requiressl",
    "sslcompression",
    "sslcert",
    "sslkey",
    "sslpassword",
    "sslcertmode",
    "sslrootcert",
    "sslcrl",
    "sslcrldir",
    "sslsni",
    "requirepeer",
    "require_auth",
    "ssl_min_protocol_version",
    "ssl_max_protocol_version",
    "krbsrvname",
    "gsslib",
    "gssdelegation",
    "service",
    "target_session_attrs",
    "load_balance_hosts",
];

impl Conninfo {
    /// Reads `s`; an error says what is wrong with it, in words.
    pub fn parse(s: &str) -> Result<Conninfo, String> {
        let t = s.trim();
        if t.is_empty() {
            return Err("empty: name a server (`host=db port=5432 user=bench dbname=bench`, or postgresql://bench@db/bench)".into());
        }
        let pairs = if let Some(rest) = t
            .strip_prefix("postgresql://")
            .or_else(|| t.strip_prefix("postgres://"))
        {
            uri_pairs(rest)?
        } else {
            keyword_pairs(t)?
        };
        let mut c = Conninfo {
            hosts: Vec::new(),
            service: None,
        };
        for (k, v) in pairs {
            if !KEYWORDS.contains(&k.as_str()) {
                return Err(format!("`{k}` is not a libpq connection keyword"));
            }
            match k.as_str() {
                "host" | "hostaddr" => c.hosts.extend(
                    v.split(',')
                        .map(str::trim)
                        .filter(|h| !h.is_empty())
                        .map(String::from),
                ),
                "service" if !v.is_empty() => c.service = Some(v),
                _ => {}
            }
        }
        if c.hosts.is_empty() && c.service.is_none() {
            return Err(format!(
                "`{t}` names no server (no host=, hostaddr= or service=, no host in the URI): libpq would use its defaults, the local server's socket, whose pgbench tables would be remade"
            ));
        }
        Ok(c)
    }

    /// Whether every host it names is on this machine: a unix socket
    /// directory, `localhost`, or a loopback address (a `service=` entry is
    /// not looked into: not known to be local).
    pub fn is_local(&self) -> bool {
        !self.hosts.is_empty()
            && self.hosts.iter().all(|h| {
                h.starts_with('/')
                    || h.starts_with('@')
                    || h.eq_ignore_ascii_case("localhost")
                    || h.trim_matches(['[', ']'])
                        .parse::<std::net::IpAddr>()
                        .is_ok_and(|ip| ip.is_loopback())
            })
    }
}

/// The `key=value` pairs of libpq's keyword form.
fn keyword_pairs(s: &str) -> Result<Vec<(String, String)>, String> {
    let mut out = Vec::new();
    let mut chars = s.chars().peekable();
    loop {
        while chars.next_if(|c| c.is_whitespace()).is_some() {}
        if chars.peek().is_none() {
            return Ok(out);
        }
        let mut key = String::new();
        while let Some(c) = chars.next_if(|c| *c != '=' && !c.is_whitespace()) {
            key.push(c);
        }
        while chars.next_if(|c| c.is_whitespace()).is_some() {}
        if chars.next() != Some('=') {
            return Err(format!(
                "`{key}`: expected key=value pairs (`host=db port=5432 …`) or a postgresql:// URI"
            ));
        }
        while chars.next_if(|c| c.is_whitespace()).is_some() {}
        let mut value = String::new();
        if chars.next_if_eq(&'\'').is_some() {
            loop {
                match chars.next() {
                    None => return Err(format!("{key}=: a quoted value is not closed")),
                    Some('\'') => break,
                    Some('\\') => value.extend(chars.next()),
                    Some(c) => value.push(c),
                }
            }
        } else {
            while let Some(c) = chars.next_if(|c| !c.is_whitespace()) {
                if c == '\\' {
                    value.extend(chars.next());
                } else {
                    value.push(c);
                }
            }
        }
        out.push((key, value));
    }
}

/// Percent-decodes a URI part.
fn decode(s: &str) -> Result<String, String> {
    let b = s.as_bytes();
    let mut out = Vec::with_capacity(b.len());
    let mut i = 0;
    while i < b.len() {
        if b[i] == b'%' {
            let hex = s
                .get(i + 1..i + 3)
                .and_then(|h| u8::from_str_radix(h, 16).ok())
                .ok_or_else(|| format!("`{s}`: a bad %-escape"))?;
            out.push(hex);
            i += 3;
        } else {
            out.push(b[i]);
            i += 1;
        }
    }
    String::from_utf8(out).map_err(|_| format!("`{s}`: not UTF-8 once decoded"))
}

/// The pairs of a `postgresql://` URI after the scheme:
/// `[user[:password]@][host[:port][,…]][/dbname][?key=value&…]`.
fn uri_pairs(rest: &str) -> Result<Vec<(String, String)>, String> {
    let (main, query) = rest.split_once('?').unwrap_or((rest, ""));
    let (authority, db) = main.split_once('/').unwrap_or((main, ""));
    let hostspec = authority.rsplit_once('@').map_or(authority, |(_, h)| h);
    let mut out = Vec::new();
    let hosts: Vec<String> = hostspec
        .split(',')
        .filter(|h| !h.is_empty())
        .map(|h| {
            // A %-escaped socket directory, or a host and port read as
            // every address is (`::1:5432` is refused with its fix).
            if h.starts_with('%') {
                return decode(h.split_once(':').map_or(h, |(a, _)| a));
            }
            crate::values::host_port(h).map(|hp| hp.host)
        })
        .collect::<Result<_, _>>()?;
    if !hosts.is_empty() {
        out.push(("host".to_string(), hosts.join(",")));
    }
    if !db.is_empty() {
        out.push(("dbname".to_string(), decode(db)?));
    }
    for kv in query.split('&').filter(|kv| !kv.is_empty()) {
        let (k, v) = kv
            .split_once('=')
            .ok_or_else(|| format!("`{kv}`: expected key=value in the URI's query"))?;
        out.push((decode(k)?, decode(v)?));
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn strings_that_name_no_server_are_refused() {
        for s in [
            "",
            "  ",
            "garbage",
            "port=5432",
            "dbname=x user=y",
            "postgresql://",
            "postgresql:///db",
        ] {
            assert!(Conninfo::parse(s).is_err(), "{s:?} was accepted");
        }
        let e = Conninfo::parse("hots=db").unwrap_err();
        assert!(
            e.contains("`hots` is not a libpq connection keyword"),
            "{e}"
        );
        let e = Conninfo::parse("host='db").unwrap_err();
        assert!(e.contains("not closed"), "{e}");
        let e = Conninfo::parse("postgresql://u@::1:5432/db").unwrap_err();
        assert!(e.contains("`[::1]:5432`"), "{e}");
    }

    #[test]
    fn both_forms_name_their_hosts() {
        let c = Conninfo::parse("host=db port=5432 user=bench dbname=bench").unwrap();
        assert_eq!(c.hosts, ["db"]);
        assert!(!c.is_local());
        let c = Conninfo::parse("host = '/var/run/postgresql' dbname='a b'").unwrap();
        assert_eq!(c.hosts, ["/var/run/postgresql"]);
        assert!(c.is_local());
        let c =
            Conninfo::parse("postgresql://u:p@[::1]:5433,localhost/db?sslmode=disable").unwrap();
        assert_eq!(c.hosts, ["::1", "localhost"]);
        assert!(c.is_local());
        let c = Conninfo::parse("postgresql:///db?host=%2Ftmp").unwrap();
        assert_eq!(c.hosts, ["/tmp"]);
        let c = Conninfo::parse("postgres://10.0.0.5/db").unwrap();
        assert!(!c.is_local());
        let c = Conninfo::parse("service=bench").unwrap();
        assert_eq!(c.service.as_deref(), Some("bench"));
        assert!(!c.is_local());
        let c = Conninfo::parse("hostaddr=127.0.0.1 port=5432").unwrap();
        assert!(c.is_local());
    }
}
