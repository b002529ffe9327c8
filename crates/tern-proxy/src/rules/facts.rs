//! What rules read: the facts of a request (or response) and of its connection, as
//! [`tern_config::Facts`] for conditions and as samples for header values (`%[src]`).
//!
//! Everything is read in place from the parsed head and its buffer: nothing is copied or
//! allocated per request. The connection's facts are gathered once per connection; the local
//! port only when some rule reads `dst_port` (it costs a `getsockname`), and the SNI is
//! borrowed from the TLS session when asked for.
//!
//! A response rule sees the response's fields through `hdr()` (as HAProxy's `hdr()` does in
//! `http-response` rules); the request's start line is gone by then, and the configuration
//! refuses response rules that read it.

use std::cell::RefCell;
use std::io::Write;
use std::net::IpAddr;

use tern_config::{Facts, Fetch, TableKey, MAX_STRING_KEY};
use tern_h1::{Field, FieldKind, FieldValue, RequestHead, ResponseHead, Version};
use tern_proxy_protocol::Tlvs;

use super::auth::AuthSeen;
use super::vars::Vars;
use crate::track::table::Key;
use tern_h1::HeaderEdits;

/// What is known of a client connection, for every request on it.
#[derive(Debug, Clone, Copy)]
pub(crate) struct ConnFacts {
    /// The client's address.
    pub peer: IpAddr,
    /// The local port the client connected to (0 when no rule reads it).
    pub local_port: u16,
    /// Whether the connection is TLS.
    pub tls: bool,
}

/// The facts of one request.
#[derive(Debug, Clone, Copy)]
pub(crate) struct RequestFacts<'a> {
    pub head: &'a RequestHead,
    /// The buffer `head` was parsed from.
    pub buf: &'a [u8],
    pub conn: &'a ConnFacts,
    /// The server name of the TLS ClientHello.
    pub sni: Option<&'a str>,
    /// The TLVs of the PROXY v2 header the connection opened with (`fc_pp_tlv`).
    pub pp_tlvs: Option<&'a Tlvs>,
    /// The session's variables.
    pub vars: &'a RefCell<Vars>,
    /// Who the request's credentials are (`http_auth`), checked before the rules ran.
    pub auth: AuthSeen<'a>,
}

/// The facts of one response from a server.
#[derive(Debug, Clone, Copy)]
pub(crate) struct ResponseFacts<'a> {
    pub head: &'a ResponseHead,
    /// The buffer `head` was parsed from.
    pub buf: &'a [u8],
    pub conn: &'a ConnFacts,
    pub sni: Option<&'a str>,
    pub pp_tlvs: Option<&'a Tlvs>,
    /// The session's variables.
    pub vars: &'a RefCell<Vars>,
}

