//! One keyword at a time: what each becomes.

use super::*;

fn backend(body: &str) -> Converted {
    convert(&format!(
        "{HEAD}frontend f\n  bind :80\n  default_backend app\nbackend app\n{body}"
    ))
}

#[test]
fn global_process_settings() {
    let c = convert(&format!(
        "global\n  nbthread 2\n  cpu-map auto:1/1-2 0-1\n  maxconn 5000\n  maxsslrate 300\n  hard-stop-after 1m\n\
         profiling.tasks on\n{HEAD}frontend f\n  bind :80\n  default_backend b\nbackend b\n  server s 10.0.0.1:80\n"
    ));
    assert!(c.warnings.is_empty(), "{:?}", c.warnings);
    for line in [
        "workers = 2",
        "cpus = [0, 1]",
        "maxconn = 5000",
        "max_tls_handshake_rate = 300",
        "hard_stop_after = \"1m\"",
        "profiling = true",
    ] {
        assert_has(&c, line);
    }
    let config = validate(&c);
    assert_eq!(config.global.cpus, Some(vec![0, 1]));
}

#[test]
fn tune_keywords() {
    let c = convert(&format!(
        "global\n  tune.bufsize 32768\n  tune.http.maxhdr 200\n  tune.maxaccept 10\n{HEAD}frontend f\n  bind :80\n  default_backend b\nbackend b\n  server s 10.0.0.1:80\n"
    ));
    assert_eq!(
        warned(&c.warnings),
        ["2: tune.bufsize", "4: tune.maxaccept"]
    );
    assert_has(&c, "limits.max_head_size = 32768");
    assert_has(&c, "limits.max_headers = 200");
    validate(&c);
}

#[test]
fn tls_bind_inherits_the_ssl_default_bind_settings() {
    let c = convert(&format!(
        "global\n  ca-base /etc/ssl/certs\n\
         ssl-default-bind-ciphers ECDHE-ECDSA-AES128-GCM-SHA256:ECDHE-RSA-AES128-GCM-SHA256:DHE-RSA-AES128-GCM-SHA256\n\
         ssl-default-bind-ciphersuites TLS_AES_128_GCM_SHA256:TLS_AES_256_GCM_SHA384\n\
         ssl-default-bind-options ssl-min-ver TLSv1.2 no-tls-tickets\n\
         ssl-default-bind-curves X25519:P-256\n\
         tune.ssl.cachesize 1000\n{HEAD}\
         frontend f\n  bind :443 ssl crt /etc/site.pem alpn h2,http/1.1 strict-sni verify required ca-file clients.pem crl-file clients.crl\n\
         bind :8443 ssl crt /etc/site.pem ciphers ECDHE-RSA-AES256-GCM-SHA384 ssl-max-ver TLSv1.2 prefer-client-ciphers\n\
         bind :80\n  default_backend b\nbackend b\n  server s 10.0.0.1:80\n"
    ));
    assert_eq!(warned(&c.warnings), ["3: ciphers"]);
    assert_has(
        &c,
        "{ address = \":443\", tls = { certs = [\"/etc/site.pem\"], strict_sni = true, min_version = \"1.2\", \
         ciphers = [\"ECDHE-ECDSA-AES128-GCM-SHA256\", \"ECDHE-RSA-AES128-GCM-SHA256\"], \
         suites = [\"TLS_AES_128_GCM_SHA256\", \"TLS_AES_256_GCM_SHA384\"], groups = [\"X25519\", \"P-256\"], \
         alpn = [\"h2\", \"http/1.1\"], resumption = { tickets = false, cache_size = 1000 }, \
         client_auth = { verify = \"required\", ca = \"/etc/ssl/certs/clients.pem\", crl = [\"/etc/ssl/certs/clients.crl\"] } } },",
    );
    assert_has(
        &c,
        "{ address = \":8443\", tls = { certs = [\"/etc/site.pem\"], min_version = \"1.2\", max_version = \"1.2\", \
         ciphers = [\"ECDHE-RSA-AES256-GCM-SHA384\"], suites = [\"TLS_AES_128_GCM_SHA256\", \"TLS_AES_256_GCM_SHA384\"], \
         groups = [\"X25519\", \"P-256\"], alpn = [], prefer_server_ciphers = false, \
         resumption = { tickets = false, cache_size = 1000 } } },",
    );
    assert_has(&c, "\":80\",");
}

