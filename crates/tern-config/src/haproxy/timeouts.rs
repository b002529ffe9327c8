//! `timeout NAME VALUE` (milliseconds unless a unit is given).
//!
//! A zero timeout means "no timeout" in HAProxy; tern always has one, so zero (and anything
//! above tern's limit of 24 days) becomes 24 days, with a warning. Which tern key each timeout
//! feeds, and HAProxy's fallbacks between them, are decided in `build.rs`.

use super::proxy::Cx;
use super::sections::Line;
use super::settings::{ProxyCfg, Src};
use super::units::Unit;

/// tern's largest duration.
pub(crate) const TERN_MAX_MS: u64 = 24 * 86_400_000;

pub(crate) fn timeout(line: &Line, p: &mut ProxyCfg, cx: &mut Cx<'_>) {
    let Some(name) = cx.arg(line, 1, "a timeout name") else {
        return;
    };
    let t = &mut p.timeouts;
    let (slot, frontend) = match name {
        "client" => (&mut t.client, true),
        "client-hs" => (&mut t.client_hs, true),
        "http-request" => (&mut t.http_request, true),
        "http-keep-alive" => (&mut t.http_keep_alive, true),
        "server" => (&mut t.server, false),
        "connect" => (&mut t.connect, false),
        "queue" => (&mut t.queue, false),
        "check" => (&mut t.check, false),
        // HAProxy reads it on the backend side only (it is refused in a frontend).
        "tunnel" => (&mut t.tunnel, false),
        "client-fin" => (&mut t.client_fin, true),
        "server-fin" => (&mut t.server_fin, false),
        "tarpit" => (&mut t.tarpit, true),
        other => {
            cx.error(line.no, format!("unknown timeout '{other}'"));
            return;
        }
    };
    let side_ok = if frontend {
        cx.kind.has_frontend()
    } else {
        cx.kind.has_backend()
    };
    let keyword = format!("timeout {name}");
    if !side_ok {
        let part = if frontend { "frontend" } else { "backend" };
        cx.no_effect(
            line.no,
            &keyword,
            &format!("it only applies to a {part} (or a listen section)"),
        );
        return;
    }
    let Some(mut ms) = cx.time_arg(line, 2, Unit::Ms) else {
        return;
    };
    if ms == 0 || ms > TERN_MAX_MS {
        let what = if ms == 0 {
            "0 (no timeout)"
        } else {
            "above 24 days"
        };
        cx.approx(
            line.no,
            &keyword,
            &format!("tern needs a finite timeout of at most 24 days: {what} becomes 24d"),
        );
        ms = TERN_MAX_MS;
    }
    *slot = Some(Src::new(ms, line.no));
}
