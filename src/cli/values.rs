//! Parsers for option values that clap does not check by itself: every
//! duration, rate and timeout has a stated range, and a value outside it
//! (NaN, infinite, negative, absurd) is a usage error that names the
//! accepted range, never a panic or a silent "never".

use std::time::Duration;

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
        Ok(secs) if secs < 0.0 => return Err(format!("`{s}`: a duration cannot be negative")),
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
    fn absurd_durations_are_refused_with_the_range() {
        for bad in [
            "1e300", "NaN", "inf", "-inf", "-1", "0", "31days", "soon", "",
        ] {
            let e = load_duration(bad).unwrap_err();
            assert!(e.contains(&format!("`{bad}`")), "{bad}: {e}");
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
    fn rates_are_positive_and_finite() {
        assert_eq!(rate("100").unwrap(), 100.0);
        for bad in ["0", "1e-300", "-5", "NaN", "inf", "1e300", "x"] {
            assert!(rate(bad).is_err(), "{bad}");
        }
    }
}