#[test]
fn crt_directories_separate_keys_and_crt_lists() {
    let dir = temp_dir("crt");
    std::fs::create_dir_all(dir.join("certs/hosted")).unwrap();
    // HAProxy would load `other.crt`, tern loads `*.pem` only: approximated.
    for file in ["a.pem", "a.pem.key", "a.pem.ocsp", "other.crt"] {
        std::fs::write(dir.join("certs/hosted").join(file), "").unwrap();
    }
    std::fs::write(dir.join("certs/site.pem"), "-----BEGIN CERTIFICATE-----\n").unwrap();
    std::fs::write(
        dir.join("certs/site.pem.key"),
        "-----BEGIN PRIVATE KEY-----\n",
    )
    .unwrap();
    std::fs::write(
        dir.join("certs/both.pem"),
        "-----BEGIN CERTIFICATE-----\n-----BEGIN PRIVATE KEY-----\n",
    )
    .unwrap();
    std::fs::write(
        dir.join("list.txt"),
        "# certificates\nboth.pem\nsite.pem www.example.com *.example.org\n\n",
    )
    .unwrap();
    let text = format!(
        "global\n  crt-base certs\n{HEAD}frontend f\n  bind :443 ssl crt hosted crt site.pem\n  bind :8443 ssl crt-list list.txt\n  default_backend b\n\
         backend b\n  server s 10.0.0.1:80\n"
    );
    let c = convert_in(&dir, &text).unwrap();
    assert_eq!(warned(&c.warnings), ["9: crt", "10: crt-list"]);
    assert!(
        c.warnings[0].message.contains("so not other.crt ("),
        "{:?}",
        c.warnings
    );
    assert_has(
        &c,
        "{ address = \":443\", tls = { certs = [{ cert = \"certs/site.pem\", key = \"certs/site.pem.key\" }], cert_dir = \"certs/hosted\", alpn = [], resumption = { cache_size = 20000 } } },",
    );
    assert_has(
        &c,
        "{ address = \":8443\", tls = { certs = [\"certs/both.pem\", { cert = \"certs/site.pem\", key = \"certs/site.pem.key\", names = [\"www.example.com\", \"*.example.org\"] }], alpn = [], resumption = { cache_size = 20000 } } },",
    );
}

#[test]
fn crt_list_options_are_not_supported_yet() {
    let dir = temp_dir("crt-list");
    std::fs::write(
        dir.join("list.txt"),
        "site.pem [alpn h2 ocsp-update on] www.example.com\nother.pem !bad.example.com\n",
    )
    .unwrap();
    let text = format!("{HEAD}frontend f\n  bind :443 ssl crt-list list.txt\n  default_backend b\nbackend b\n  server s 10.0.0.1:80\n");
    let Err(errors) = convert_in(&dir, &text) else {
        panic!("accepted")
    };
    let text: Vec<String> = errors.iter().map(|e| e.to_string()).collect();
    assert!(text[0].ends_with(
        "haproxy.cfg:7: frontend f: keyword 'crt-list list.txt:1: [alpn h2 ocsp-update on]' is not supported yet: per-certificate SSL options"
    ), "{text:?}");
    assert!(
        text[1].contains(
            "crt-list list.txt:2: !bad.example.com' is not supported yet: negative SNI filters"
        ),
        "{text:?}"
    );
}

#[test]
fn servers_with_their_options_and_default_server() {
    let c = backend(
        "  default-server inter 3s fall 2 maxconn 100\n\
         server s1 10.0.0.1:80 check weight 3 maxqueue 10\n\
         server s2 10.0.0.2:80 check inter 1s fastinter 500ms downinter 5s rise 4 port 9000 disabled send-proxy\n\
         server s3 10.0.0.3:80 backup send-proxy-v2 maxconn 50 maxqueue 5\n\
         server s4 [::1]:80 check addr 10.0.9.4 port 9100\n",
    );
    assert_has(&c, "{ name = \"s1\", address = \"10.0.0.1:80\", weight = 3, maxconn = 100, check = { interval = \"3s\", fall = 2 } },");
    assert_has(
        &c,
        "{ name = \"s2\", address = \"10.0.0.2:80\", maxconn = 100, disabled = true, proxy_protocol = \"v1\", \
         check = { interval = \"1s\", fast_interval = \"500ms\", down_interval = \"5s\", rise = 4, fall = 2, port = 9000 } },",
    );
    assert_has(&c, "{ name = \"s3\", address = \"10.0.0.3:80\", backup = true, maxconn = 50, proxy_protocol = \"v2\" },");
    assert_has(
        &c,
        "{ name = \"s4\", address = \"[::1]:80\", maxconn = 100, check = { interval = \"3s\", fall = 2, address = \"10.0.9.4:9100\" } },",
    );
    // maxqueue: s2 and s4 have none, so the queue is not limited (with a warning).
    assert!(!has(&c, "queue.max = 15"));
    assert!(
        warned(&c.warnings).contains(&"11: maxqueue".to_owned()),
        "{:?}",
        c.warnings
    );
}

