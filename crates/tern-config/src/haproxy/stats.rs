//! `stats enable|uri|refresh|...` in a proxy → `[control] http` and `stats_refresh`.
//!
//! tern serves its stats page from the control API's HTTP listener, not from a proxy. A proxy
//! that only binds and shows stats (the usual `listen stats` section) therefore becomes that
//! listener (see `build.rs`); a stats page on a proxy that also forwards traffic is not
//! supported yet. `stats auth USER:PASS` and `stats realm` become basic authentication on that
//! listener (`userlist.rs`); `stats admin` and `stats http-request` are not supported: dropping
//! them would open the page or its actions to anyone who can reach it.

use super::proxy::Cx;
use super::sections::Line;
use super::settings::{ProxyCfg, Src};
use super::units::Unit;

pub(crate) fn stats(line: &Line, p: &mut ProxyCfg, cx: &mut Cx<'_>) {
    let Some(sub) = line.word(1) else {
        cx.error(
            line.no,
            "'stats' needs a sub-keyword (enable, uri, refresh, ...)",
        );
        return;
    };
    let keyword = format!("stats {sub}");
    match sub {
        "enable" => {}
        "uri" => match line.word(2) {
            Some(uri) => p.stats.uri = Some(Src::new(uri.to_owned(), line.no)),
            None => {
                cx.error(line.no, "'stats uri' needs a path");
                return;
            }
        },
        "refresh" => match cx.time_arg(line, 2, Unit::S) {
            Some(ms) => p.stats.refresh = Some(Src::new(ms, line.no)),
            None => return,
        },
        "hide-version" | "show-legends" | "show-node" | "show-desc" | "show-modules" => {
            cx.no_effect(line.no, &keyword, "tern's stats page has a fixed layout");
        }
        "auth" => match line.word(2) {
            Some(auth) => p.stats.auth.push(Src::new(auth.to_owned(), line.no)),
            None => {
                cx.error(line.no, "'stats auth' needs USER:PASSWORD");
                return;
            }
        },
        "realm" => match line.word(2) {
            Some(realm) => p.stats.realm = Some(Src::new(realm.to_owned(), line.no)),
            None => {
                cx.error(line.no, "'stats realm' needs a realm");
                return;
            }
        },
        "admin" | "scope" | "http-request" => {
            cx.unsupported_because(
                line.no,
                &keyword,
                "tern's stats page has no admin actions or scopes, and takes its users from `stats auth`; without them it would be open to anyone",
            );
        }
        "socket" | "timeout" | "maxconn" | "bind-process" => {
            cx.error(
                line.no,
                format!("'{keyword}' belongs in the global section"),
            );
            return;
        }
        other => {
            cx.error(line.no, format!("unknown 'stats {other}'"));
            return;
        }
    }
    p.stats.line.get_or_insert(line.no);
}
