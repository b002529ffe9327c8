//! Command-line options of `tern bench`, and the small parsers behind them.
//!
//! The options are a clap `Args` struct so the `tern` binary mounts them as a subcommand and
//! tests build them with [`BenchArgs::parse_from`](clap::Parser). Every knob that changes what
//! is measured (TLS version, groups, suites, concurrency, requests per connection, CPUs) is an
//! explicit option, because a benchmark figure is only meaningful with its settings named.

use std::fmt;
use std::path::PathBuf;
use std::time::Duration;

use clap::ValueEnum;

/// Options of `tern bench`: a closed-loop HTTP/1.1 and HTTPS load generator.
#[derive(Debug, Clone, clap::Args)]
pub struct BenchArgs {
    /// Target URL: http://host[:port][/path] or https://host[:port][/path].
    #[arg(value_name = "URL", value_parser = Target::parse)]
    pub url: Target,

    /// Concurrent connections (closed loop: each sends its next request when the last one ends).
    #[arg(short = 'c', long, default_value_t = 16, value_parser = clap::value_parser!(u32).range(1..))]
    pub connections: u32,

    /// Requests per connection: 1 = a new connection and full handshake per request,
    /// 0 = keep-alive for the whole run. The last request of a connection says `Connection: close`.
    #[arg(long, default_value_t = 0)]
    pub requests_per_conn: u64,

    /// Measured duration in seconds (fractions allowed).
    #[arg(short = 'd', long, default_value = "10", value_parser = parse_secs)]
    pub duration: Duration,

    /// Warm-up in seconds before the measured window; its requests are not reported.
    #[arg(long, default_value = "1", value_parser = parse_secs)]
    pub warmup: Duration,

    /// Client threads; each runs its own current-thread event loop with its share of connections.
    #[arg(long, default_value_t = 1, value_parser = clap::value_parser!(u32).range(1..=1024))]
    pub threads: u32,

    /// CPUs to pin the client threads to, e.g. "1" or "2,3" or "4-7"; thread i gets entry i mod n.
    #[arg(long, value_name = "LIST", value_parser = parse_cpu_list)]
    pub cpus: Option<CpuList>,

    /// Do not verify the server certificate chain or name (handshake signatures are still
    /// checked). This is the default unless --cacert is given.
    #[arg(short = 'k', long, conflicts_with = "cacert")]
    pub insecure: bool,

    /// Verify the server certificate against the CA certificates in this PEM file.
    #[arg(long, value_name = "FILE")]
    pub cacert: Option<PathBuf>,

    /// Server name to send in SNI (and verify with --cacert); defaults to the URL's host name.
    #[arg(long, value_name = "NAME")]
    pub sni: Option<String>,

    /// Offer only this TLS version; default: offer 1.3 and 1.2 and let the server choose.
    #[arg(long, value_enum)]
    pub tls_version: Option<TlsVersion>,

    /// Key exchange groups to offer, in preference order (the first gets a key share).
    #[arg(long, value_enum, value_delimiter = ',', default_value = "x25519")]
    pub groups: Vec<KxGroup>,

    /// Cipher suites to offer, e.g. TLS_AES_256_GCM_SHA384 (OpenSSL or rustls names);
    /// default: all of the provider's default suites.
    #[arg(long, value_delimiter = ',', value_name = "LIST")]
    pub ciphers: Vec<String>,

    /// A request (connect, handshake and response included) slower than this is an error.
    #[arg(long, default_value = "2", value_parser = parse_secs)]
    pub timeout: Duration,

    /// Also write the report as JSON to this file.
    #[arg(long, value_name = "FILE")]
    pub json: Option<PathBuf>,
}

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

/// TLS protocol version to offer.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum TlsVersion {
    /// TLS 1.2 only.
    #[value(name = "1.2")]
    Tls12,
    /// TLS 1.3 only.
    #[value(name = "1.3")]
    Tls13,
}

/// A key exchange group the client can offer.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum KxGroup {
    /// X25519 (the usual default).
    X25519,
    /// NIST P-256 (secp256r1).
    P256,
    /// NIST P-384 (secp384r1).
    P384,
    /// The X25519 + ML-KEM-768 post-quantum hybrid.
    X25519mlkem768,
}

/// CPU numbers for `--cpus`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CpuList(pub Vec<usize>);

/// Parses "1", "0,2" or "4-7,9".
fn parse_cpu_list(s: &str) -> Result<CpuList, String> {
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
fn parse_secs(s: &str) -> Result<Duration, String> {
    let secs: f64 = s
        .trim()
        .parse()
        .map_err(|_| format!("{s:?}: expected a number of seconds"))?;
    if !secs.is_finite() || !(0.0..=86_400.0).contains(&secs) {
        return Err(format!("{s:?}: seconds must be between 0 and 86400"));
    }
    Ok(Duration::from_secs_f64(secs))
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    #[test]
    fn parses_urls() {
        let t = Target::parse("https://example.test:8443/test?x=1").unwrap();
        assert!(t.tls);
        assert_eq!(
            (t.host.as_str(), t.port, t.path.as_str()),
            ("example.test", 8443, "/test?x=1")
        );
        assert_eq!(t.authority, "example.test:8443");
        let t = Target::parse("http://127.0.0.1").unwrap();
        assert_eq!((t.tls, t.port, t.path.as_str()), (false, 80, "/"));
        let t = Target::parse("https://[::1]/").unwrap();
        assert_eq!((t.host.as_str(), t.port), ("::1", 443));
        let t = Target::parse("http://[::1]:81/a").unwrap();
        assert_eq!((t.host.as_str(), t.port), ("::1", 81));
        assert_eq!(t.to_string(), "http://[::1]:81/a");
    }

    #[test]
    fn rejects_bad_urls() {
        for url in [
            "ftp://x/",
            "https://",
            "https://:80/",
            "http://a:0/",
            "http://a:99999/",
            "http://u@a/",
            "http://a/b c",
            "http://::1/",
            "http://[::1/",
        ] {
            assert!(Target::parse(url).is_err(), "{url}");
        }
    }

    #[test]
    fn parses_cpu_lists_and_seconds() {
        assert_eq!(parse_cpu_list("1").unwrap(), CpuList(vec![1]));
        assert_eq!(parse_cpu_list("0,2-4").unwrap(), CpuList(vec![0, 2, 3, 4]));
        assert!(parse_cpu_list("3-1").is_err());
        assert!(parse_cpu_list("a").is_err());
        assert_eq!(parse_secs("0.5").unwrap(), Duration::from_millis(500));
        assert!(parse_secs("-1").is_err());
        assert!(parse_secs("nan").is_err());
    }
}
