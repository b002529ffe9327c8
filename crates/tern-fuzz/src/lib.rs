//! The checks of tern's fuzz targets, one plain function per target.
//!
//! Each function takes the fuzzer's bytes, runs a parser on them and panics when a property
//! fails. `fuzz/fuzz_targets/<target>.rs` (nightly, libFuzzer, its own workspace) is one line
//! that calls the function; this crate's tests call the same functions on stable Rust for every
//! file under `fuzz/corpus/<target>/` (the seeds) and `fuzz/regressions/<target>/` (every input
//! that ever failed), so `cargo test` replays them without libFuzzer.
//!
//! | target | parser | checks |
//! |---|---|---|
//! | `request_head` | [`tern_h1::parse_request`] | spans inside the head, framing consistent with the fields, every shorter prefix `Partial`, a reused head gives the same answer |
//! | `response_head` | [`tern_h1::parse_response`] | the same, and the body rules of RFC 9112 §6.3 for the request's method |
//! | `chunked` | [`tern_h1::BodyReader`] (chunked) | passthrough, decode and piecewise feeding agree; whatever tern accepts, a reference decoder accepts with the same end and data |
//! | `head_rewrite` | parse → `write_request_edited` / `write_response_edited` → parse | the rewrite parses back to the same message (method, target, authority, framing, end-to-end fields); forwarding fields, header rule and cookie persistence edits are as asked; rewriting it again changes nothing |
//! | `differential` | tern-h1 against `httparse` and an RFC 9112 scanner | tern accepts ⇒ both accept, at the same length, with the same start line, fields and framing |
//! | `config_toml` | [`tern_config::parse`] | no panic; every error is located on a line of the file |
//! | `haproxy_cfg` | [`tern_config::haproxy::convert`] and the TOML stage | the translation is always valid TOML; errors and warnings point at lines of the `.cfg` |
//! | `acl` | ACL expressions and `if` conditions, inside a generated config | no panic; an accepted condition evaluates on several requests |
//! | `client_hello` | the ClientHello readers of admission and of TLS passthrough (`tern_proxy::tls::client_hello`) | no panic; no verdict changes as more bytes arrive; a server name found is a host name from the input |
//! | `header_value` | header rule values (HAProxy log-format subset) | accepted values hold no control bytes, only the documented fetches, and print back to the same pieces |
//! | `log_format` | `log_format` and `unique_id_format` strings (HAProxy log-format) | accepted formats hold no control bytes, only known variables, flags and fetches, samples numbered in order, and print back to the same pieces |
//! | `http2_frames` | tern's HTTP/2 connection in memory (`tern_proxy::http2_fuzz`): its frame-header reader, the `h2` crate with tern's settings, each request's translation into an HTTP/1.1 head | no panic; the connection ends with the input; each translated head is one whole head to tern-h1 with the stream's method and path |
//! | `health_reply` | a server's reply to an HTTP health check, read by the check's code (`tern_proxy::health_fuzz`): tern-h1 over HTTP/1.1, the `h2` crate as client over HTTP/2 | no panic; the check ends with the reply; an HTTP check's verdict (`L7*`, `SOCKERR`), passing only as `L7OK` with a status `expect_status` allows and the needle's bytes; over HTTP/1.1 the same verdict however the reply is cut |
//! | `h2_response` | an HTTP/2 server's response to tern (`tern_proxy::h2_upstream_fuzz`): the `h2` client with tern's settings, HEADERS into an HTTP/1.1 head, DATA and trailers as the relay reads them | no panic; one whole response head with the server's status (or refused as too large); the body takes up exactly the bytes after it and ends when the stream did |
//! | `mb_kernels` | tern-mb's IFMA kernels: eight X25519 ladders (shared secrets and public keys), batched RSA-2048/3072/4096 signatures | every lane equals aws-lc-rs (X25519, PKCS#1 v1.5 byte for byte), PSS signatures verify with it, the batcher's fault check never fires |
//! | `proxy_header` | [`tern_proxy_protocol::parse`] (PROXY v1/v2 received) | a complete header ends inside the input and the bound and does not depend on what follows; prefixes are `Partial`; a refusal stays one |
//! | `peers_message` | tern-peers: a peer's hello, then messages (definitions, updates decoded against them) | no panic; whole messages end inside the input; hellos, definitions and updates encode back to the same value; a message waited on has every prefix waited on |
//!
//! Selector bytes: most targets take their first byte as a set of switches (small or default
//! limits, the request method, forwarding options, where to cut), so one input also picks how
//! it is parsed and the seeds can pin a configuration.

#![forbid(unsafe_code)]

pub mod chunked;
pub mod client_hello;
pub mod config;
pub mod differential;
pub mod h1;
pub mod h2_response;
pub mod health;
pub mod http2;
pub mod log_format;
pub mod mb;
mod peer;
pub mod peers_message;
pub mod proxy_header;
pub mod rewrite;
mod rfc;

/// A target's check: panics when a property fails.
pub type Check = fn(&[u8]);

/// Every target by name, with its check.
pub const TARGETS: &[(&str, Check)] = &[
    ("request_head", h1::request_head),
    ("response_head", h1::response_head),
    ("chunked", chunked::chunked),
    ("head_rewrite", rewrite::head_rewrite),
    ("differential", differential::differential),
    ("config_toml", config::config_toml),
    ("haproxy_cfg", config::haproxy_cfg),
    ("acl", config::acl),
    ("header_value", config::header_value),
    ("log_format", log_format::log_format),
    ("client_hello", client_hello::client_hello),
    ("proxy_header", proxy_header::proxy_header),
    ("peers_message", peers_message::peers_message),
    ("http2_frames", http2::http2_frames),
    ("health_reply", health::health_reply),
    ("h2_response", h2_response::h2_response),
    ("mb_kernels", mb::mb_kernels),
];

/// The check of the target named `name`.
pub fn check_of(name: &str) -> Option<Check> {
    TARGETS.iter().find(|(n, _)| *n == name).map(|(_, f)| *f)
}
