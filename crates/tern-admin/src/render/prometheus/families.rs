//! The counter families of `/metrics`, as tables from the snapshot's `fields()` names to
//! metric names and label values. Kept apart from the writer so that the mapping reads as one
//! list (docs/metrics.md follows it).

/// Counters fed by named fields of a snapshot.
#[derive(Debug)]
pub(super) struct Family {
    pub name: &'static str,
    pub help: &'static str,
    /// The label that tells the fields apart when there are several.
    pub label: Option<&'static str>,
    /// `(field name in the snapshot, label value)`.
    pub fields: &'static [(&'static str, &'static str)],
}

const fn one(name: &'static str, help: &'static str, field: &'static [(&str, &str)]) -> Family {
    Family {
        name,
        help,
        label: None,
        fields: field,
    }
}

pub(super) const FRONTEND: &[Family] = &[
    one(
        "tern_frontend_sessions_total",
        "Client connections accepted.",
        &[("sessions", "")],
    ),
    one(
        "tern_frontend_requests_total",
        "Requests received (heads parsed).",
        &[("requests", "")],
    ),
    one(
        "tern_frontend_monitor_requests_total",
        "Requests answered by monitor_uri.",
        &[("monitor", "")],
    ),
    Family {
        name: "tern_frontend_request_errors_total",
        help: "Requests refused by tern before choosing a backend: malformed (400), head too \
               large (431), head not received in time (408), no use_backend rule and no \
               default_backend (503).",
        label: Some("reason"),
        fields: &[
            ("bad_requests", "bad_request"),
            ("head_too_large", "head_too_large"),
            ("request_timeouts", "request_timeout"),
            ("no_backend", "no_backend"),
        ],
    },
    Family {
        name: "tern_frontend_rule_answers_total",
        help: "Requests answered by an http_request rule: `deny` (its error page), `return` \
               (its response) or `auth` (401 and a challenge for credentials).",
        label: Some("action"),
        fields: &[
            ("denied", "deny"),
            ("intercepted", "return"),
            ("auth_challenges", "auth"),
        ],
    },
    Family {
        name: "tern_frontend_responses_total",
        help: "Responses sent to clients, by status class.",
        label: Some("code"),
        fields: &[
            ("resp_1xx", "1xx"),
            ("resp_2xx", "2xx"),
            ("resp_3xx", "3xx"),
            ("resp_4xx", "4xx"),
            ("resp_5xx", "5xx"),
        ],
    },
    one(
        "tern_frontend_keepalive_timeouts_total",
        "Keep-alive connections closed after the keep_alive idle time.",
        &[("keepalive_timeouts", "")],
    ),
    one(
        "tern_frontend_client_timeouts_total",
        "Client inactivity beyond the client timeout during a stream.",
        &[("client_timeouts", "")],
    ),
    one(
        "tern_frontend_client_aborts_total",
        "Client connections that ended with an I/O error or a reset.",
        &[("client_aborts", "")],
    ),
    one(
        "tern_frontend_h2_connections_total",
        "Client connections that spoke HTTP/2 (ALPN h2, or h2c).",
        &[("h2_sessions", "")],
    ),
    one(
        "tern_frontend_h2_streams_total",
        "HTTP/2 streams opened by clients (each is also a request).",
        &[("h2_streams", "")],
    ),
    one(
        "tern_frontend_h2_errors_total",
        "HTTP/2 connections ended by a protocol or flow-control error.",
        &[("h2_errors", "")],
    ),
    one(
        "tern_frontend_h2_yields_total",
        "Turns of HTTP/2 client connections ended at their read budget (pacing).",
        &[("h2_yields", "")],
    ),
    one(
        "tern_frontend_tunnels_total",
        "Connections turned into tunnels by a 101 to an upgrade request (WebSocket).",
        &[("tunnels", "")],
    ),
    one(
        "tern_frontend_proxy_errors_total",
        "Connections closed for a malformed, truncated or late PROXY protocol header.",
        &[("proxy_errors", "")],
    ),
    one(
        "tern_frontend_panics_total",
        "Client connections and HTTP/2 streams closed because their task panicked (a bug; the worker went on).",
        &[("panics", "")],
    ),
    one(
        "tern_frontend_tcp_sessions_total",
        "Connections served in TCP mode, relayed whole to a server.",
        &[("tcp_sessions", "")],
    ),
    Family {
        name: "tern_frontend_bytes_total",
        help: "Bytes of proxied exchanges of the frontend: `in` request bytes passed to servers, `out` \
               response bytes written to clients.",
        label: Some("direction"),
        fields: &[("bytes_in", "in"), ("bytes_out", "out")],
    },
];

