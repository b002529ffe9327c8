//! The control API over HTTP (`control.http`): JSON views, the command endpoint, the stats page
//! and Prometheus metrics.
//!
//! | Route                   | Answer                                                      |
//! |-------------------------|-------------------------------------------------------------|
//! | `GET /v1/info`          | `json show info`'s output                                   |
//! | `GET /v1/stat`          | `json show stat`'s output                                   |
//! | `GET /v1/servers[?backend=B]` | `json show servers [B]`'s output                      |
//! | `GET /v1/tls`           | `json show tls`'s output                                    |
//! | `GET /v1/profiling`     | `json show profiling`'s output                              |
//! | `POST /v1/command`      | body: one command line; `{"ok", "output", "error"}`         |
//! | `GET /metrics`          | Prometheus text exposition                                  |
//! | `GET /stats`            | the HTML stats page                                         |
//! | `GET /stats.json`       | the stats page's data (`show stat` as JSON)                 |
//!
//! Reading is open to whoever reaches the address, unless `control.userlist` asks every
//! request for a user's basic credentials or the token (`http_auth.rs`). Commands that change state are refused with
//! 403 unless `control.token` is set and the request carries `Authorization: Bearer <token>`
//! (compared in constant time). An answer's status says how a command ended: 200 done, 400 not
//! a command, 403 not allowed, 404 no such backend or server, 409 refused in the current state,
//! 500 failed. Request bodies are limited to [`wire::MAX_LINE`] bytes, heads to 8 KiB and 10 s,
//! connections to [`MAX_CONNECTIONS`] at once and [`MAX_CONNECTION_LIFE`] each.

use std::convert::Infallible;
use std::net::SocketAddr;
use std::sync::Arc;
use std::time::Duration;

use bytes::Bytes;
use http::header::{self, HeaderValue};
use http::{Method, Request, Response, StatusCode};
use http_body_util::{BodyExt, Full, Limited};
use hyper::body::Incoming;
use hyper::service::service_fn;
use hyper_util::rt::{TokioIo, TokioTimer};
use serde_json::{json, Value};
use tern_config::{ControlAuth, ControlToken};
use tokio::net::TcpListener;
use tokio::sync::{watch, Semaphore};

use super::command::{Command, Format, Request as ApiRequest};
use super::exec::{self, Context, Failure, Permission};
use super::http_auth::Gate;
use super::wire::{self, MAX_LINE};
use crate::control::ControlError;
use crate::render;

/// Connections served at once; more are closed on accept.
pub const MAX_CONNECTIONS: usize = 32;
/// Longest life of one connection (keep-alive included).
pub const MAX_CONNECTION_LIFE: Duration = Duration::from_secs(120);
const HEAD_TIMEOUT: Duration = Duration::from_secs(10);
const MAX_HEAD: usize = 8 * 1024;

const NO_TOKEN: &str = "state-changing commands are disabled on the HTTP listener: set \
                        control.token or control.token_file, then send `Authorization: Bearer \
                        <token>`";
const BAD_TOKEN: &str = "missing or wrong token: send `Authorization: Bearer <token>` with \
                         control.token";

/// What the HTTP side needs besides the proxy.
#[derive(Debug, Clone)]
pub struct HttpSettings {
    pub token: Option<ControlToken>,
    pub stats_refresh: Duration,
    /// Basic authentication of every route (`control.userlist`).
    pub auth: Option<ControlAuth>,
}

struct Shared {
    ctx: Context,
    settings: HttpSettings,
    gate: Option<Gate>,
}