#[test]
fn maxqueue_sums_into_the_backend_queue() {
    let c = backend(
        "  timeout queue 2s\n  server s1 10.0.0.1:80 maxconn 10 maxqueue 5\n  server s2 10.0.0.2:80 maxconn 10 maxqueue 7\n",
    );
    assert_has(&c, "queue.timeout = \"2s\"");
    assert_has(&c, "queue.max = 12");
    validate(&c);
}

#[test]
fn servers_over_tls() {
    let c = convert(&format!(
        "global\n  ca-base /etc/ca\n  ssl-server-verify none\n{HEAD}frontend f\n  bind :80\n  default_backend app\nbackend app\n\
         server s1 10.0.0.1:443 ssl verify required ca-file internal.pem sni str(api.internal) alpn h2,http/1.1\n\
         server s2 10.0.0.2:443 ssl sni req.hdr(host) no-ssl-reuse crt /etc/client.pem\n\
         server s3 10.0.0.3:443 ssl\n"
    ));
    assert_has(
        &c,
        "{ name = \"s1\", address = \"10.0.0.1:443\", tls = { verify = \"required\", ca = \"/etc/ca/internal.pem\", sni = \"api.internal\", alpn = [\"h2\", \"http/1.1\"] } },",
    );
    assert_has(
        &c,
        "{ name = \"s2\", address = \"10.0.0.2:443\", tls = { verify = \"none\", sni = \"host\", cert = \"/etc/client.pem\", session_reuse = false } },",
    );
    assert_has(
        &c,
        "{ name = \"s3\", address = \"10.0.0.3:443\", tls = { verify = \"none\" } },",
    );
}

#[test]
fn servers_spoken_to_in_http2() {
    let c = convert(&format!(
        "global\n  ssl-server-verify none\n{HEAD}frontend f\n  bind :80\n  default_backend app\nbackend app\n\
         server s1 10.0.0.1:443 ssl alpn h2,http/1.1\n\
         server s2 10.0.0.2:443 ssl alpn h2 proto h2\n\
         server s3 10.0.0.3:80 proto h2\n"
    ));
    assert_has(
        &c,
        "{ name = \"s2\", address = \"10.0.0.2:443\", proto = \"h2\", tls = { verify = \"none\", alpn = [\"h2\"] } },",
    );
    let config = validate(&c);
    let protos: Vec<_> = config.backends[0].servers.iter().map(|s| s.proto).collect();
    use crate::ServerProto::*;
    assert_eq!(protos, [Negotiated, Http2, Http2]);
}

#[test]
fn http_checks() {
    let c = backend(
        "  option httpchk GET /health HTTP/1.1\\r\\nHost:\\ app.example\n  http-check expect status 200-299,304\n\
         server s1 10.0.0.1:80 check\n  server s2 10.0.0.2:80\n",
    );
    assert_has(
        &c,
        "check = { method = \"GET\", path = \"/health\", host = \"app.example\", expect_status = [\"2xx\", 304] }",
    );
    assert_has(
        &c,
        "{ name = \"s1\", address = \"10.0.0.1:80\", check = true },",
    );
    assert_has(
        &c,
        "{ name = \"s2\", address = \"10.0.0.2:80\", check = false },",
    );
    validate(&c);
    // HAProxy's default check request is OPTIONS /; `http-check send` replaces parts of it.
    let c = backend(
        "  option httpchk\n  http-check send meth HEAD hdr Host x.example\n  http-check expect string ok\n  server s1 10.0.0.1:80 check\n",
    );
    assert_has(
        &c,
        "check = { method = \"HEAD\", path = \"/\", host = \"x.example\", expect_body = \"ok\" }",
    );
    let c = backend("  option httpchk /ping\n  server s1 10.0.0.1:80 check\n");
    assert_has(&c, "check = { method = \"OPTIONS\", path = \"/ping\" }");
}

