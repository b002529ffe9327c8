//! Configuration reloads through the real binary (SIGHUP): a new generation of workers takes
//! over the listening sockets while the old one drains, so a client sees no refused connection
//! and no failed request; binds and servers added by the new file serve at once; a broken file
//! changes nothing; counters add up across generations.

#![allow(clippy::unwrap_used)]

mod support;
use support::*;

use std::collections::HashSet;
use std::time::{Duration, Instant};

fn reload(tern: &mut Tern, toml: &str) -> Vec<(String, std::net::SocketAddr)> {
    tern.reload(toml)
}

/// Waits (bounded) for a line of tern's log containing `needle`.
fn wait_log(tern: &Tern, needle: &str) -> String {
    let deadline = Instant::now() + Duration::from_secs(10);
    loop {
        let text = tern.proc.stderr_text();
        if let Some(line) = text.lines().find(|l| l.contains(needle)) {
            return line.to_owned();
        }
        assert!(
            Instant::now() < deadline,
            "no log line containing {needle:?}:\n{text}"
        );
        std::thread::sleep(Duration::from_millis(20));
    }
}

/// The servers that answered `n` plain GETs to `addr`.
fn servers_seen(addr: std::net::SocketAddr, n: usize) -> HashSet<String> {
    block_on(async {
        let mut seen = HashSet::new();
        for _ in 0..n {
            let got = get(addr, false, "/").await;
            assert_eq!(got.status, 200);
            seen.insert(got.header("x-term-server").unwrap_or("?").to_owned());
        }
        seen
    })
}

#[test]
fn reload_adds_binds_and_servers_and_a_broken_file_changes_nothing() {
    let (a, b) = (Term::start("a"), Term::start("b"));
    let one = Config::new().terms(&[&a]);
    let mut tern = Tern::run(&one.toml());
    let first = tern.addr();
    assert_eq!(servers_seen(first, 4), HashSet::from(["a".to_owned()]));

    // A second bind and a second server.
    let two = Config::new()
        .binds(&["\"127.0.0.1:0\"", "\"127.0.0.1:0\""])
        .terms(&[&a, &b]);
    let binds = reload(&mut tern, &two.toml());
    assert_eq!(binds.len(), 2, "{binds:?}");
    assert_eq!(
        binds[0].1, first,
        "the first bind keeps its socket (and port)"
    );
    let both = HashSet::from(["a".to_owned(), "b".to_owned()]);
    assert_eq!(servers_seen(first, 6), both);
    assert_eq!(servers_seen(binds[1].1, 6), both);

    // A broken file: refused with the reason in the log; everything keeps serving.
    let broken = format!("{}\n[global]\nworkers = \"many\"\n", two.toml());
    std::fs::write(tern.dir.join("tern.toml"), broken).unwrap();
    tern.proc.signal("HUP");
    let line = wait_log(&tern, "reload refused");
    assert!(line.contains("tern.toml"), "{line}");
    assert_eq!(servers_seen(binds[1].1, 2), both);

    let counters = tern.stop_clean();
    assert_eq!(counters.get("reload config", "reloads"), 1);
    assert_eq!(counters.get("reload config", "failed"), 1);
    // Counters add up over both generations, bytes included.
    let (up, down) = (
        counters.get("frontend web", "bytes_in"),
        counters.get("frontend web", "bytes_out"),
    );
    assert!(up > 18 * 16 && down > 18 * 100, "{up} {down}");
    assert_eq!(counters.get("backend app", "bytes_out"), down);
    assert_eq!(counters.get("frontend web", "requests"), 4 + 6 + 6 + 2);
    assert_eq!(
        counters.get("server app/a", "requests") + counters.get("server app/b", "requests"),
        18
    );
}

#[test]
fn a_bind_removed_by_a_reload_stops_listening_at_once() {
    let a = Term::start("a");
    let two = Config::new()
        .binds(&["\"127.0.0.1:0\"", "\"127.0.0.1:0\""])
        .terms(&[&a]);
    let mut tern = Tern::run(&two.toml());
    let (kept, removed) = (tern.binds[0].1, tern.binds[1].1);
    // An idle keep-alive connection keeps the old generation draining meanwhile.
    let _idle = std::net::TcpStream::connect(kept).unwrap();
    let one = Config::new().terms(&[&a]);
    reload(&mut tern, &one.toml());
    let deadline = Instant::now() + Duration::from_secs(5);
    while std::net::TcpStream::connect(removed).is_ok() {
        assert!(
            Instant::now() < deadline,
            "{removed} still accepts connections"
        );
        std::thread::sleep(Duration::from_millis(20));
    }
    assert_eq!(servers_seen(kept, 2).len(), 1);
    tern.stop_clean();
}

#[test]
fn a_keepalive_connection_of_the_old_generation_gets_its_answer_then_closes() {
    let a = Term::start("a");
    let config = Config::new().terms(&[&a]);
    let mut tern = Tern::run(&config.toml());
    let addr = tern.addr();
    block_on(async {
        let mut conn = connect(addr, false).await;
        assert_eq!(send(&mut conn, get_req("/")).await.status, 200);
        let changed = Config::new().terms(&[&a]).backend("retries = 2");
        reload(&mut tern, &changed.toml());
        // The old generation answers the next request and says it closes the connection.
        let last = send(&mut conn, get_req("/")).await;
        assert_eq!(last.status, 200);
        assert_eq!(last.header("connection"), Some("close"));
        // New connections go to the new generation.
        assert_eq!(get(addr, false, "/").await.status, 200);
        drop(conn);
    });
    // With its last connection closed, the old generation ends, and the log says so without
    // waiting for another reload or a runtime API call.
    wait_log(&tern, "the previous generation has ended");
    tern.stop_clean();
}

/// The proof, in small: `tern bench` at a steady rate on keep-alive connections while
/// tern reloads 10 times. No request fails and no connection is refused.
#[test]
fn ten_reloads_under_load_fail_no_request() {
    let (a, b) = (Term::start("a"), Term::start("b"));
    let dir = temp_dir("reload-load");
    let config = |weight: u32| {
        Config::new()
            .server("a", &a.addr.to_string(), 1)
            .server("b", &b.addr.to_string(), weight)
            .toml()
    };
    let mut tern = Tern::run_in(dir.clone(), &config(1));
    let url = format!("http://{}/", tern.addr());
    let load = SteadyLoad::start(&dir, &url, 400, 6);
    std::thread::sleep(Duration::from_millis(500));
    for i in 0..10 {
        reload(&mut tern, &config(1 + i % 3));
        std::thread::sleep(Duration::from_millis(400));
    }
    let report = load.report();
    assert_eq!(report["errors_total"], 0, "{}", report["errors"]);
    let requests = report["requests"].as_u64().unwrap();
    assert!(requests > 1500, "{requests} requests in 6 s at 400/s");
    let counters = tern.stop_clean();
    assert_eq!(counters.get("reload config", "reloads"), 10);
    assert!(counters.get("frontend web", "requests") >= requests);
    assert_eq!(counters.get("frontend web", "resp_5xx"), 0);
}
