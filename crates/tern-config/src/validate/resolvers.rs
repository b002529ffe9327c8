//! `[[resolvers]]` sections and servers found by DNS (`resolvers`, `resolve_prefer`,
//! `init_addr`, templates with `count`).
//!
//! A server with `resolvers` is checked here for what can be known before any query: the
//! resolvers section exists, the name is a DNS name (an SRV name, starting with `_`, carries no
//! port; any other needs one), and `init_addr` gives the server a first address or says it may
//! start without one (`none`). Where HAProxy would resolve with the system resolver at start
//! (`libc`), so does this stage, once, so `tern check` reports a name nobody can resolve.
//! A template (`count`) becomes its slots here, `name1` to `nameN`, each a server of its own
//! that starts without an address: which record fills which slot is decided at run time.

use std::net::{IpAddr, SocketAddr, ToSocketAddrs};
use std::time::Duration;

use super::Checker;
use crate::locate::KeyPath;
use crate::model::{Family, Hold, Resolvers, ServerResolve};
use crate::raw::{RawCount, RawDuration, RawResolvers, RawServer, TextOrInt};

/// The largest template (HAProxy has no limit; this bounds the memory of a typo).
const MAX_SLOTS: i64 = 4096;

impl Checker<'_> {
    /// Every `[[resolvers]]`, at `resolvers[i]`.
    pub(super) fn resolvers_sections(&mut self, raw: &[RawResolvers]) -> Vec<Resolvers> {
        let all: Vec<Resolvers> = raw
            .iter()
            .enumerate()
            .map(|(i, r)| self.resolvers(r, &KeyPath::root().key("resolvers").index(i)))
            .collect();
        self.unique_names("resolvers", raw.iter().map(|r| r.name.as_deref()));
        all
    }

    fn resolvers(&mut self, raw: &RawResolvers, path: &KeyPath) -> Resolvers {
        let mut nameservers = Vec::new();
        for (i, text) in raw.nameservers.iter().flatten().enumerate() {
            match nameserver(text) {
                Ok(address) => nameservers.push(address),
                Err(message) => self.issue(&path.key("nameservers").index(i), message),
            }
        }
        if raw.parse_resolv_conf.unwrap_or(false) {
            nameservers.extend(resolv_conf(
                &std::fs::read_to_string("/etc/resolv.conf").unwrap_or_default(),
            ));
        }
        if nameservers.is_empty() && raw.nameservers.as_ref().is_none_or(|n| n.is_empty()) {
            self.issue(
                path,
                "no nameserver: list `nameservers = [\"127.0.0.1:53\"]` or set `parse_resolv_conf = true`",
            );
        }
        let hold_path = path.key("hold");
        let defaults = Hold::default();
        let h = &raw.hold;
        let hold = Hold {
            valid: self.hold(&hold_path.key("valid"), h.valid.as_ref(), defaults.valid),
            nx: self.hold(&hold_path.key("nx"), h.nx.as_ref(), defaults.nx),
            timeout: self.hold(
                &hold_path.key("timeout"),
                h.timeout.as_ref(),
                defaults.timeout,
            ),
            refused: self.hold(
                &hold_path.key("refused"),
                h.refused.as_ref(),
                defaults.refused,
            ),
            other: self.hold(&hold_path.key("other"), h.other.as_ref(), defaults.other),
            obsolete: self.hold(
                &hold_path.key("obsolete"),
                h.obsolete.as_ref(),
                defaults.obsolete,
            ),
        };
        let timeouts = path.key("timeouts");
        Resolvers {
            name: self.name(&path.key("name"), raw.name.as_deref()),
            nameservers,
            resolve_retries: self.int_in(
                &path.key("resolve_retries"),
                raw.resolve_retries,
                1..=100,
                3,
            ) as u32,
            resolve_interval: self.nonzero(&timeouts.key("resolve"), raw.timeouts.resolve.as_ref()),
            retry: self.nonzero(&timeouts.key("retry"), raw.timeouts.retry.as_ref()),
            hold,
            accepted_payload_size: self.size_in(
                &path.key("accepted_payload_size"),
                raw.accepted_payload_size.as_ref(),
                512..=65_535,
                512,
            ) as u16,
        }
    }

    /// A `hold` period: zero is allowed (HAProxy's `hold obsolete 0s`, the default: a record
    /// gone from the answer takes its server out at once).
    fn hold(&mut self, path: &KeyPath, value: Option<&RawDuration>, default: Duration) -> Duration {
        if let Some(RawDuration(TextOrInt::Text(text))) = value {
            if humantime::parse_duration(text.trim()).is_ok_and(|d| d.is_zero()) {
                return Duration::ZERO;
            }
        }
        self.duration(path, value, default)
    }

    /// A resolvers timeout: 1 s by default (HAProxy's), never zero (a busy loop).
    fn nonzero(&mut self, path: &KeyPath, value: Option<&RawDuration>) -> Duration {
        let d = self.duration(path, value, Duration::from_secs(1));
        if d.is_zero() {
            self.issue(path, "must be above zero");
            return Duration::from_secs(1);
        }
        d
    }

    /// The slot numbers of a template (`count`), or `None` for a plain server.
    pub(super) fn slots(&mut self, raw: &RawServer, path: &KeyPath) -> Option<Vec<u32>> {
        let count = raw.count.as_ref()?;
        let at = path.key("count");
        let range = match slot_range(count) {
            Ok(range) => range,
            Err(message) => {
                self.issue(&at, message);
                return Some(Vec::new());
            }
        };
        if raw.resolvers.is_none() {
            self.issue(
                &at,
                "a template (`count`) needs `resolvers`: its slots are filled by DNS",
            );
        }
        Some(range.map(|n| n as u32).collect())
    }

    /// A server's DNS settings and its address at start; `None` without `resolvers`.
    pub(super) fn server_resolve(
        &mut self,
        raw: &RawServer,
        slot: Option<(u32, u32)>,
        path: &KeyPath,
    ) -> Option<(SocketAddr, ServerResolve)> {
        let Some(section) = raw.resolvers.as_deref() else {
            if raw.resolve_prefer.is_some() || raw.init_addr.is_some() {
                self.issue(path, "`resolve_prefer` and `init_addr` need `resolvers`");
            }
            return None;
        };
        let Some(resolvers) = self.resolver_names.iter().position(|n| n == section) else {
            let known = self.resolver_names.join(", ");
            let message = format!("no [[resolvers]] named `{section}` (known: {known})");
            self.issue(&path.key("resolvers"), message);
            return None;
        };
        let text = raw.address.as_deref()?;
        let (name, port) = match dns_target(text) {
            Ok(target) => target,
            Err(message) => {
                self.issue(&path.key("address"), message);
                return None;
            }
        };
        let prefer = match raw.resolve_prefer.as_deref() {
            None | Some("ipv6") => Family::Ipv6,
            Some("ipv4") => Family::Ipv4,
            Some(other) => {
                let message = format!("unknown family `{other}`: expected \"ipv4\" or \"ipv6\"");
                self.issue(&path.key("resolve_prefer"), message);
                Family::Ipv6
            }
        };
        let srv = name.starts_with('_');
        let mut resolve = ServerResolve {
            resolvers,
            name,
            srv,
            port,
            prefer,
            slot: slot.map(|(n, _)| n),
            first_slot: slot.map_or(0, |(_, first)| first),
            starts_unresolved: false,
            keep_last: false,
        };
        let address = self.init_addr(raw, &mut resolve, &path.key("init_addr"))?;
        Some((address, resolve))
    }

    /// Walks `init_addr` to the first method that gives an address or allows none.
    fn init_addr(
        &mut self,
        raw: &RawServer,
        resolve: &mut ServerResolve,
        path: &KeyPath,
    ) -> Option<SocketAddr> {
        let template = resolve.slot.is_some();
        let default: &[&str] = if template {
            &["last", "none"]
        } else {
            &["last", "libc"]
        };
        let methods: Vec<&str> = match &raw.init_addr {
            Some(list) => list.iter().map(String::as_str).collect(),
            None => default.to_vec(),
        };
        let unresolved = SocketAddr::new(IpAddr::from([0, 0, 0, 0]), resolve.port);
        for (i, method) in methods.iter().enumerate() {
            match *method {
                "last" => resolve.keep_last = true,
                "libc" if template || resolve.srv => {}
                "libc" => {
                    if let Some(a) = libc_address(&resolve.name, resolve.port, resolve.prefer) {
                        return Some(a);
                    }
                }
                "none" => {
                    resolve.starts_unresolved = true;
                    return Some(unresolved);
                }
                other => match other.parse::<IpAddr>() {
                    Ok(ip) if !template => return Some(SocketAddr::new(ip, resolve.port)),
                    Ok(_) => self.issue(
                        &path.index(i),
                        "a template's slots start without an address: use \"last\" or \"none\"",
                    ),
                    Err(_) => {
                        let message = format!("unknown method `{other}`: expected \"last\", \"libc\", \"none\" or an IP address");
                        self.issue(&path.index(i), message);
                        return None;
                    }
                },
            }
        }
        if template {
            resolve.starts_unresolved = true;
            return Some(unresolved);
        }
        let tried = methods.join(", ");
        let message = format!(
            "no address for `{}` at start (init_addr: {tried}); add \"none\" to start the server without one",
            resolve.name
        );
        self.issue(path, message);
        None
    }
}

