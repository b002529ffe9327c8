//! Session resumption through the real binary: `openssl s_client -sess_out` then `-sess_in`
//! resumes (TLS 1.3 and 1.2); with tickets off and no cache nothing resumes; two tern instances
//! given the same `ticket_key_file` resume each other's sessions (and one with another key does
//! not); the stateful cache resumes when tickets are off, across workers. Every resumption is
//! also checked in tern's `tls_full` / `tls_resumed` counters.

#![allow(clippy::unwrap_used)]

mod support;
use support::tls_client::*;
use support::*;

use std::net::SocketAddr;
use std::path::Path;

use rustls::version::{TLS12, TLS13};
use rustls::HandshakeKind;
use tern_tls::KeyKind;

/// Two ticket keys in the 48-byte form (16-byte name, 32-byte key), base64.
const KEY_ONE: &str = "dGVybi10ZXN0LWtleS0wMQABAgMEBQYHCAkKCwwNDg8QERITFBUWFxgZGhscHR4f";
const KEY_TWO: &str = "dGVybi10ZXN0LWtleS0wMmRlZmdoaWprbG1ub3BxcnN0dXZ3eHl6e3x9fn+AgYKD";

/// tern in `dir` (where `site.pem` is written if absent) with two workers and this
/// `resumption` table (`None`: the defaults).
fn tern_with(dir: &Path, resumption: Option<&str>) -> Tern {
    if !dir.join("site.pem").exists() {
        write_cert(dir, "site", KeyKind::EcdsaP256);
    }
    let extra = resumption.map_or(String::new(), |r| format!(", resumption = {r}"));
    let mut cfg = Config::new().frontend(&format!("tls = {{ certs = [\"site.pem\"]{extra} }}"));
    cfg.global = vec!["workers = 2".into()];
    Tern::run_in(dir.to_path_buf(), &cfg.toml())
}

/// One `s_client` connection that sends a request (so a TLS 1.3 ticket arrives with the
/// response), saving the session to `sess_out` and resuming from `sess_in` when given.
fn openssl_session(
    addr: SocketAddr,
    version: &str,
    sess_in: Option<&Path>,
    sess_out: Option<&Path>,
) -> SClient {
    let mut args = vec![version.to_owned()];
    if let Some(path) = sess_in {
        args.extend(["-sess_in".to_owned(), path.to_str().unwrap().to_owned()]);
    }
    if let Some(path) = sess_out {
        args.extend(["-sess_out".to_owned(), path.to_str().unwrap().to_owned()]);
    }
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    let s = s_client(addr, Some("localhost"), &args, Some(CLOSE_REQUEST));
    assert!(s.ok, "{args:?}:\n{}", s.out);
    assert!(s.out.contains("HTTP/1.1 200"), "{args:?}:\n{}", s.out);
    s
}

/// A full handshake saving its session, then `resumes` connections resuming it; whether each
/// of those was reused. With `chain`, each connection resumes the session saved by the one
/// before when it saved one (a stateful TLS 1.3 session is single-use: the resumption gets a new
/// one; a TLS 1.2 session ID resumed gives none).
fn openssl_resumes(addr: SocketAddr, version: &str, resumes: usize, chain: bool) -> Vec<bool> {
    let dir = temp_dir("sess");
    let sess = |i: usize| dir.join(format!("session-{i}.pem"));
    let first = openssl_session(addr, version, None, Some(&sess(0)));
    assert!(first.new_session(), "{}", first.out);
    assert!(
        sess(0).exists(),
        "{version}: no session saved:\n{}",
        first.out
    );
    let mut from = sess(0);
    (1..=resumes)
        .map(|i| {
            let reused = openssl_session(addr, version, Some(&from), Some(&sess(i))).reused();
            if chain && sess(i).exists() {
                from = sess(i);
            }
            reused
        })
        .collect()
}

#[test]
fn openssl_sess_out_then_sess_in_is_reused() {
    if !have("openssl") {
        println!("skipped: openssl not installed");
        return;
    }
    let tern = tern_with(&temp_dir("res-openssl"), None);
    // Three resumptions each: with two workers, tickets from one worker resume on the other.
    for version in ["-tls1_3", "-tls1_2"] {
        let reused = openssl_resumes(tern.addr(), version, 3, false);
        assert_eq!(reused, [true; 3], "{version}");
    }
    let c = tern.stop_clean();
    assert_eq!(c.get("frontend web", "tls_full"), 2, "{c:?}");
    assert_eq!(c.get("frontend web", "tls_resumed"), 6, "{c:?}");
}

#[tokio::test]
async fn tickets_off_without_cache_never_resumes() {
    let tern = tern_with(&temp_dir("res-off"), Some("{ tickets = false }"));
    for version in [&TLS13, &TLS12] {
        let client = rustls_client(&[version], true);
        for _ in 0..3 {
            let n = handshake_and_get(tern.addr(), client.clone(), "localhost").await;
            assert_eq!(n.kind, Some(HandshakeKind::Full), "{version:?}");
        }
    }
    let mut full = 6;
    if have("openssl") {
        for version in ["-tls1_3", "-tls1_2"] {
            let sess = temp_dir("sess").join("session.pem");
            let first = openssl_session(tern.addr(), version, None, Some(&sess));
            assert!(first.new_session(), "{}", first.out);
            full += 1;
            // TLS 1.3 without a ticket leaves nothing to save; a TLS 1.2 session without an
            // ID or a ticket is saved but cannot resume.
            if sess.exists() {
                let again = openssl_session(tern.addr(), version, Some(&sess), None);
                assert!(
                    again.new_session() && !again.reused(),
                    "{version}:\n{}",
                    again.out
                );
                full += 1;
            }
        }
    } else {
        println!("openssl part skipped: openssl not installed");
    }
    let c = tern.stop_clean();
    assert_eq!(c.get("frontend web", "tls_full"), full, "{c:?}");
    assert_eq!(c.get("frontend web", "tls_resumed"), 0, "{c:?}");
}