/// Facts that can also be written into a header value, and what rewrite rules read.
pub(crate) trait Samples: Facts {
    /// Appends the sample `fetch` to `out`; a missing sample appends nothing.
    fn sample(&self, fetch: &Fetch, out: &mut FieldValue<'_>);

    /// The request's target as tern sends it, path and query (origin-form: `/` for an
    /// absolute-form target without a path); empty for a response.
    fn target(&self) -> &[u8];

    /// Calls `each` with the whole value of every field named `name`, in order.
    fn each_field(&self, name: &str, each: &mut dyn FnMut(&[u8]));

    /// The whole value of the first field named `name`.
    fn first_field(&self, name: &str) -> Option<&[u8]>;

    /// Calls `each` with the name of every field rules may delete (not the request's `Host`:
    /// a request needs one).
    fn each_field_name(&self, each: &mut dyn FnMut(&[u8]));

    /// Sets variable `name` (`set-var`).
    fn set_var(&self, name: &str, value: &[u8]);

    /// Sets the access log level of the request (`set-log-level`; `None`: silent).
    fn set_log_level(&self, severity: Option<u8>);

    /// Tracks the entry of the rule's key for this request (`track-sc0|1|2`).
    fn track(&self, _track: &tern_config::Track) {}
}

/// The `Facts` methods requests and responses answer alike: from the head's fields and
/// version, and from the connection.
macro_rules! head_and_connection_facts {
    () => {
        fn any_header(&self, name: &str, each: &mut dyn FnMut(&[u8]) -> bool) -> bool {
            any_value(self.head.fields(), self.buf, name, each)
        }

        fn version(&self) -> (u8, u8) {
            match self.head.version() {
                Version::Http10 => (1, 0),
                _ => (1, 1),
            }
        }

        fn src(&self) -> IpAddr {
            self.conn.peer
        }

        fn dst_port(&self) -> u16 {
            self.conn.local_port
        }

        fn tls(&self) -> bool {
            self.conn.tls
        }

        fn sni(&self) -> Option<&str> {
            self.sni
        }

        fn pp_tlv(&self, id: u8) -> Option<&[u8]> {
            self.pp_tlvs?.value(id)
        }

        fn var(&self, name: &str, each: &mut dyn FnMut(&[u8]) -> bool) -> bool {
            // A rule never reads a variable while setting one: the borrow is free.
            self.vars
                .try_borrow()
                .is_ok_and(|vars| vars.get(name).is_some_and(each))
        }

        fn counter(&self, fetch: &tern_config::CounterFetch) -> Option<u64> {
            let vars = self.vars.try_borrow().ok()?;
            vars.track.counter(fetch, self.conn.peer)
        }
    };
}

/// `Samples::set_var` for requests and responses alike.
macro_rules! set_var {
    () => {
        fn set_var(&self, name: &str, value: &[u8]) {
            if let Ok(mut vars) = self.vars.try_borrow_mut() {
                vars.set(name, value);
            }
        }

        fn set_log_level(&self, severity: Option<u8>) {
            if let Ok(mut vars) = self.vars.try_borrow_mut() {
                vars.set_log_level(severity);
            }
        }
    };
}

impl Facts for RequestFacts<'_> {
    fn method(&self) -> &[u8] {
        self.head.method_bytes(self.buf)
    }

    fn url(&self) -> &[u8] {
        self.head.target().get(self.buf)
    }

    fn path(&self) -> &[u8] {
        let path = self.head.path().get(self.buf);
        let path = path.split(|&b| b == b'?').next().unwrap_or_default();
        // An absolute-form target without a path means `/`.
        if path.is_empty() {
            b"/"
        } else {
            path
        }
    }

    head_and_connection_facts!();

    fn auth_user(&self, list: usize) -> Option<&tern_config::User> {
        self.auth.user(list)
    }
}

impl Samples for RequestFacts<'_> {
    fn sample(&self, fetch: &Fetch, out: &mut FieldValue<'_>) {
        match fetch {
            Fetch::Method => out.push(self.method()),
            Fetch::Url => out.push(self.url()),
            Fetch::Path => out.push(self.path()),
            Fetch::Query => {
                let url = self.url();
                if let Some(at) = url.iter().position(|&b| b == b'?') {
                    out.push(&url[at + 1..]);
                }
            }
            Fetch::Header(name) => {
                out.push(last_value(self.head.fields(), self.buf, name).unwrap_or_default());
            }
            Fetch::Var(name) => {
                self.var(name, &mut |v| {
                    out.push(v);
                    true
                });
            }
            Fetch::UniqueId => {
                if let Ok(vars) = self.vars.try_borrow() {
                    out.push(vars.unique_id());
                }
            }
            _ => connection_sample(fetch, self, out),
        }
    }

    set_var!();

    fn track(&self, track: &tern_config::Track) {
        let kind = self
            .vars
            .try_borrow()
            .ok()
            .and_then(|v| v.track.key_type(track.table.index));
        let Some(key) = kind.and_then(|kind| self.key_of(&track.key, kind)) else {
            return;
        };
        if let Ok(mut vars) = self.vars.try_borrow_mut() {
            vars.track.track(track.slot, track.table.index, key, false);
        }
    }

    fn target(&self) -> &[u8] {
        let target = self.head.path().get(self.buf);
        if target.is_empty() {
            b"/"
        } else {
            target
        }
    }

    fn each_field(&self, name: &str, each: &mut dyn FnMut(&[u8])) {
        fields_named(self.head.fields(), self.buf, name, each);
    }

    fn first_field(&self, name: &str) -> Option<&[u8]> {
        first_named(self.head.fields(), self.buf, name)
    }

    fn each_field_name(&self, each: &mut dyn FnMut(&[u8])) {
        self.head
            .fields()
            .iter()
            .filter(|f| f.kind() != FieldKind::Host)
            .for_each(|f| each(f.name(self.buf)));
    }
}

