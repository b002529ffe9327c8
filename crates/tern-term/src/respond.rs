//! From a request to its response: parse the plan, drain or keep the request body, wait, build.
//!
//! Why drain before answering: a client (or proxy) that is still sending a body when the
//! response arrives may be cut off, and a connection with unread bytes is reset on close; a
//! test backend must not create such races, so every body that is not echoed is read in full.
//! Precedence when several bodies are asked for: `e=1`, then `h=1`, then `s=`/`x=`, then the
//! page; 204 and 304 never have a body; HEAD gets GET's headers and no body.

use std::convert::Infallible;
use std::sync::Arc;

use bytes::{BufMut, Bytes, BytesMut};
use http::header::{HeaderValue, CONNECTION, CONTENT_LENGTH, CONTENT_TYPE, SET_COOKIE};
use http::request::Parts;
use http::{Method, Request, Response, StatusCode};
use http_body_util::BodyExt;
use hyper::body::Incoming;

use crate::body::{AbortFlag, TermBody};
use crate::proxy_header::Proxied;
use crate::query::{self, Plan, QueryError, DEFAULT_ABORT_SIZE};
use crate::worker::WorkerCtx;
use crate::Counters;

const X_TERM_SERVER: &str = "x-term-server";
static TEXT: HeaderValue = HeaderValue::from_static("text/plain; charset=utf-8");
static HTML: HeaderValue = HeaderValue::from_static("text/html; charset=utf-8");
static OCTETS: HeaderValue = HeaderValue::from_static("application/octet-stream");

/// The default page naming the server, e.g. 112 bytes for `term-8080` (seed 004's page had 107).
pub(crate) fn page(name: &str) -> Bytes {
    let mut escaped = String::with_capacity(name.len());
    for c in name.chars() {
        match c {
            '<' => escaped.push_str("&lt;"),
            '>' => escaped.push_str("&gt;"),
            '&' => escaped.push_str("&amp;"),
            '"' => escaped.push_str("&quot;"),
            c => escaped.push(c),
        }
    }
    Bytes::from(format!(
        "<html><head><title>Server {escaped}</title></head>\
         <body><h1>tern term</h1><p>server {escaped}</p></body></html>\n"
    ))
}

/// hyper's service function: never fails, every problem becomes a response.
pub(crate) async fn handle(
    req: Request<Incoming>,
    ctx: Arc<WorkerCtx>,
    abort: Arc<AbortFlag>,
    proxied: Option<Proxied>,
) -> Result<Response<TermBody>, Infallible> {
    Counters::add(&ctx.counters.requests, 1);
    let plan = query::parse(req.uri().query());
    let (parts, body) = req.into_parts();
    let plan = match plan {
        Ok(plan) => plan,
        Err(e) => {
            drain(body).await;
            return Ok(bad_request(&ctx, &e));
        }
    };
    let content = if plan.echo {
        let ct = parts.headers.get(CONTENT_TYPE).cloned();
        Content::Echo(body, ct.unwrap_or_else(|| OCTETS.clone()))
    } else {
        drain(body).await;
        if plan.dump {
            Content::Dump(dump_head(&parts))
        } else {
            Content::Generated
        }
    };
    if !plan.delay.is_zero() {
        tokio::time::sleep(plan.delay).await;
    }
    let mut resp = build(&plan, content, parts.method == Method::HEAD, &ctx, abort);
    if let Some(p) = &proxied {
        echo_proxy(&mut resp, p);
    }
    Ok(resp)
}

/// Says in response headers what the connection's PROXY header said (`accept_proxy`).
fn echo_proxy(resp: &mut Response<TermBody>, p: &Proxied) {
    let headers = resp.headers_mut();
    headers.insert("x-proxy-version", HeaderValue::from(u16::from(p.version)));
    for (name, value) in [
        ("x-proxy-src", p.source()),
        ("x-proxy-dst", p.destination()),
        ("x-proxy-tlvs", p.tlvs.clone()),
    ] {
        // Addresses, the words `unknown`/`local` and the TLVs' printable text are always
        // valid header values.
        if value.is_empty() {
            continue;
        }
        if let Ok(value) = HeaderValue::from_str(&value) {
            headers.insert(name, value);
        }
    }
}

/// Reads and discards the request body; a broken body only means a broken connection.
async fn drain(mut body: Incoming) {
    while let Some(frame) = body.frame().await {
        if frame.is_err() {
            return;
        }
    }
}