/// Accepts connections until `stop` changes.
pub async fn serve(
    listener: TcpListener,
    ctx: Context,
    settings: HttpSettings,
    mut stop: watch::Receiver<bool>,
) {
    let gate = settings
        .auth
        .as_ref()
        .map(|auth| Gate::new(auth, settings.token.clone()));
    let shared = Arc::new(Shared {
        ctx,
        settings,
        gate,
    });
    let slots = Arc::new(Semaphore::new(MAX_CONNECTIONS));
    loop {
        let (stream, peer) = tokio::select! {
            () = super::stopped(&mut stop) => return,
            accepted = listener.accept() => match accepted {
                Ok(accepted) => accepted,
                Err(e) => {
                    tracing::warn!("control: accept on the HTTP listener failed: {e}");
                    tokio::time::sleep(Duration::from_millis(100)).await;
                    continue;
                }
            },
        };
        let Ok(permit) = slots.clone().try_acquire_owned() else {
            tracing::debug!("control: HTTP connection from {peer} closed: too many");
            continue;
        };
        let shared = shared.clone();
        tokio::spawn(async move {
            let service = service_fn(move |req| {
                let shared = shared.clone();
                async move { Ok::<_, Infallible>(route(&shared, req, peer).await) }
            });
            let conn = hyper::server::conn::http1::Builder::new()
                .timer(TokioTimer::new())
                .header_read_timeout(HEAD_TIMEOUT)
                .max_buf_size(MAX_HEAD.max(MAX_LINE * 2))
                .serve_connection(TokioIo::new(stream), service);
            // Err(_): the connection outlived MAX_CONNECTION_LIFE and is dropped (closed).
            if let Ok(Err(e)) = tokio::time::timeout(MAX_CONNECTION_LIFE, conn).await {
                tracing::debug!("control: HTTP connection from {peer}: {e}");
            }
            drop(permit);
        });
    }
}

type Reply = Response<Full<Bytes>>;

async fn route(shared: &Shared, req: Request<Incoming>, peer: SocketAddr) -> Reply {
    if let Some(gate) = &shared.gate {
        if !gate.admits(req.headers()).await {
            return gate.challenge();
        }
    }
    let path = req.uri().path().to_owned();
    let method = req.method().clone();
    let reading = method == Method::GET || method == Method::HEAD;
    let view = |command: Command| ApiRequest {
        format: Format::Json,
        command,
    };
    match path.as_str() {
        "/v1/command" if method == Method::POST => command(shared, req, peer).await,
        "/v1/command" => not_allowed("POST"),
        _ if !is_route(&path) => not_found(&path),
        _ if !reading => not_allowed("GET, HEAD"),
        "/v1/info" => read(shared, view(Command::ShowInfo)).await,
        "/v1/stat" => read(shared, view(Command::ShowStat)).await,
        "/v1/servers" => {
            let backend = query_param(req.uri().query(), "backend");
            read(shared, view(Command::ShowServers { backend })).await
        }
        "/v1/tls" => read(shared, view(Command::ShowTls)).await,
        "/v1/profiling" => read(shared, view(Command::ShowProfiling)).await,
        _ => page(shared, &path).await,
    }
}

fn is_route(path: &str) -> bool {
    matches!(
        path,
        "/v1/info"
            | "/v1/stat"
            | "/v1/servers"
            | "/v1/tls"
            | "/v1/profiling"
            | "/metrics"
            | "/stats"
            | "/stats.json"
    )
}

/// A read-only view: the command's JSON output itself (no envelope).
async fn read(shared: &Shared, request: ApiRequest) -> Reply {
    let ctx = shared.ctx.clone();
    let result = blocking(move || {
        exec::answer(
            &ctx,
            &request,
            "http",
            Permission::ReadOnly("read-only route"),
        )
    })
    .await
    .and_then(|result| result);
    match result {
        Ok(output) => json_reply(StatusCode::OK, &output.into_json()),
        Err(failure) => {
            let status = status_of(&failure);
            json_reply(status, &wire::envelope(Err(failure)))
        }
    }
}

