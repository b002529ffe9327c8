//! `/metrics`: the view in the Prometheus text exposition format (0.0.4).
//!
//! Names follow Prometheus conventions: a `tern_` prefix, `_total` on counters, base units
//! (seconds). Labels are only the configuration's names (`frontend`, `backend`, `server`) and
//! small fixed sets (`code`, `reason`, `kind`, `version`, ...), never anything a client chooses,
//! so the number of series is bounded by the configuration. docs/metrics.md is the registry of
//! every family; a test checks that each family written here is listed there.
//!
//! The counters come from the snapshot's `fields()` names through the tables in `families.rs`;
//! a test checks that every field is either exported or listed in a `*_NOT_EXPORTED` table with the
//! family that already covers it, so a counter added to the proxy cannot go missing silently.

use std::time::UNIX_EPOCH;

use super::exposition::{Exposition, Type};
use super::rows::{self, BackendRow, FrontendRow, Status};
use super::tls::{Count, TlsBreakdown};
use crate::{Info, View};

mod families;

use families::{Family, BACKEND, FRONTEND, FRONTEND_TLS, SERVER};

/// The view as Prometheus text; serve it with
/// [`PROMETHEUS_CONTENT_TYPE`](super::PROMETHEUS_CONTENT_TYPE).
pub fn metrics(view: &View) -> String {
    let mut e = Exposition::default();
    process(&mut e, &view.info);
    reloads(&mut e, view);
    let frontends = rows::frontends(view);
    frontend_counters(&mut e, &frontends);
    tls(&mut e, &frontends);
    let backends = rows::backends(view);
    backend_counters(&mut e, &backends);
    server_counters(&mut e, &backends);
    server_gauges(&mut e, &backends);
    auth(&mut e, &view.stats.auth);
    resolvers(&mut e, &view.stats.resolvers);
    peers(&mut e, &view.stats.peers);
    crypto_batch(&mut e, &view.stats.crypto_batch);
    e.finish()
}

/// Batched key exchanges (`global.crypto_batch`); all zero when it is off.
fn crypto_batch(e: &mut Exposition, b: &tern_proxy::BatchSnapshot) {
    let name = "tern_crypto_batch_batches_total";
    e.family(
        name,
        Type::Counter,
        "Batches of key exchanges run on the AVX-512 IFMA kernels (global.crypto_batch).",
    );
    e.sample(name, &[], b.batches);
    let name = "tern_crypto_batch_operations_total";
    e.family(
        name,
        Type::Counter,
        "Handshakes whose X25519 key exchange a batch computed.",
    );
    e.sample(name, &[], b.batched);
    let name = "tern_crypto_batch_fill_total";
    e.family(
        name,
        Type::Counter,
        "Batches by the number of handshakes they held (2 to 8).",
    );
    for n in 2..b.fill.len().max(9) {
        let value = b.fill.get(n).copied().unwrap_or(0);
        e.sample(name, &[("handshakes", &n.to_string())], value);
    }
    let name = "tern_crypto_batch_fallbacks_total";
    e.family(
        name,
        Type::Counter,
        "Handshakes that asked for a batch and computed their key exchange with aws-lc-rs: \
         alone (the only one waiting), no_ifma (the CPU lacks AVX-512 IFMA), failed (a \
         low-order share, or the random generator failed).",
    );
    e.sample(name, &[("reason", "alone")], b.alone);
    e.sample(name, &[("reason", "no_ifma")], b.no_ifma);
    e.sample(name, &[("reason", "failed")], b.failed);
    let name = "tern_crypto_batch_unused_total";
    e.family(
        name,
        Type::Counter,
        "Key exchanges computed in a batch that the handshake did not use (rustls negotiated \
         otherwise, or the handshake failed first).",
    );
    e.sample(name, &[], b.unused);
    let ecdsa = [
        ("batches", b.ecdsa.batches, "Runs of the ECDSA P-256 nonce kernel (8 pairs each)."),
        ("pairs", b.ecdsa.pairs, "ECDSA P-256 nonce pairs that passed the fault check."),
        ("signatures", b.ecdsa.signatures, "ECDSA P-256 signatures made from batched nonce pairs."),
        ("faults", b.ecdsa.faults, "ECDSA P-256 nonce pairs dropped by the fault check."),
        (
            "fallbacks",
            b.ecdsa.fallbacks,
            "ECDSA P-256 signatures asked for batched and made by aws-lc-rs (no IFMA, kernel failed).",
        ),
    ];
    for (what, value, help) in ecdsa {
        let name = format!("tern_crypto_batch_ecdsa_{what}_total");
        e.family(&name, Type::Counter, help);
        e.sample(&name, &[], value);
    }
}