enum Content {
    Echo(Incoming, HeaderValue),
    Dump(Bytes),
    /// `s=`/`x=` or the page.
    Generated,
}

fn build(
    plan: &Plan,
    content: Content,
    head: bool,
    ctx: &WorkerCtx,
    abort: Arc<AbortFlag>,
) -> Response<TermBody> {
    let counters = ctx.counters.clone();
    let (body, content_type) = match content {
        Content::Echo(request, ct) => (TermBody::echo(request, counters), ct),
        Content::Dump(text) => (TermBody::full(text, plan.chunked, counters), TEXT.clone()),
        Content::Generated => match (plan.size, plan.abort_after) {
            (size, Some(n)) => {
                let size = size.unwrap_or(DEFAULT_ABORT_SIZE);
                let body = TermBody::fill(size, Some((n, abort)), plan.chunked, counters);
                (body, OCTETS.clone())
            }
            (Some(size), None) => (
                TermBody::fill(size, None, plan.chunked, counters),
                OCTETS.clone(),
            ),
            (None, None) => (
                TermBody::full(ctx.page.clone(), plan.chunked, counters),
                HTML.clone(),
            ),
        },
    };
    let no_body = matches!(
        plan.status,
        StatusCode::NO_CONTENT | StatusCode::NOT_MODIFIED
    );
    let mut resp = Response::new(body);
    *resp.status_mut() = plan.status;
    let headers = resp.headers_mut();
    headers.insert(X_TERM_SERVER, ctx.name.clone());
    headers.insert(CONTENT_TYPE, content_type);
    if plan.close || plan.abort_after.is_some() {
        headers.insert(CONNECTION, HeaderValue::from_static("close"));
    }
    for cookie in &plan.cookies {
        // Checked when parsed: a token, `=` and cookie-octets are a valid header value.
        if let Ok(value) = HeaderValue::from_str(&format!("{cookie}; Path=/")) {
            headers.append(SET_COOKIE, value);
        }
    }
    if no_body || head {
        if head && !no_body {
            if let Some(len) = resp.body().announced_len() {
                resp.headers_mut()
                    .insert(CONTENT_LENGTH, HeaderValue::from(len));
            }
        }
        *resp.body_mut() = TermBody::empty(ctx.counters.clone());
    }
    resp
}

/// 400 with a one-line text body naming the parameter.
fn bad_request(ctx: &WorkerCtx, e: &QueryError) -> Response<TermBody> {
    let text = Bytes::from(format!("{e}\n"));
    let mut resp = Response::new(TermBody::full(text, false, ctx.counters.clone()));
    *resp.status_mut() = StatusCode::BAD_REQUEST;
    resp.headers_mut().insert(X_TERM_SERVER, ctx.name.clone());
    resp.headers_mut().insert(CONTENT_TYPE, TEXT.clone());
    resp
}

/// `METHOD URI VERSION`, then `name: value` per header; hyper lowercases names and groups the
/// values of a repeated name after its first occurrence.
fn dump_head(parts: &Parts) -> Bytes {
    let mut out = BytesMut::with_capacity(256);
    out.put_slice(parts.method.as_str().as_bytes());
    out.put_u8(b' ');
    out.put_slice(parts.uri.to_string().as_bytes());
    out.put_slice(format!(" {:?}\n", parts.version).as_bytes());
    for (name, value) in &parts.headers {
        out.put_slice(name.as_str().as_bytes());
        out.put_slice(b": ");
        out.put_slice(value.as_bytes());
        out.put_u8(b'\n');
    }
    out.freeze()
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    #[test]
    fn page_names_server_and_escapes() {
        let p = page("term-8080");
        assert_eq!(p.len(), 112);
        assert!(std::str::from_utf8(&p)
            .unwrap()
            .contains("server term-8080<"));
        assert!(std::str::from_utf8(&page("a<b"))
            .unwrap()
            .contains("a&lt;b"));
    }

    #[test]
    fn dump_lists_request_line_and_headers() {
        let req = Request::post("/x?h=1")
            .header("b-header", "2")
            .header("a-header", "1")
            .body(())
            .unwrap();
        let (parts, ()) = req.into_parts();
        let text = dump_head(&parts);
        assert_eq!(
            &text[..],
            b"POST /x?h=1 HTTP/1.1\nb-header: 2\na-header: 1\n".as_slice()
        );
    }
}
