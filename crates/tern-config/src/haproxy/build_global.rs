//! The `[global]` and `[control]` tables.

use super::build::{set_time, Proxy};
use super::cpu_map::{self, Pinning};
use super::diag::Diag;
use super::emit::Table;
use super::global::GlobalCfg;
use super::toml_text::string;

pub(crate) fn global(g: &GlobalCfg, diag: &mut Diag) -> Table {
    let mut t = Table::new("global", g.line, "global");
    let workers = g.nbthread.as_ref().or(g.nbproc.as_ref());
    if let Some(w) = workers {
        t.set("workers", w.v.to_string(), w.line);
    }
    if let Some(first_map) = g.cpu_maps.first() {
        let maps: Vec<_> = g.cpu_maps.iter().map(|m| m.v.clone()).collect();
        let count = workers.and_then(|w| usize::try_from(w.v).ok());
        match cpu_map::resolve(&maps, count) {
            Pinning::Exact(cpus) => t.set("cpus", format!("{cpus:?}"), first_map.line),
            Pinning::Approx(cpus, why) => {
                diag.approx(first_map.line, "global", "cpu-map", &why);
                t.set("cpus", format!("{cpus:?}"), first_map.line);
            }
            Pinning::Dropped(why) => diag.approx(first_map.line, "global", "cpu-map", &why),
        }
    }
    if let Some(m) = &g.maxconn {
        t.set("maxconn", m.v.to_string(), m.line);
    }
    set_time(&mut t, "hard_stop_after", g.hard_stop_after.as_ref());
    if let Some(rate) = &g.maxsslrate {
        t.set("max_tls_handshake_rate", rate.v.to_string(), rate.line);
    }
    if let Some(rate) = &g.maxconnrate {
        t.set("max_conn_rate", rate.v.to_string(), rate.line);
    }
    if let Some(rate) = &g.maxsessrate {
        t.set("max_sess_rate", rate.v.to_string(), rate.line);
    }
    if let Some(p) = &g.profiling {
        t.set("profiling", p.v.to_string(), p.line);
    }
    t
}

/// `[control]`: the global `stats socket`, and the HTTP listener of a stats-only proxy.
pub(crate) fn control(g: &GlobalCfg, stats: Option<&Proxy>, diag: &mut Diag) -> Option<Table> {
    let line = g
        .socket
        .as_ref()
        .map(|s| s.line)
        .or(stats.map(|p| p.section.line))?;
    let context = match (&g.socket, stats) {
        (None, Some(p)) => p.context(),
        _ => "global".to_owned(),
    };
    let mut t = Table::new("control", line, context);
    if let Some(socket) = &g.socket {
        t.set("socket", string(&socket.v), socket.line);
        if let Some(mode) = &g.socket_mode {
            t.set("socket_mode", string(mode), socket.line);
        }
    }
    if let Some(p) = stats {
        http_listener(p, &mut t, diag);
    }
    Some(t)
}

fn http_listener(p: &Proxy, t: &mut Table, diag: &mut Diag) {
    let context = p.context();
    let c = &p.cfg;
    let line = c.stats.line.unwrap_or(p.section.line);
    let Some(address) = &c.first_bind_address else {
        diag.error(line, &context, "the stats page needs a 'bind' address");
        return;
    };
    if c.tls_binds {
        diag.unsupported_because(
            line,
            &context,
            "bind ... ssl",
            "tern's stats listener is plain HTTP",
        );
        return;
    }
    if c.binds.len() > 1 {
        diag.unsupported_because(
            c.binds[1].line,
            &context,
            "bind",
            "tern's stats listener has one address",
        );
    }
    let address = if address.starts_with(':') {
        format!("*{address}")
    } else {
        address.clone()
    };
    let bind_line = c.binds.first().map_or(line, |b| b.line);
    t.set("http", string(&address), bind_line);
    if let Some(first) = c.stats.auth.first() {
        t.set(
            "userlist",
            string(super::userlist::STATS_USERLIST),
            first.line,
        );
        if let Some(realm) = &c.stats.realm {
            t.set("realm", string(&realm.v), realm.line);
        }
    } else if let Some(realm) = &c.stats.realm {
        diag.no_effect(
            realm.line,
            &context,
            "stats realm",
            "there is no 'stats auth'",
        );
    }
    let uri = c
        .stats
        .uri
        .as_ref()
        .map_or("/haproxy?stats", |u| u.v.as_str());
    if uri != "/stats" {
        let what = format!(
            "the page is at /stats, not {uri}; the listener also serves tern's JSON API and /metrics (read-only)"
        );
        diag.approx(
            c.stats.uri.as_ref().map_or(line, |u| u.line),
            &context,
            "stats uri",
            &what,
        );
    }
    if let Some(refresh) = &c.stats.refresh {
        let seconds = refresh.v.div_ceil(1000).max(1);
        t.set(
            "stats_refresh",
            string(&format!("{seconds}s")),
            refresh.line,
        );
    }
}