impl RequestFacts<'_> {
    /// The key `fetch` gives for a table of type `kind`; `None` when the sample is absent
    /// (HAProxy then tracks nothing).
    fn key_of(&self, fetch: &Fetch, kind: TableKey) -> Option<Key> {
        let text = |bytes: &[u8]| Key::Text(bytes[..bytes.len().min(MAX_STRING_KEY)].into());
        Some(match (fetch, kind) {
            (Fetch::Src, TableKey::Ip | TableKey::Ipv6) => Key::Ip(self.conn.peer.to_canonical()),
            (Fetch::DstPort, TableKey::Integer) => Key::Int(u64::from(self.conn.local_port)),
            (Fetch::Header(name), _) => text(last_value(self.head.fields(), self.buf, name)?),
            (Fetch::Var(name), _) => {
                let vars = self.vars.try_borrow().ok()?;
                text(vars.get(name)?)
            }
            (Fetch::Query, _) => {
                let url = self.url();
                text(&url[url.iter().position(|&b| b == b'?')? + 1..])
            }
            (_, TableKey::String) => {
                let mut buf = HeaderEdits::new();
                self.sample(fetch, &mut buf.add(b"k"));
                let line = buf.added();
                // `k: VALUE\r\n`
                text(line.get(3..line.len().saturating_sub(2))?)
            }
            _ => return None,
        })
    }
}

impl Facts for ResponseFacts<'_> {
    // The request line is not known here (validation keeps response rules from asking).
    fn method(&self) -> &[u8] {
        b""
    }

    fn url(&self) -> &[u8] {
        b""
    }

    fn path(&self) -> &[u8] {
        b""
    }

    head_and_connection_facts!();
}

impl Samples for ResponseFacts<'_> {
    fn sample(&self, fetch: &Fetch, out: &mut FieldValue<'_>) {
        match fetch {
            Fetch::Header(name) => {
                out.push(last_value(self.head.fields(), self.buf, name).unwrap_or_default());
            }
            Fetch::Var(name) => {
                self.var(name, &mut |v| {
                    out.push(v);
                    true
                });
            }
            Fetch::UniqueId => {
                if let Ok(vars) = self.vars.try_borrow() {
                    out.push(vars.unique_id());
                }
            }
            _ => connection_sample(fetch, self, out),
        }
    }

    set_var!();

    fn target(&self) -> &[u8] {
        b""
    }

    fn each_field(&self, name: &str, each: &mut dyn FnMut(&[u8])) {
        fields_named(self.head.fields(), self.buf, name, each);
    }

    fn first_field(&self, name: &str) -> Option<&[u8]> {
        first_named(self.head.fields(), self.buf, name)
    }

    fn each_field_name(&self, each: &mut dyn FnMut(&[u8])) {
        self.head
            .fields()
            .iter()
            .for_each(|f| each(f.name(self.buf)));
    }
}

/// Calls `each` with the whole value of every field named `name`.
fn fields_named(fields: &[Field], buf: &[u8], name: &str, each: &mut dyn FnMut(&[u8])) {
    fields
        .iter()
        .filter(|f| f.name(buf).eq_ignore_ascii_case(name.as_bytes()))
        .for_each(|f| each(f.value(buf)));
}

/// The value of the first field named `name`.
fn first_named<'b>(fields: &[Field], buf: &'b [u8], name: &str) -> Option<&'b [u8]> {
    fields
        .iter()
        .find(|f| f.name(buf).eq_ignore_ascii_case(name.as_bytes()))
        .map(|f| f.value(buf))
}

/// The samples of the connection; request-line samples have no value here (also what a TCP
/// frontend's `log_format` takes, `tcp.rs`).
pub(crate) fn connection_sample(fetch: &Fetch, facts: &dyn Facts, out: &mut FieldValue<'_>) {
    match fetch {
        // Writing to a Vec cannot fail.
        Fetch::Src => {
            let _ = write!(out.raw(), "{}", facts.src().to_canonical());
        }
        Fetch::DstPort => {
            let _ = write!(out.raw(), "{}", facts.dst_port());
        }
        Fetch::Tls => out.push(if facts.tls() { b"1" } else { b"0" }),
        Fetch::Sni => out.push(facts.sni().unwrap_or_default().as_bytes()),
        Fetch::PpTlv(id) => out.push(facts.pp_tlv(*id).unwrap_or_default()),
        _ => {}
    }
}