/// `"ip:port"`, `"[v6]:port"` or `"ip"` (port 53).
fn nameserver(text: &str) -> Result<SocketAddr, String> {
    if let Ok(address) = text.parse::<SocketAddr>() {
        if address.port() == 0 {
            return Err(format!("nameserver `{text}` has port 0"));
        }
        return Ok(address);
    }
    text.parse::<IpAddr>()
        .map(|ip| SocketAddr::new(ip, 53))
        .map_err(|_| {
            format!("bad nameserver address `{text}`: expected an IP address and port, like \"127.0.0.1:53\"")
        })
}

/// The `nameserver` lines of a resolv.conf text.
pub(crate) fn resolv_conf(text: &str) -> Vec<SocketAddr> {
    text.lines()
        .filter_map(|line| {
            let mut words = line.split_whitespace();
            (words.next() == Some("nameserver")).then(|| words.next())?
        })
        .filter_map(|ip| ip.parse::<IpAddr>().ok())
        .map(|ip| SocketAddr::new(ip, 53))
        .collect()
}

/// The DNS name and port of a resolved server's `address`: `"_svc._proto.name"` (SRV, no
/// port) or `"name:port"`.
fn dns_target(text: &str) -> Result<(String, u16), String> {
    let (name, port) = if text.starts_with('_') {
        (text, 0)
    } else {
        let Some((host, port)) = text.rsplit_once(':') else {
            return Err(format!(
                "server address `{text}` needs a port, e.g. \"{text}:8080\" (or an SRV name starting with `_`)"
            ));
        };
        let port = port
            .parse::<u16>()
            .ok()
            .filter(|p| *p != 0)
            .ok_or_else(|| format!("invalid port `{port}` in server address `{text}`"))?;
        (host.trim_start_matches('[').trim_end_matches(']'), port)
    };
    let name = name.trim_end_matches('.').to_ascii_lowercase();
    let valid = !name.is_empty()
        && name.len() <= 253
        && name.split('.').all(|label| {
            !label.is_empty()
                && label.len() <= 63
                && label
                    .bytes()
                    .all(|b| b.is_ascii_alphanumeric() || b == b'-' || b == b'_')
        });
    if !valid || name.parse::<IpAddr>().is_ok() {
        return Err(format!("`{name}` is not a DNS name"));
    }
    Ok((name, port))
}

