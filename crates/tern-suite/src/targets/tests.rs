#![allow(clippy::unwrap_used)]

use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::process::Command;

use super::*;
use crate::scenario::{self, Host, Scenario};

fn scenario(workload: &str) -> Scenario {
    let text = format!(
        "[scenario]\nname = \"t\"\ntargets = [\"tern\"]\n[cpus]\ntarget = [0, 1]\n[[workload]]\nname = \"w\"\n{workload}\n"
    );
    let host = Host {
        cpus: vec![0, 1],
        ..Host::default()
    };
    scenario::parse(&text, Path::new("t.toml"), &host).unwrap_or_else(|e| panic!("{e}"))
}

fn addr(port: u16) -> SocketAddr {
    SocketAddr::from(([127, 0, 0, 1], port))
}

const BACKENDS: [SocketAddr; 2] = [
    SocketAddr::new(std::net::IpAddr::V4(std::net::Ipv4Addr::LOCALHOST), 9001),
    SocketAddr::new(std::net::IpAddr::V4(std::net::Ipv4Addr::LOCALHOST), 9002),
];

fn layout<'a>(s: &'a Scenario, dir: &Path, cert: Option<PathBuf>) -> Layout<'a> {
    let w = &s.workloads[0];
    Layout {
        workload: w,
        monitor_uri: &s.monitor_uri,
        cpus: &w.target_cpus,
        cert,
        front: addr(8443),
        inner: addr(8444),
        stats: addr(8445),
        backends: &BACKENDS,
        dir: dir.to_path_buf(),
    }
}

fn tools() -> Tools {
    Tools::discover(PathBuf::from("/usr/bin/tern"))
}