/// `/metrics`, `/stats`, `/stats.json`: rendered from one view.
async fn page(shared: &Shared, path: &str) -> Reply {
    let control = shared.ctx.control.clone();
    let refresh = shared.settings.stats_refresh;
    let metrics = path == "/metrics";
    let path = path.to_owned();
    let rendered = blocking(move || {
        let view = control.view();
        match path.as_str() {
            "/metrics" => (
                render::PROMETHEUS_CONTENT_TYPE,
                render::prometheus::metrics(&view),
            ),
            "/stats" => (
                "text/html; charset=utf-8",
                render::html::page(&view, refresh),
            ),
            _ => ("application/json", render::json::stat(&view).to_string()),
        }
    })
    .await;
    let (content_type, body) = match rendered {
        Ok(rendered) => rendered,
        Err(failure) => return json_reply(status_of(&failure), &wire::envelope(Err(failure))),
    };
    let body = match &shared.gate {
        Some(gate) if metrics => body + &gate.metrics(),
        _ => body,
    };
    let mut reply = reply(StatusCode::OK, content_type, body);
    if content_type.starts_with("text/html") {
        // The page has inline CSS and nothing else to load.
        reply.headers_mut().insert(
            header::CONTENT_SECURITY_POLICY,
            HeaderValue::from_static(
                "default-src 'none'; style-src 'unsafe-inline'; frame-ancestors 'none'",
            ),
        );
    }
    reply
}

/// `POST /v1/command`.
async fn command(shared: &Shared, req: Request<Incoming>, peer: SocketAddr) -> Reply {
    let permission = permission(shared.settings.token.as_ref(), req.headers());
    let body = match Limited::new(req.into_body(), MAX_LINE).collect().await {
        Ok(body) => body.to_bytes(),
        Err(_) => {
            return failure_reply(
                StatusCode::PAYLOAD_TOO_LARGE,
                format!("the command is longer than {MAX_LINE} bytes (or the body was cut short)"),
            )
        }
    };
    let Ok(text) = String::from_utf8(body.to_vec()) else {
        return failure_reply(
            StatusCode::BAD_REQUEST,
            "the command is not UTF-8 text".into(),
        );
    };
    let line = text.trim_end_matches(['\r', '\n']);
    if line.contains('\n') {
        return failure_reply(
            StatusCode::BAD_REQUEST,
            "send one command per request (the body holds several lines)".into(),
        );
    }
    let line = line.to_owned();
    let ctx = shared.ctx.clone();
    let origin = format!("http {peer}");
    let result = blocking(move || {
        let permission = match &permission {
            Ok(()) => Permission::All,
            Err(why) => Permission::ReadOnly(why),
        };
        exec::answer_line(&ctx, &line, &origin, permission).1
    })
    .await
    .and_then(|result| result);
    let status = match &result {
        Ok(_) => StatusCode::OK,
        Err(failure) => status_of(failure),
    };
    // Over HTTP the output is always JSON: a text answer becomes a JSON string.
    json_reply(status, &wire::envelope(result))
}

/// Whether the request may change state: `Err` holds why not.
fn permission(token: Option<&ControlToken>, headers: &http::HeaderMap) -> Result<(), &'static str> {
    let Some(token) = token else {
        return Err(NO_TOKEN);
    };
    let presented = headers
        .get(header::AUTHORIZATION)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| {
            let (scheme, value) = v.trim().split_once(' ')?;
            scheme.eq_ignore_ascii_case("bearer").then(|| value.trim())
        });
    match presented {
        Some(value) if constant_time_eq(value.as_bytes(), token.expose().as_bytes()) => Ok(()),
        _ => Err(BAD_TOKEN),
    }
}

/// Compares without returning early at the first difference, so that the time taken does not
/// tell how much of a guess was right. (The length is not secret: it is at least 16.)
pub fn constant_time_eq(a: &[u8], b: &[u8]) -> bool {
    if a.len() != b.len() {
        return false;
    }
    let diff = a.iter().zip(b).fold(0u8, |acc, (x, y)| acc | (x ^ y));
    std::hint::black_box(diff) == 0
}

fn status_of(failure: &Failure) -> StatusCode {
    match failure {
        Failure::Parse(_) => StatusCode::BAD_REQUEST,
        Failure::Forbidden(_) => StatusCode::FORBIDDEN,
        Failure::Control(ControlError::UnknownBackend(_) | ControlError::UnknownServer { .. }) => {
            StatusCode::NOT_FOUND
        }
        Failure::Control(ControlError::Invalid(_)) => StatusCode::CONFLICT,
        Failure::Control(ControlError::Failed(_)) => StatusCode::INTERNAL_SERVER_ERROR,
    }
}