#[tokio::test]
async fn instances_sharing_a_ticket_key_file_resume_each_other() {
    let dir = temp_dir("res-keyfile");
    let other = temp_dir("res-keyfile-other");
    std::fs::write(
        dir.join("tickets.key"),
        format!("# shared\n{KEY_ONE}\n{KEY_TWO}\n"),
    )
    .unwrap();
    std::fs::copy(dir.join("tickets.key"), other.join("tickets.key")).unwrap();
    write_cert(&dir, "site", KeyKind::EcdsaP256);
    std::fs::copy(dir.join("site.pem"), other.join("site.pem")).unwrap();
    let shared = Some("{ ticket_key_file = \"tickets.key\" }");
    let one = tern_with(&dir, shared);
    let two = tern_with(&other, shared);
    // A third instance whose first key is another one: it cannot open tickets of KEY_ONE.
    let stranger_dir = temp_dir("res-keyfile-stranger");
    std::fs::write(stranger_dir.join("tickets.key"), format!("{KEY_TWO}\n")).unwrap();
    let stranger = tern_with(&stranger_dir, shared);

    for version in [&TLS13, &TLS12] {
        // rustls keeps sessions by server name, so the client offers instance 1's ticket to
        // instance 2 and to the stranger.
        let client = rustls_client(&[version], true);
        let n = handshake_and_get(one.addr(), client.clone(), "localhost").await;
        assert_eq!(n.kind, Some(HandshakeKind::Full), "{version:?}");
        let n = handshake_and_get(two.addr(), client.clone(), "localhost").await;
        assert_eq!(
            n.kind,
            Some(HandshakeKind::Resumed),
            "{version:?} on instance 2"
        );
        let client = rustls_client(&[version], true);
        handshake_and_get(one.addr(), client.clone(), "localhost").await;
        let n = handshake_and_get(stranger.addr(), client, "localhost").await;
        assert_eq!(
            n.kind,
            Some(HandshakeKind::Full),
            "{version:?} on the stranger"
        );
    }
    let (mut full_one, mut resumed_two) = (4, 2);
    if have("openssl") {
        for version in ["-tls1_3", "-tls1_2"] {
            let sess = temp_dir("sess").join("session.pem");
            let first = openssl_session(one.addr(), version, None, Some(&sess));
            assert!(first.new_session(), "{}", first.out);
            let again = openssl_session(two.addr(), version, Some(&sess), None);
            assert!(again.reused(), "{version} on instance 2:\n{}", again.out);
        }
        full_one += 2;
        resumed_two += 2;
    } else {
        println!("openssl part skipped: openssl not installed");
    }
    let c = one.stop_clean();
    assert_eq!(c.get("frontend web", "tls_full"), full_one, "{c:?}");
    let c = two.stop_clean();
    assert_eq!(c.get("frontend web", "tls_full"), 0, "{c:?}");
    assert_eq!(c.get("frontend web", "tls_resumed"), resumed_two, "{c:?}");
    let c = stranger.stop_clean();
    assert_eq!(c.get("frontend web", "tls_resumed"), 0, "{c:?}");
}

#[tokio::test]
async fn the_stateful_cache_resumes_when_tickets_are_off() {
    let tern = tern_with(
        &temp_dir("res-cache"),
        Some("{ tickets = false, cache_size = 100 }"),
    );
    // Four connections each: with two workers the cache must be shared for every one of the
    // reconnections to resume.
    for version in [&TLS13, &TLS12] {
        let client = rustls_client(&[version], true);
        let mut kinds = Vec::new();
        for _ in 0..4 {
            kinds.push(
                handshake_and_get(tern.addr(), client.clone(), "localhost")
                    .await
                    .kind,
            );
        }
        let mut expected = vec![Some(HandshakeKind::Resumed); 4];
        expected[0] = Some(HandshakeKind::Full);
        assert_eq!(kinds, expected, "{version:?}");
    }
    let (mut full, mut resumed) = (2, 6);
    if have("openssl") {
        for version in ["-tls1_3", "-tls1_2"] {
            let reused = openssl_resumes(tern.addr(), version, 2, true);
            assert_eq!(reused, [true; 2], "{version}");
        }
        // A TLS 1.3 session kept by the server is single-use (RFC 8446, 8.1: no replay of
        // the early secret): offering the first one again gets a full handshake. TLS 1.2
        // session IDs stay in the cache.
        let dir = temp_dir("sess");
        let first = openssl_session(tern.addr(), "-tls1_3", None, Some(&dir.join("s.pem")));
        assert!(first.new_session(), "{}", first.out);
        let again = openssl_session(tern.addr(), "-tls1_3", Some(&dir.join("s.pem")), None);
        assert!(again.reused(), "{}", again.out);
        let replay = openssl_session(tern.addr(), "-tls1_3", Some(&dir.join("s.pem")), None);
        assert!(
            replay.new_session(),
            "single-use session reused:\n{}",
            replay.out
        );
        let tls12 = openssl_resumes(tern.addr(), "-tls1_2", 2, false);
        assert_eq!(tls12, [true; 2], "TLS 1.2 session ID offered twice");
        full += 2 + 1 + 1 + 1;
        resumed += 4 + 1 + 2;
    } else {
        println!("openssl part skipped: openssl not installed");
    }
    let c = tern.stop_clean();
    assert_eq!(c.get("frontend web", "tls_full"), full, "{c:?}");
    assert_eq!(c.get("frontend web", "tls_resumed"), resumed, "{c:?}");
}