/// Reads one counter of a resolvers section.
type ResolverField = fn(&tern_proxy::ResolverSnapshot) -> u64;

/// DNS resolutions per `[[resolvers]]` section (service discovery).
fn resolvers(e: &mut Exposition, sections: &[tern_proxy::ResolverSnapshot]) {
    if sections.is_empty() {
        return;
    }
    let name = "tern_resolver_resolutions_total";
    e.family(
        name,
        Type::Counter,
        "Name resolutions by outcome: valid (a NOERROR answer), nx, timeout (no answer after \
         every try), refused, other (another error code).",
    );
    for r in sections {
        for (outcome, value) in [
            ("valid", r.valid),
            ("nx", r.nx),
            ("timeout", r.timeouts),
            ("refused", r.refused),
            ("other", r.other),
        ] {
            e.sample(
                name,
                &[("resolvers", r.name.as_str()), ("outcome", outcome)],
                value,
            );
        }
    }
    let rest: [(&str, &str, ResolverField); 3] = [
        (
            "tern_resolver_queries_total",
            "DNS queries sent, tries included.",
            |r| r.sent,
        ),
        (
            "tern_resolver_invalid_replies_total",
            "Datagrams refused: malformed, or not a response to the question asked.",
            |r| r.invalid,
        ),
        (
            "tern_resolver_server_changes_total",
            "Servers moved to a new address, taken out or brought back by DNS.",
            |r| r.changes,
        ),
    ];
    for (name, help, get) in rest {
        e.family(name, Type::Counter, help);
        for r in sections {
            e.sample(name, &[("resolvers", r.name.as_str())], get(r));
        }
    }
}

/// A counter of a remote peer.
type PeerCount = fn(&tern_proxy::PeerSnapshot) -> u64;

/// Each remote peer of the peers sections (stick tables shared over HAProxy's protocol).
fn peers(e: &mut Exposition, peers: &[tern_proxy::PeerSnapshot]) {
    if peers.is_empty() {
        return;
    }
    let name = "tern_peer_connected";
    e.family(
        name,
        Type::Gauge,
        "1 when a session with the remote peer is up.",
    );
    for p in peers {
        let labels = [("peers", p.section.as_str()), ("peer", p.peer.as_str())];
        e.sample(name, &labels, u64::from(p.connected));
    }
    let counters: [(&str, &str, PeerCount); 3] = [
        (
            "tern_peer_updates_sent_total",
            "Stick-table entry updates sent to the peer.",
            |p| p.sent,
        ),
        (
            "tern_peer_updates_received_total",
            "Stick-table entry updates received from the peer.",
            |p| p.received,
        ),
        (
            "tern_peer_errors_total",
            "Malformed messages from the peer, and batches of updates dropped because it fell behind.",
            |p| p.errors,
        ),
    ];
    for (name, help, value) in counters {
        e.family(name, Type::Counter, help);
        for p in peers {
            let labels = [("peers", p.section.as_str()), ("peer", p.peer.as_str())];
            e.sample(name, &labels, value(p));
        }
    }
    let name = "tern_peers_refused_total";
    e.family(
        name,
        Type::Counter,
        "Connections refused on a peers section's port before a session (not a peer's hello, unknown peer).",
    );
    let mut seen: Vec<&str> = Vec::new();
    for p in peers {
        if !seen.contains(&p.section.as_str()) {
            seen.push(&p.section);
            e.sample(name, &[("peers", p.section.as_str())], p.refused);
        }
    }
}

/// Basic authentication checks of `http_auth` (all workers).
fn auth(e: &mut Exposition, counts: &tern_auth::AuthCounts) {
    let name = "tern_auth_checks_total";
    e.family(
        name,
        Type::Counter,
        "Basic credentials checked for http_auth: accepted, or failed (unknown user, wrong \
         password, or refused unchecked because too many checks were waiting: also counted \
         as overloaded).",
    );
    e.sample(name, &[("result", "accepted")], counts.accepted);
    e.sample(name, &[("result", "failed")], counts.failed);
    let rest: [(&str, &str, u64); 2] = [
        (
            "tern_auth_cache_hits_total",
            "Credentials accepted from the cache of successful checks, without a check.",
            counts.cache_hits,
        ),
        (
            "tern_auth_overloaded_total",
            "Credentials refused unchecked: too many password checks running and waiting.",
            counts.overloaded,
        ),
    ];
    for (name, help, value) in rest {
        e.family(name, Type::Counter, help);
        e.sample(name, &[], value);
    }
}

fn gauge(e: &mut Exposition, name: &str, help: &str, labels: &[(&str, &str)], value: f64) {
    e.family(name, Type::Gauge, help);
    e.sample(name, labels, value);
}

