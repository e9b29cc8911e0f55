//! Parsers of option values, `&str` to a checked value or the reason in
//! words: every count, duration, rate and timeout has a stated range, and
//! a value outside it (NaN, infinite, negative, absurd) is refused naming
//! the accepted range, never a panic or a silent "never". The command line
//! uses them as its value parsers; the workloads, for the options they
//! own.

use std::time::Duration;

/// An error in what was asked, found before anything was done: a name
/// scalebench does not know, options that do not go together, a value
/// outside its range, on the command line or in a suite file. The binary
/// exits 2 when one is anywhere in an error's chain, as on the command
/// line's own parse errors; any other failure is 1.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Usage(pub String);

impl std::fmt::Display for Usage {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for Usage {}

/// A parser of whole numbers from `min` to `max` for an option: `-3` for
/// a count gets "must be at least 0" (not clap's "unexpected argument"),
/// `1e3` or `x` "is not a whole number", and a bound is named as it is.
pub fn whole<T>(
    min: T,
    max: T,
) -> impl Fn(&str) -> Result<T, String> + Clone + Send + Sync + 'static
where
    T: Copy + TryInto<i128> + TryFrom<i128> + std::fmt::Display + Send + Sync + 'static,
{
    move |s: &str| {
        let v: i128 = s
            .trim()
            .parse()
            .map_err(|_| format!("`{s}` is not a whole number"))?;
        if min.try_into().is_ok_and(|lo: i128| v < lo) {
            return Err(format!("must be at least {min}"));
        }
        if max.try_into().is_ok_and(|hi: i128| v > hi) {
            return Err(format!("must be at most {max}"));
        }
        T::try_from(v).map_err(|_| format!("must be at most {max}"))
    }
}

/// A label for reports: some visible text on one line.
pub fn label(s: &str) -> Result<String, String> {
    let t = s.trim();
    if t.is_empty() {
        return Err("must not be empty".into());
    }
    if t.chars().any(char::is_control) {
        return Err("must be one line of text (no control characters)".into());
    }
    Ok(t.to_string())
}

/// Parses a byte count: `4G`, `200M`, `8K`, `128k`, `1.5G`, plain bytes
/// (binary units: K = 1024).
pub fn bytes(s: &str) -> Result<u64, String> {
    let t = s.trim();
    let (num, mult) = match t.chars().last().map(|c| c.to_ascii_uppercase()) {
        Some('K') => (&t[..t.len() - 1], 1u64 << 10),
        Some('M') => (&t[..t.len() - 1], 1 << 20),
        Some('G') => (&t[..t.len() - 1], 1 << 30),
        Some('T') => (&t[..t.len() - 1], 1 << 40),
        _ => (t, 1),
    };
    let v: f64 = num
        .trim()
        .parse()
        .map_err(|_| format!("`{s}` is not a size (like 8K, 200M, 4G or a number of bytes)"))?;
    if !(v.is_finite() && v > 0.0) {
        return Err(format!("`{s}` is not a positive size"));
    }
    let b = (v * mult as f64).round() as u64;
    if b == 0 {
        return Err(format!("`{s}` is less than a byte"));
    }
    Ok(b)
}

/// Parses a number of seconds or a duration with a unit (`10`, `10s`,
/// `1.5`, `500ms`, `2m`) and checks it is within `min..=max`.
fn duration_in(s: &str, min: Duration, max: Duration) -> Result<Duration, String> {
    let range = || {
        format!(
            "`{s}` is out of range: {} to {}",
            humantime::format_duration(min),
            humantime::format_duration(max)
        )
    };
    let d = match s.trim().parse::<f64>() {
        Ok(secs) if !secs.is_finite() => {
            return Err(format!("`{s}` is not a finite number of seconds"));
        }
        Ok(secs) if secs < 0.0 => {
            return Err(format!(
                "must be at least {}",
                humantime::format_duration(min)
            ));
        }
        Ok(secs) => Duration::try_from_secs_f64(secs).map_err(|_| range())?,
        Err(_) => humantime::parse_duration(s.trim())
            .map_err(|e| format!("`{s}` is not a duration ({e}); try 10 or 10s"))?,
    };
    if d < min || d > max {
        return Err(range());
    }
    Ok(d)
}

/// `load -d`: 1 ms to 30 days.
pub fn load_duration(s: &str) -> Result<Duration, String> {
    duration_in(
        s,
        Duration::from_millis(1),
        Duration::from_secs(30 * 86_400),
    )
}

/// `load --warm-up`: 0 to 1 day.
pub fn warm_up(s: &str) -> Result<Duration, String> {
    duration_in(s, Duration::ZERO, Duration::from_secs(86_400))
}

/// `load --timeout`: 1 ms to 1 hour.
pub fn load_timeout(s: &str) -> Result<Duration, String> {
    duration_in(s, Duration::from_millis(1), Duration::from_secs(3_600))
}

/// `load --rate`: 0.001 to 10⁹ requests per second.
pub fn rate(s: &str) -> Result<f64, String> {
    let r: f64 = s
        .trim()
        .parse()
        .map_err(|_| format!("`{s}` is not a number of requests per second"))?;
    if r < 0.0 {
        return Err("must be at least 0.001 (requests per second)".into());
    }
    if (0.001..=1e9).contains(&r) {
        Ok(r)
    } else {
        Err(format!(
            "`{s}` is out of range: 0.001 to 1000000000 requests per second"
        ))
    }
}

/// A server timeout: `None` for never.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ServerTimeout(pub Option<Duration>);

/// `serve --idle-timeout`, `--header-timeout`: 0 (never) or 1 ms to one
/// day, as seconds or with a unit.
pub fn server_timeout(s: &str) -> Result<ServerTimeout, String> {
    if s.trim().parse::<f64>() == Ok(0.0) {
        return Ok(ServerTimeout(None));
    }
    duration_in(s, Duration::from_millis(1), Duration::from_secs(86_400))
        .map(|d| ServerTimeout(Some(d)))
        .map_err(|e| format!("{e} (or 0 for never)"))
}

/// `NAME=BYTES` of `serve --object`: a plain file name (no directories)
/// and at most 1 GiB.
pub fn object(s: &str) -> Result<(String, usize), String> {
    let (name, bytes) = s
        .split_once('=')
        .ok_or_else(|| format!("`{s}`: expected NAME=BYTES"))?;
    if name.is_empty() || name.contains('/') || name == "." || name == ".." {
        return Err(format!("`{name}`: a file name without `/`"));
    }
    let bytes: usize = bytes
        .parse()
        .ok()
        .filter(|&b| b <= 1 << 30)
        .ok_or_else(|| format!("`{bytes}`: a size in bytes up to 1073741824"))?;
    Ok((name.to_string(), bytes))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn durations_in_range_parse_with_and_without_units() {
        assert_eq!(load_duration("10").unwrap(), Duration::from_secs(10));
        assert_eq!(load_duration("10s").unwrap(), Duration::from_secs(10));
        assert_eq!(load_duration("1.5").unwrap(), Duration::from_millis(1500));
        assert_eq!(load_duration("250ms").unwrap(), Duration::from_millis(250));
        assert_eq!(load_timeout("2m").unwrap(), Duration::from_secs(120));
    }

    #[test]
    fn a_time_goal_is_a_duration_or_off() {
        assert_eq!(
            time_goal("60").unwrap(),
            TimeGoal::Within(Duration::from_secs(60))
        );
        assert_eq!(
            time_goal("2min").unwrap(),
            TimeGoal::Within(Duration::from_secs(120))
        );
        assert_eq!(time_goal("OFF").unwrap(), TimeGoal::Off);
        assert_eq!(TimeGoal::Within(Duration::from_secs(60)).words(), "1m");
        assert_eq!(time_goal(&TimeGoal::Off.words()).unwrap(), TimeGoal::Off);
        for bad in ["1", "soon", "-5", "8weeks"] {
            let e = time_goal(bad).unwrap_err();
            assert!(
                e.contains(&format!("`{bad}`")) || e.starts_with("must be"),
                "{bad}: {e}"
            );
            assert!(e.ends_with("(or `off`)"), "{bad}: {e}");
        }
    }

    #[test]
    fn absurd_durations_are_refused_with_the_range() {
        for bad in [
            "1e300", "NaN", "inf", "-inf", "-1", "0", "31days", "soon", "",
        ] {
            let e = load_duration(bad).unwrap_err();
            let named = e.contains(&format!("`{bad}`"));
            assert!(
                named || (bad == "-1" && e == "must be at least 1ms"),
                "{bad}: {e}"
            );
        }
        assert!(load_duration("0").unwrap_err().contains("1ms to 30days"));
        assert!(load_timeout("2h").is_err());
    }

    #[test]
    fn server_timeouts_take_zero_as_never() {
        assert_eq!(server_timeout("0").unwrap().0, None);
        assert_eq!(server_timeout("0.0").unwrap().0, None);
        assert_eq!(
            server_timeout("15").unwrap().0,
            Some(Duration::from_secs(15))
        );
        for bad in ["1e300", "NaN", "inf", "-1", "2days"] {
            let e = server_timeout(bad).unwrap_err();
            assert!(e.contains("0 for never"), "{bad}: {e}");
        }
    }

    #[test]
    fn labels_are_visible_text_on_one_line() {
        assert_eq!(label(" linux-6.1 ").unwrap(), "linux-6.1");
        assert_eq!(label("").unwrap_err(), "must not be empty");
        assert_eq!(label("  ").unwrap_err(), "must not be empty");
        assert!(label("a\nb").is_err());
    }

    #[test]
    fn whole_numbers_name_their_bounds() {
        let count = whole::<u64>(0, u64::MAX);
        assert_eq!(count("12").unwrap(), 12);
        assert_eq!(count("-3").unwrap_err(), "must be at least 0");
        assert_eq!(count("1e3").unwrap_err(), "`1e3` is not a whole number");
        let workers = whole::<u32>(1, 1024);
        assert_eq!(workers("0").unwrap_err(), "must be at least 1");
        assert_eq!(workers("1025").unwrap_err(), "must be at most 1024");
        assert_eq!(
            workers("99999999999999999999").unwrap_err(),
            "must be at most 1024"
        );
        let cpu = whole::<usize>(0, usize::MAX);
        assert_eq!(cpu("-1").unwrap_err(), "must be at least 0");
        assert_eq!(percent("-1").unwrap_err(), "must be at least 0 %");
        assert!(runs("-2").unwrap_err().starts_with("must be at least 1"));
    }

    #[test]
    fn rates_are_positive_and_finite() {
        assert_eq!(rate("100").unwrap(), 100.0);
        for bad in ["0", "1e-300", "-5", "NaN", "inf", "1e300", "x"] {
            assert!(rate(bad).is_err(), "{bad}");
        }
    }
}

/// `run --sweep VARIABLE=LEVEL,LEVEL,…`: a variable name and 1 to 64
/// levels, each a positive whole number up to 10⁶ (connections, clients),
/// all different.
pub fn sweep(s: &str) -> Result<(String, Vec<f64>), String> {
    let (var, levels) = s
        .split_once('=')
        .ok_or_else(|| format!("`{s}`: write VARIABLE=LEVEL,LEVEL,… (connections=1,10,100)"))?;
    let var = var.trim();
    if var.is_empty() || !var.chars().all(|c| c.is_ascii_alphanumeric() || c == '_') {
        return Err(format!(
            "`{var}` is not a variable name (connections, clients)"
        ));
    }
    let mut v = Vec::new();
    for l in levels.split(',') {
        let l = l.trim();
        let n: u64 = l
            .parse()
            .map_err(|_| format!("{var} level `{l}` is not a whole number"))?;
        if !(1..=1_000_000).contains(&n) {
            return Err(format!("{var} level {n} is out of range: 1 to 1000000"));
        }
        if v.contains(&(n as f64)) {
            return Err(format!("{var} level {n} is given twice"));
        }
        v.push(n as f64);
    }
    if v.len() > 64 {
        return Err(format!("{} {var} levels: at most 64", v.len()));
    }
    Ok((var.to_string(), v))
}

/// `run --heat-up`: 0 to 1 hour.
pub fn heat_up(s: &str) -> Result<Duration, String> {
    duration_in(s, Duration::ZERO, Duration::from_secs(3_600))
}

/// `run --why-seconds`, `why --seconds`: a profile window: 0.2 to 60 seconds.
pub fn profile_window(s: &str) -> Result<f64, String> {
    let v: f64 = s
        .parse()
        .map_err(|_| format!("`{s}` is not a number of seconds"))?;
    if (0.2..=60.0).contains(&v) {
        Ok(v)
    } else {
        Err(format!(
            "`{}`: a profile window is 0.2 to 60 seconds",
            s.trim()
        ))
    }
}

/// `run --monitor-interval`: 10 ms to 1 hour.
pub fn monitor_interval(s: &str) -> Result<Duration, String> {
    duration_in(s, Duration::from_millis(10), Duration::from_secs(3_600))
}

/// `run --sample-time`: 100 ms to 1 hour.
pub fn sample_time(s: &str) -> Result<Duration, String> {
    duration_in(s, Duration::from_millis(100), Duration::from_secs(3_600))
}

/// `smtp-sink --reply-delay`: 0 to 1 minute.
pub fn reply_delay(s: &str) -> Result<Duration, String> {
    duration_in(s, Duration::ZERO, Duration::from_secs(60))
}

/// A host and maybe a port, as an address or a URL's authority gives
/// them: `HOST`, `HOST:PORT`, `IPv4:PORT`, `[IPv6]`, `[IPv6]:PORT`. Every
/// address the command line takes (load's URLs, smtp-send's server, the
/// listening addresses, ssh hosts) is read by [`host_port`], so that they
/// all agree.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct HostPort {
    /// The host name or address; an IPv6 address without its brackets.
    pub host: String,
    /// The port, if given (0 included: a listening address's "any").
    pub port: Option<u16>,
}

