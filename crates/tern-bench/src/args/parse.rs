//! Value parsers behind the options: URLs, CPU lists, seconds, rates and ratios.
//!
//! Each returns a message naming the bad value, which clap prints with the option's name.

use std::fmt;
use std::time::Duration;

/// Where to send requests: scheme, host, port and path of the URL.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Target {
    /// `https` (true) or `http` (false).
    pub tls: bool,
    /// Host name or IP address, without brackets for IPv6.
    pub host: String,
    /// TCP port (default 80 or 443).
    pub port: u16,
    /// Path and query, starting with `/`.
    pub path: String,
    /// The `Host` header value: the authority as written in the URL.
    pub authority: String,
}

impl Target {
    /// Parses `http://host[:port][/path]` or `https://…`; IPv6 hosts go in brackets.
    pub fn parse(url: &str) -> Result<Self, String> {
        let (tls, rest) = if let Some(rest) = url.strip_prefix("https://") {
            (true, rest)
        } else if let Some(rest) = url.strip_prefix("http://") {
            (false, rest)
        } else {
            return Err(format!(
                "{url:?}: the URL must start with http:// or https://"
            ));
        };
        let (authority, path) = match rest.find('/') {
            Some(at) => (&rest[..at], &rest[at..]),
            None => (rest, "/"),
        };
        if path.contains('#') || path.bytes().any(|b| b <= b' ' || b == 0x7f) {
            return Err(format!(
                "{url:?}: the path must not contain spaces, controls or '#'"
            ));
        }
        if authority.is_empty() || authority.contains('@') {
            return Err(format!("{url:?}: expected host[:port] after the scheme"));
        }
        let (host, port) = split_host_port(authority)
            .ok_or_else(|| format!("{url:?}: cannot read host[:port] from {authority:?}"))?;
        let port = match port {
            Some(port) => port,
            None if tls => 443,
            None => 80,
        };
        Ok(Self {
            tls,
            host: host.to_owned(),
            port,
            path: path.to_owned(),
            authority: authority.to_owned(),
        })
    }
}

impl fmt::Display for Target {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let scheme = if self.tls { "https" } else { "http" };
        write!(f, "{scheme}://{}{}", self.authority, self.path)
    }
}

/// Splits `host`, `host:port`, `[v6]` or `[v6]:port`.
fn split_host_port(authority: &str) -> Option<(&str, Option<u16>)> {
    let (host, port) = if let Some(rest) = authority.strip_prefix('[') {
        let close = rest.find(']')?;
        let after = &rest[close + 1..];
        let port = match after {
            "" => None,
            _ => Some(after.strip_prefix(':')?),
        };
        (&rest[..close], port)
    } else {
        match authority.rsplit_once(':') {
            Some((host, port)) => (host, Some(port)),
            None => (authority, None),
        }
    };
    if host.is_empty() || host.contains(':') && !authority.starts_with('[') {
        return None;
    }
    let port = match port {
        Some(p) => Some(p.parse::<u16>().ok().filter(|&p| p != 0)?),
        None => None,
    };
    Some((host, port))
}

/// CPU numbers for `--cpus`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CpuList(pub Vec<usize>);

/// Parses "1", "0,2" or "4-7,9".
pub fn parse_cpu_list(s: &str) -> Result<CpuList, String> {
    let mut cpus = Vec::new();
    for part in s.split(',').map(str::trim) {
        let bad = || format!("{s:?}: expected CPU numbers like 1 or 0,2 or 4-7");
        let (lo, hi) = match part.split_once('-') {
            Some((lo, hi)) => (lo, hi),
            None => (part, part),
        };
        let lo: usize = lo.trim().parse().map_err(|_| bad())?;
        let hi: usize = hi.trim().parse().map_err(|_| bad())?;
        if lo > hi || hi >= 4096 {
            return Err(bad());
        }
        cpus.extend(lo..=hi);
    }
    Ok(CpuList(cpus))
}

/// Parses a number of seconds, fractions allowed ("10", "0.5").
pub fn parse_secs(s: &str) -> Result<Duration, String> {
    let secs: f64 = s
        .trim()
        .parse()
        .map_err(|_| format!("{s:?}: expected a number of seconds"))?;
    if !secs.is_finite() || !(0.0..=86_400.0).contains(&secs) {
        return Err(format!("{s:?}: seconds must be between 0 and 86400"));
    }
    Ok(Duration::from_secs_f64(secs))
}

/// Parses an arrival rate per second: positive, finite, at most ten million.
pub fn parse_rate(s: &str) -> Result<f64, String> {
    let rate: f64 = s
        .trim()
        .parse()
        .map_err(|_| format!("{s:?}: expected a number per second"))?;
    if !rate.is_finite() || rate <= 0.0 || rate > 1e7 {
        return Err(format!(
            "{s:?}: the rate must be above 0 and at most 10000000"
        ));
    }
    Ok(rate)
}

/// Parses a share between 0 and 1 inclusive.
pub fn parse_ratio(s: &str) -> Result<f64, String> {
    let ratio: f64 = s
        .trim()
        .parse()
        .map_err(|_| format!("{s:?}: expected a number between 0 and 1"))?;
    if !(0.0..=1.0).contains(&ratio) {
        return Err(format!("{s:?}: expected a number between 0 and 1"));
    }
    Ok(ratio)
}