fn process(e: &mut Exposition, info: &Info) {
    let version = [("version", info.version.as_str())];
    gauge(
        e,
        "tern_build_info",
        "Always 1; the version in a label.",
        &version,
        1.0,
    );
    let started = info
        .started
        .duration_since(UNIX_EPOCH)
        .map_or(0.0, |d| d.as_secs_f64());
    let facts: [(&str, &str, f64); 6] = [
        (
            "tern_process_start_time_seconds",
            "When the process started, in seconds since the Unix epoch.",
            started,
        ),
        (
            "tern_uptime_seconds",
            "Seconds since the process started.",
            info.uptime.as_secs_f64(),
        ),
        (
            "tern_workers",
            "Worker threads of the current generation.",
            info.workers as f64,
        ),
        (
            "tern_generation",
            "Generations started by reloads since the process started (0 = the first).",
            info.generation as f64,
        ),
        (
            "tern_draining_generations",
            "Old generations still draining after a reload.",
            info.draining_generations as f64,
        ),
        (
            "tern_connections",
            "Client connections open now, over all frontends.",
            info.connections as f64,
        ),
    ];
    for (name, help, value) in facts {
        gauge(e, name, help, &[], value);
    }
    let profiling = f64::from(u8::from(info.profiling));
    gauge(
        e,
        "tern_profiling_enabled",
        "1 when task profiling is on.",
        &[],
        profiling,
    );
}

fn reloads(e: &mut Exposition, view: &View) {
    let name = "tern_tls_certificate_reloads_total";
    e.family(
        name,
        Type::Counter,
        "Certificate reloads, applied or refused (every bind kept its certificates).",
    );
    let r = &view.stats.reloads;
    e.sample(name, &[("result", "applied")], r.reloads);
    e.sample(name, &[("result", "refused")], r.failed);
}

/// One labelled set of counters: the entity's labels and its snapshot's `fields()`.
type Row<'a> = (Vec<(&'a str, &'a str)>, Vec<(&'static str, u64)>);