impl HostPort {
    /// Whether the host is an IPv6 address (written in brackets).
    pub fn is_ipv6(&self) -> bool {
        self.host.contains(':')
    }

    /// The resolved address with `port` when none was given: the first
    /// the host resolves to.
    pub fn resolve(&self, port: u16) -> Result<std::net::SocketAddr, String> {
        use std::net::ToSocketAddrs;
        let port = self.port.unwrap_or(port);
        let host = self.host.split('%').next().unwrap_or_default();
        (host, port)
            .to_socket_addrs()
            .map_err(|e| format!("cannot resolve {}: {e}", self.host))?
            .next()
            .ok_or_else(|| format!("{} resolves to no address", self.host))
    }
}

/// The fix for an IPv6 address written without brackets, if `s` is one:
/// `::1:8080` → `` `[::1]:8080` (or `[::1:8080]`, the address alone) ``.
fn bracketed(s: &str) -> Option<String> {
    use std::net::Ipv6Addr;
    let whole = s.parse::<Ipv6Addr>().is_ok();
    let with_port = s
        .rsplit_once(':')
        .filter(|(a, p)| a.parse::<Ipv6Addr>().is_ok() && p.parse::<u16>().is_ok())
        .map(|(a, p)| format!("[{a}]:{p}"));
    match (with_port, whole) {
        (Some(p), true) => Some(format!("`{p}` (or `[{s}]`, the address alone)")),
        (Some(p), false) => Some(format!("`{p}`")),
        (None, true) => Some(format!("`[{s}]`")),
        (None, false) => None,
    }
}

