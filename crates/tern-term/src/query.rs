//! Parsing the query string into a [`Plan`]: what the response will be.
//!
//! Why strict values but lenient keys: an unknown parameter may belong to the test (cache
//! busters, markers for a proxy's rules) so it is ignored, but a known parameter with a bad
//! value is a mistake in the test, so it is answered 400 naming the parameter instead of being
//! guessed at. A repeated parameter takes its last value. Values are not percent-decoded: every
//! valid value is plain ASCII digits with an optional unit suffix.

use std::time::Duration;

use http::StatusCode;

/// Largest `s=` accepted: 64 GiB.
pub(crate) const MAX_SIZE: u64 = 64 << 30;
/// Largest `t=` accepted: one hour.
pub(crate) const MAX_DELAY_MS: u64 = 3_600_000;
/// Body size announced by `x=` when `s=` is absent.
pub(crate) const DEFAULT_ABORT_SIZE: u64 = 1024;

/// The response asked for by the query string.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Plan {
    /// `s=`: a generated body of this many bytes.
    pub(crate) size: Option<u64>,
    /// `t=`: wait before sending the response head.
    pub(crate) delay: Duration,
    /// `r=`: the response status.
    pub(crate) status: StatusCode,
    /// `k=0`: close the connection after this response.
    pub(crate) close: bool,
    /// `c=1`: chunked transfer-encoding instead of content-length.
    pub(crate) chunked: bool,
    /// `x=`: send only this many bytes of the announced body, then cut the connection.
    pub(crate) abort_after: Option<u64>,
    /// `e=1`: stream the request body back.
    pub(crate) echo: bool,
    /// `h=1`: the body is a dump of the request head.
    pub(crate) dump: bool,
    /// `sc=NAME=VALUE` (repeatable): cookies the response sets, as `NAME=VALUE` each.
    pub(crate) cookies: Vec<String>,
}

impl Default for Plan {
    fn default() -> Self {
        Self {
            size: None,
            delay: Duration::ZERO,
            status: StatusCode::OK,
            close: false,
            chunked: false,
            abort_after: None,
            echo: false,
            dump: false,
            cookies: Vec::new(),
        }
    }
}

/// A known parameter with a value that cannot be used.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("bad value for query parameter '{param}': {reason}")]
pub(crate) struct QueryError {
    pub(crate) param: &'static str,
    pub(crate) reason: &'static str,
}

fn bad(param: &'static str, reason: &'static str) -> QueryError {
    QueryError { param, reason }
}

/// Parses the query string (without the `?`); `None` gives the default plan.
pub(crate) fn parse(query: Option<&str>) -> Result<Plan, QueryError> {
    let mut plan = Plan::default();
    for pair in query.unwrap_or("").split('&').filter(|p| !p.is_empty()) {
        let (key, value) = pair.split_once('=').unwrap_or((pair, ""));
        match key {
            "s" => plan.size = Some(size("s", value)?),
            "t" => plan.delay = Duration::from_millis(delay(value)?),
            "r" => plan.status = status(value)?,
            "k" => plan.close = !flag("k", value)?,
            "c" => plan.chunked = flag("c", value)?,
            "x" => plan.abort_after = Some(size("x", value)?),
            "e" => plan.echo = flag("e", value)?,
            "h" => plan.dump = flag("h", value)?,
            "sc" => plan.cookies.push(cookie(value)?),
            _ => {}
        }
    }
    if let Some(n) = plan.abort_after {
        if n >= plan.size.unwrap_or(DEFAULT_ABORT_SIZE) {
            return Err(bad(
                "x",
                "must be smaller than the body size (s, default 1k)",
            ));
        }
    }
    Ok(plan)
}

/// `NAME=VALUE`: a cookie name (a token) and a value of RFC 6265 cookie-octets, so that the
/// `Set-Cookie` field is always valid.
fn cookie(value: &str) -> Result<String, QueryError> {
    let (name, val) = value
        .split_once('=')
        .ok_or(bad("sc", "expected NAME=VALUE"))?;
    let token = |b: u8| b.is_ascii_alphanumeric() || b"!#$%&'*+-.^_`|~".contains(&b);
    if name.is_empty() || !name.bytes().all(token) {
        return Err(bad("sc", "the cookie name must be a token"));
    }
    let octet = |b: u8| b.is_ascii_graphic() && !matches!(b, b'"' | b',' | b';' | b'\\');
    if !val.bytes().all(octet) {
        return Err(bad("sc", "the cookie value must be cookie-octets"));
    }
    Ok(value.to_owned())
}

/// `0` or `1`.
fn flag(param: &'static str, value: &str) -> Result<bool, QueryError> {
    match value {
        "0" => Ok(false),
        "1" => Ok(true),
        _ => Err(bad(param, "expected 0 or 1")),
    }
}