/// Writes `families` for `rows`.
fn counters(e: &mut Exposition, families: &[Family], rows: &[Row<'_>]) {
    for family in families {
        e.family(family.name, Type::Counter, family.help);
        for (labels, fields) in rows {
            for (field, label_value) in family.fields {
                let value = fields.iter().find(|f| f.0 == *field).map_or(0, |f| f.1);
                let mut labels = labels.clone();
                if let Some(label) = family.label {
                    labels.push((label, label_value));
                }
                e.sample(family.name, &labels, value);
            }
        }
    }
}

fn frontend_counters(e: &mut Exposition, frontends: &[FrontendRow<'_>]) {
    let rows = |tls_only: bool| -> Vec<_> {
        frontends
            .iter()
            .filter(|f| f.tls_enabled || !tls_only)
            .map(|f| (vec![("frontend", f.name)], f.counters.fields()))
            .collect()
    };
    counters(e, FRONTEND, &rows(false));
    counters(e, FRONTEND_TLS, &rows(true));
}

fn backend_counters(e: &mut Exposition, backends: &[BackendRow<'_>]) {
    let rows: Vec<_> = backends
        .iter()
        .map(|b| (vec![("backend", b.name)], b.counters.fields()))
        .collect();
    counters(e, BACKEND, &rows);
    let name = "tern_backend_servers";
    let help = "Servers of the backend by status: up, down (failing its checks), \
                drain (drained or weight 0), maint.";
    e.family(name, Type::Gauge, help);
    for b in backends {
        for status in Status::ALL {
            let labels = [("backend", b.name), ("status", status.lower())];
            e.sample(name, &labels, b.count(status));
        }
    }
}

fn server_counters(e: &mut Exposition, backends: &[BackendRow<'_>]) {
    let rows: Vec<_> = backends
        .iter()
        .flat_map(|b| {
            b.servers.iter().map(|s| {
                (
                    vec![("backend", b.name), ("server", s.name)],
                    s.counters.fields(),
                )
            })
        })
        .collect();
    counters(e, SERVER, &rows);
}

fn server_gauges(e: &mut Exposition, backends: &[BackendRow<'_>]) {
    let servers = || {
        backends
            .iter()
            .flat_map(|b| b.servers.iter().map(move |s| (b.name, s)))
    };
    type Read = fn(&rows::ServerRow<'_>) -> Option<u64>;
    let gauges: [(&str, &str, Read); 5] = [
        (
            "tern_server_up",
            "1 when the server passes its health checks (always, when not checked).",
            |s| Some(u64::from(s.status.up)),
        ),
        (
            "tern_server_weight",
            "Effective weight (lower than configured during slow start; 0 when drained).",
            |s| Some(u64::from(s.status.weight)),
        ),
        (
            "tern_server_configured_weight",
            "Weight set in the configuration or at runtime.",
            |s| Some(u64::from(s.configured_weight)),
        ),
        (
            "tern_server_active_requests",
            "Requests in flight; only for servers with maxconn.",
            |s| s.maxconn.map(|_| u64::from(s.status.active)),
        ),
        (
            "tern_server_max_connections",
            "The server's maxconn; only for servers that have one.",
            |s| s.maxconn.map(u64::from),
        ),
    ];
    for (name, help, read) in gauges {
        e.family(name, Type::Gauge, help);
        for (backend, s) in servers() {
            if let Some(value) = read(s) {
                e.sample(name, &[("backend", backend), ("server", s.name)], value);
            }
        }
    }
    let name = "tern_server_admin_state";
    e.family(
        name,
        Type::Gauge,
        "The operator's state of the server: 1 for the current one of ready, drain, maint.",
    );
    for (backend, s) in servers() {
        for state in [
            tern_proxy::AdminState::Ready,
            tern_proxy::AdminState::Drain,
            tern_proxy::AdminState::Maint,
        ] {
            let labels = [
                ("backend", backend),
                ("server", s.name),
                ("state", state.as_str()),
            ];
            e.sample(name, &labels, u8::from(s.status.admin == state));
        }
    }
}

type Group = fn(&TlsBreakdown) -> &Vec<Count>;

/// The TLS counter families: name, help, the label of the group's names, the group.
const TLS_GROUPS: [(&str, &str, &str, Group); 6] = [
    (
        "tern_frontend_tls_versions_total",
        "Completed TLS handshakes by kind (full, resumed) and protocol version.",
        "version",
        |b| &b.versions,
    ),
    (
        "tern_frontend_tls_groups_total",
        "Completed TLS handshakes by kind and key-exchange group (none: a TLS 1.2 resumption).",
        "group",
        |b| &b.groups,
    ),
    (
        "tern_frontend_tls_cipher_suites_total",
        "Completed TLS handshakes by kind and cipher suite.",
        "suite",
        |b| &b.suites,
    ),
    (
        "tern_frontend_tls_certificates_total",
        "Full TLS handshakes by the key type of the certificate served.",
        "key_type",
        |b| &b.certificates,
    ),
    (
        "tern_frontend_tls_handshake_failures_total",
        "TLS handshakes that failed, by reason.",
        "reason",
        |b| &b.failures,
    ),
    (
        "tern_frontend_tls_admission_events_total",
        "What TLS handshake admission did, by event (rate cap waits and expiries, refused \
         sources, resumption offers and fallbacks).",
        "event",
        |b| &b.admission,
    ),
];

/// The TLS families, for frontends with a TLS bind.
fn tls(e: &mut Exposition, frontends: &[FrontendRow<'_>]) {
    let tls: Vec<(&str, TlsBreakdown)> = frontends
        .iter()
        .filter(|f| f.tls_enabled)
        .map(|f| (f.name, TlsBreakdown::of(f.tls)))
        .collect();
    for (name, help, label, group) in TLS_GROUPS {
        e.family(name, Type::Counter, help);
        for (frontend, b) in &tls {
            for c in group(b) {
                let mut labels = vec![("frontend", *frontend)];
                if let Some(kind) = c.kind {
                    labels.push(("kind", kind));
                }
                labels.push((label, c.name.as_str()));
                e.sample(name, &labels, c.value);
            }
        }
    }
    latency(e, &tls);
}

/// The handshake latency as a histogram (cumulative buckets and a count; the proxy keeps no sum).
fn latency(e: &mut Exposition, tls: &[(&str, TlsBreakdown)]) {
    let name = "tern_frontend_tls_handshake_duration_seconds";
    let help = "Time from accept to the end of completed TLS handshakes (without rate-cap \
                waits). No _sum: tern counts per bucket only.";
    e.family(name, Type::Histogram, help);
    for (frontend, b) in tls {
        if b.latency.is_empty() {
            continue;
        }
        let mut cumulative = 0;
        for bucket in b.latency.iter().filter(|b| b.le_seconds.is_some()) {
            cumulative += bucket.count;
            let le = bucket.le_seconds.map(|s| s.to_string()).unwrap_or_default();
            e.sample(
                &format!("{name}_bucket"),
                &[("frontend", frontend), ("le", &le)],
                cumulative,
            );
        }
        let total = b.handshakes();
        e.sample(
            &format!("{name}_bucket"),
            &[("frontend", frontend), ("le", "+Inf")],
            total,
        );
        e.sample(&format!("{name}_count"), &[("frontend", frontend)], total);
    }
}

#[cfg(test)]
mod tests;
