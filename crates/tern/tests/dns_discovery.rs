//! Service discovery over DNS through the real binary, against a real DNS server: BIND 9
//! (`named`) authoritative for `app.internal` on a loopback port, its records changed with
//! `nsupdate` while traffic flows. Slots of a template fill from SRV and A records, follow
//! changes without a reload, go to maintenance when their record goes, and failures are held
//! for their `hold` period; malformed replies are refused and counted. Skipped (with a line on
//! stderr) where BIND is not installed; CI installs it (`.ci/run`).

#![allow(clippy::unwrap_used)]

mod support;
use support::dns::{srv_add, srv_delete, Named, ZONE};
use support::*;

use std::collections::HashMap;
use std::net::{SocketAddr, UdpSocket};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

/// Quick resolutions, so each change shows within a fraction of a second.
fn resolvers(nameserver: SocketAddr, hold: &str) -> String {
    format!(
        "\n[[resolvers]]\nname = \"dns\"\nnameservers = [\"{nameserver}\"]\nresolve_retries = 2\n\
         timeouts = {{ resolve = \"100ms\", retry = \"200ms\" }}\nhold = {{ valid = \"100ms\", {hold} }}\n"
    )
}

fn tern_with(servers: &str, nameserver: SocketAddr, hold: &str) -> Tern {
    let toml = Config::new().raw_server(servers).toml() + &resolvers(nameserver, hold);
    Tern::run(&toml)
}

/// One GET: (status, the answering server's name).
fn one(addr: SocketAddr) -> (u16, String) {
    block_on(async {
        let got = get(addr, false, "/").await;
        let server = got.header("x-term-server").unwrap_or("").to_owned();
        (got.status, server)
    })
}

/// Who answered `n` GETs.
fn spread(addr: SocketAddr, n: usize) -> HashMap<String, usize> {
    let mut seen = HashMap::new();
    for _ in 0..n {
        let (status, server) = one(addr);
        *seen.entry(format!("{status} {server}")).or_default() += 1;
    }
    seen
}

/// Polls `check` every 50 ms for at most `limit`; panics with `what` when it never holds.
fn wait_until(limit: Duration, what: &str, mut check: impl FnMut() -> bool) {
    let deadline = Instant::now() + limit;
    while Instant::now() < deadline {
        if check() {
            return;
        }
        std::thread::sleep(Duration::from_millis(50));
    }
    panic!("never: {what}");
}

/// A `tern term` on a given loopback address.
fn term_at(name: &str, listen: &str) -> Term {
    let dir = temp_dir(&format!("term-{name}"));
    let mut proc = Proc::spawn(&["term", "--listen", listen, "--name", name], &dir);
    proc.wait_line("ready:");
    let addr = proc.listening()[0].1;
    Term {
        proc,
        addr,
        name: name.to_owned(),
    }
}

/// A client that sends GETs one after another until told to stop (at most `max` requests or
/// `limit`), counting answers that are not 200.
struct Load {
    stop: Arc<AtomicBool>,
    sent: Arc<AtomicU64>,
    failed: Arc<AtomicU64>,
    thread: std::thread::JoinHandle<()>,
}

impl Load {
    fn start(addr: SocketAddr, max: u64, limit: Duration) -> Load {
        let stop = Arc::new(AtomicBool::new(false));
        let (sent, failed) = (Arc::new(AtomicU64::new(0)), Arc::new(AtomicU64::new(0)));
        let (s, n, f) = (Arc::clone(&stop), Arc::clone(&sent), Arc::clone(&failed));
        let thread = std::thread::spawn(move || {
            let end = Instant::now() + limit;
            while !s.load(Ordering::Relaxed)
                && n.load(Ordering::Relaxed) < max
                && Instant::now() < end
            {
                let (status, _) = one(addr);
                n.fetch_add(1, Ordering::Relaxed);
                if status != 200 {
                    f.fetch_add(1, Ordering::Relaxed);
                }
            }
        });
        Load {
            stop,
            sent,
            failed,
            thread,
        }
    }

