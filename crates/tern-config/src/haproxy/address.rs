//! HAProxy addresses → tern's `host:port` strings.
//!
//! HAProxy writes IPv6 addresses with or without brackets (the port follows the last colon),
//! prefixes families (`ipv4@`, `ipv6@`), lists several addresses with commas and port ranges
//! with a dash (`:8000-8002`). tern takes one `host:port` per bind, brackets around IPv6.
//! Socket families tern does not listen on (`unix@`, `fd@`, `abns@`, QUIC) are refused here.

/// Most addresses one bind line may expand to (a port range is one socket per port).
const MAX_EXPANDED: usize = 1000;

/// The addresses of a `bind` line (its first argument), one per port.
pub(crate) fn bind_addresses(spec: &str) -> Result<Vec<String>, String> {
    let mut out = Vec::new();
    for item in spec.split(',').filter(|s| !s.is_empty()) {
        let (v6, rest) = family(item)?;
        if rest.starts_with('/') {
            return Err(format!("bind address '{item}' is a Unix socket: tern listens on TCP only (not supported yet)"));
        }
        let (host, ports) = rest
            .rsplit_once(':')
            .ok_or_else(|| format!("bind address '{item}' has no port"))?;
        let host = match host {
            "" | "*" if v6 => "[::]".to_owned(),
            "" => String::new(),
            "*" => "*".to_owned(),
            "::" => "[::]".to_owned(),
            h => bracket(h),
        };
        for port in port_range(ports, item)? {
            out.push(format!("{host}:{port}"));
            if out.len() > MAX_EXPANDED {
                return Err(format!(
                    "bind '{spec}' names more than {MAX_EXPANDED} addresses"
                ));
            }
        }
    }
    if out.is_empty() {
        return Err("'bind' needs an address".to_owned());
    }
    Ok(out)
}

/// A server's address: `host:port`, with brackets around an IPv6 host.
pub(crate) fn server_address(spec: &str) -> Result<String, String> {
    let (_, rest) = family(spec)?;
    if rest.starts_with('/') {
        return Err(format!(
            "server address '{spec}' is a Unix socket (not supported yet)"
        ));
    }
    let no_port = || {
        format!(
            "server address '{spec}' has no port: HAProxy then uses the port the client connected to, which tern does not support yet"
        )
    };
    let (host, port) = rest.rsplit_once(':').ok_or_else(no_port)?;
    if port.is_empty() {
        return Err(no_port());
    }
    if port.starts_with(['+', '-']) {
        return Err(format!(
            "server port offset in '{spec}' is not supported yet"
        ));
    }
    if !port.chars().all(|c| c.is_ascii_digit()) {
        return Err(format!("invalid port '{port}' in server address '{spec}'"));
    }
    Ok(format!("{}:{port}", bracket(host)))
}

/// Strips `ipv4@`/`ipv6@` (and their TCP aliases); refuses other families. Returns whether the
/// address is IPv6 by its prefix, and the rest.
fn family(spec: &str) -> Result<(bool, &str), String> {
    let Some((prefix, rest)) = spec.split_once('@') else {
        return Ok((false, spec));
    };
    match prefix {
        "ipv4" | "tcp4" | "tcp" => Ok((false, rest)),
        "ipv6" | "tcp6" => Ok((true, rest)),
        _ => Err(format!(
            "address family '{prefix}@' is not supported yet (tern uses TCP over IPv4 and IPv6)"
        )),
    }
}

/// `::1` → `[::1]`; other hosts unchanged.
fn bracket(host: &str) -> String {
    if host.contains(':') && !host.starts_with('[') {
        format!("[{host}]")
    } else {
        host.to_owned()
    }
}

fn port_range(ports: &str, item: &str) -> Result<std::ops::RangeInclusive<u32>, String> {
    let port = |s: &str| -> Result<u32, String> {
        s.parse::<u32>()
            .ok()
            .filter(|&p| p <= 65535)
            .ok_or_else(|| format!("invalid port '{s}' in '{item}'"))
    };
    match ports.split_once('-') {
        Some((a, b)) => {
            let (a, b) = (port(a)?, port(b)?);
            if a > b || a == 0 {
                return Err(format!("invalid port range '{ports}' in '{item}'"));
            }
            Ok(a..=b)
        }
        None => {
            let p = port(ports)?;
            Ok(p..=p)
        }
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]

    use super::*;

    #[test]
    fn bind_forms() {
        assert_eq!(bind_addresses(":443").unwrap(), [":443"]);
        assert_eq!(bind_addresses("*:80").unwrap(), ["*:80"]);
        assert_eq!(bind_addresses("127.0.0.1:0").unwrap(), ["127.0.0.1:0"]);
        assert_eq!(bind_addresses(":::443").unwrap(), ["[::]:443"]);
        assert_eq!(bind_addresses("ipv6@:443").unwrap(), ["[::]:443"]);
        assert_eq!(bind_addresses("ipv4@10.0.0.1:80").unwrap(), ["10.0.0.1:80"]);
        assert_eq!(bind_addresses("::1:8080").unwrap(), ["[::1]:8080"]);
        assert_eq!(bind_addresses("[::1]:8080").unwrap(), ["[::1]:8080"]);
        assert_eq!(bind_addresses(":80,:8080").unwrap(), [":80", ":8080"]);
        assert_eq!(
            bind_addresses("10.0.0.1:8000-8002").unwrap(),
            ["10.0.0.1:8000", "10.0.0.1:8001", "10.0.0.1:8002"]
        );
    }

    #[test]
    fn bind_refusals() {
        assert!(bind_addresses("/run/x.sock").unwrap_err().contains("Unix"));
        assert!(bind_addresses("unix@/run/x.sock")
            .unwrap_err()
            .contains("not supported yet"));
        assert!(bind_addresses("quic4@:443")
            .unwrap_err()
            .contains("not supported yet"));
        assert!(bind_addresses("10.0.0.1").unwrap_err().contains("no port"));
        assert!(bind_addresses(":99999")
            .unwrap_err()
            .contains("invalid port"));
        assert!(bind_addresses(":1-65535")
            .unwrap_err()
            .contains("more than"));
    }

    #[test]
    fn server_forms() {
        assert_eq!(server_address("10.0.0.1:80").unwrap(), "10.0.0.1:80");
        assert_eq!(
            server_address("app.internal:8080").unwrap(),
            "app.internal:8080"
        );
        assert_eq!(server_address("ipv6@::1:80").unwrap(), "[::1]:80");
        assert_eq!(server_address("[::1]:80").unwrap(), "[::1]:80");
        assert!(server_address("10.0.0.1").unwrap_err().contains("no port"));
        assert!(server_address("10.0.0.1:").unwrap_err().contains("no port"));
        assert!(server_address("10.0.0.1:+1")
            .unwrap_err()
            .contains("offset"));
        assert!(server_address("unix@/x").is_err());
    }
}
