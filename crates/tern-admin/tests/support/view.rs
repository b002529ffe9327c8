//! A synthetic [`View`]: a configuration parsed from TOML and counters made up to exercise
//! every state the renderers show (a server up, down, drained, in maintenance, a backup, one
//! with `maxconn`, TLS counters). Shared by the render tests and `examples/stats_page.rs`.

#![allow(dead_code)]

use std::path::Path;
use std::sync::Arc;
use std::time::{Duration, SystemTime};

use tern_admin::{AdminState, Info, View};
use tern_config::Config;
use tern_proxy::stats::{
    BackendSnapshot, FrontendSnapshot, KindSnapshot, ServerSnapshot, ServerStatus, TlsSnapshot,
};
use tern_proxy::StatsSnapshot;

const CONFIG: &str = r#"
[[frontend]]
name = "web"
bind = ["127.0.0.1:8443", { address = "127.0.0.1:8080", tls = false }]
tls = { certs = ["cert.pem"] }
default_backend = "app"

[[frontend]]
name = "admin-plain"
bind = ["127.0.0.1:8081"]
default_backend = "static"

[[backend]]
name = "app"
check = { interval = "2s" }
servers = [
  { name = "app1", address = "10.0.1.1:8080", weight = 3 },
  { name = "app2", address = "10.0.1.2:8080", maxconn = 100 },
  { name = "app3", address = "10.0.1.3:8080" },
  { name = "app4", address = "10.0.1.4:8080" },
  { name = "spare", address = "10.0.1.9:8080", backup = true },
]

[[backend]]
name = "static"
servers = [
  { name = "s1", address = "10.0.2.1:80" },
  { name = "s2", address = "10.0.2.2:80", check = {} },
]
"#;

/// The configuration. Parsing does not read certificate files, so the TLS frontend needs none.
pub fn config() -> Config {
    tern_config::parse(CONFIG, Path::new("/synthetic/tern.toml"))
        .unwrap_or_else(|e| panic!("synthetic config: {e:?}"))
}

fn seq(len: usize, f: impl Fn(usize) -> u64) -> Vec<u64> {
    (0..len).map(f).collect()
}

/// TLS counters of the sizes the proxy uses (3 versions, 9+1 suites, 7+2 groups, 3+1
/// certificate types, 12 failure reasons, 15+1 latency buckets, 6 admission events).
pub fn tls_snapshot() -> TlsSnapshot {
    TlsSnapshot {
        full: KindSnapshot {
            versions: vec![120, 880, 0],
            suites: seq(10, |i| if i < 2 { 500 } else { 0 }),
            groups: seq(9, |i| [700, 200, 0, 100][..].get(i).copied().unwrap_or(0)),
        },
        resumed: KindSnapshot {
            versions: vec![10, 2_990, 0],
            suites: seq(10, |i| if i == 0 { 3_000 } else { 0 }),
            groups: seq(9, |i| {
                if i == 0 {
                    2_990
                } else if i == 7 {
                    10
                } else {
                    0
                }
            }),
        },
        certs: vec![100, 900, 0, 0],
        failures: seq(12, |i| (i as u64 % 3) * 2),
        latency: seq(16, |i| {
            [0, 5, 40, 600, 2_000, 1_000, 300, 40, 10, 4, 1][..]
                .get(i)
                .copied()
                .unwrap_or(0)
        }),
        admission: vec![3, 0, 1, 40, 2, 0],
    }
}

pub fn stats(config: &Config) -> StatsSnapshot {
    let web = FrontendSnapshot {
        sessions: 4_200,
        tls_full: 1_000,
        tls_resumed: 3_000,
        tls_failures: 7,
        tls_timeouts: 2,
        requests: 125_000,
        monitor: 12,
        bad_requests: 3,
        resp_2xx: 120_000,
        resp_3xx: 1_000,
        resp_4xx: 3_900,
        resp_5xx: 85,
        client_aborts: 4,
        tunnels: 9,
        denied: 5,
        intercepted: 6,
        no_backend: 1,
        tcp_sessions: 11,
        proxy_errors: 13,
        ..Default::default()
    };
    let plain = FrontendSnapshot {
        sessions: 10,
        requests: 40,
        resp_2xx: 40,
        ..Default::default()
    };
    let app = BackendSnapshot {
        requests: 124_000,
        no_server: 2,
        connect_errors: 5,
        retries: 5,
        redispatches: 1,
        queued: 30,
        upstream_errors: 80,
        ..Default::default()
    };
    let server = |requests: u64, checks_failed: u64, went_down: u64| ServerSnapshot {
        requests,
        connects: requests / 50,
        reused: requests - requests / 50,
        checks_passed: 1_000,
        checks_failed,
        went_down,
        went_up: went_down,
        ..Default::default()
    };
    let ready = |up: bool, weight: u32| ServerStatus {
        up,
        weight,
        active: 0,
        admin: AdminState::Ready,
        configured_weight: weight,
        address: None,
        unresolved: false,
    };
    let status = vec![
        vec![
            ready(true, 3),
            ServerStatus {
                active: 17,
                ..ready(true, 1)
            },
            ready(false, 1),
            ServerStatus {
                admin: AdminState::Maint,
                ..ready(true, 1)
            },
            ServerStatus {
                admin: AdminState::Drain,
                ..ready(true, 1)
            },
        ],
        vec![ready(true, 1), ready(true, 1)],
    ];
    assert_eq!(config.backends.len(), status.len());
    StatsSnapshot {
        frontends: vec![web, plain],
        tls: vec![tls_snapshot(), TlsSnapshot::default()],
        backends: vec![
            app,
            BackendSnapshot {
                requests: 40,
                ..Default::default()
            },
        ],
        servers: vec![
            vec![
                server(60_000, 0, 0),
                server(40_000, 2, 1),
                server(24_000, 30, 2),
                server(0, 0, 0),
                server(0, 0, 0),
            ],
            vec![server(20, 0, 0), server(20, 0, 0)],
        ],
        status,
        reloads: tern_proxy::ReloadSnapshot {
            reloads: 2,
            failed: 1,
        },
        resolvers: vec![tern_proxy::ResolverSnapshot {
            name: "dns".into(),
            sent: 40,
            valid: 30,
            nx: 2,
            timeouts: 3,
            invalid: 5,
            changes: 4,
            ..Default::default()
        }],
        ..Default::default()
    }
}

pub fn info() -> Info {
    Info {
        version: "0.1.0".into(),
        pid: 4242,
        started: SystemTime::UNIX_EPOCH + Duration::from_secs(1_700_000_000),
        uptime: Duration::from_secs(93_784),
        workers: 2,
        generation: 3,
        draining_generations: 1,
        connections: 57,
        profiling: false,
        crypto_batch: None,
    }
}

/// The whole synthetic view.
pub fn view() -> View {
    let config = config();
    let stats = stats(&config);
    View {
        info: info(),
        config: Arc::new(config),
        stats,
    }
}
