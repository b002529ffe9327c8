//! `http_auth` and the `auth` action on parsed heads: which userlists a frontend checks, the
//! verdict, and the challenge written into an answer.

#![allow(clippy::unwrap_used)]

use tern_auth::{Authenticator, Limits};
use tern_h1::HeaderEdits;

use super::auth::{self, AuthSeen};
use super::facts::RequestFacts;
use super::tests::{config, head, CONN};
use super::*;

/// Frontend rules asking for a user of `L` on `/admin`, backend `api` for a user of group ops
/// in `M`; `plain:elgato` is in both lists, `ops:pw` only in `M`, in group ops.
fn cfg() -> Config {
    let mut text = String::from(
        "default_backend = \"web\"\nuse_backend = [{ backend = \"api\", if = \"{ path_beg /api/ }\" }]\n\
         http_request = [{ action = \"auth\", if = \"{ path_beg /admin } !{ http_auth(L) }\" }]",
    );
    text.push_str("\n[[userlist]]\nname = \"L\"\nusers = [{ name = \"plain\", insecure_password = \"elgato\" }]\n");
    text.push_str(
        "[[userlist]]\nname = \"M\"\ngroups = [{ name = \"ops\" }]\n\
         users = [{ name = \"plain\", insecure_password = \"elgato\" }, \
         { name = \"ops\", insecure_password = \"pw\", groups = [\"ops\"] }]\n",
    );
    config(
        &text,
        "http_request = [{ action = \"auth\", realm = \"API\", unless = \"{ http_auth_group(M) ops }\" }]",
    )
}

/// The verdict of the request `raw` after its credentials were checked.
async fn verdict(cfg: &Config, raw: &str) -> (String, Option<usize>) {
    let routing = Routing::build(cfg).unwrap();
    let authenticator = Authenticator::new(
        &cfg.userlists,
        Limits {
            checks: 1,
            waiting: 1,
        },
    );
    let head = head(raw);
    let mut users = Vec::new();
    auth::check(
        &authenticator,
        routing[0].auth_lists(),
        &head,
        raw.as_bytes(),
        &mut users,
    )
    .await;
    let facts = RequestFacts {
        head: &head,
        buf: raw.as_bytes(),
        conn: &CONN,
        sni: None,
        pp_tlvs: None,
        vars: &std::cell::RefCell::default(),
        auth: AuthSeen {
            lists: &cfg.userlists,
            users: &users,
        },
    };
    let mut edits = HeaderEdits::new();
    let (v, backend) = route_request(cfg, &cfg.frontends[0], &routing[0], &facts, &mut edits);
    (format!("{v:?}"), backend)
}

fn request(path: &str, creds: Option<&str>) -> String {
    let auth = creds.map_or(String::new(), |c| format!("Authorization: Basic {c}\r\n"));
    format!("GET {path} HTTP/1.1\r\nHost: a\r\n{auth}\r\n")
}

#[test]
fn a_frontend_checks_the_lists_its_rules_and_backends_read() {
    let cfg = cfg();
    assert_eq!(Routing::build(&cfg).unwrap()[0].auth_lists(), [0, 1]);
    assert!(auth::authenticator(&cfg).is_some());
    let plain = config("default_backend = \"web\"", "");
    assert!(Routing::build(&plain).unwrap()[0].auth_lists().is_empty());
    assert!(
        auth::authenticator(&plain).is_none(),
        "no rule reads http_auth"
    );
}

#[tokio::test]
async fn credentials_decide_the_verdict() {
    let cfg = cfg();
    // "plain:elgato", "plain:nope", "ops:pw" in base64.
    let (good, bad, ops) = ("cGxhaW46ZWxnYXRv", "cGxhaW46bm9wZQ==", "b3BzOnB3");
    let frontend_realm = "Auth(\"f\")";
    assert_eq!(
        verdict(&cfg, &request("/admin", None)).await.0,
        frontend_realm
    );
    assert_eq!(
        verdict(&cfg, &request("/admin", Some(bad))).await.0,
        frontend_realm
    );
    assert_eq!(
        verdict(&cfg, &request("/admin", Some(good))).await.0,
        "Pass"
    );
    assert_eq!(verdict(&cfg, &request("/", None)).await.0, "Pass");
    // The backend's rule: a user of M in group ops.
    assert_eq!(
        verdict(&cfg, &request("/api/x", Some(good))).await.0,
        "Auth(\"API\")"
    );
    assert_eq!(
        verdict(&cfg, &request("/api/x", Some(ops))).await,
        ("Pass".into(), Some(1))
    );
}

#[test]
fn the_challenge_follows_the_status_line() {
    let mut out = b"earlier".to_vec();
    let start = out.len();
    out.extend_from_slice(b"HTTP/1.1 401 Unauthorized\r\ncontent-length: 0\r\n\r\n");
    auth::add_challenge(&mut out, start, "Admin Area");
    assert_eq!(
        out,
        b"earlierHTTP/1.1 401 Unauthorized\r\nwww-authenticate: Basic realm=\"Admin Area\"\r\n\
          content-length: 0\r\n\r\n"
    );
}
