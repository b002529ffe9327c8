//! The tables of proxies in `mode tcp` (HAProxy's default mode): what of a section applies to
//! a relayed TCP connection, and a warning for each HTTP setting left out.
//!
//! HAProxy ignores HTTP keywords in a TCP proxy with a warning ("ignored for proxy X as it
//! requires HTTP mode"), which matters because a `defaults` section written for HTTP proxies
//! often serves TCP ones too (`option forwardfor`, `option http-server-close`, `timeout
//! http-request`). tern does the same: the setting is not written and a [`Warning`] says so,
//! at the line that set it. What the TOML stage refuses on a TCP proxy (request-hashing
//! `balance`, `use_backend` conditions on the request) is left to it, so the error names the
//! `.cfg` line.
//!
//! [`Warning`]: super::Warning

use super::build::{set_time, Proxy};
use super::diag::Diag;
use super::emit::Table;
use super::sections::Kind;

/// Why an HTTP setting is left out of a TCP proxy.
const TCP_ONLY: &str = "the proxy is in mode tcp, which reads no HTTP (HAProxy ignores it too)";

/// The keys of a frontend in `mode tcp` beyond name, binds, backends and `maxconn`: the client
/// and handshake timeouts.
pub(crate) fn frontend(p: &Proxy, t: &mut Table, diag: &mut Diag) {
    let c = &p.cfg;
    let to = &c.timeouts;
    set_time(t, "timeouts.client", to.client.as_ref());
    set_time(
        t,
        "timeouts.handshake",
        to.client_hs.as_ref().or(to.client.as_ref()),
    );
    set_time(t, "timeouts.client_fin", to.client_fin.as_ref());
    if to.client.is_none() {
        diag.approx(
            p.section.line,
            &p.context(),
            "timeout client",
            "missing: HAProxy would wait forever (and warns); tern uses its defaults (client 30s, handshake 10s)",
        );
    }
    let ignored = [
        ("monitor-uri", c.monitor_uri.as_ref().map(|s| s.line)),
        ("proto h2", c.h2c.as_ref().map(|s| s.line)),
        (
            "option forwardfor",
            c.forwardfor.as_ref().filter(|f| f.v).map(|s| s.line),
        ),
        (
            "option http-keep-alive/http-server-close/httpclose",
            c.conn_mode.as_ref().map(|s| s.line),
        ),
        (
            "timeout http-request",
            to.http_request.as_ref().map(|s| s.line),
        ),
        (
            "timeout http-keep-alive",
            to.http_keep_alive.as_ref().map(|s| s.line),
        ),
        ("http-request", c.http_request.first().map(|s| s.line)),
        ("http-response", c.http_response.first().map(|s| s.line)),
        ("redirect", c.redirects.first().map(|s| s.line)),
        ("compression", c.compression.first_line()),
    ];
    warn_ignored(p, &ignored, diag);
}

/// Warnings for the HTTP settings of a backend in `mode tcp` (the table leaves them out).
pub(crate) fn backend(p: &Proxy, diag: &mut Diag) {
    let c = &p.cfg;
    let mut ignored = vec![
        ("cookie", c.cookie.as_ref().map(|s| s.line)),
        ("http-reuse", c.reuse_never.as_ref().map(|s| s.line)),
    ];
    if p.section.kind == Kind::Listen {
        // The frontend part of the section warned about the rest.
        return warn_ignored(p, &ignored, diag);
    }
    ignored.extend([
        (
            "option forwardfor",
            c.forwardfor.as_ref().filter(|f| f.v).map(|s| s.line),
        ),
        (
            "option http-keep-alive/http-server-close/httpclose",
            c.conn_mode.as_ref().map(|s| s.line),
        ),
        ("http-request", c.http_request.first().map(|s| s.line)),
        ("http-response", c.http_response.first().map(|s| s.line)),
        ("redirect", c.redirects.first().map(|s| s.line)),
        ("compression", c.compression.first_line()),
    ]);
    warn_ignored(p, &ignored, diag);
}

fn warn_ignored(p: &Proxy, ignored: &[(&str, Option<usize>)], diag: &mut Diag) {
    for (keyword, line) in ignored {
        if let Some(line) = line {
            diag.no_effect(*line, &p.context(), keyword, TCP_ONLY);
        }
    }
}