/// The system resolver's first address of the preferred family, else the first of any.
fn libc_address(name: &str, port: u16, prefer: Family) -> Option<SocketAddr> {
    let all: Vec<SocketAddr> = (name, port).to_socket_addrs().ok()?.collect();
    all.iter()
        .find(|a| prefer.matches(a.ip()))
        .or_else(|| all.first())
        .copied()
}

/// A template's slot numbers: `N` (1 to N) or `"A-B"`.
fn slot_range(count: &RawCount) -> Result<std::ops::RangeInclusive<i64>, String> {
    let (first, last) = match &count.0 {
        TextOrInt::Int(n) => (1, *n),
        TextOrInt::Text(text) => {
            let parsed = match text.split_once('-') {
                Some((a, b)) => a.trim().parse().ok().zip(b.trim().parse().ok()),
                None => text.trim().parse().ok().map(|n| (1, n)),
            };
            parsed.ok_or_else(|| format!("`{text}` is not a count (10) or a range (\"1-10\")"))?
        }
    };
    if first < 1 || last < first || last - first + 1 > MAX_SLOTS {
        return Err(format!(
            "slots {first} to {last}: the first must be 1 or more, the last at least the first, at most {MAX_SLOTS} slots"
        ));
    }
    Ok(first..=last)
}

#[cfg(test)]
mod tests;
