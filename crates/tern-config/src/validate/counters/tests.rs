//! Counter tables, tracking and counter fetches: what parses into what, and located errors.

#![allow(clippy::unwrap_used)]

use std::time::Duration;

use crate::model::{
    ConnectionAction, Counter, CounterOp, CounterSource, Fetch, HttpAction, TableKey,
};
use crate::test_support::*;

/// `MINIMAL` with a table `per_ip` and the frontend lines `extra`.
fn with_table(extra: &str) -> String {
    format!(
        "{}\n[[table]]\nname = \"per_ip\"\ntype = \"ip\"\nsize = \"1k\"\nexpire = \"30s\"\n\
         store = [\"conn_cur\", \"http_req_rate(10s)\", \"gpc0\"]\n",
        with_frontend_lines(extra)
    )
}

#[test]
fn a_table_tracks_and_its_counters_are_read() {
    let text = with_table(
        r#"http_request = [
  { action = "track-sc0", key = "src", table = "per_ip" },
  { action = "deny", status = 429, if = "{ sc_http_req_rate(0) gt 100 }" },
  { action = "tarpit", if = "{ src_get_gpc0(per_ip) gt 0 }" },
  { action = "silent-drop", if = "{ sc0_conn_cur gt 5 }" },
  { action = "reject", if = "{ sc0_inc_gpc0 gt 9 }" },
]
tcp_request.connection = [
  { action = "track-sc1", key = "src", table = "per_ip" },
  { action = "reject", if = "{ sc1_conn_cur gt 10 }" },
]
rate_limit_sessions = 50
timeouts.tarpit = "2s""#,
    );
    let config = parse_ok(&text);
    let t = &config.tables[0];
    assert_eq!(
        (t.key, t.size, t.expire),
        (TableKey::Ip, 1024, Duration::from_secs(30))
    );
    assert!(t.store.conn_cur && t.store.gpc0);
    assert_eq!(t.store.http_req_rate, Some(Duration::from_secs(10)));
    let fe = &config.frontends[0];
    let HttpAction::Track(track) = &fe.http_request[0].action else {
        panic!("{:?}", fe.http_request[0].action);
    };
    assert_eq!(
        (track.slot, &track.key, track.table.index),
        (0, &Fetch::Src, 0)
    );
    let fetch = fe.http_request[2].condition.fetches().next().unwrap();
    let Fetch::Counter(c) = fetch else {
        panic!("{fetch:?}")
    };
    assert!(matches!(&c.source, CounterSource::Src(t) if t.index == 0));
    assert_eq!(c.op, CounterOp::Get(Counter::Gpc0));
    assert_eq!(
        fe.http_request[2].action,
        HttpAction::Tarpit { status: 500 }
    );
    assert_eq!(fe.http_request[3].action, HttpAction::SilentDrop);
    assert_eq!(fe.http_request[4].action, HttpAction::Reject);
    assert!(matches!(
        fe.tcp_request.connection[0].action,
        ConnectionAction::Track(ref t) if t.slot == 1
    ));
    assert_eq!(fe.rate_limit_sessions, Some(50));
    assert_eq!(fe.timeouts.tarpit, Duration::from_secs(2));
}

#[test]
fn an_unnamed_table_is_the_one_named_like_the_frontend() {
    let text = with_table(r#"http_request = [ { action = "track-sc0", key = "src" } ]"#);
    assert_error(
        &text,
        5,
        "frontend[0].http_request[0]",
        "no [[table]] named `web`",
    );
    let text = with_table(r#"http_request = [ { action = "track-sc0", key = "src" } ]"#)
        .replace("name = \"per_ip\"", "name = \"web\"");
    assert_eq!(parse_ok(&text).frontends[0].http_request.len(), 1);
}

#[test]
fn mistakes_are_located() {
    let text =
        with_table(r#"http_request = [ { action = "track-sc0", key = "src", table = "nope" } ]"#);
    assert_error(
        &text,
        5,
        "frontend[0].http_request[0]",
        "declared are per_ip",
    );
    let text =
        with_table(r#"http_request = [ { action = "deny", if = "{ sc3_conn_cur gt 1 }" } ]"#);
    assert_error(
        &text,
        5,
        "frontend[0].http_request[0].if",
        "slots 0, 1 and 2",
    );
    let text = with_table(
        r#"http_request = [ { action = "deny", if = "{ src_conn_rate(per_ip) gt 1 }" } ]"#,
    );
    assert_error(
        &text,
        5,
        "frontend[0].http_request[0]",
        "does not store conn_rate",
    );
    let text = with_table(
        r#"http_request = [ { action = "track-sc0", key = "src_port", table = "per_ip" } ]"#,
    );
    assert_error(
        &text,
        5,
        "frontend[0].http_request[0].key",
        "unknown fetch `src_port`",
    );
    let text = with_table("").replace("\"http_req_rate(10s)\"", "\"http_req_rate\"");
    assert_error(&text, 16, "table[0].store[1]", "give its period");
    let text = with_table("").replace("type = \"ip\"", "type = \"binary\"");
    assert_error(&text, 13, "table[0].type", "unknown table type `binary`");
    let text =
        with_table(r#"tcp_request.connection = [ { action = "reject", if = "{ path /x }" } ]"#);
    assert_error(
        &text,
        5,
        "frontend[0].tcp_request.connection[0]",
        "is not known when a connection",
    );
}

#[test]
fn global_rate_caps() {
    let config = parse_ok(&with_global("max_conn_rate = 100\nmax_sess_rate = 50"));
    assert_eq!(config.global.max_conn_rate, Some(100));
    assert_eq!(config.global.max_sess_rate, Some(50));
    assert_error(
        &with_global("max_conn_rate = 0"),
        11,
        "global.max_conn_rate",
        "out of range",
    );
}