    /// Stops the client; (sent, failed).
    fn finish(self) -> (u64, u64) {
        self.stop.store(true, Ordering::Relaxed);
        self.thread.join().unwrap();
        (
            self.sent.load(Ordering::Relaxed),
            self.failed.load(Ordering::Relaxed),
        )
    }
}

macro_rules! need_bind {
    () => {
        if !Named::available() {
            eprintln!("skipped: named and nsupdate are not installed");
            return;
        }
    };
}

#[test]
fn srv_records_fill_a_template_and_a_replaced_server_loses_no_request() {
    need_bind!();
    let named = Named::start();
    let (t1, t2, t3) = (Term::start("t1"), Term::start("t2"), Term::start("t3"));
    let port = |t: &Term| t.addr.port();
    named.update(&(srv_add("t1", port(&t1), 10) + &srv_add("t2", port(&t2), 10)));
    let tern = tern_with(
        &format!(
            // Checked: a slot's check must follow its address for the slot to stay up.
            "{{ name = \"web\", count = 4, address = \"_http._tcp.{ZONE}\", resolvers = \"dns\", \
             check = {{ type = \"tcp\", interval = \"100ms\", fall = 1 }} }}"
        ),
        named.addr,
        "obsolete = \"0s\"",
    );
    let addr = tern.addr();
    wait_until(Duration::from_secs(10), "both SRV targets serve", || {
        let seen = spread(addr, 8);
        seen.contains_key("200 t1") && seen.contains_key("200 t2")
    });

    // Replace t1 by t3 while a client runs: the new record first, then the old one removed.
    let load = Load::start(addr, 5_000, Duration::from_secs(30));
    named.update(&srv_add("t3", port(&t3), 10));
    wait_until(Duration::from_secs(10), "t3 serves", || {
        spread(addr, 6).contains_key("200 t3")
    });
    named.update(&srv_delete("t1", port(&t1), 10));
    wait_until(Duration::from_secs(10), "t1 gets nothing", || {
        let seen = spread(addr, 12);
        !seen.contains_key("200 t1") && seen.len() == 2
    });
    let (sent, failed) = load.finish();
    assert!(sent > 20, "the client sent only {sent} requests");
    assert_eq!(
        failed, 0,
        "{failed} of {sent} requests failed while t1 was replaced"
    );

    let counters = tern.stop();
    assert!(counters.get("resolvers dns", "valid") > 0);
    assert!(counters.get("resolvers dns", "changes") >= 4);
    // Two slots hold t2 and t3, the slot t1 had is out, one was never filled.
    let out: u64 = (1..=4)
        .map(|i| counters.get(&format!("server app/web{i}"), "unresolved"))
        .sum();
    assert_eq!(out, 2);
    // Every check ran against the slot's address from DNS, never the placeholder.
    let slots = || (1..=4).map(|i| format!("server app/web{i}"));
    let passed: u64 = slots().map(|s| counters.get(&s, "checks_passed")).sum();
    let failed: u64 = slots().map(|s| counters.get(&s, "checks_failed")).sum();
    assert!(passed > 0);
    assert_eq!(failed, 0);
}