/// Parses `s` as a [`HostPort`]. Refused with the reason: credentials
/// (`USER:PASSWORD@`, `USER@`), an IPv6 address without brackets (naming
/// the fix: `[::1]:8080`), an unclosed bracket, no host, a host that is
/// neither a name nor an address, a port that is not 0 to 65535.
pub fn host_port(s: &str) -> Result<HostPort, String> {
    if let Some((who, _)) = s.rsplit_once('@') {
        // The password is not repeated.
        let (shown, what) = match who.split_once(':') {
            Some((user, _)) => (format!("{user}:…@"), "a user and password"),
            None => (format!("{who}@"), "a user"),
        };
        return Err(format!(
            "`{shown}` gives {what}: credentials in an address are not supported (give HOST[:PORT] only)"
        ));
    }
    let (host, port) = if let Some(r) = s.strip_prefix('[') {
        let (h, tail) = r
            .split_once(']')
            .ok_or_else(|| format!("`{s}`: an unclosed `[`"))?;
        let (addr, zone) = h.split_once('%').unwrap_or((h, "ok"));
        if addr.parse::<std::net::Ipv6Addr>().is_err()
            || zone.is_empty()
            || !zone
                .chars()
                .all(|c| c.is_ascii_alphanumeric() || "._-".contains(c))
        {
            return Err(format!("`[{h}]` is not an IPv6 address"));
        }
        match tail {
            "" => (h, None),
            t => (
                h,
                Some(
                    t.strip_prefix(':')
                        .ok_or_else(|| format!("`{s}`: after `]` only `:PORT` may follow"))?,
                ),
            ),
        }
    } else {
        match s.split_once(':') {
            Some((h, p)) if !p.contains(':') => (h, Some(p)),
            Some(_) => {
                return Err(match bracketed(s) {
                    Some(fix) => format!("`{s}`: an IPv6 address goes in brackets: {fix}"),
                    None => format!(
                        "`{s}`: an IPv6 address goes in brackets (`[2001:db8::1]:8080`); a host name has no `:`"
                    ),
                });
            }
            None => (s, None),
        }
    };
    if host.is_empty() {
        return Err(format!("`{s}`: no host"));
    }
    if !host.contains(':')
        && (host.starts_with(['-', '.'])
            || !host
                .chars()
                .all(|c| c.is_ascii_alphanumeric() || ".-_".contains(c)))
    {
        return Err(format!("`{host}` is not a host name or address"));
    }
    if port == Some("") {
        return Err(format!("`{s}`: no port after `:`"));
    }
    let port = port
        .map(|p| {
            p.parse::<u16>()
                .ok()
                .filter(|_| p.bytes().all(|b| b.is_ascii_digit()))
                .ok_or_else(|| format!("`{p}` is not a port (0 to 65535)"))
        })
        .transpose()?;
    Ok(HostPort {
        host: host.to_string(),
        port,
    })
}