/// The values of the fields named `name`, split at commas and trimmed, as HAProxy's `hdr()`.
fn values<'b>(fields: &'b [Field], buf: &'b [u8], name: &'b str) -> impl Iterator<Item = &'b [u8]> {
    fields
        .iter()
        .filter(move |f| f.name(buf).eq_ignore_ascii_case(name.as_bytes()))
        .flat_map(move |f| f.value(buf).split(|&b| b == b','))
        .map(<[u8]>::trim_ascii)
}

fn any_value(
    fields: &[Field],
    buf: &[u8],
    name: &str,
    each: &mut dyn FnMut(&[u8]) -> bool,
) -> bool {
    values(fields, buf, name).any(each)
}

/// The last value of `name` (HAProxy's `hdr()` in a log-format string: occurrence -1).
fn last_value<'b>(fields: &'b [Field], buf: &'b [u8], name: &'b str) -> Option<&'b [u8]> {
    values(fields, buf, name).last()
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]

    use super::*;
    use tern_h1::{parse_request, parse_response, HeaderEdits, Limits, Method};

    const CONN: ConnFacts = ConnFacts {
        peer: IpAddr::V4(std::net::Ipv4Addr::new(192, 0, 2, 7)),
        local_port: 8443,
        tls: true,
    };

    fn request(raw: &str) -> RequestHead {
        let mut head = RequestHead::new();
        parse_request(raw.as_bytes(), &Limits::default(), &mut head).unwrap();
        head
    }

    fn sample_of(facts: &dyn Samples, fetch: Fetch) -> String {
        let mut e = HeaderEdits::new();
        facts.sample(&fetch, &mut e.add(b"x"));
        String::from_utf8(e.added()[3..e.added().len() - 2].to_vec()).unwrap()
    }

    #[test]
    fn request_facts_read_the_parsed_head() {
        let raw =
            "GET http://a.test/p/q?x=1 HTTP/1.0\r\nHost: a.test\r\nX-T: a, b\r\nx-t: c\r\n\r\n";
        let head = request(raw);
        let f = RequestFacts {
            head: &head,
            buf: raw.as_bytes(),
            conn: &CONN,
            sni: Some("a.test"),
            pp_tlvs: None,
            vars: &std::cell::RefCell::default(),
            auth: AuthSeen::default(),
        };
        assert_eq!(f.method(), b"GET");
        assert_eq!(f.url(), b"http://a.test/p/q?x=1");
        assert_eq!(f.path(), b"/p/q");
        assert_eq!(f.version(), (1, 0));
        let mut seen = Vec::new();
        f.any_header("x-t", &mut |v| {
            seen.push(String::from_utf8(v.to_vec()).unwrap());
            false
        });
        assert_eq!(seen, ["a", "b", "c"]);
        assert_eq!(sample_of(&f, Fetch::Header("x-t".into())), "c");
        assert_eq!(sample_of(&f, Fetch::Header("none".into())), "");
        assert_eq!(sample_of(&f, Fetch::Src), "192.0.2.7");
        assert_eq!(sample_of(&f, Fetch::DstPort), "8443");
        assert_eq!(sample_of(&f, Fetch::Tls), "1");
        assert_eq!(sample_of(&f, Fetch::Sni), "a.test");
        assert_eq!(sample_of(&f, Fetch::Path), "/p/q");
    }

    #[test]
    fn response_facts_read_the_response_fields() {
        let raw = "HTTP/1.1 200 OK\r\nServer: s1\r\nContent-Length: 0\r\n\r\n";
        let mut head = ResponseHead::new();
        parse_response(raw.as_bytes(), &Limits::default(), &mut head, Method::Get).unwrap();
        let f = ResponseFacts {
            head: &head,
            buf: raw.as_bytes(),
            conn: &CONN,
            sni: None,
            pp_tlvs: None,
            vars: &std::cell::RefCell::default(),
        };
        assert!(f.any_header("server", &mut |v| v == b"s1"));
        assert_eq!(sample_of(&f, Fetch::Header("server".into())), "s1");
        assert_eq!(sample_of(&f, Fetch::Sni), "");
        assert_eq!(sample_of(&f, Fetch::Method), "");
    }
}