#[test]
fn tcp_checks_and_check_timeouts() {
    let c = backend(
        "  timeout check 500ms\n  server s1 10.0.0.1:80 check inter 5s\n  server s2 10.0.0.2:80 check\n  server s3 10.0.0.3:80\n",
    );
    // timeout connect 5s capped at inter, plus 500ms: 5.5s > 5s (s1), 2.5s > 2s (s2): capped.
    assert_eq!(warned(&c.warnings), ["10: timeout check"]);
    assert_has(
        &c,
        "{ name = \"s1\", address = \"10.0.0.1:80\", check = { interval = \"5s\" } },",
    );
    assert_has(
        &c,
        "{ name = \"s2\", address = \"10.0.0.2:80\", check = true },",
    );
    assert_has(&c, "{ name = \"s3\", address = \"10.0.0.3:80\" },");
    validate(&c);
    let c = convert(
        "defaults\n  mode http\n  timeout client 1s\n  timeout server 1s\n  timeout connect 1s\n  timeout check 1s\n\
         backend app\n  server s1 10.0.0.1:80 check inter 10s\n",
    );
    assert_has(&c, "{ name = \"s1\", address = \"10.0.0.1:80\", check = { interval = \"10s\", timeout = \"2s\" } },");
}

#[test]
fn balance_algorithms_and_hash_types() {
    for (cfg, toml) in [
        ("balance roundrobin", "balance = \"roundrobin\""),
        ("balance static-rr", "balance = \"static-rr\""),
        ("balance leastconn", "balance = \"leastconn\""),
        ("balance first", "balance = \"first\""),
        ("balance source", "balance = \"source\""),
        ("balance uri", "balance = \"uri\""),
        ("balance uri whole", "balance = \"uri whole\""),
        (
            "balance url_param userid",
            "balance = \"url_param(userid)\"",
        ),
        ("balance hdr(Host)", "balance = \"hdr(Host)\""),
        ("balance random", "balance = \"random\""),
        ("balance random(3)", "balance = \"random(3)\""),
    ] {
        let c = backend(&format!("  {cfg}\n  server s 10.0.0.1:80\n"));
        assert_has(&c, toml);
        validate(&c);
    }
    let c = backend("  balance source\n  hash-type consistent\n  hash-balance-factor 150\n  server s 10.0.0.1:80\n");
    assert_has(&c, "hash_type = \"consistent\"");
    assert_has(&c, "hash_balance_factor = 150");
    validate(&c);
    // hash-type without a hashing algorithm does nothing, in HAProxy as in tern.
    let c = backend("  hash-type consistent sdbm\n  server s 10.0.0.1:80\n");
    assert!(!has(&c, "hash_type = \"consistent\""));
    assert_eq!(warned(&c.warnings), ["10: hash-type"]);
}

#[test]
fn cookie_and_stick_persistence() {
    let c = backend(
        "  cookie SRV insert indirect nocache httponly secure domain .example.com\n\
         server s1 10.0.0.1:80 cookie a\n  server s2 10.0.0.2:80 cookie b\n",
    );
    assert!(c.warnings.is_empty(), "{:?}", c.warnings);
    assert_has(
        &c,
        "cookie = { name = \"SRV\", indirect = true, nocache = true, httponly = true, secure = true, domain = \".example.com\", values = { s1 = \"a\", s2 = \"b\" } }",
    );
    validate(&c);
    let c = backend(
        "  stick-table type ip size 200k expire 30m\n  stick on src\n  server s1 10.0.0.1:80\n",
    );
    assert_has(
        &c,
        "stick = { on = \"source\", size = 204800, expire = \"30m\" }",
    );
    validate(&c);
}

#[test]
fn forwardfor_server_close_and_redispatch() {
    let c = convert(&format!(
        "{HEAD}frontend f\n  bind :80\n  option forwardfor\n  option http-server-close\n  default_backend a\n\
         backend a\n  option redispatch\n  retries 2\n  server s 10.0.0.1:80\n"
    ));
    assert_has(&c, "x_forwarded_for = true");
    assert_has(&c, "x_forwarded_proto = false");
    assert_has(&c, "connection_mode = \"server-close\"");
    assert_has(&c, "redispatch = true");
    assert_has(&c, "retries = 2");
    assert_eq!(warned(&c.warnings), ["12: option redispatch"]);
    validate(&c);
    // On the backend only: the frontends that use it add the header.
    let c = backend("  option forwardfor\n  server s 10.0.0.1:80\n");
    assert_has(&c, "x_forwarded_for = true");
}

