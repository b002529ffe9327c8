#![allow(clippy::unwrap_used)]

use std::net::{IpAddr, Ipv4Addr};
use std::path::Path;
use std::rc::Rc;

use tern_h1::{parse_request, Limits, RequestHead};

use super::*;

fn backends(lines: &str) -> Vec<Backend> {
    let text = format!(
        "[[frontend]]\nname = \"f\"\nbind = [\"127.0.0.1:0\"]\ndefault_backend = \"b\"\n\
         [[backend]]\nname = \"b\"\n{lines}\n"
    );
    tern_config::parse(&text, Path::new("test.toml"))
        .unwrap()
        .backends
}

const SERVERS: &str = "servers = [ { name = \"a\", address = \"127.0.0.1:1\" }, \
    { name = \"b\", address = \"127.0.0.1:2\" }, { name = \"c\", address = \"127.0.0.1:3\" } ]";

/// The balancers of one worker for a backend with these lines, with fresh shared state.
fn balancers(lines: &str, seed: u64) -> Rc<Balancers> {
    let backends = backends(lines);
    let states = crate::exchange::servers::for_backends(&backends);
    Rc::new(Balancers::new(&backends, states, seed).unwrap())
}

fn head(request: &[u8]) -> RequestHead {
    let mut head = RequestHead::new();
    parse_request(request, &Limits::default(), &mut head).unwrap();
    head
}

const CLIENT: IpAddr = IpAddr::V4(Ipv4Addr::new(192, 0, 2, 7));

#[test]
fn roundrobin_spreads_and_in_flight_guards_count() {
    let b = balancers(SERVERS, 0);
    let req = b"GET / HTTP/1.1\r\nHost: x\r\n\r\n";
    let h = head(req);
    let picks: Vec<usize> = (0..6)
        .map(|_| {
            b.pick(0, Some((&h, req)), CLIENT, Placement::default())
                .unwrap()
                .server()
        })
        .collect();
    for s in 0..3 {
        assert_eq!(picks.iter().filter(|&&p| p == s).count(), 2, "{picks:?}");
    }
    let held = b
        .pick(0, Some((&h, req)), CLIENT, Placement::default())
        .unwrap();
    assert_eq!(b.list.borrow()[0].inflight(held.server()), 1);
    let server = held.server();
    drop(held);
    assert_eq!(b.list.borrow()[0].inflight(server), 0);
}

#[test]
fn leastconn_avoids_the_busy_server() {
    let b = balancers(&format!("balance = \"leastconn\"\n{SERVERS}"), 0);
    let req = b"GET / HTTP/1.1\r\nHost: x\r\n\r\n";
    let h = head(req);
    let first = b
        .pick(0, Some((&h, req)), CLIENT, Placement::default())
        .unwrap();
    let second = b
        .pick(0, Some((&h, req)), CLIENT, Placement::default())
        .unwrap();
    let third = b
        .pick(0, Some((&h, req)), CLIENT, Placement::default())
        .unwrap();
    let mut busy = vec![first.server(), second.server(), third.server()];
    busy.sort_unstable();
    assert_eq!(busy, [0, 1, 2]);
    let freed = second.server();
    drop(second);
    assert_eq!(
        b.pick(0, Some((&h, req)), CLIENT, Placement::default())
            .unwrap()
            .server(),
        freed
    );
}

#[test]
fn hashing_reads_the_key_it_names() {
    let cases = [
        (
            "balance = \"uri\"",
            &b"GET /a/b?x=1 HTTP/1.1\r\nHost: x\r\n\r\n"[..],
            &b"GET /a/b?x=2 HTTP/1.1\r\nHost: x\r\n\r\n"[..],
        ),
        (
            "balance = \"url_param(user)\"",
            b"GET /p?user=ann&z=1 HTTP/1.1\r\nHost: x\r\n\r\n",
            b"GET /q?z=2&user=ann HTTP/1.1\r\nHost: x\r\n\r\n",
        ),
        (
            "balance = \"hdr(X-Tenant)\"",
            b"GET /1 HTTP/1.1\r\nHost: x\r\nx-tenant: t9\r\n\r\n",
            b"GET /2 HTTP/1.1\r\nX-TENANT: t9\r\nHost: y\r\n\r\n",
        ),
        (
            "balance = \"source\"\nhash_type = \"consistent\"",
            b"GET /1 HTTP/1.1\r\nHost: x\r\n\r\n",
            b"GET /2 HTTP/1.1\r\nHost: y\r\n\r\n",
        ),
    ];
    for (balance, one, other) in cases {
        let b = balancers(&format!("{balance}\n{SERVERS}"), 3);
        let (h1, h2) = (head(one), head(other));
        let s1 = b
            .pick(0, Some((&h1, one)), CLIENT, Placement::default())
            .unwrap()
            .server();
        for _ in 0..5 {
            assert_eq!(
                b.pick(0, Some((&h2, other)), CLIENT, Placement::default())
                    .unwrap()
                    .server(),
                s1,
                "{balance}"
            );
        }
    }
}

#[test]
fn backups_serve_only_when_every_active_server_is_down() {
    let lines = "servers = [ { name = \"a\", address = \"127.0.0.1:1\" }, \
        { name = \"spare\", address = \"127.0.0.1:2\", backup = true } ]";
    let b = balancers(lines, 0);
    let req = b"GET / HTTP/1.1\r\nHost: x\r\n\r\n";
    let h = head(req);
    for _ in 0..4 {
        assert_eq!(
            b.pick(0, Some((&h, req)), CLIENT, Placement::default())
                .unwrap()
                .server(),
            0
        );
    }
    b.list.borrow_mut()[0].set_usable(0, false);
    assert_eq!(
        b.pick(0, Some((&h, req)), CLIENT, Placement::default())
            .unwrap()
            .server(),
        1
    );
}

#[test]
fn targets_split_and_names_hash_stably() {
    assert_eq!(split_target(b"/a?b=c"), (&b"/a"[..], Some(&b"b=c"[..])));
    assert_eq!(split_target(b"/a"), (&b"/a"[..], None));
    // FNV-1a test vector: "a" -> 0xaf63dc4c8601ec8c.
    assert_eq!(name_hash("a"), 0xaf63_dc4c_8601_ec8c);
}