#[test]
fn a_records_fill_slots_a_removed_one_goes_to_maintenance_and_nx_is_held() {
    need_bind!();
    let named = Named::start();
    let a = term_at("a", "127.0.0.2:0");
    let port = a.addr.port();
    let b = term_at("b", &format!("127.0.0.3:{port}"));
    let name = format!("svc.{ZONE}");
    named.update(&format!(
        "update add {name}. 1 A 127.0.0.2\nupdate add {name}. 1 A 127.0.0.3\n"
    ));
    let tern = tern_with(
        &format!("{{ name = \"app\", count = \"1-3\", address = \"{name}:{port}\", resolvers = \"dns\", resolve_prefer = \"ipv4\" }}"),
        named.addr,
        "nx = \"2s\"",
    );
    let addr = tern.addr();
    wait_until(Duration::from_secs(10), "both addresses serve", || {
        let seen = spread(addr, 8);
        seen.contains_key("200 a") && seen.contains_key("200 b")
    });

    named.update(&format!("update delete {name}. A 127.0.0.3\n"));
    wait_until(
        Duration::from_secs(10),
        "b's slot goes to maintenance",
        || spread(addr, 10).keys().collect::<Vec<_>>() == ["200 a"],
    );

    // The name gone: NXDOMAIN, the last answer held for `hold nx`, then no server.
    named.update(&format!("update delete {name}. A\n"));
    let gone = Instant::now();
    assert_eq!(one(addr), (200, "a".to_owned()), "the last answer is held");
    wait_until(
        Duration::from_secs(10),
        "NXDOMAIN takes the server out",
        || one(addr).0 == 503,
    );
    assert!(
        gone.elapsed() >= Duration::from_millis(1500),
        "held only {:?}",
        gone.elapsed()
    );

    named.update(&format!("update add {name}. 1 A 127.0.0.3\n"));
    wait_until(
        Duration::from_secs(10),
        "a new record brings a slot back",
        || one(addr) == (200, "b".to_owned()),
    );
    let counters = tern.stop();
    assert!(counters.get("resolvers dns", "nx") > 0);
    drop((a, b));
}

#[test]
fn an_unanswered_nameserver_is_held_for_hold_timeout_then_the_server_goes_out() {
    let t1 = Term::start("t1");
    // A nameserver that reads queries and never answers.
    let silent = UdpSocket::bind("127.0.0.1:0").unwrap();
    let ns = silent.local_addr().unwrap();
    let tern = tern_with(
        &format!(
            "{{ name = \"s1\", address = \"app.{ZONE}:{}\", resolvers = \"dns\", init_addr = [\"last\", \"127.0.0.1\"] }}",
            t1.addr.port()
        ),
        ns,
        "timeout = \"1500ms\"",
    );
    let addr = tern.addr();
    let started = Instant::now();
    assert_eq!(
        one(addr),
        (200, "t1".to_owned()),
        "the init_addr address serves"
    );
    wait_until(
        Duration::from_secs(10),
        "the timeouts take the server out",
        || one(addr).0 == 503,
    );
    assert!(
        started.elapsed() >= Duration::from_millis(1000),
        "held only {:?}",
        started.elapsed()
    );
    let counters = tern.stop();
    assert!(counters.get("resolvers dns", "timeouts") > 0);
    assert_eq!(counters.get("resolvers dns", "valid"), 0);
    drop(silent);
}