/// Digits with an optional `k`, `m` or `g` suffix (1024-based), at most [`MAX_SIZE`].
fn size(param: &'static str, value: &str) -> Result<u64, QueryError> {
    let (digits, shift) = match value.as_bytes().last() {
        Some(b'k' | b'K') => (&value[..value.len() - 1], 10),
        Some(b'm' | b'M') => (&value[..value.len() - 1], 20),
        Some(b'g' | b'G') => (&value[..value.len() - 1], 30),
        _ => (value, 0),
    };
    let n = digits_u64(digits).ok_or(bad(param, "expected a size like 512, 64k, 16m or 1g"))?;
    n.checked_mul(1 << shift)
        .filter(|&n| n <= MAX_SIZE)
        .ok_or(bad(param, "larger than 64g"))
}

fn delay(value: &str) -> Result<u64, QueryError> {
    let ms = digits_u64(value).ok_or(bad("t", "expected milliseconds"))?;
    if ms > MAX_DELAY_MS {
        return Err(bad("t", "longer than one hour"));
    }
    Ok(ms)
}

/// 200..=599: 1xx would be an interim response, not a final one.
fn status(value: &str) -> Result<StatusCode, QueryError> {
    digits_u64(value)
        .filter(|n| (200..=599).contains(n))
        .and_then(|n| u16::try_from(n).ok())
        .and_then(|n| StatusCode::from_u16(n).ok())
        .ok_or(bad("r", "expected a status from 200 to 599"))
}

/// Plain ASCII digits only (`u64::from_str` would also take a leading `+`).
fn digits_u64(s: &str) -> Option<u64> {
    if s.is_empty() || !s.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    s.parse().ok()
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    fn p(q: &str) -> Result<Plan, QueryError> {
        parse(Some(q))
    }

    #[test]
    fn empty_and_unknown_give_default() {
        assert_eq!(parse(None).unwrap(), Plan::default());
        assert_eq!(p("").unwrap(), Plan::default());
        assert_eq!(p("foo=bar&&z&cache=123").unwrap(), Plan::default());
    }

    #[test]
    fn sizes() {
        assert_eq!(p("s=0").unwrap().size, Some(0));
        assert_eq!(p("s=123").unwrap().size, Some(123));
        assert_eq!(p("s=64k").unwrap().size, Some(65536));
        assert_eq!(p("s=16M").unwrap().size, Some(16 << 20));
        assert_eq!(p("s=64g").unwrap().size, Some(MAX_SIZE));
        for v in [
            "",
            "k",
            "-1",
            "+1",
            "1.5k",
            "1kb",
            "65g",
            "99999999999999999999",
            "%31",
        ] {
            assert_eq!(p(&format!("s={v}")).unwrap_err().param, "s", "{v}");
        }
    }

    #[test]
    fn last_value_wins() {
        assert_eq!(p("s=1&s=2").unwrap().size, Some(2));
    }

    #[test]
    fn flags() {
        let plan = p("k=0&c=1&e=1&h=1").unwrap();
        assert!(plan.close && plan.chunked && plan.echo && plan.dump);
        assert!(!p("k=1").unwrap().close);
        for q in ["k=2", "c=yes", "e=", "h"] {
            assert!(p(q).is_err(), "{q}");
        }
    }

    #[test]
    fn cookies_repeat_and_are_checked() {
        let plan = p("sc=SRV=a~1&s=1&sc=lang=en").unwrap();
        assert_eq!(plan.cookies, ["SRV=a~1", "lang=en"]);
        assert_eq!(p("sc=SRV=").unwrap().cookies, ["SRV="]);
        for v in ["", "SRV", "=a", "S RV=a", "SRV=a;b", "SRV=\"a\""] {
            assert_eq!(p(&format!("sc={v}")).unwrap_err().param, "sc", "{v}");
        }
    }

    #[test]
    fn status_range() {
        assert_eq!(p("r=204").unwrap().status, StatusCode::NO_CONTENT);
        assert_eq!(p("r=599").unwrap().status.as_u16(), 599);
        for v in ["100", "199", "600", "abc", "", "2000"] {
            assert_eq!(p(&format!("r={v}")).unwrap_err().param, "r", "{v}");
        }
    }

    #[test]
    fn delay_bounds() {
        assert_eq!(p("t=250").unwrap().delay, Duration::from_millis(250));
        assert_eq!(p("t=3600001").unwrap_err().param, "t");
        assert_eq!(p("t=1s").unwrap_err().param, "t");
    }

    #[test]
    fn abort_must_truncate() {
        assert_eq!(p("x=10").unwrap().abort_after, Some(10));
        assert_eq!(p("x=1k").unwrap_err().param, "x");
        assert_eq!(p("s=2k&x=1k").unwrap().abort_after, Some(1024));
        assert_eq!(p("s=10&x=10").unwrap_err().param, "x");
    }

    #[test]
    fn error_names_the_parameter() {
        let e = p("t=soon").unwrap_err();
        assert!(e.to_string().contains("'t'"), "{e}");
    }
}