#[test]
fn timeouts_and_their_fallbacks() {
    let c = convert(
        "defaults\n  mode http\n  timeout client 20s\n  timeout http-request 5s\n  timeout connect 3s\n  timeout server 1m\n\
         timeout queue 0\nfrontend f\n  bind :80\n  default_backend b\nbackend b\n  server s 10.0.0.1:80\n",
    );
    assert_has(&c, "timeouts.client = \"20s\"");
    assert_has(&c, "timeouts.http_request = \"5s\"");
    assert_has(&c, "timeouts.keep_alive = \"5s\"");
    assert_has(&c, "timeouts.handshake = \"20s\"");
    assert_eq!(warned(&c.warnings), ["7: timeout queue"]);
    // Missing timeouts: HAProxy waits forever, tern uses its defaults.
    let c = convert("defaults\n  mode http\nfrontend f\n  bind :80\n  default_backend b\nbackend b\n  server s 10.0.0.1:80\n");
    assert_eq!(
        warned(&c.warnings),
        [
            "3: timeout client",
            "6: timeout connect",
            "6: timeout server"
        ]
    );
    validate(&c);
}

#[test]
fn timeout_tunnel_is_the_backends() {
    // From defaults into the backend, no fallback written (tern falls back to client and
    // server itself); in a frontend HAProxy ignores it, and says so.
    let c = convert(&format!(
        "{HEAD}  timeout tunnel 1h\nfrontend f\n  bind :80\n  timeout tunnel 5m\n  default_backend b\n\
         backend b\n  server s 10.0.0.1:80\nbackend c\n  timeout tunnel 30s\n  server s 10.0.0.1:80\n"
    ));
    assert_has(&c, "timeouts.tunnel = \"1h\"");
    assert_has(&c, "timeouts.tunnel = \"30s\"");
    assert!(!c.toml.contains("timeouts.tunnel = \"5m\""), "{}", c.toml);
    assert_eq!(warned(&c.warnings).len(), 1, "{:?}", c.warnings);
    assert!(
        warned(&c.warnings)[0].ends_with("timeout tunnel"),
        "{:?}",
        c.warnings
    );
    validate(&c);
}

#[test]
fn acls_and_rules_keep_haproxy_grammar() {
    let c = convert(&format!(
        "{HEAD}frontend f\n  bind :80\n  acl is_api path_beg -i /api/ /v2/\n  acl www hdr(host) -i www.example.com\n\
         acl www hdr(host) -i example.com\n  acl re path_reg ^/a\\.b$\n\
         use_backend api if is_api || {{ path_end .json }}\n  use_backend static unless is_api\n\
         http-request deny deny_status 429 if {{ src 10.0.0.0/8 }} !www\n\
         http-request return status 200 content-type text/plain string \"ok\\n\" if {{ path /ping }}\n\
         http-request set-header X-Forwarded-Port %[dst_port]\n  http-request add-header X-Via \"tern proxy\"\n\
         http-request del-header X-Debug\n  http-response set-header Strict-Transport-Security \"max-age=63072000\"\n\
         http-response del-header Server\n  default_backend static\n\
         backend api\n  http-request set-header X-Api 1\n  server s 10.0.0.1:80\nbackend static\n  server s 10.0.0.2:80\n"
    ));
    assert!(c.warnings.is_empty(), "{:?}", c.warnings);
    for line in [
        "acl.is_api = \"path_beg -i /api/ /v2/\"",
        "acl.www = [\"hdr(host) -i www.example.com\", \"hdr(host) -i example.com\"]",
        r#"acl.re = "path_reg \"^/a\\\\.b$\"""#,
        "{ backend = \"api\", if = \"is_api || { path_end .json }\" },",
        "{ backend = \"static\", unless = \"is_api\" },",
        "{ action = \"deny\", status = 429, if = \"{ src 10.0.0.0/8 } !www\" },",
        r#"{ action = "return", status = 200, content_type = "text/plain", body = "ok\n", if = "{ path /ping }" },"#,
        "{ action = \"set-header\", name = \"X-Forwarded-Port\", value = \"%[dst_port]\" },",
        "{ action = \"add-header\", name = \"X-Via\", value = \"tern proxy\" },",
        "{ action = \"del-header\", name = \"X-Debug\" },",
        "{ action = \"set-header\", name = \"Strict-Transport-Security\", value = \"max-age=63072000\" },",
        "{ action = \"del-header\", name = \"Server\" },",
        "{ action = \"set-header\", name = \"X-Api\", value = \"1\" },",
    ] {
        assert_has(&c, line);
    }
    validate(&c);
}