/// A server address: `IP:PORT`, `[IPv6]:PORT` or `HOST:PORT` (the first
/// address the name resolves to), read by [`host_port`].
pub fn server_addr(s: &str) -> Result<std::net::SocketAddr, String> {
    let s = s.trim();
    let hp = host_port(s)?;
    match hp.port {
        None => Err(format!("`{s}` has no port: give HOST:PORT")),
        Some(0) => Err(format!("`{s}`: port 0 is no server's port")),
        Some(p) => hp.resolve(p).map_err(|e| format!("`{s}`: {e}")),
    }
}

/// An IP address alone (`127.0.0.2`, `::1`, `[::1]`): a local address to
/// connect or bind from.
pub fn ip_addr(s: &str) -> Result<std::net::IpAddr, String> {
    let t = s.trim();
    let bare = t
        .strip_prefix('[')
        .and_then(|r| r.strip_suffix(']'))
        .unwrap_or(t);
    bare.parse().map_err(|_| match host_port(t) {
        Ok(hp) if hp.port.is_some() && hp.host.parse::<std::net::IpAddr>().is_ok() => {
            format!("`{t}`: an address alone, without a port")
        }
        _ => format!("`{t}` is not an IP address (`127.0.0.2`, `::1`)"),
    })
}

/// An address to listen on: `IP:PORT` or `[IPv6]:PORT`, port 0 for any
/// free port; read by [`host_port`], so that its mistakes are named as
/// everywhere (`::1:8080` → `[::1]:8080`).
pub fn listen_addr(s: &str) -> Result<std::net::SocketAddr, String> {
    let s = s.trim();
    let hp = host_port(s)?;
    let ip: std::net::IpAddr = hp.host.parse().map_err(|_| {
        format!(
            "`{}` is not an IP address: listen on one of this machine's (`127.0.0.1:8080`, `[::1]:8080`, `0.0.0.0:8080`)",
            hp.host
        )
    })?;
    let port = hp
        .port
        .ok_or_else(|| format!("`{s}` has no port: give ADDRESS:PORT (port 0: any free one)"))?;
    Ok(std::net::SocketAddr::new(ip, port))
}