#[test]
fn malformed_replies_are_refused_and_counted_and_the_real_answer_is_used() {
    need_bind!();
    let named = Named::start();
    let t1 = Term::start("t1");
    named.update(&srv_add("t1", t1.addr.port(), 10));
    // Between tern and named: before each real reply, garbage, the reply under another id,
    // and the reply cut short.
    let relay = UdpSocket::bind("127.0.0.1:0").unwrap();
    let relay_addr = relay.local_addr().unwrap();
    relay
        .set_read_timeout(Some(Duration::from_millis(200)))
        .unwrap();
    let stop = Arc::new(AtomicBool::new(false));
    let stopped = Arc::clone(&stop);
    let upstream = named.addr;
    let thread = std::thread::spawn(move || {
        let mut buf = [0u8; 4096];
        let end = Instant::now() + Duration::from_secs(60);
        while !stopped.load(Ordering::Relaxed) && Instant::now() < end {
            let Ok((n, from)) = relay.recv_from(&mut buf) else {
                continue;
            };
            let ask = UdpSocket::bind("127.0.0.1:0").unwrap();
            ask.set_read_timeout(Some(Duration::from_secs(1))).unwrap();
            ask.send_to(&buf[..n], upstream).unwrap();
            let mut answer = [0u8; 4096];
            let Ok(m) = ask.recv(&mut answer) else {
                continue;
            };
            let real = &answer[..m];
            let mut other_id = real.to_vec();
            other_id[0] ^= 0x5a;
            let _ = relay.send_to(b"\x00\x01not dns at all", from);
            let _ = relay.send_to(&other_id, from);
            let _ = relay.send_to(&real[..m / 2], from);
            let _ = relay.send_to(real, from);
        }
    });
    // With the control API's HTTP listener, for the metrics.
    let server = format!(
        "{{ name = \"web\", count = 2, address = \"_http._tcp.{ZONE}\", resolvers = \"dns\" }}"
    );
    let toml = Config::new()
        .global("\n[control]\nhttp = \"127.0.0.1:0\"")
        .raw_server(&server)
        .toml()
        + &resolvers(relay_addr, "obsolete = \"0s\"");
    let tern = Tern::run(&toml);
    let addr = tern.addr();
    wait_until(
        Duration::from_secs(10),
        "the real answer fills a slot",
        || one(addr) == (200, "t1".to_owned()),
    );
    let line = tern
        .proc
        .seen
        .iter()
        .find(|l| l.starts_with("control: http "))
        .cloned();
    let http: SocketAddr = line
        .expect("a control: http line before ready:")
        .trim_start_matches("control: http http://")
        .parse()
        .unwrap();
    let metrics = block_on(get(http, false, "/metrics")).text();
    let sample = |prefix: &str| -> f64 {
        let line = metrics.lines().find(|l| l.starts_with(prefix));
        let value = line
            .and_then(|l| l.rsplit(' ').next())
            .and_then(|v| v.parse().ok());
        value.unwrap_or_else(|| panic!("no {prefix} in:\n{metrics}"))
    };
    assert!(sample("tern_resolver_invalid_replies_total{resolvers=\"dns\"}") >= 3.0);
    assert!(sample("tern_resolver_resolutions_total{resolvers=\"dns\",outcome=\"valid\"}") >= 1.0);
    // The slot no record fills is in maintenance.
    assert_eq!(
        sample("tern_backend_servers{backend=\"app\",status=\"maint\"}"),
        1.0
    );
    let counters = tern.stop();
    stop.store(true, Ordering::Relaxed);
    thread.join().unwrap();
    let invalid = counters.get("resolvers dns", "invalid");
    let valid = counters.get("resolvers dns", "valid");
    assert!(valid > 0);
    assert!(
        invalid >= 3 * valid,
        "{invalid} refused for {valid} answers"
    );
}

/// A HAProxy `.cfg` with a resolvers section and a server-template, for `convert` and `run`.
fn haproxy_cfg(nameserver: SocketAddr) -> String {
    format!(
        "global\n  nbthread 1\ndefaults\n  mode http\n  timeout client 5s\n  timeout server 5s\n  timeout connect 1s\n\
         resolvers dns\n  nameserver ns1 {nameserver}\n  resolve_retries 2\n  timeout resolve 100ms\n  timeout retry 200ms\n  \
         hold valid 100ms\n  hold nx 2s\n  hold obsolete 0s\n  accepted_payload_size 1232\n\
         frontend web\n  bind 127.0.0.1:0\n  default_backend app\n\
         backend app\n  server-template web 3 _http._tcp.{ZONE} resolvers dns init-addr none\n"
    )
}

#[test]
fn a_haproxy_cfg_with_resolvers_converts_and_runs() {
    need_bind!();
    let named = Named::start();
    let t1 = Term::start("t1");
    named.update(&srv_add("t1", t1.addr.port(), 10));
    let dir = temp_dir("dns-cfg");
    let cfg = dir.join("haproxy.cfg");
    std::fs::write(&cfg, haproxy_cfg(named.addr)).unwrap();
    let out = tern_finish(&["convert", cfg.to_str().unwrap()], Duration::from_secs(20));
    assert_eq!(out.code, Some(0), "{out:?}");
    for line in [
        "[[resolvers]]",
        "timeouts.resolve = \"100ms\"",
        "hold.obsolete = \"0ms\"",
        "accepted_payload_size = 1232",
        &format!("{{ name = \"web\", address = \"_http._tcp.{ZONE}\", count = 3, resolvers = \"dns\", init_addr = [\"none\"] }},"),
    ] {
        assert!(out.stdout.lines().any(|l| l.trim() == line), "no {line:?} in:\n{}", out.stdout);
    }
    let tern = Tern::run_file(&dir, "haproxy.cfg", &haproxy_cfg(named.addr));
    let addr = tern.addr();
    wait_until(
        Duration::from_secs(10),
        "the template's slot serves",
        || one(addr) == (200, "t1".to_owned()),
    );
    tern.stop();
}

