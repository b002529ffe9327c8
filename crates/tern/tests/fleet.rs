//! A fleet of tern nodes (issue 22): three nodes as three hosts, each in a network namespace
//! with an address of its own, in front of three `tern term` servers on a fourth host, and a
//! client (the test) spreading its connections across the nodes. What the nodes share without
//! talking to each other is checked here: a TLS session made on one node resumes on every
//! other (one `ticket_key_file` on all), an inserted persistence cookie sends a client to the
//! same server whichever node it reaches, and one node killed mid-traffic costs only the
//! requests sent to it. Each check prints a `fleet:` line with its figures; `bench/fleet.sh`
//! runs this file and collects them.
//!
//! Needs root (network namespaces): `.ci/run` runs as root; elsewhere the test says why it
//! skipped.

#![allow(clippy::unwrap_used)]

mod support;
use support::fabric::{Fabric, Host};
use support::tls_client::s_client;
use support::*;

use std::io::Write;
use std::net::{SocketAddr, TcpStream};
use std::path::Path;
use std::time::Duration;

use tern_tls::KeyKind;

/// One ticket key in the 48-byte form (16-byte name, 32-byte key), base64: the file every
/// node reads.
const TICKET_KEY: &str = "dGVybi1mbGVldC1rZXkwMQABAgMEBQYHCAkKCwwNDg8QERITFBUWFxgZGhscHR4f";

/// How long one exchange may take.
const WAIT: Duration = Duration::from_secs(5);

/// The servers, by name and port, on the servers' host.
const SERVERS: [(&str, u16); 3] = [("s1", 9001), ("s2", 9002), ("s3", 9003)];

/// The plain and TLS ports of every node.
const PLAIN: u16 = 8080;
const TLS: u16 = 8443;

/// A fleet: the fabric, the servers' host with its `tern term`s, and the nodes.
struct Fleet {
    nodes: Vec<Node>,
    _terms: Vec<Proc>,
    _servers: Host,
    // Last: the namespaces go once every process in them is gone.
    _fabric: Fabric,
}

/// One tern node; `proc` is `None` once it was killed.
struct Node {
    host: Host,
    proc: Option<Proc>,
}

impl Node {
    fn plain(&self) -> SocketAddr {
        SocketAddr::from((self.host.addr, PLAIN))
    }

    fn tls(&self) -> SocketAddr {
        SocketAddr::from((self.host.addr, TLS))
    }
}

impl Fleet {
    /// `nodes` tern nodes in front of [`SERVERS`], or `None` where namespaces cannot be made.
    fn start(name: &str, nodes: u8) -> Option<Fleet> {
        let mut fabric = Fabric::create(name)?;
        let dir = temp_dir("fleet");
        let servers = fabric.host(0);
        let terms = SERVERS
            .iter()
            .map(|(name, port)| {
                let listen = format!("{}:{port}", servers.addr);
                let mut term = servers.tern(&["term", "--listen", &listen, "--name", name], &dir);
                term.wait_line("ready:");
                term
            })
            .collect();
        write_cert(&dir, "site", KeyKind::EcdsaP256);
        std::fs::write(dir.join("tickets.key"), format!("{TICKET_KEY}\n")).unwrap();
        let nodes = (1..=nodes)
            .map(|n| {
                let host = fabric.host(n);
                let node_dir = dir.join(format!("node{n}"));
                std::fs::create_dir_all(&node_dir).unwrap();
                let config = node_config(&host, &servers, &dir);
                let path = node_dir.join("tern.toml");
                std::fs::write(&path, config).unwrap();
                let mut proc = host.tern(&["run", "-c", path.to_str().unwrap()], &node_dir);
                proc.wait_line("ready:");
                Node {
                    host,
                    proc: Some(proc),
                }
            })
            .collect();
        Some(Fleet {
            nodes,
            _terms: terms,
            _servers: servers,
            _fabric: fabric,
        })
    }
}

/// A node's configuration: a plain and a TLS frontend on its own address, the servers, an
/// inserted persistence cookie, and the fleet's ticket key file.
fn node_config(host: &Host, servers: &Host, shared: &Path) -> String {
    let cert = shared.join("site.pem");
    let keys = shared.join("tickets.key");
    let list: Vec<String> = SERVERS
        .iter()
        .map(|(name, port)| {
            format!(
                "{{ name = \"{name}\", address = \"{}:{port}\" }}",
                servers.addr
            )
        })
        .collect();
    format!(
        r#"[global]
workers = 1

[[frontend]]
name = "web"
bind = ["{addr}:{PLAIN}"]
default_backend = "app"

[[frontend]]
name = "secure"
bind = ["{addr}:{TLS}"]
default_backend = "app"
tls = {{ certs = ["{cert}"], resumption = {{ ticket_key_file = "{keys}" }} }}

[[backend]]
name = "app"
cookie = {{ name = "SRV" }}
servers = [
  {list}
]
"#,
        addr = host.addr,
        cert = cert.display(),
        keys = keys.display(),
        list = list.join(",\n  "),
    )
}

