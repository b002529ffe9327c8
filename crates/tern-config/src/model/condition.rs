//! Conditions on requests: HAProxy's ACLs and `if`/`unless` expressions, resolved and ready to
//! evaluate.
//!
//! A rule (`use_backend`, `http_request`, ...) holds one [`Condition`]: an OR of AND groups of
//! possibly negated ACLs, each ACL an OR of tests (several HAProxy `acl` lines with one name),
//! each test a sample fetch (`path`, `hdr(host)`, `src`, ...) and a match against patterns.
//! Names are resolved during validation, so evaluating touches no map and allocates nothing.
//!
//! The data path supplies the request's facts through [`Facts`], so this crate needs to know
//! nothing about how heads are parsed. Semantics follow HAProxy's doc/configuration.txt §7: a
//! sample that does not exist (no such header, no SNI) matches nothing, so `!acl` holds for it.

use std::net::IpAddr;

use super::counters::CounterFetch;

mod matching;
mod names;

pub use matching::{IntRange, IpNet, Matcher, Regex, TextMatch};

/// What a condition may look at, provided per request by the data path.
pub trait Facts {
    /// The request method as sent (`GET`).
    fn method(&self) -> &[u8];
    /// The request target as sent (`/a/b?x=1`, or absolute form).
    fn url(&self) -> &[u8];
    /// The target's path, without the query string.
    fn path(&self) -> &[u8];
    /// Calls `each` on every value of header `name` (case-insensitive name; comma-separated
    /// lists are split into values, as HAProxy's `hdr()` does); returns true as soon as `each`
    /// does.
    fn any_header(&self, name: &str, each: &mut dyn FnMut(&[u8]) -> bool) -> bool;
    /// HTTP version of the request, e.g. `(1, 1)`.
    fn version(&self) -> (u8, u8);
    /// The client's address.
    fn src(&self) -> IpAddr;
    /// The local port the client connected to.
    fn dst_port(&self) -> u16;
    /// Whether the client connection is TLS.
    fn tls(&self) -> bool;
    /// The server name the client sent in its TLS ClientHello.
    fn sni(&self) -> Option<&str>;
    /// The type of the first TLS handshake message the client sent (1: ClientHello), read from
    /// its first bytes before any handshake (`req.ssl_hello_type`); only a TCP frontend's
    /// inspection knows it.
    fn hello_type(&self) -> Option<u8> {
        None
    }
    /// Calls `each` with the value of variable `name` if it is set; returns what `each`
    /// returned (false when unset). Only the HTTP data path keeps variables.
    fn var(&self, _name: &str, _each: &mut dyn FnMut(&[u8]) -> bool) -> bool {
        false
    }
    /// The user of userlist `list` (its index in `Config::userlists`) whose name and password
    /// the request's `Authorization: Basic` field carries, once checked; `None` without
    /// credentials, with wrong ones, or where no check ran (only the HTTP data path runs them).
    fn auth_user(&self, _list: usize) -> Option<&crate::model::User> {
        None
    }

    /// The value of the first TLV of type `id` in the connection's PROXY v2 header
    /// (`fc_pp_tlv`); `None` without a header, or without such a TLV.
    fn pp_tlv(&self, _id: u8) -> Option<&[u8]> {
        None
    }

    /// The value of a stick-table counter (`sc0_http_req_rate`), performing its operation
    /// (`sc_inc_gpc0`); `None` when the entry or the counter does not exist. Only a data path
    /// with counter tables answers.
    fn counter(&self, _fetch: &CounterFetch) -> Option<u64> {
        None
    }
}

/// A resolved `if`/`unless` condition: true or false per request.
#[derive(Debug, Clone, PartialEq)]
pub struct Condition {
    /// OR of AND groups; empty means "always".
    any: Vec<Vec<Term>>,
    /// `unless`: the result is inverted.
    invert: bool,
}

/// One ACL reference in a condition, possibly negated (`!name`).
#[derive(Debug, Clone, PartialEq)]
pub struct Term {
    pub negate: bool,
    pub acl: Acl,
}

/// An ACL: true when any of its tests is (several `acl` lines with one name add tests).
#[derive(Debug, Clone, PartialEq)]
pub struct Acl {
    pub tests: Vec<AclTest>,
}

/// One sample fetch and the match applied to the sample.
#[derive(Debug, Clone, PartialEq)]
pub struct AclTest {
    pub fetch: Fetch,
    pub matcher: Matcher,
}