/// Frontend counters exported only for frontends with a TLS bind.
pub(super) const FRONTEND_TLS: &[Family] = &[Family {
    name: "tern_frontend_tls_handshakes_total",
    help: "TLS handshakes completed, full or resumed.",
    label: Some("kind"),
    fields: &[("tls_full", "full"), ("tls_resumed", "resumed")],
}];

/// Frontend fields left out, with the family that covers them.
#[cfg(test)]
pub(super) const FRONTEND_NOT_EXPORTED: &[(&str, &str)] = &[
    ("tls_failures", "tern_frontend_tls_handshake_failures_total"),
    ("tls_timeouts", "tern_frontend_tls_handshake_failures_total"),
];

pub(super) const BACKEND: &[Family] = &[
    one(
        "tern_backend_requests_total",
        "Requests sent towards the backend.",
        &[("requests", "")],
    ),
    one(
        "tern_backend_tcp_sessions_total",
        "TCP-mode connections relayed to one of the backend's servers (counted once connected).",
        &[("tcp_sessions", "")],
    ),
    Family {
        name: "tern_backend_failed_requests_total",
        help: "Requests tern answered with an error on the backend's behalf: no usable server \
               (503), queue full (503), queue timeout (503), server error before the response \
               head (502), server timeout before the response head (504).",
        label: Some("reason"),
        fields: &[
            ("no_server", "no_server"),
            ("queue_full", "queue_full"),
            ("queue_timeouts", "queue_timeout"),
            ("upstream_errors", "upstream_error"),
            ("server_timeouts", "server_timeout"),
        ],
    },
    one(
        "tern_backend_connect_errors_total",
        "Failed attempts to connect to one of the backend's servers.",
        &[("connect_errors", "")],
    ),
    one(
        "tern_backend_retries_total",
        "Connection attempts repeated after a failure.",
        &[("retries", "")],
    ),
    one(
        "tern_backend_redispatches_total",
        "Requests that went to another server after a connection failure.",
        &[("redispatches", "")],
    ),
    one(
        "tern_backend_queued_requests_total",
        "Requests that waited in the backend queue for a server slot.",
        &[("queued", "")],
    ),
    one(
        "tern_backend_aborted_responses_total",
        "Responses cut short by the server (the client connection was closed).",
        &[("aborted_responses", "")],
    ),
    one(
        "tern_backend_panics_total",
        "HTTP/2 connections to its servers dropped because their task panicked (a bug; the worker went on).",
        &[("panics", "")],
    ),
    Family {
        name: "tern_backend_bytes_total",
        help: "Bytes of proxied exchanges of the backend: `in` request bytes passed to servers, `out` \
               response bytes written to clients.",
        label: Some("direction"),
        fields: &[("bytes_in", "in"), ("bytes_out", "out")],
    },
];

#[cfg(test)]
pub(super) const BACKEND_NOT_EXPORTED: &[(&str, &str)] = &[];

pub(super) const SERVER: &[Family] = &[
    one(
        "tern_server_requests_total",
        "Requests sent to the server.",
        &[("requests", "")],
    ),
    one(
        "tern_server_connections_total",
        "New connections opened to the server.",
        &[("connects", "")],
    ),
    one(
        "tern_server_connect_errors_total",
        "Failed connection attempts to the server.",
        &[("connect_errors", "")],
    ),
    one(
        "tern_server_reused_requests_total",
        "Requests sent on a reused keep-alive connection.",
        &[("reused", "")],
    ),
    one(
        "tern_server_tcp_sessions_total",
        "TCP-mode connections relayed to the server (counted once connected).",
        &[("tcp_sessions", "")],
    ),
    Family {
        name: "tern_server_checks_total",
        help: "Active health checks, by result.",
        label: Some("result"),
        fields: &[("checks_passed", "passed"), ("checks_failed", "failed")],
    },
    Family {
        name: "tern_server_transitions_total",
        help: "Health transitions of the server, by the state it went to.",
        label: Some("to"),
        fields: &[("went_down", "down"), ("went_up", "up")],
    },
    one(
        "tern_server_passive_check_trips_total",
        "Times the passive check's error limit was reached on live traffic.",
        &[("passive_trips", "")],
    ),
    Family {
        name: "tern_server_bytes_total",
        help: "Bytes of proxied exchanges with the server: `in` request bytes passed to servers, `out` \
               response bytes written to clients.",
        label: Some("direction"),
        fields: &[("bytes_in", "in"), ("bytes_out", "out")],
    },
];

#[cfg(test)]
pub(super) const SERVER_NOT_EXPORTED: &[(&str, &str)] = &[];