#[cfg(test)]
mod sweep_tests {
    use super::*;

    #[test]
    fn sweeps_parse_and_bad_ones_are_named() {
        assert_eq!(
            sweep("connections=1,10, 100").unwrap(),
            ("connections".to_string(), vec![1.0, 10.0, 100.0])
        );
        for (bad, says) in [
            ("connections", "VARIABLE=LEVEL"),
            ("=1,2", "not a variable name"),
            ("conn=1,x", "`x` is not a whole number"),
            ("conn=0", "out of range"),
            ("conn=1,1", "given twice"),
            ("conn=-1", "not a whole number"),
            ("conn=1e300", "not a whole number"),
        ] {
            let e = sweep(bad).unwrap_err();
            assert!(e.contains(says), "{bad}: {e}");
        }
        assert!(heat_up("0").is_ok() && heat_up("nan").is_err());
        assert!(sample_time("50ms").is_err() && sample_time("2s").is_ok());
        assert!(reply_delay("0").is_ok() && reply_delay("2m").is_err());
        assert_eq!(server_addr("127.0.0.1:25").unwrap().port(), 25);
        assert_eq!(server_addr("localhost:2525").unwrap().port(), 2525);
        assert!(server_addr("127.0.0.1").unwrap_err().contains("no port"));
        assert!(server_addr("[::1]:x").is_err());
    }