/// A fresh directory with an RSA and an ECDSA combined PEM.
fn temp_with_certs(tag: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("tern-suite-{}-{tag}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    let names = vec!["localhost".to_owned()];
    for (kind, name) in [
        (tern_tls::KeyKind::Rsa2048, "rsa"),
        (tern_tls::KeyKind::EcdsaP256, "ecdsa"),
    ] {
        let c = tern_tls::self_signed(&names, kind).unwrap();
        std::fs::write(dir.join(format!("{name}.pem")), c.cert_pem + &c.key_pem).unwrap();
    }
    dir
}

fn text_of(g: &Generated, file: &str) -> String {
    g.files
        .iter()
        .find(|(n, _)| n == file)
        .map(|(_, t)| t.clone())
        .unwrap()
}

#[test]
fn haproxy_config_pins_threads_tls_and_backends() {
    let s = scenario("path = \"/?s=107\"\nsuite = \"TLS_AES_256_GCM_SHA384\"");
    let l = layout(&s, Path::new("/d"), Some("/d/rsa.pem".into()));
    let g = generate(TargetKind::Haproxy, &l, &tools());
    let c = text_of(&g, "haproxy.cfg");
    for line in [
        "nbthread 2",
        "cpu-map 1/1 0",
        "cpu-map 1/2 1",
        "maxconn 8000",
        "tune.ssl.cachesize 0",
        "ssl-default-bind-ciphersuites TLS_AES_256_GCM_SHA384",
        "ssl-default-bind-curves X25519",
        "ssl-default-bind-options ssl-min-ver TLSv1.3 ssl-max-ver TLSv1.3 no-tls-tickets",
        "stats socket ipv4@127.0.0.1:8445 level admin",
        "bind 127.0.0.1:8443 ssl crt /d/rsa.pem",
        "monitor-uri /test",
        "balance roundrobin",
        "http-reuse always",
        "server s1 127.0.0.1:9001",
        "server s2 127.0.0.1:9002",
        "timeout http-keep-alive 30s",
    ] {
        assert!(
            c.contains(&format!("    {line}\n")),
            "missing {line:?} in\n{c}"
        );
    }
    assert_eq!(g.stats, Some(addr(8445)));
    assert_eq!(g.procs.len(), 1);
    assert_eq!(g.procs[0].ready, Ready::Port(addr(8443)));
    assert!(g.procs[0]
        .args
        .ends_with(&["-db".into(), "-f".into(), "/d/haproxy.cfg".into()]));
}

#[test]
fn tls12_and_plain_variants() {
    let s = scenario("version = \"1.2\"\ncert = \"ecdsa\"\ngroup = \"p256\"");
    let c = haproxy::config(
        &layout(&s, Path::new("/d"), Some("/d/ecdsa.pem".into())),
        true,
    );
    assert!(
        c.contains("ssl-default-bind-ciphers ECDHE-ECDSA-AES128-GCM-SHA256\n"),
        "{c}"
    );
    assert!(c.contains("ssl-default-bind-curves P-256\n"), "{c}");
    assert!(!c.contains("ciphersuites"), "{c}");
    let s = scenario("tls = false\npath = \"/\"");
    let l = layout(&s, Path::new("/d"), None);
    let c = haproxy::config(&l, true);
    assert!(
        c.contains("    bind 127.0.0.1:8443\n") && !c.contains("ssl"),
        "{c}"
    );
    let n = nginx::config(&l);
    assert!(
        n.contains("listen 127.0.0.1:8443;") && !n.contains("ssl_"),
        "{n}"
    );
    let t = tern::config(&l);
    assert!(!t.contains("tls ="), "{t}");
}

#[test]
fn tls12_ecdsa_offers_the_certificates_curve_too() {
    // OpenSSL refuses an ECDSA certificate whose curve the client did not list (TLS 1.2).
    let s = scenario("version = \"1.2\"\ncert = \"ecdsa\"");
    let tls = s.workloads[0].tls.unwrap();
    assert_eq!(tls.openssl_groups(), "X25519:P-256");
    let c = haproxy::config(
        &layout(&s, Path::new("/d"), Some("/d/ecdsa.pem".into())),
        true,
    );
    assert!(c.contains("ssl-default-bind-curves X25519:P-256\n"), "{c}");
    let s = scenario("version = \"1.3\"\ncert = \"ecdsa\"");
    assert_eq!(s.workloads[0].tls.unwrap().openssl_groups(), "X25519");
}

#[test]
fn nginx_config_is_equivalent() {
    let s = scenario("suite = \"TLS_AES_128_GCM_SHA256\"");
    let l = layout(&s, Path::new("/d"), Some("/d/rsa.pem".into()));
    let c = nginx::config(&l);
    for line in [
        "worker_processes 2;",
        "worker_cpu_affinity 01 10;",
        "listen 127.0.0.1:8443 ssl;",
        "ssl_certificate /d/rsa.pem;",
        "ssl_protocols TLSv1.3;",
        "ssl_conf_command Ciphersuites TLS_AES_128_GCM_SHA256;",
        "ssl_ecdh_curve X25519;",
        "ssl_session_tickets off;",
        "location = /test {",
        "server 127.0.0.1:9001;",
        "keepalive 64;",
        "keepalive_requests 1000000;",
        "proxy_http_version 1.1;",
        "pid nginx.pid;",
    ] {
        assert!(c.contains(line), "missing {line:?} in\n{c}");
    }
    assert_eq!(nginx::affinity(&[0, 3]), "0001 1000");
}

#[test]
fn tern_config_parses_with_terns_own_loader() {
    let dir = temp_with_certs("tern");
    let s = scenario("cert = \"ecdsa\"");
    let l = layout(&s, &dir, Some(dir.join("ecdsa.pem")));
    let text = tern::config(&l);
    assert!(text.contains("workers = 2\ncpus = [0, 1]\n"), "{text}");
    let config =
        tern_config::parse(&text, &dir.join("tern.toml")).unwrap_or_else(|e| panic!("{e}\n{text}"));
    assert_eq!(config.backends[0].servers.len(), 2);
    assert_eq!(config.frontends[0].monitor_uri.as_deref(), Some("/test"));
    let g = generate(TargetKind::Tern, &l, &tools());
    assert_eq!(g.procs[0].ready, Ready::Line("ready:"));
}

#[test]
fn legacy_suites_put_tern_on_its_openssl_engine_and_nginx_gets_dh_parameters() {
    let dir = temp_with_certs("legacy");
    for suite in [
        "AES128-SHA",
        "DHE-RSA-AES128-GCM-SHA256",
        "ECDHE-RSA-AES256-SHA",
    ] {
        let s = scenario(&format!(
            "version = \"1.2\"\ncert = \"rsa\"\nsuite = \"{suite}\""
        ));
        let l = layout(&s, &dir, Some(dir.join("rsa.pem")));
        let text = tern::config(&l);
        let wanted = format!("engine = \"openssl\", ciphers = [\"{suite}\"]");
        assert!(text.contains(&wanted), "{text}");
        tern_config::parse(&text, &dir.join("tern.toml")).unwrap_or_else(|e| panic!("{e}\n{text}"));
        let tcp = tern::tcp_config(&l, &BACKENDS);
        assert!(tcp.contains(&wanted), "{tcp}");
        let g = generate(TargetKind::Nginx, &l, &tools());
        let dhe = suite.starts_with("DHE");
        assert_eq!(
            text_of(&g, "nginx.conf").contains("ssl_dhparam ffdhe2048.pem;"),
            dhe
        );
        assert_eq!(g.files.iter().any(|(n, _)| n == "ffdhe2048.pem"), dhe);
    }
    // Suites rustls has stay on the rustls engine.
    let s = scenario("version = \"1.2\"\ncert = \"rsa\"");
    let text = tern::config(&layout(&s, &dir, Some(dir.join("rsa.pem"))));
    assert!(!text.contains("engine"), "{text}");
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn tern_unbatched_is_tern_with_crypto_batch_off() {
    let dir = temp_with_certs("unbatched");
    let s = scenario("version = \"1.3\"\ncert = \"rsa\"");
    let l = layout(&s, &dir, Some(dir.join("rsa.pem")));
    let g = generate(TargetKind::TernUnbatched, &l, &tools());
    let text = text_of(&g, "tern.toml");
    assert_eq!(text, tern::without_crypto_batch(&tern::config(&l)));
    assert!(
        text.starts_with("[global]\ncrypto_batch = { enabled = false }\n"),
        "{text}"
    );
    let config =
        tern_config::parse(&text, &dir.join("tern.toml")).unwrap_or_else(|e| panic!("{e}\n{text}"));
    assert!(!config.global.crypto_batch.enabled);
    // Plain `tern` keeps the default, which batches.
    assert!(
        !text_of(&generate(TargetKind::Tern, &l, &tools()), "tern.toml").contains("crypto_batch")
    );
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn offloaders_run_haproxy_behind_them_in_plain_http() {
    let s = scenario("version = \"1.2\"");
    let l = layout(&s, Path::new("/d"), Some("/d/rsa.pem".into()));
    let g = generate(TargetKind::StunnelHaproxy, &l, &tools());
    assert_eq!(
        g.procs.iter().map(|p| p.name).collect::<Vec<_>>(),
        ["haproxy", "stunnel"]
    );
    assert_eq!(g.procs[0].ready, Ready::Port(addr(8444)));
    let h = text_of(&g, "haproxy.cfg");
    assert!(
        h.contains("    bind 127.0.0.1:8444\n") && !h.contains("ssl"),
        "{h}"
    );
    let st = text_of(&g, "stunnel.conf");
    for line in [
        "accept = 127.0.0.1:8443",
        "connect = 127.0.0.1:8444",
        "sslVersionMax = TLSv1.2",
        "ciphers = ECDHE-RSA-AES128-GCM-SHA256",
        "curves = X25519",
        "options = NO_TICKET",
    ] {
        assert!(st.contains(line), "missing {line:?} in\n{st}");
    }
    let g = generate(TargetKind::HitchHaproxy, &l, &tools());
    let hi = text_of(&g, "hitch.conf");
    for line in [
        "frontend = \"[127.0.0.1]:8443\"",
        "backend = \"[127.0.0.1]:8444\"",
        "workers = 2",
        "tls-protos = TLSv1.2",
    ] {
        assert!(hi.contains(line), "missing {line:?} in\n{hi}");
    }
}

#[test]
fn capabilities_say_who_cannot_do_what() {
    let s = scenario("version = \"1.2\"\nsuite = \"DHE-RSA-AES128-GCM-SHA256\"");
    let w = &s.workloads[0];
    // Suites rustls lacks run on the OpenSSL engines, where the build has them.
    if tern_bench::has_openssl_engine() {
        assert!(client_unsupported(w).is_none());
        assert!(unsupported(TargetKind::Tern, w).is_none());
    } else {
        assert!(client_unsupported(w).unwrap().contains("finite-field DHE"));
        assert!(unsupported(TargetKind::Tern, w)
            .unwrap()
            .contains("DHE key exchange"));
    }
    assert!(unsupported(TargetKind::Haproxy, w).is_none());
    assert!(unsupported(TargetKind::Nginx, w).is_none());
    let s = scenario("group = \"x25519mlkem768\"");
    let w = &s.workloads[0];
    assert!(client_unsupported(w).is_none() && unsupported(TargetKind::Tern, w).is_none());
    assert!(unsupported(TargetKind::Haproxy, w)
        .unwrap()
        .contains("X25519MLKEM768"));
    let s = scenario("tls = false");
    assert!(unsupported(TargetKind::StunnelHaproxy, &s.workloads[0])
        .unwrap()
        .contains("offloader"));
}

/// Runs a real tool's configuration check; `None` when the tool is not installed.
fn check(program: Option<&PathBuf>, args: &[&str]) -> Option<(bool, String)> {
    let Some(program) = program else {
        eprintln!("skipped: {args:?}: tool not installed");
        return None;
    };
    let out = Command::new(program).args(args).output().unwrap();
    let text = String::from_utf8_lossy(&[out.stdout, out.stderr].concat()).into_owned();
    Some((out.status.success(), text))
}

fn write(g: &Generated, dir: &Path) {
    for (name, text) in &g.files {
        std::fs::write(dir.join(name), text).unwrap();
    }
}

#[test]
fn real_tools_accept_the_generated_configurations() {
    let tools = tools();
    for (i, workload) in [
        "",
        "version = \"1.2\"\ncert = \"ecdsa\"",
        "tls = false",
        "cert = \"ecdsa\"\nh2 = true",
        "tls = false\nh2 = true",
        "version = \"1.2\"\nsuite = \"DHE-RSA-AES128-GCM-SHA256\"",
        "version = \"1.2\"\nsuite = \"AES128-SHA\"",
    ]
    .iter()
    .enumerate()
    {
        let dir = temp_with_certs(&format!("check{i}"));
        let s = scenario(workload);
        let cert = s.workloads[0]
            .tls
            .map(|t| dir.join(format!("{}.pem", t.cert.file_stem())));
        let l = layout(&s, &dir, cert);
        write(&generate(TargetKind::Haproxy, &l, &tools), &dir);
        let cfg = dir.join("haproxy.cfg");
        if let Some((ok, out)) = check(
            tools.haproxy.as_ref(),
            &["-c", "-q", "-f", cfg.to_str().unwrap()],
        ) {
            assert!(
                ok,
                "haproxy -c rejected {workload:?}: {out}\n{}",
                std::fs::read_to_string(&cfg).unwrap()
            );
        }
        write(&generate(TargetKind::Nginx, &l, &tools), &dir);
        let conf = dir.join("nginx.conf");
        let prefix = dir.to_str().unwrap();
        if let Some((ok, out)) = check(
            tools.nginx.as_ref(),
            &[
                "-t",
                "-q",
                "-e",
                "stderr",
                "-p",
                prefix,
                "-c",
                conf.to_str().unwrap(),
            ],
        ) {
            assert!(
                ok,
                "nginx -t rejected {workload:?}: {out}\n{}",
                std::fs::read_to_string(&conf).unwrap()
            );
        }
        if s.workloads[0].tls.is_some() && s.workloads[0].h2_streams.is_none() {
            write(&generate(TargetKind::HitchHaproxy, &l, &tools), &dir);
            let conf = format!("--config={}", dir.join("hitch.conf").display());
            if let Some((ok, out)) = check(tools.hitch.as_ref(), &["--test", &conf]) {
                assert!(ok, "hitch --test rejected {workload:?}: {out}");
            }
        }
        let _ = std::fs::remove_dir_all(&dir);
    }
}

#[test]
fn http2_workloads_turn_h2_on_in_every_target() {
    let tls = scenario("path = \"/?s=1k\"\ncert = \"ecdsa\"\nh2 = true\nstreams = 32");
    let l = layout(&tls, Path::new("/d"), Some("/d/ecdsa.pem".into()));
    let haproxy = text_of(&generate(TargetKind::Haproxy, &l, &tools()), "haproxy.cfg");
    assert!(
        haproxy.contains("ssl crt /d/ecdsa.pem alpn h2,http/1.1\n"),
        "{haproxy}"
    );
    let nginx = text_of(&generate(TargetKind::Nginx, &l, &tools()), "nginx.conf");
    assert!(
        nginx.contains("listen 127.0.0.1:8443 ssl http2;"),
        "{nginx}"
    );
    let tern = text_of(&generate(TargetKind::Tern, &l, &tools()), "tern.toml");
    assert!(
        !tern.contains("http2"),
        "TLS binds offer h2 by default: {tern}"
    );
    let w = &tls.workloads[0];
    assert!(unsupported(TargetKind::StunnelHaproxy, w).is_some());
    assert!(unsupported(TargetKind::Haproxy, w).is_none());

    let plain = scenario("path = \"/?s=1k\"\ntls = false\nh2 = true");
    let l = layout(&plain, Path::new("/d"), None);
    let haproxy = text_of(&generate(TargetKind::Haproxy, &l, &tools()), "haproxy.cfg");
    assert!(
        haproxy.contains("bind 127.0.0.1:8443 proto h2\n"),
        "{haproxy}"
    );
    let nginx = text_of(&generate(TargetKind::Nginx, &l, &tools()), "nginx.conf");
    assert!(nginx.contains("listen 127.0.0.1:8443 http2;"), "{nginx}");
    let tern = text_of(&generate(TargetKind::Tern, &l, &tools()), "tern.toml");
    assert!(tern.contains("http2 = { cleartext = true }"), "{tern}");

    let h1 = scenario("path = \"/?s=1k\"\ncert = \"ecdsa\"");
    let l = layout(&h1, Path::new("/d"), Some("/d/ecdsa.pem".into()));
    let haproxy = text_of(&generate(TargetKind::Haproxy, &l, &tools()), "haproxy.cfg");
    assert!(!haproxy.contains("alpn"), "{haproxy}");
}

#[test]
fn idle_pools_hold_every_request_in_flight() {
    // 16 connections x 32 streams: 512 requests may each need a server connection.
    let h2 =
        scenario("path = \"/?s=1k\"\ncert = \"ecdsa\"\nh2 = true\nstreams = 32\nconcurrency = 16");
    let l = layout(&h2, Path::new("/d"), Some("/d/ecdsa.pem".into()));
    let tern = text_of(&generate(TargetKind::Tern, &l, &tools()), "tern.toml");
    assert!(tern.contains("max_idle_per_server = 512,"), "{tern}");
    let nginx = text_of(&generate(TargetKind::Nginx, &l, &tools()), "nginx.conf");
    assert!(nginx.contains("keepalive 512;"), "{nginx}");
    // Fewer requests in flight than the floor: the floor.
    let h1 = scenario("path = \"/?s=1k\"\nconcurrency = 8");
    assert_eq!(idle_per_server(&h1.workloads[0]), IDLE_PER_SERVER);
}

/// A TCP-mode workload over `BACKENDS`.
fn tcp(workload: &str) -> Scenario {
    scenario(&format!("mode = \"tcp\"\npath = \"/?s=107\"\n{workload}"))
}

#[test]
fn tern_tcp_config_relays_round_robin_and_parses_with_terns_own_loader() {
    let dir = temp_with_certs("tern-tcp");
    let s = tcp("cert = \"ecdsa\"");
    let l = layout(&s, &dir, Some(dir.join("ecdsa.pem")));
    let g = generate(TargetKind::Tern, &l, &tools());
    let text = text_of(&g, "tern.toml");
    for line in [
        "workers = 2\ncpus = [0, 1]\n",
        "name = \"web\"\nmode = \"tcp\"\n",
        "name = \"app\"\nmode = \"tcp\"\nbalance = \"roundrobin\"\n",
        "address = \"127.0.0.1:9001\"",
        "address = \"127.0.0.1:9002\"",
    ] {
        assert!(text.contains(line), "missing {line:?} in\n{text}");
    }
    // What a TCP frontend or backend refuses is left out.
    for key in ["monitor_uri", "pool", "keep_alive", "http_request"] {
        assert!(!text.contains(key), "{key} in\n{text}");
    }
    let config =
        tern_config::parse(&text, &dir.join("tern.toml")).unwrap_or_else(|e| panic!("{e}\n{text}"));
    assert_eq!(config.backends[0].servers.len(), 2);
    assert!(config.frontends[0].binds[0].tls.is_some());
    assert_eq!(g.procs[0].ready, Ready::Line("ready:"));

    let plain = tcp("tls = false");
    let l = layout(&plain, &dir, None);
    let text = tern::tcp_config(&l, l.backends);
    assert!(!text.contains("tls ="), "{text}");
    tern_config::parse(&text, &dir.join("tern.toml")).unwrap_or_else(|e| panic!("{e}\n{text}"));
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn haproxy_tcp_config_is_mode_tcp_with_ssl_on_the_bind() {
    let s = tcp("cert = \"ecdsa\"");
    let l = layout(&s, Path::new("/d"), Some("/d/ecdsa.pem".into()));
    let c = text_of(&generate(TargetKind::Haproxy, &l, &tools()), "haproxy.cfg");
    for line in [
        "nbthread 2",
        "cpu-map 1/2 1",
        "tune.ssl.cachesize 0",
        "ssl-default-bind-ciphersuites TLS_AES_256_GCM_SHA384",
        "ssl-default-bind-options ssl-min-ver TLSv1.3 ssl-max-ver TLSv1.3 no-tls-tickets",
        "mode tcp",
        "timeout client 30s",
        "bind 127.0.0.1:8443 ssl crt /d/ecdsa.pem",
        "default_backend app",
        "balance roundrobin",
        "server s1 127.0.0.1:9001",
        "server s2 127.0.0.1:9002",
    ] {
        assert!(
            c.contains(&format!("    {line}\n")),
            "missing {line:?} in\n{c}"
        );
    }
    for http in ["mode http", "monitor-uri", "http-reuse", "http-keep-alive"] {
        assert!(!c.contains(http), "{http} in\n{c}");
    }
    let plain = tcp("tls = false");
    let c = haproxy::tcp_config(&layout(&plain, Path::new("/d"), None));
    assert!(
        c.contains("    bind 127.0.0.1:8443\n") && !c.contains("ssl"),
        "{c}"
    );
}

#[test]
fn stunnel_and_hitch_alone_relay_straight_to_the_backends() {
    let s = tcp("cert = \"ecdsa\"");
    let l = layout(&s, Path::new("/d"), Some("/d/ecdsa.pem".into()));
    let g = generate(TargetKind::Stunnel, &l, &tools());
    assert_eq!(
        g.procs.iter().map(|p| p.name).collect::<Vec<_>>(),
        ["stunnel"]
    );
    assert_eq!(g.procs[0].ready, Ready::Port(addr(8443)));
    let st = text_of(&g, "stunnel.conf");
    for line in [
        "accept = 127.0.0.1:8443\n",
        "connect = 127.0.0.1:9001\nconnect = 127.0.0.1:9002\nfailover = rr\n",
        "sslVersionMax = TLSv1.3",
        "ciphersuites = TLS_AES_256_GCM_SHA384",
        "options = NO_TICKET",
    ] {
        assert!(st.contains(line), "missing {line:?} in\n{st}");
    }
    let g = generate(TargetKind::Hitch, &l, &tools());
    assert_eq!(
        g.procs.iter().map(|p| p.name).collect::<Vec<_>>(),
        ["hitch"]
    );
    let hi = text_of(&g, "hitch.conf");
    assert!(hi.contains("backend = \"[127.0.0.1]:9001\""), "{hi}");
    assert!(hi.contains("tls-protos = TLSv1.3"), "{hi}");
}

#[test]
fn tern_haproxy_puts_tern_in_tcp_mode_in_front_of_plain_haproxy() {
    let dir = temp_with_certs("tern-haproxy");
    let s = scenario("version = \"1.2\"\npath = \"/?s=107\"\nrequests_per_conn = 1");
    let l = layout(&s, &dir, Some(dir.join("rsa.pem")));
    let g = generate(TargetKind::TernHaproxy, &l, &tools());
    assert_eq!(
        g.procs.iter().map(|p| p.name).collect::<Vec<_>>(),
        ["haproxy", "tern"]
    );
    // HAProxy first, on the inner address; tern last, so the runner reads its port.
    assert_eq!(g.procs[0].ready, Ready::Port(addr(8444)));
    assert_eq!(g.procs[1].ready, Ready::Line("ready:"));
    assert_eq!(g.stats, Some(addr(8445)));
    let h = text_of(&g, "haproxy.cfg");
    assert!(
        h.contains("    bind 127.0.0.1:8444\n")
            && h.contains("    mode http\n")
            && !h.contains("ssl"),
        "{h}"
    );
    let t = text_of(&g, "tern.toml");
    assert!(t.contains("mode = \"tcp\""), "{t}");
    let config =
        tern_config::parse(&t, &dir.join("tern.toml")).unwrap_or_else(|e| panic!("{e}\n{t}"));
    let servers = &config.backends[0].servers;
    assert_eq!(servers.len(), 1);
    assert!(t.contains("address = \"127.0.0.1:8444\""), "{t}");
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn tcp_mode_capabilities() {
    let tls = tcp("cert = \"ecdsa\"");
    let w = &tls.workloads[0];
    for kind in [
        TargetKind::Tern,
        TargetKind::Haproxy,
        TargetKind::Stunnel,
        TargetKind::Hitch,
    ] {
        assert_eq!(unsupported(kind, w), None, "{kind}");
    }
    assert!(unsupported(TargetKind::Nginx, w)
        .unwrap()
        .contains("stream"));
    for chain in [
        TargetKind::StunnelHaproxy,
        TargetKind::HitchHaproxy,
        TargetKind::TernHaproxy,
    ] {
        assert!(
            unsupported(chain, w).unwrap().contains("HTTP chain"),
            "{chain}"
        );
    }
    let plain = tcp("tls = false");
    let w = &plain.workloads[0];
    assert_eq!(unsupported(TargetKind::Tern, w), None);
    assert_eq!(unsupported(TargetKind::Haproxy, w), None);
    for relay in [TargetKind::Stunnel, TargetKind::Hitch] {
        assert!(
            unsupported(relay, w).unwrap().contains("TLS offloader"),
            "{relay}"
        );
    }
    let http = scenario("path = \"/?s=107\"");
    let w = &http.workloads[0];
    assert!(unsupported(TargetKind::Stunnel, w)
        .unwrap()
        .contains("TCP only"));
    assert_eq!(unsupported(TargetKind::TernHaproxy, w), None);
    let dhe = scenario("version = \"1.2\"\nsuite = \"DHE-RSA-AES128-GCM-SHA256\"");
    let tern_dhe = unsupported(TargetKind::TernHaproxy, &dhe.workloads[0]);
    // tern runs DHE on its OpenSSL engine, where the build has it.
    match tern_bench::has_openssl_engine() {
        true => assert_eq!(tern_dhe, None),
        false => assert!(tern_dhe.unwrap().contains("rustls")),
    }
}

#[test]
fn real_tools_accept_the_tcp_configurations() {
    let tools = tools();
    for (i, workload) in ["cert = \"ecdsa\"", "tls = false"].iter().enumerate() {
        let dir = temp_with_certs(&format!("tcpcheck{i}"));
        let s = tcp(workload);
        let cert = s.workloads[0]
            .tls
            .map(|t| dir.join(format!("{}.pem", t.cert.file_stem())));
        let l = layout(&s, &dir, cert);
        write(&generate(TargetKind::Haproxy, &l, &tools), &dir);
        let cfg = dir.join("haproxy.cfg");
        if let Some((ok, out)) = check(
            tools.haproxy.as_ref(),
            &["-c", "-q", "-f", cfg.to_str().unwrap()],
        ) {
            assert!(ok, "haproxy -c rejected {workload:?}: {out}");
        }
        if s.workloads[0].tls.is_some() {
            write(&generate(TargetKind::Hitch, &l, &tools), &dir);
            let conf = format!("--config={}", dir.join("hitch.conf").display());
            if let Some((ok, out)) = check(tools.hitch.as_ref(), &["--test", &conf]) {
                assert!(ok, "hitch --test rejected {workload:?}: {out}");
            }
        }
        let _ = std::fs::remove_dir_all(&dir);
    }
}
