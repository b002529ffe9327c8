//! Basic authentication of the HTTP listener (`control.userlist`, HAProxy's `stats auth`).
//!
//! With a userlist every route needs credentials: a user's `Basic` ones, or the bearer token
//! (`control.token`), which also allows state-changing commands; without either the answer
//! is 401 with a challenge for the realm. The check is tern-auth's, as on the data path:
//! successful checks cached, misses on the blocking pool, at most one running and a few
//! waiting (this listener serves a handful of operators, never a crowd).

use bytes::Bytes;
use http::header::{self, HeaderValue};
use http::{HeaderMap, Response, StatusCode};
use http_body_util::Full;
use tern_auth::{Authenticator, Credentials, Limits};
use tern_config::{ControlAuth, ControlToken};

use super::http::constant_time_eq;

/// Who may use the listener.
#[derive(Debug)]
pub(super) struct Gate {
    auth: Authenticator,
    challenge: HeaderValue,
    token: Option<ControlToken>,
}

impl Gate {
    pub(super) fn new(settings: &ControlAuth, token: Option<ControlToken>) -> Self {
        let value = format!("Basic realm=\"{}\"", settings.realm);
        Self {
            auth: Authenticator::new(
                std::slice::from_ref(&settings.users),
                Limits {
                    checks: 1,
                    waiting: 8,
                },
            ),
            // Validation keeps the realm printable and free of quotes.
            challenge: HeaderValue::from_str(&value)
                .unwrap_or_else(|_| HeaderValue::from_static("Basic realm=\"tern\"")),
            token,
        }
    }

    /// Whether the request carries the token or a user's credentials.
    pub(super) async fn admits(&self, headers: &HeaderMap) -> bool {
        let Some(value) = headers.get(header::AUTHORIZATION) else {
            return false;
        };
        let bytes = value.as_bytes();
        if let (Some(token), Some(given)) = (&self.token, bearer(bytes)) {
            return constant_time_eq(given, token.expose().as_bytes());
        }
        match Credentials::from_header(bytes) {
            Some(creds) => self.auth.check(0, &creds).await.is_some(),
            None => false,
        }
    }

    /// 401 with the challenge.
    pub(super) fn challenge(&self) -> Response<Full<Bytes>> {
        let mut response = Response::new(Full::new(Bytes::from_static(
            b"{\"ok\":false,\"error\":\"authentication required\"}\n",
        )));
        *response.status_mut() = StatusCode::UNAUTHORIZED;
        let headers = response.headers_mut();
        headers.insert(header::WWW_AUTHENTICATE, self.challenge.clone());
        headers.insert(
            header::CONTENT_TYPE,
            HeaderValue::from_static("application/json"),
        );
        headers.insert(header::CACHE_CONTROL, HeaderValue::from_static("no-store"));
        response
    }

    /// The listener's own check counters, in Prometheus text.
    pub(super) fn metrics(&self) -> String {
        let c = self.auth.stats().counts();
        format!(
            "# HELP tern_control_auth_checks_total Basic credentials checked by the control \
             API's HTTP listener.\n# TYPE tern_control_auth_checks_total counter\n\
             tern_control_auth_checks_total{{result=\"accepted\"}} {}\n\
             tern_control_auth_checks_total{{result=\"failed\"}} {}\n",
            c.accepted, c.failed
        )
    }
}

/// The value of `Bearer TOKEN`.
fn bearer(value: &[u8]) -> Option<&[u8]> {
    let value = value.trim_ascii();
    let at = value.iter().position(|&b| b == b' ')?;
    let (scheme, rest) = value.split_at(at);
    scheme
        .eq_ignore_ascii_case(b"bearer")
        .then(|| rest.trim_ascii())
}