    #[test]
    fn addresses_parse_alike_and_their_mistakes_are_named_with_the_fix() {
        let hp = |s: &str| host_port(s);
        assert_eq!(
            hp("[::1]:8080").unwrap(),
            HostPort {
                host: "::1".into(),
                port: Some(8080)
            }
        );
        assert_eq!(hp("example.org").unwrap().port, None);
        assert_eq!(hp("127.0.0.1:0").unwrap().port, Some(0));
        assert!(hp("[fe80::1%eth0]:22").unwrap().is_ipv6());
        for (bad, says) in [
            ("::1:8080", "an IPv6 address goes in brackets: `[::1]:8080`"),
            ("::1", "an IPv6 address goes in brackets: `[::1]`"),
            (
                "2001:db8::1:22",
                "`[2001:db8::1]:22` (or `[2001:db8::1:22]`, the address alone)",
            ),
            (
                "a:b:c",
                "an IPv6 address goes in brackets (`[2001:db8::1]:8080`)",
            ),
            (
                "user:pw@host:25",
                "`user:…@` gives a user and password: credentials",
            ),
            ("me@host", "`me@` gives a user: credentials"),
            ("[::1", "an unclosed `[`"),
            ("[::1]x", "after `]` only `:PORT`"),
            ("[nope]:80", "`[nope]` is not an IPv6 address"),
            (":80", "no host"),
            ("", "no host"),
            ("a b:80", "`a b` is not a host name"),
            ("-oProxy:1", "is not a host name"),
            ("h:99999", "`99999` is not a port"),
            ("h:+80", "`+80` is not a port"),
            ("h:", "no port after `:`"),
        ] {
            let e = hp(bad).unwrap_err();
            assert!(e.contains(says), "{bad}: {e}");
            assert!(!e.contains("pw@"), "{bad}: no password echoed: {e}");
        }
        assert_eq!(
            server_addr("[::1]:25").unwrap(),
            "[::1]:25".parse().unwrap()
        );
        assert!(server_addr("::1:25").unwrap_err().contains("`[::1]:25`"));
        assert!(server_addr("h:0").unwrap_err().contains("port 0"));
        assert_eq!(listen_addr("[::1]:0").unwrap(), "[::1]:0".parse().unwrap());
        assert!(listen_addr("::1:0").unwrap_err().contains("`[::1]:0`"));
        assert!(
            listen_addr("localhost:80")
                .unwrap_err()
                .contains("not an IP address")
        );
        assert!(listen_addr("127.0.0.1").unwrap_err().contains("no port"));
        assert_eq!(
            ip_addr("[::1]").unwrap(),
            "::1".parse::<std::net::IpAddr>().unwrap()
        );
        assert!(
            ip_addr("127.0.0.1:80")
                .unwrap_err()
                .contains("without a port")
        );
        assert!(ip_addr("here").unwrap_err().contains("not an IP address"));
    }
}