#[test]
fn environment_variables_in_double_quotes() {
    let c = convert(&format!("{HEAD}frontend f\n  bind \"127.0.0.1:${{PORT}}\"\n  default_backend b\nbackend b\n  server s \"10.0.0.1:${{PORT}}\"\n"));
    assert_has(&c, "\"127.0.0.1:8080\",");
    assert_has(&c, "{ name = \"s\", address = \"10.0.0.1:8080\" },");
}

#[test]
fn check_sni_and_check_ssl() {
    let c = backend(
        "  option httpchk GET /health\n  server s1 10.0.0.1:443 ssl verify none check check-sni app.example\n\
         server s2 10.0.0.2:80 check check-ssl check-sni app.example\n  server s3 10.0.0.3:80 check check-sni x\n",
    );
    assert_has(&c, "{ name = \"s1\", address = \"10.0.0.1:443\", check = { type = \"https\", sni = \"app.example\" }, tls = { verify = \"none\" } },");
    assert_has(&c, "{ name = \"s2\", address = \"10.0.0.2:80\", check = { type = \"https\", sni = \"app.example\" } },");
    assert_has(
        &c,
        "{ name = \"s3\", address = \"10.0.0.3:80\", check = true },",
    );
    assert_eq!(warned(&c.warnings), ["13: check-sni"]);
    validate(&c);
}

#[test]
fn check_proto_sets_the_http_version_of_checks() {
    let c = backend(
        "  option httpchk GET /health\n  server s1 10.0.0.1:80 proto h2 check check-proto h2\n\
         server s2 10.0.0.2:80 proto h2 check check-proto h1\n",
    );
    assert_has(
        &c,
        "{ name = \"s1\", address = \"10.0.0.1:80\", proto = \"h2\", check = { proto = \"h2\" } },",
    );
    assert_has(
        &c,
        "{ name = \"s2\", address = \"10.0.0.2:80\", proto = \"h2\", check = { proto = \"h1\" } },",
    );
    validate(&c);
    // Without `option httpchk` the check is TCP: nothing to speak.
    let c = backend("  server s1 10.0.0.1:80 check check-proto h2\n");
    assert_eq!(warned(&c.warnings), ["10: check-proto"]);
    let e = super::errors(&format!(
        "{HEAD}frontend f\n  bind :80\n  default_backend b\nbackend b\n  server s1 10.0.0.1:80 check check-proto h3\n"
    ));
    assert!(e.iter().any(|e| e.contains("check-proto h3")), "{e:?}");
}

#[test]
fn cookie_rewrite_and_prefix_modes() {
    let c = backend("  cookie SRV rewrite\n  server s1 10.0.0.1:80 cookie a\n  server s2 10.0.0.2:80 cookie b\n");
    assert!(c.warnings.is_empty(), "{:?}", c.warnings);
    assert_has(
        &c,
        "cookie = { name = \"SRV\", mode = \"rewrite\", values = { s1 = \"a\", s2 = \"b\" } }",
    );
    validate(&c);
    // HAProxy accepts the attribute options in prefix mode and ignores them: warned, dropped.
    let c = backend(
        "  cookie JSESSIONID prefix indirect nocache httponly domain .a.b\n  server s1 10.0.0.1:80 cookie a\n  server s2 10.0.0.2:80 cookie b\n",
    );
    assert_has(
        &c,
        "cookie = { name = \"JSESSIONID\", mode = \"prefix\", indirect = true, values = { s1 = \"a\", s2 = \"b\" } }",
    );
    assert_eq!(
        warned(&c.warnings),
        [
            "10: cookie ... nocache",
            "10: cookie ... httponly",
            "10: cookie ... domain"
        ]
    );
    validate(&c);
}

#[test]
fn cookie_modes_haproxy_refuses() {
    for (line, needle) in [
        ("cookie SRV insert rewrite", "modes are incompatible"),
        ("cookie SRV prefix insert", "modes are incompatible"),
        ("cookie SRV rewrite indirect", "'rewrite' and 'indirect'"),
        ("cookie SRV indirect", "without a mode"),
    ] {
        let errs = errors(&format!(
            "{HEAD}backend b\n  {line}\n  server s 10.0.0.1:80\n"
        ));
        assert!(errs.iter().any(|e| e.contains(needle)), "{line}: {errs:?}");
    }
}