/// Where a sample comes from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Fetch {
    Method,
    Url,
    Path,
    /// The query string (after `?`), absent without one.
    Query,
    /// Every value of the named request header.
    Header(String),
    /// `req.ver`: `"1.0"`, `"1.1"`.
    Version,
    Src,
    DstPort,
    /// `ssl_fc`: the connection is TLS.
    Tls,
    /// `ssl_fc_sni` / `req.ssl_sni`: from the TLS session tern terminated, or on a plain bind of
    /// a TCP frontend from the ClientHello read before relaying it (passthrough).
    Sni,
    /// `req.ssl_hello_type`: the type of the client's first handshake message (1: ClientHello),
    /// read before relaying it.
    HelloType,
    /// `always_true` / `always_false`.
    Constant(bool),
    /// `var(SCOPE.NAME)`: a variable a `set-var` rule set (full name, scope included); absent
    /// until one did.
    Var(String),
    /// `http_auth(L)`: the request's basic credentials are those of a user of userlist `L`.
    HttpAuth(UserlistRef),
    /// `http_auth_group(L)`: the groups of that user (absent when it is not one).
    HttpAuthGroup(UserlistRef),
    /// A stick-table counter: `sc0_conn_cur`, `sc_http_req_rate(0)`, `src_conn_rate(T)`.
    Counter(CounterFetch),
    /// `unique-id`: the request's id (`unique_id_format`); in values only.
    UniqueId,
    /// `fc_pp_tlv(<id>)`: the value of the first TLV of type `id` in the PROXY v2 header the
    /// connection opened with (`accept_proxy`); absent without one.
    PpTlv(u8),
}

/// A userlist named by a fetch; its index in `Config::userlists` is resolved after the
/// userlists are read.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct UserlistRef {
    pub name: String,
    pub index: usize,
}

impl Condition {
    /// The condition of a rule without `if` or `unless`.
    pub fn always() -> Self {
        Self {
            any: Vec::new(),
            invert: false,
        }
    }

    /// A condition from OR-ed groups of AND-ed terms; `invert` for `unless`.
    pub fn new(any: Vec<Vec<Term>>, invert: bool) -> Self {
        Self { any, invert }
    }

    /// Whether this is the condition of a rule without `if` or `unless`.
    pub fn is_always(&self) -> bool {
        self.any.is_empty() && !self.invert
    }

    /// Every sample fetch the condition uses (to check that a rule only reads what is there).
    pub fn fetches(&self) -> impl Iterator<Item = &Fetch> {
        self.any
            .iter()
            .flatten()
            .flat_map(|term| term.acl.tests.iter().map(|t| &t.fetch))
    }

    /// Every sample fetch of the condition, to resolve the userlists and tables they name.
    pub fn fetches_mut(&mut self) -> impl Iterator<Item = &mut Fetch> {
        self.any
            .iter_mut()
            .flatten()
            .flat_map(|term| term.acl.tests.iter_mut().map(|t| &mut t.fetch))
    }

    /// Evaluates the condition on one request.
    pub fn matches(&self, facts: &dyn Facts) -> bool {
        if self.any.is_empty() {
            return !self.invert;
        }
        let holds = self.any.iter().any(|group| {
            group
                .iter()
                .all(|term| term.acl.matches(facts) != term.negate)
        });
        holds != self.invert
    }
}

impl Acl {
    /// True when any test matches.
    pub fn matches(&self, facts: &dyn Facts) -> bool {
        self.tests.iter().any(|t| t.matches(facts))
    }
}

impl AclTest {
    /// Fetches the sample and matches it; a missing sample matches nothing.
    pub fn matches(&self, facts: &dyn Facts) -> bool {
        let m = &self.matcher;
        match &self.fetch {
            Fetch::Method => m.text(facts.method()),
            Fetch::Url => m.text(facts.url()),
            Fetch::Path => m.text(facts.path()),
            Fetch::Query => query(facts.url()).is_some_and(|q| m.text(q)),
            Fetch::Header(name) => facts.any_header(name, &mut |v| m.text(v)),
            Fetch::Version => {
                let (major, minor) = facts.version();
                m.text(format!("{major}.{minor}").as_bytes())
            }
            Fetch::Src => m.ip(facts.src()),
            Fetch::DstPort => m.int(u64::from(facts.dst_port())),
            Fetch::Tls => m.boolean(facts.tls()),
            Fetch::HelloType => facts.hello_type().is_some_and(|t| m.int(u64::from(t))),
            Fetch::Sni => facts.sni().is_some_and(|sni| m.text(sni.as_bytes())),
            Fetch::Constant(value) => m.boolean(*value),
            Fetch::Var(name) => facts.var(name, &mut |v| m.text(v)),
            Fetch::HttpAuth(list) => m.boolean(facts.auth_user(list.index).is_some()),
            Fetch::HttpAuthGroup(list) => facts
                .auth_user(list.index)
                .is_some_and(|u| u.groups.iter().any(|g| m.text(g.as_bytes()))),
            Fetch::Counter(c) => facts.counter(c).is_some_and(|v| m.int(v)),
            Fetch::PpTlv(id) => facts.pp_tlv(*id).is_some_and(|v| m.text(v)),
            // Conditions do not read it (the condition parser has no `unique-id`).
            Fetch::UniqueId => false,
        }
    }
}

fn query(url: &[u8]) -> Option<&[u8]> {
    let at = url.iter().position(|&b| b == b'?')?;
    Some(&url[at + 1..])
}