/// A percentage (`10`, `10%`, `2.5 %`), 0 to 1000, as a fraction.
pub fn percent(s: &str) -> Result<f64, String> {
    let t = s.trim().trim_end_matches('%').trim();
    match t.parse::<f64>() {
        Ok(v) if v < 0.0 => Err("must be at least 0 %".into()),
        Ok(v) if v.is_finite() && (0.0..=1000.0).contains(&v) => Ok(v / 100.0),
        _ => Err(format!(
            "`{s}`: a percentage from 0 to 1000 (`10` or `10%`)"
        )),
    }
}

/// `run --within`: a run's time goal, or none.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TimeGoal {
    /// The run keeps to this wall time (see `harness::series::TimeShare`).
    Within(Duration),
    /// Every series at the size asked, however long it takes.
    Off,
}

impl TimeGoal {
    /// As the command line and a suite file write it: `60s`, `off`.
    pub fn words(&self) -> String {
        match self {
            TimeGoal::Within(d) => humantime::format_duration(*d).to_string(),
            TimeGoal::Off => "off".into(),
        }
    }
}

/// Parses `run --within`: 5 seconds to 1 week (`60`, `60s`, `2min`), or
/// `off`.
pub fn time_goal(s: &str) -> Result<TimeGoal, String> {
    if s.trim().eq_ignore_ascii_case("off") {
        return Ok(TimeGoal::Off);
    }
    duration_in(s, Duration::from_secs(5), Duration::from_secs(7 * 86_400))
        .map(TimeGoal::Within)
        .map_err(|e| format!("{e} (or `off`)"))
}

/// `--runs`: a count or `auto`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Runs {
    /// This many runs.
    Fixed(u32),
    /// Until the ends of n are known (see `harness::series::AutoRuns`).
    Auto,
}

/// Parses `--runs`: 1 to 1000, or `auto`.
pub fn runs(s: &str) -> Result<Runs, String> {
    if s.trim().eq_ignore_ascii_case("auto") {
        return Ok(Runs::Auto);
    }
    match s.trim().parse::<i64>() {
        Ok(n) if n < 1 => Err(format!("must be at least 1 (or `auto`), not {n}")),
        Ok(n) if n <= 1000 => Ok(Runs::Fixed(n as u32)),
        _ => Err(format!("`{s}`: a number of runs from 1 to 1000, or `auto`")),
    }
}