#[test]
fn proto_h2_on_a_plain_bind_turns_on_h2c() {
    let c = convert(&format!(
        "{HEAD}frontend f\n  bind :80 proto h2\n  default_backend b\nbackend b\n  server s 10.0.0.1:80\n"
    ));
    assert!(c.warnings.is_empty(), "{:?}", c.warnings);
    assert_has(&c, "http2.cleartext = true");
    assert!(validate(&c).frontends[0].http2.cleartext);

    let e = errors(&format!(
        "{HEAD}frontend f\n  bind :80 proto fcgi\n  default_backend b\nbackend b\n  server s 10.0.0.1:80\n"
    ));
    assert!(e.iter().any(|e| e.contains("proto fcgi")), "{e:?}");
}

#[test]
fn h2_workaround_bogus_websocket_clients_turns_the_extended_connect_off() {
    let c = convert(&format!(
        "{HEAD}  option h2-workaround-bogus-websocket-clients\n\
         frontend f\n  bind :80 proto h2\n  default_backend b\nbackend b\n  server s 10.0.0.1:80\n"
    ));
    assert!(c.warnings.is_empty(), "{:?}", c.warnings);
    assert_has(&c, "http2.websocket = false");
    let v = validate(&c);
    assert!(!v.frontends[0].http2.websocket);
    assert!(v.frontends[0].http2.cleartext);

    // `no option` in the frontend undoes the defaults' option; by default it is on.
    let c = convert(&format!(
        "{HEAD}  option h2-workaround-bogus-websocket-clients\n\
         frontend f\n  bind :80\n  no option h2-workaround-bogus-websocket-clients\n\
         default_backend b\nbackend b\n  server s 10.0.0.1:80\n"
    ));
    assert!(validate(&c).frontends[0].http2.websocket);
    let c = convert(&format!(
        "{HEAD}frontend f\n  bind :80\n  default_backend b\nbackend b\n  server s 10.0.0.1:80\n"
    ));
    assert!(validate(&c).frontends[0].http2.websocket);
}