/// Runs `f` on the blocking pool (it calls the proxy); a panic there becomes a 500.
async fn blocking<T: Send + 'static>(f: impl FnOnce() -> T + Send + 'static) -> Result<T, Failure> {
    tokio::task::spawn_blocking(f).await.map_err(|e| {
        tracing::error!("control: a command failed: {e}");
        Failure::Control(ControlError::Failed("internal error".into()))
    })
}

/// The value of `name` in a query string (no percent-decoding: names are `[A-Za-z0-9_.-]`).
fn query_param(query: Option<&str>, name: &str) -> Option<String> {
    query?
        .split('&')
        .filter_map(|pair| pair.split_once('='))
        .find(|(key, value)| *key == name && !value.is_empty())
        .map(|(_, value)| value.to_owned())
}

fn not_found(path: &str) -> Reply {
    let shown: String = path.chars().take(64).collect();
    failure_reply(
        StatusCode::NOT_FOUND,
        format!(
            "no route `{shown}`: try /v1/info, /v1/stat, /v1/servers, /v1/tls, /v1/profiling, \
             POST /v1/command, /metrics, /stats, /stats.json"
        ),
    )
}

fn not_allowed(allow: &'static str) -> Reply {
    let mut reply = failure_reply(
        StatusCode::METHOD_NOT_ALLOWED,
        format!("method not allowed here: use {allow}"),
    );
    reply
        .headers_mut()
        .insert(header::ALLOW, HeaderValue::from_static(allow));
    reply
}

fn failure_reply(status: StatusCode, message: String) -> Reply {
    json_reply(
        status,
        &json!({ "ok": false, "output": null, "error": message }),
    )
}

fn json_reply(status: StatusCode, value: &Value) -> Reply {
    reply(status, "application/json", format!("{value}\n"))
}

fn reply(status: StatusCode, content_type: &'static str, body: String) -> Reply {
    let mut response = Response::new(Full::new(Bytes::from(body)));
    *response.status_mut() = status;
    let headers = response.headers_mut();
    headers.insert(header::CONTENT_TYPE, HeaderValue::from_static(content_type));
    headers.insert(header::CACHE_CONTROL, HeaderValue::from_static("no-store"));
    headers.insert(
        header::X_CONTENT_TYPE_OPTIONS,
        HeaderValue::from_static("nosniff"),
    );
    response
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn constant_time_comparison() {
        assert!(constant_time_eq(b"0123456789abcdef", b"0123456789abcdef"));
        assert!(!constant_time_eq(b"0123456789abcdef", b"0123456789abcdeF"));
        assert!(!constant_time_eq(b"0123456789abcdef", b"0123456789abcde"));
        assert!(constant_time_eq(b"", b""));
    }

    #[test]
    fn bearer_tokens() {
        let token = ControlToken::new("0123456789abcdef").ok();
        let headers = |value: &str| {
            let mut h = http::HeaderMap::new();
            h.insert(
                header::AUTHORIZATION,
                HeaderValue::from_str(value).expect("ascii"),
            );
            h
        };
        assert_eq!(
            permission(None, &headers("Bearer 0123456789abcdef")),
            Err(NO_TOKEN)
        );
        assert_eq!(
            permission(token.as_ref(), &http::HeaderMap::new()),
            Err(BAD_TOKEN)
        );
        assert_eq!(
            permission(token.as_ref(), &headers("Bearer 0123456789abcdef")),
            Ok(())
        );
        assert_eq!(
            permission(token.as_ref(), &headers("bearer  0123456789abcdef ")),
            Ok(())
        );
        assert_eq!(
            permission(token.as_ref(), &headers("Basic 0123456789abcdef")),
            Err(BAD_TOKEN)
        );
        assert_eq!(
            permission(token.as_ref(), &headers("Bearer 0123456789abcdeX")),
            Err(BAD_TOKEN)
        );
    }

    #[test]
    fn query_parameters() {
        assert_eq!(
            query_param(Some("backend=app&x=1"), "backend").as_deref(),
            Some("app")
        );
        assert_eq!(query_param(Some("x=1"), "backend"), None);
        assert_eq!(query_param(None, "backend"), None);
    }
}
