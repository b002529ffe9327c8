//! The request id (`unique_id_format`, HAProxy's `unique-id-format`) and the other values a
//! frontend's log takes from the request while it is routed: captured fields and the
//! `log_format`'s samples. None of it runs on a frontend that has none of them.
//!
//! The id is made before the request rules run, so `%[unique-id]` reads it in rules and in
//! response rules; it reads what is known then ([`tern_config::LogVar::at_request`]: the
//! connection, the date, the request line, the process and a request counter shared by all
//! workers, so that `%pid` and `%rt` together are unique in a process's life).

use std::net::SocketAddr;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{SystemTime, UNIX_EPOCH};

use tern_config::{Capture, Fetch, LogFlags, LogVar};
use tern_h1::{Field, FieldValue};

use super::facts::Samples;
use crate::access_log::template::{self, address, encoded, number, Escape, Values};

/// The next request's number in the process (`%rt`), from 0 as in HAProxy.
pub(crate) fn next_counter() -> u64 {
    static COUNTER: AtomicU64 = AtomicU64::new(0);
    COUNTER.fetch_add(1, Ordering::Relaxed)
}

/// A request being routed, as a template's values.
pub(crate) struct AtRequest<'a, F> {
    pub facts: &'a F,
    pub client: SocketAddr,
    /// The address the client connected to, when the template reads it.
    pub local: Option<SocketAddr>,
    pub frontend: &'a str,
    pub tls: bool,
    pub now: SystemTime,
    pub counter: u64,
}

impl<F: Samples> Values for AtRequest<'_, F> {
    fn var(&self, var: LogVar, flags: LogFlags, out: &mut Vec<u8>) {
        let hex = flags.hex;
        let since = self.now.duration_since(UNIX_EPOCH).unwrap_or_default();
        let target = self.facts.url();
        let (uri, path, query) = template::target_parts(target);
        let civil = crate::access_log::Civil::of(self.now);
        match var {
            LogVar::ClientIp => address(out, self.client.ip(), hex),
            LogVar::ClientPort => number(out, u64::from(self.client.port()), hex),
            LogVar::FrontendIp => {
                if let Some(local) = self.local {
                    address(out, local.ip(), hex);
                }
            }
            LogVar::FrontendPort => {
                if let Some(local) = self.local {
                    number(out, u64::from(local.port()), hex);
                }
            }
            LogVar::Frontend | LogVar::FrontendTransport => {
                encoded(out, self.frontend.as_bytes(), Escape::Url);
                if var == LogVar::FrontendTransport && self.tls {
                    out.push(b'~');
                }
            }
            LogVar::AcceptDate => civil.write_haproxy(out),
            LogVar::AcceptDateGmt => civil.write_gmt(out),
            LogVar::Timestamp => number(out, since.as_secs(), hex),
            LogVar::Millis if hex => {
                out.extend_from_slice(format!("{:02X}", since.subsec_millis()).as_bytes());
            }
            LogVar::Millis => {
                out.extend_from_slice(format!("{:03}", since.subsec_millis()).as_bytes())
            }
            LogVar::Pid => number(out, u64::from(std::process::id()), hex),
            LogVar::Hostname => out.extend_from_slice(template::hostname().as_bytes()),
            LogVar::RequestCounter => number(out, self.counter, hex),
            LogVar::Method => encoded(out, self.facts.method(), Escape::Url),
            LogVar::Uri => encoded(out, target, Escape::Url),
            LogVar::UriPath => encoded(out, uri, Escape::Url),
            LogVar::PathOnly => encoded(out, path, Escape::Url),
            LogVar::Query => encoded(out, query, Escape::Url),
            LogVar::Version | LogVar::RequestLine => {
                if var == LogVar::RequestLine {
                    encoded(out, self.facts.method(), Escape::Url);
                    out.push(b' ');
                    encoded(out, target, Escape::Url);
                    out.push(b' ');
                }
                let (major, minor) = self.facts.version();
                out.extend_from_slice(format!("HTTP/{major}.{minor}").as_bytes());
            }
            // Refused in `unique_id_format` by the configuration (not known yet).
            _ => {}
        }
    }

    fn sample(&self, fetch: &Fetch, _slot: usize, out: &mut Vec<u8>) {
        self.facts.sample(fetch, &mut FieldValue::detached(out));
    }
}

/// The captured values of `captures` among `fields` (parsed from `buf`): the last field of
/// each name, whole, cut at its `len` (HAProxy keeps the last occurrence); empty when absent.
pub(crate) fn capture(captures: &[Capture], fields: &[Field], buf: &[u8], into: &mut Vec<Vec<u8>>) {
    into.clear();
    for c in captures {
        let value = fields
            .iter()
            .rev()
            .find(|f| f.name(buf).eq_ignore_ascii_case(c.name.as_bytes()))
            .map_or(&[][..], |f| f.value(buf));
        into.push(value[..value.len().min(c.len)].to_vec());
    }
}
