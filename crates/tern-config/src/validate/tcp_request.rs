//! `frontend.tcp_request` (see `model/tcp_request.rs`): the inspect delay and the content
//! rules, and whether a frontend's conditions that read the ClientHello can get one.
//!
//! A condition on `req.ssl_sni` or `req.ssl_hello_type` on a plain bind only has a ClientHello
//! to read if the frontend waits for it; without `inspect_delay` it would silently always be
//! false (HAProxy warns about this case), so it is an error here.

use super::condition::Acls;
use super::mode::{connection_fetch, not_in_tcp_mode};
use super::Checker;
use crate::locate::KeyPath;
use crate::model::{
    Condition, ConnectionAction, ConnectionRule, Fetch, Frontend, HttpRule, ProxyMode, TcpRequest,
    TcpRule,
};
use crate::raw::{RawConnectionRule, RawTcpRequest, RawTcpRule};

impl Checker<'_> {
    /// A frontend's `tcp_request`, refused on HTTP frontends.
    pub(super) fn tcp_request(
        &mut self,
        raw: Option<&RawTcpRequest>,
        acls: &Acls,
        mode: ProxyMode,
        path: &KeyPath,
    ) -> TcpRequest {
        let Some(raw) = raw else {
            return TcpRequest::default();
        };
        let connection = raw
            .connection
            .as_deref()
            .unwrap_or_default()
            .iter()
            .enumerate()
            .map(|(i, rule)| self.connection_rule(rule, acls, &path.key("connection").index(i)))
            .collect::<Option<Vec<_>>>()
            .unwrap_or_default();
        let inspects = raw.inspect_delay.is_some() || raw.content.is_some();
        if mode != ProxyMode::Tcp && inspects {
            self.issue(
                path,
                "`tcp_request` reads a connection's first bytes before they are relayed, which \
                 only a frontend with mode = \"tcp\" does: remove it, or use mode = \"tcp\"",
            );
        }
        let at = path.key("inspect_delay");
        let inspect_delay = self.opt_duration(&at, raw.inspect_delay.as_ref());
        if inspect_delay.is_some_and(|d| d.is_zero()) {
            self.issue(&at, "must be more than 0 (leave it out not to inspect)");
        }
        let content = raw
            .content
            .as_deref()
            .unwrap_or_default()
            .iter()
            .enumerate()
            .map(|(i, rule)| self.tcp_rule(rule, acls, &path.key("content").index(i)))
            .collect();
        TcpRequest {
            inspect_delay,
            content,
            connection,
        }
    }

    /// One `tcp_request.connection` rule; `None` after an issue.
    fn connection_rule(
        &mut self,
        raw: &RawConnectionRule,
        acls: &Acls,
        at: &KeyPath,
    ) -> Option<ConnectionRule> {
        let expected = "accept, reject, silent-drop, track-sc0, track-sc1 or track-sc2";
        let action = match raw.action.as_deref() {
            Some("accept") => ConnectionAction::Accept,
            Some("reject") => ConnectionAction::Reject,
            Some("silent-drop") => ConnectionAction::SilentDrop,
            Some(track @ ("track-sc0" | "track-sc1" | "track-sc2")) => ConnectionAction::Track(
                self.track(track, raw.key.as_deref(), raw.table.as_deref(), at)?,
            ),
            Some(other) => {
                let message = format!("unknown action `{other}`: expected {expected}");
                self.issue(&at.key("action"), message);
                return None;
            }
            None => {
                self.issue(at, format!("missing key `action`: {expected}"));
                return None;
            }
        };
        let tracks = matches!(action, ConnectionAction::Track(_));
        for (key, given) in [("key", raw.key.is_some()), ("table", raw.table.is_some())] {
            if given && !tracks {
                self.issue(
                    &at.key(key),
                    format!("`{key}` applies to track-sc actions only"),
                );
            }
        }
        let condition = self.rule_condition(acls, raw.if_.as_deref(), raw.unless.as_deref(), at);
        let fetches = condition.fetches().chain(match &action {
            ConnectionAction::Track(t) => Some(&t.key),
            _ => None,
        });
        if let Some(fetch) = fetches
            .filter(|f| !matches!(f, Fetch::Counter(_)))
            .find(|f| {
                !connection_fetch(f) || matches!(f, Fetch::Sni | Fetch::HelloType | Fetch::PpTlv(_))
            })
        {
            self.issue(
                at,
                format!(
                    "`{fetch}` is not known when a connection is accepted: \
                     tcp_request.connection rules see its addresses only (src, dst_port) and \
                     the counters"
                ),
            );
        }
        Some(ConnectionRule { action, condition })
    }

    fn tcp_rule(&mut self, raw: &RawTcpRule, acls: &Acls, at: &KeyPath) -> TcpRule {
        let accept = match raw.action.as_deref() {
            Some("accept") => true,
            Some("reject") => false,
            Some(other) => {
                let message = format!("unknown action `{other}`: expected accept or reject");
                self.issue(&at.key("action"), message);
                true
            }
            None => {
                self.issue(at, "missing key `action`: accept or reject");
                true
            }
        };
        let condition = self.rule_condition(acls, raw.if_.as_deref(), raw.unless.as_deref(), at);
        if let Some(fetch) = condition.fetches().find(|f| !connection_fetch(f)) {
            self.issue(at, not_in_tcp_mode(fetch, "a tcp_request rule"));
        }
        TcpRule { accept, condition }
    }

    /// A frontend whose conditions read the ClientHello must be able to get it: in TCP mode,
    /// with `inspect_delay` when it has a plain bind (a TLS bind's handshake reads it).
    pub(super) fn hello_readers(&mut self, fe: &Frontend, path: &KeyPath) {
        let conditions = fe
            .use_backend
            .iter()
            .enumerate()
            .map(|(j, r)| (&r.condition, path.key("use_backend").index(j)))
            .chain(fe.tcp_request.content.iter().enumerate().map(|(j, r)| {
                let at = path.key("tcp_request").key("content").index(j);
                (&r.condition, at)
            }))
            .chain(header_rules(&fe.http_request, path.key("http_request")))
            .chain(header_rules(&fe.http_response, path.key("http_response")));
        let plain_bind = fe.binds.iter().any(|b| b.tls.is_none());
        for (condition, at) in conditions {
            if fe.mode == ProxyMode::Http && reads(condition, |f| *f == Fetch::HelloType) {
                self.issue(
                    &at,
                    "req.ssl_hello_type reads the ClientHello before any handshake, which only a \
                     frontend with mode = \"tcp\" does",
                );
            } else if fe.mode == ProxyMode::Tcp
                && plain_bind
                && !fe.tcp_request.inspects()
                && reads(condition, |f| matches!(f, Fetch::HelloType | Fetch::Sni))
            {
                self.issue(
                    &at,
                    "the condition reads the ClientHello (req.ssl_sni, req.ssl_hello_type), which \
                     a plain bind only sees with tcp_request.inspect_delay: set it (e.g. \"5s\")",
                );
            }
        }
    }
}

/// The conditions of header rules, with their paths.
fn header_rules(rules: &[HttpRule], at: KeyPath) -> impl Iterator<Item = (&Condition, KeyPath)> {
    rules
        .iter()
        .enumerate()
        .map(move |(j, r)| (&r.condition, at.index(j)))
}

fn reads(condition: &Condition, which: impl Fn(&Fetch) -> bool) -> bool {
    condition.fetches().any(which)
}