/// A response as the client saw it: status, the server that answered, the cookie set.
#[derive(Debug, Default)]
struct Seen {
    status: Option<u16>,
    server: Option<String>,
    set_cookie: Option<String>,
}

/// One GET on a new plain connection to `addr`, carrying `cookie` if given.
fn get(addr: SocketAddr, cookie: Option<&str>) -> Seen {
    let Ok(mut conn) = TcpStream::connect_timeout(&addr, WAIT) else {
        return Seen::default();
    };
    let cookie = cookie.map_or(String::new(), |c| format!("Cookie: {c}\r\n"));
    let request = format!("GET / HTTP/1.1\r\nHost: fleet\r\n{cookie}Connection: close\r\n\r\n");
    if conn.write_all(request.as_bytes()).is_err() {
        return Seen::default();
    }
    let raw = read_until_closed(&mut conn, WAIT);
    let text = raw.text();
    let header = |name: &str| {
        text.lines().take_while(|l| !l.is_empty()).find_map(|l| {
            let (n, v) = l.split_once(':')?;
            n.eq_ignore_ascii_case(name).then(|| v.trim().to_owned())
        })
    };
    Seen {
        status: raw.status(),
        server: header("x-term-server"),
        set_cookie: header("set-cookie"),
    }
}

#[test]
fn tls_sessions_resume_on_every_node_of_the_fleet() {
    let Some(fleet) = Fleet::start("fleet", 3) else {
        return;
    };
    let dir = temp_dir("fleet-sessions");
    let (mut full, mut resumed, mut tried) = (0, 0, 0);
    for (i, first) in fleet.nodes.iter().enumerate() {
        let saved = dir.join(format!("session-{i}.pem"));
        let out = saved.to_str().unwrap();
        let made = s_client(
            first.tls(),
            Some("localhost"),
            &["-sess_out", out],
            Some(CLOSE),
        );
        assert!(made.ok && made.new_session(), "{}", made.out);
        full += 1;
        for other in fleet
            .nodes
            .iter()
            .filter(|n| n.host.addr != first.host.addr)
        {
            let args = ["-sess_in", out];
            let again = s_client(other.tls(), Some("localhost"), &args, Some(CLOSE));
            assert!(again.ok, "{}", again.out);
            tried += 1;
            resumed += usize::from(again.reused());
        }
    }
    println!("fleet: sessions made {full}, resumed on another node {resumed} of {tried}");
    assert_eq!(resumed, tried, "every session resumes on every other node");
}

/// A request on a new TLS connection that closes after the response.
const CLOSE: &[u8] = b"GET / HTTP/1.1\r\nHost: fleet\r\nConnection: close\r\n\r\n";

#[test]
fn a_persistence_cookie_holds_on_every_node() {
    let Some(fleet) = Fleet::start("cookie", 3) else {
        return;
    };
    // Each client gets its cookie from one node, then comes back through every node.
    let (mut held, mut tried) = (0, 0);
    for round in 0..SERVERS.len() * 2 {
        let first = &fleet.nodes[round % fleet.nodes.len()];
        let seen = get(first.plain(), None);
        assert_eq!(seen.status, Some(200), "{seen:?}");
        let cookie = seen.set_cookie.expect("an inserted cookie");
        let cookie = cookie.split(';').next().unwrap().to_owned();
        let server = seen.server.expect("the server's name");
        for node in &fleet.nodes {
            let again = get(node.plain(), Some(&cookie));
            tried += 1;
            held += usize::from(again.server.as_deref() == Some(server.as_str()));
        }
    }
    println!("fleet: cookie persistence held on {held} of {tried} requests across nodes");
    assert_eq!(held, tried);
}

#[test]
fn a_crashed_node_costs_only_its_own_requests() {
    let Some(mut fleet) = Fleet::start("crash", 3) else {
        return;
    };
    // Requests spread round-robin over the nodes; node 3 is killed (SIGKILL) halfway.
    const ROUNDS: usize = 150;
    let mut failed = [0usize; 3];
    let mut sent = [0usize; 3];
    for round in 0..ROUNDS {
        if round == ROUNDS / 2 {
            let victim = fleet.nodes[2].proc.take().unwrap();
            victim.signal("KILL");
            drop(victim);
        }
        let n = round % 3;
        let seen = get(fleet.nodes[n].plain(), None);
        sent[n] += 1;
        failed[n] += usize::from(seen.status != Some(200));
    }
    println!(
        "fleet: node crash: failed requests per node {failed:?} of {sent:?} (node 3 killed halfway)"
    );
    assert_eq!(
        failed[0] + failed[1],
        0,
        "the surviving nodes lost requests"
    );
    assert!(
        failed[2] > 0,
        "requests to the killed node cannot have succeeded"
    );
}