#[test]
fn accept_proxy_on_a_bind_becomes_the_binds_accept_proxy() {
    let c = convert(&format!(
        "{HEAD}frontend f\n  bind :80 accept-proxy\n  bind :81\n  default_backend b\nbackend b\n  server s 10.0.0.1:80\n"
    ));
    assert!(c.warnings.is_empty(), "{:?}", c.warnings);
    assert!(
        c.toml
            .contains(r#"{ address = ":80", accept_proxy = true }"#),
        "{}",
        c.toml
    );
    let binds = &validate(&c).frontends[0].binds;
    assert!(binds[0].accept_proxy, "{binds:?}");
    assert!(!binds[1].accept_proxy, "{binds:?}");
}

#[test]
fn legacy_binds_select_the_openssl_engine() {
    let c = convert(&format!(
        "global\n  ssl-dh-param-file /etc/haproxy/dh.pem\n\
         ssl-default-bind-curves X25519:P-256\n{HEAD}\
         frontend f\n  bind :443 ssl crt /etc/site.pem ciphers AES128-SHA:DHE-RSA-AES128-SHA:!aNULL alpn h2,http/1.1\n\
         bind :444 ssl crt /etc/site.pem ssl-min-ver TLSv1.0\n\
         bind :445 ssl crt /etc/site.pem ciphers ECDHE-RSA-AES128-GCM-SHA256:AES128-SHA\n\
         default_backend b\nbackend b\n  server s 10.0.0.1:80\n"
    ));
    assert_eq!(warned(&c.warnings), ["12: ciphers"]);
    assert_has(
        &c,
        "{ address = \":443\", tls = { certs = [\"/etc/site.pem\"], engine = \"openssl\", \
         ciphers = [\"AES128-SHA\", \"DHE-RSA-AES128-SHA\", \"!aNULL\"], \
         dh_param_file = \"/etc/haproxy/dh.pem\", groups = [\"X25519\", \"P-256\"], \
         alpn = [\"h2\", \"http/1.1\"], \
         resumption = { cache_size = 20000 } } },",
    );
    assert_has(
        &c,
        "{ address = \":444\", tls = { certs = [\"/etc/site.pem\"], engine = \"openssl\", \
         min_version = \"1.0\", dh_param_file = \"/etc/haproxy/dh.pem\", \
         groups = [\"X25519\", \"P-256\"], alpn = [], \
         resumption = { cache_size = 20000 } } },",
    );
    // Modern and legacy suites mixed: rustls, the legacy one dropped.
    assert_has(
        &c,
        "{ address = \":445\", tls = { certs = [\"/etc/site.pem\"], \
         ciphers = [\"ECDHE-RSA-AES128-GCM-SHA256\"], groups = [\"X25519\", \"P-256\"], alpn = [], \
         resumption = { cache_size = 20000 } } },",
    );
    validate(&c);
}

#[test]
fn proxy_v2_options_crc32c_and_the_tls_tlvs() {
    let c = backend(
        "  server s1 10.0.0.1:80 send-proxy-v2 proxy-v2-options ssl,crc32c,authority\n\
         server s2 10.0.0.2:80 send-proxy proxy-v2-options crc32c\n",
    );
    assert_has(
        &c,
        "{ name = \"s1\", address = \"10.0.0.1:80\", proxy_protocol = \"v2\", proxy_v2_crc32c = true },",
    );
    assert_has(
        &c,
        "{ name = \"s2\", address = \"10.0.0.2:80\", proxy_protocol = \"v1\" },",
    );
    assert_eq!(warned(&c.warnings), ["11: proxy-v2-options"]);
    assert!(validate(&c).backends[0].servers[0].proxy_v2.crc32c);
    let refused = errors(&format!(
        "{HEAD}frontend f\n  bind :80\n  default_backend app\nbackend app\n\
         \x20 server s 10.0.0.1:80 send-proxy-v2 proxy-v2-options cert-cn\n"
    ));
    assert!(
        refused
            .iter()
            .any(|e| e.contains("proxy-v2-options cert-cn")),
        "{refused:?}"
    );
}

#[test]
fn set_proxy_v2_tlv_fmt_becomes_proxy_v2_tlvs() {
    let c = backend(
        "  server s1 10.0.0.1:80 send-proxy-v2 set-proxy-v2-tlv-fmt(0xE1) %[fc_pp_tlv(0xE1)] \
         set-proxy-v2-tlv-fmt(5) id-%[src]\n\
         server s2 10.0.0.2:80 set-proxy-v2-tlv-fmt(0xE2) x\n",
    );
    assert_has(
        &c,
        "{ name = \"s1\", address = \"10.0.0.1:80\", proxy_protocol = \"v2\", proxy_v2_tlvs = \
         [{ id = 0xE1, format = \"%[fc_pp_tlv(0xE1)]\" }, { id = 0x05, format = \"id-%[src]\" }] },",
    );
    assert_has(&c, "{ name = \"s2\", address = \"10.0.0.2:80\" },");
    assert_eq!(warned(&c.warnings), ["11: set-proxy-v2-tlv-fmt"]);
    let tlvs = &validate(&c).backends[0].servers[0].proxy_v2.tlvs;
    assert_eq!((tlvs[0].id, tlvs[1].id), (0xE1, 0x05));
    let refused = errors(&format!(
        "{HEAD}frontend f\n  bind :80\n  default_backend app\nbackend app\n\
         \x20 server s 10.0.0.1:80 send-proxy-v2 set-proxy-v2-tlv-fmt(0x1FF) x\n"
    ));
    assert!(
        refused.iter().any(|e| e.contains("over 0xFF")),
        "{refused:?}"
    );
}

#[test]
fn ws_h1_h2_and_auto() {
    let c = backend(
        "  server s1 10.0.0.1:80 proto h2 ws h1\n\
         server s2 10.0.0.2:80 ws h2\n\
         server s3 10.0.0.3:80 ws auto\n",
    );
    assert_has(
        &c,
        "{ name = \"s1\", address = \"10.0.0.1:80\", proto = \"h2\", ws = \"h1\" },",
    );
    assert_has(
        &c,
        "{ name = \"s2\", address = \"10.0.0.2:80\", ws = \"h2\" },",
    );
    assert_has(&c, "{ name = \"s3\", address = \"10.0.0.3:80\" },");
    let servers = &validate(&c).backends[0].servers;
    assert_eq!(servers[0].websocket_proto(), crate::ServerProto::Http1);
    assert_eq!(servers[1].websocket_proto(), crate::ServerProto::Http2);
    let refused = errors(&format!(
        "{HEAD}frontend f\n  bind :80\n  default_backend app\nbackend app\n\
         \x20 server s 10.0.0.1:80 ws h3\n"
    ));
    assert!(refused.iter().any(|e| e.contains("'ws h3'")), "{refused:?}");
}
