//! Stick tables with counters, tracking, abuse actions and rate caps in `.cfg` syntax.

use super::*;

#[test]
fn a_rate_limited_frontend_converts() {
    let c = convert(&format!(
        "global\n  maxconnrate 200\n  maxsessrate 100\n{HEAD}  timeout tarpit 3s\n\
         frontend fe\n  bind :80\n  rate-limit sessions 50\n\
         stick-table type ip size 100k expire 30s store http_req_rate(10s),conn_cur,gpc0\n\
         tcp-request connection track-sc0 src\n\
         tcp-request connection reject if {{ sc0_conn_cur gt 10 }}\n\
         http-request track-sc1 src table per_path\n\
         http-request deny deny_status 429 if {{ sc_http_req_rate(0) gt 100 }}\n\
         http-request tarpit if {{ src_get_gpc0 gt 0 }}\n\
         http-request silent-drop if {{ path /drop }}\n\
         http-request reject if {{ path /reject }}\n\
         default_backend app\n\
         backend app\n  server s 10.0.0.1:80\n\
         backend per_path\n  stick-table type string len 64 size 1k expire 1m store http_req_cnt\n"
    ));
    for line in [
        "max_conn_rate = 200",
        "max_sess_rate = 100",
        "rate_limit_sessions = 50",
        "timeouts.tarpit = \"3s\"",
        "name = \"per_path\"",
        "store = [\"http_req_rate(10s)\", \"conn_cur\", \"gpc0\"]",
        "{ action = \"track-sc0\", key = \"src\" },",
        "{ action = \"track-sc1\", key = \"src\", table = \"per_path\" },",
        "{ action = \"tarpit\", if = \"{ src_get_gpc0 gt 0 }\" },",
    ] {
        assert_has(&c, line);
    }
    assert_eq!(warned(&c.warnings), ["25: stick-table ... len"]);
    let config = validate(&c);
    assert_eq!(config.tables.len(), 2);
    assert_eq!(
        config.backends.len(),
        1,
        "the table-only backend is a table"
    );
    assert_eq!(config.frontends[0].tcp_request.connection.len(), 2);
}

#[test]
fn a_counter_mistake_names_its_cfg_line() {
    let e = check_errors(&format!(
        "{HEAD}frontend fe\n  bind :80\n  http-request track-sc0 src\n  default_backend app\n\
         backend app\n  server s 10.0.0.1:80\n"
    ));
    assert!(
        e[0].starts_with("haproxy.cfg:8: frontend fe: http_request[0]: no [[table]] named `fe`"),
        "{e:?}"
    );
}