#[test]
fn check_reports_bad_resolvers_with_file_and_line() {
    let dir = temp_dir("dns-check");
    let toml = Config::new()
        .raw_server(&format!("{{ name = \"s1\", address = \"app.{ZONE}:80\", resolvers = \"nope\", init_addr = [\"none\"] }}"))
        .toml()
        + "\n[[resolvers]]\nname = \"dns\"\nnameservers = [\"ns1.example:53\"]\n";
    let path = dir.join("tern.toml");
    std::fs::write(&path, &toml).unwrap();
    let out = tern_finish(
        &["check", "-c", path.to_str().unwrap()],
        Duration::from_secs(20),
    );
    assert_ne!(out.code, Some(0), "{out:?}");
    let text = format!("{}{}", out.stdout, out.stderr);
    let line_of = |needle: &str| toml.lines().position(|l| l.contains(needle)).unwrap() + 1;
    let p = path.display();
    let server = format!(
        "{p}:{}: backend[0].servers[0].resolvers: no [[resolvers]] named `nope`",
        line_of("nope")
    );
    let ns = format!(
        "{p}:{}: resolvers[0].nameservers[0]: bad nameserver address",
        line_of("ns1.example")
    );
    assert!(text.contains(&server), "no {server:?} in:\n{text}");
    assert!(text.contains(&ns), "no {ns:?} in:\n{text}");
}

#[test]
fn a_reload_keeps_the_last_resolved_address_when_dns_is_gone() {
    need_bind!();
    let named = Named::start();
    let t1 = Term::start("t1");
    named.update(&srv_add("t1", t1.addr.port(), 10));
    // `hold timeout` long enough for the test: without DNS the slots keep their address.
    let server = format!(
        "{{ name = \"web\", count = 2, address = \"_http._tcp.{ZONE}\", resolvers = \"dns\" }}"
    );
    let toml =
        Config::new().raw_server(&server).toml() + &resolvers(named.addr, "timeout = \"30s\"");
    let mut tern = Tern::run(&toml);
    let addr = tern.addr();
    wait_until(Duration::from_secs(10), "the slot serves", || {
        one(addr) == (200, "t1".to_owned())
    });
    drop(named);
    tern.reload(&toml);
    // The new generation starts from the old one's address (`init_addr` defaults to "last")
    // and holds it while the nameserver does not answer.
    for _ in 0..10 {
        assert_eq!(one(addr), (200, "t1".to_owned()));
    }
    tern.stop();
}

#[test]
fn servers_of_one_name_in_two_backends_each_take_its_address() {
    need_bind!();
    let named = Named::start();
    let t1 = Term::start("t1");
    let name = format!("one.{ZONE}");
    named.update(&format!("update add {name}. 1 A 127.0.0.1\n"));
    let server = |s: &str| {
        format!(
            "{{ name = \"{s}\", address = \"{name}:{}\", resolvers = \"dns\", resolve_prefer = \"ipv4\", init_addr = [\"none\"] }}",
            t1.addr.port()
        )
    };
    // The second backend, reached through `use_backend`, names the same host and port.
    let toml = Config::new()
        .frontend("use_backend = [ { backend = \"other\", if = \"{ path_beg /other }\" } ]")
        .raw_server(&server("s1"))
        .toml()
        + &format!(
            "\n[[backend]]\nname = \"other\"\nservers = [ {} ]\n",
            server("s2")
        )
        + &resolvers(named.addr, "obsolete = \"0s\"");
    let tern = Tern::run(&toml);
    let addr = tern.addr();
    wait_until(
        Duration::from_secs(10),
        "both backends' servers serve",
        || {
            let other = block_on(async { get(addr, false, "/other").await.status });
            one(addr) == (200, "t1".to_owned()) && other == 200
        },
    );
    tern.stop();
}
