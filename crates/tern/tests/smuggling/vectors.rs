//! The framing vectors: what each one sends, where it comes from, and what tern does with it.
//!
//! Sources, by the short names used in the table:
//! - **RFC 9112** (HTTP/1.1) sections 2.2 (line endings), 3.2 (target and Host), 5.1-5.2
//!   (field lines, obs-fold), 6 (message body, with 6.1 Transfer-Encoding and 6.3 the framing
//!   rules), 7.1 (chunked), 9.6 (Connection) and 11.2 (request smuggling); **RFC 9110** for
//!   field values (5.5), Content-Length (8.6), Expect (10.1.1), Upgrade (7.8), CONNECT (9.3.6)
//!   and hop-by-hop fields (7.6.1).
//! - **Linhart 2005**: C. Linhart, A. Klein, R. Heled, S. Orrin, "HTTP Request Smuggling"
//!   (Watchfire), the first CL.TE and duplicate Content-Length cases.
//! - **Kettle 2019**: J. Kettle, "HTTP Desync Attacks: Request Smuggling Reborn" (PortSwigger),
//!   CL.TE, TE.CL and the Transfer-Encoding obfuscations.
//! - **Kettle 2025**: J. Kettle, "HTTP/1.1 must die: the desync endgame" (PortSwigger), 0.CL
//!   and Expect-based desyncs.
//! - **Kallus 2025**: B. Kallus et al., "Funky chunks" (chunk-size and chunk-extension
//!   discrepancies, TERM.EXT / TERM.SPILL), and the chunk-size overflow of issue 19.
//! - **Davison 2019**: N. Davison, "Abusing HTTP hop-by-hop request headers".
//! - **Bishop Fox 2020**: J. Polhill, "h2c smuggling"; **0ang3el 2019**: "WebSocket smuggling".
//!
//! `%BODY%` in a vector stands for the number of bytes after its head (the first empty line),
//! so that a Content-Length covering "everything after the head" stays right as the vector is
//! edited. `smuggled!()` is a complete request for `/smuggled`: a proxy that forwards it as a
//! request of its own without parsing it lets it past every rule the proxy applies.
//!
//! `tern` is what tern is expected to do, in the runner's notation (`outcome.rs`): `400`,
//! `501` a refusal; `fwd` a request forwarded (`fwd×2` two); `(cut)` the server saw the start
//! of a request tern then abandoned.

/// A family of vectors, for the comparison table.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Family {
    ClTe,
    TeObfuscation,
    ContentLength,
    ChunkSize,
    ChunkExtTrailers,
    LineEndings,
    ObsFold,
    Nul,
    TargetHost,
    Pipelined,
    Expect,
    Upgrade,
}

impl Family {
    pub const ALL: [Family; 12] = [
        Family::ClTe,
        Family::TeObfuscation,
        Family::ContentLength,
        Family::ChunkSize,
        Family::ChunkExtTrailers,
        Family::LineEndings,
        Family::ObsFold,
        Family::Nul,
        Family::TargetHost,
        Family::Pipelined,
        Family::Expect,
        Family::Upgrade,
    ];

    pub fn name(self) -> &'static str {
        match self {
            Family::ClTe => "CL.TE and TE.CL",
            Family::TeObfuscation => "Transfer-Encoding obfuscation",
            Family::ContentLength => "duplicate and malformed Content-Length",
            Family::ChunkSize => "chunk sizes",
            Family::ChunkExtTrailers => "chunk extensions and trailers",
            Family::LineEndings => "bare LF and bare CR",
            Family::ObsFold => "obs-fold",
            Family::Nul => "NUL and control bytes",
            Family::TargetHost => "request line, absolute-form and Host",
            Family::Pipelined => "requests inside bodies and pipelines",
            Family::Expect => "Expect",
            Family::Upgrade => "Upgrade, CONNECT and Connection",
        }
    }
}

/// One vector.
#[derive(Debug, Clone, Copy)]
pub struct Vector {
    pub name: &'static str,
    pub family: Family,
    pub source: &'static str,
    /// The bytes sent, `%BODY%` expanded by [`Vector::bytes`].
    pub text: &'static str,
    /// tern's expected outcome.
    pub tern: &'static str,
}

impl Vector {
    pub fn bytes(&self) -> Vec<u8> {
        let body = self
            .text
            .find("\r\n\r\n")
            .map_or(0, |end| self.text.len() - end - 4);
        self.text.replace("%BODY%", &body.to_string()).into_bytes()
    }
}

/// A complete request for `/smuggled` (35 bytes, 0x23).
macro_rules! smuggled {
    () => {
        "GET /smuggled HTTP/1.1\r\nHost: h\r\n\r\n"
    };
}

/// A chunked POST's head.
macro_rules! chunked_post {
    () => {
        "POST / HTTP/1.1\r\nHost: h\r\nTransfer-Encoding: chunked\r\n\r\n"
    };
}

const fn v(
    name: &'static str,
    family: Family,
    source: &'static str,
    text: &'static str,
    tern: &'static str,
) -> Vector {
    Vector {
        name,
        family,
        source,
        text,
        tern,
    }
}

use Family::*;

#[rustfmt::skip]
pub const VECTORS: &[Vector] = &[
    // ---- CL.TE and TE.CL ----
    v("cl-te", ClTe, "Linhart 2005; Kettle 2019",
      "POST / HTTP/1.1\r\nHost: h\r\nContent-Length: 6\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\nG",
      "fwd"),
    v("te-cl", ClTe, "Kettle 2019",
      concat!("POST / HTTP/1.1\r\nHost: h\r\nContent-Length: 4\r\nTransfer-Encoding: chunked\r\n\r\n23\r\n",
              smuggled!(), "\r\n0\r\n\r\n"),
      "fwd"),
    v("te-then-cl", ClTe, "RFC 9112 §6.3",
      concat!("POST / HTTP/1.1\r\nHost: h\r\nTransfer-Encoding: chunked\r\nContent-Length: %BODY%\r\n\r\n0\r\n\r\n",
              smuggled!()),
      "fwd"),
    v("cl-te-request-after-last-chunk", ClTe, "Kettle 2019",
      concat!("POST / HTTP/1.1\r\nHost: h\r\nContent-Length: %BODY%\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n",
              smuggled!()),
      "fwd"),
    v("te-and-cl-0", ClTe, "RFC 9112 §6.3 rule 3",
      "POST / HTTP/1.1\r\nHost: h\r\nContent-Length: 0\r\nTransfer-Encoding: chunked\r\n\r\n5\r\nhello\r\n0\r\n\r\n",
      "fwd"),
    v("te-and-invalid-cl", ClTe, "RFC 9112 §6.3",
      "POST / HTTP/1.1\r\nHost: h\r\nContent-Length: x\r\nTransfer-Encoding: chunked\r\n\r\n5\r\nhello\r\n0\r\n\r\n",
      "400"),
    v("te-and-cl-http10", ClTe, "RFC 9112 §6.1",
      concat!("POST / HTTP/1.0\r\nHost: h\r\nTransfer-Encoding: chunked\r\nContent-Length: %BODY%\r\n\r\n0\r\n\r\n",
              smuggled!()),
      "400"),
    // ---- Transfer-Encoding obfuscation (each next to a Content-Length covering the rest) ----
    v("te-xchunked", TeObfuscation, "Kettle 2019",
      concat!("POST / HTTP/1.1\r\nHost: h\r\nContent-Length: %BODY%\r\nTransfer-Encoding: xchunked\r\n\r\n0\r\n\r\n",
              smuggled!()),
      "501"),
    v("te-chunked-identity", TeObfuscation, "Kettle 2019; RFC 9112 §6.1",
      concat!("POST / HTTP/1.1\r\nHost: h\r\nContent-Length: %BODY%\r\nTransfer-Encoding: chunked, identity\r\n\r\n0\r\n\r\n",
              smuggled!()),
      "501"),
    v("te-identity-chunked", TeObfuscation, "RFC 9112 §6.1",
      "POST / HTTP/1.1\r\nHost: h\r\nTransfer-Encoding: identity, chunked\r\n\r\n5\r\nhello\r\n0\r\n\r\n",
      "501"),
    v("te-space-before-colon", TeObfuscation, "Kettle 2019; RFC 9112 §5.1",
      concat!("POST / HTTP/1.1\r\nHost: h\r\nContent-Length: %BODY%\r\nTransfer-Encoding : chunked\r\n\r\n0\r\n\r\n",
              smuggled!()),
      "400"),
    v("te-tab-before-value", TeObfuscation, "Kettle 2019",
      concat!("POST / HTTP/1.1\r\nHost: h\r\nContent-Length: %BODY%\r\nTransfer-Encoding:\tchunked\r\n\r\n0\r\n\r\n",
              smuggled!()),
      "fwd"),
    v("te-trailing-space", TeObfuscation, "Kettle 2019",
      concat!("POST / HTTP/1.1\r\nHost: h\r\nContent-Length: %BODY%\r\nTransfer-Encoding: chunked \r\n\r\n0\r\n\r\n",
              smuggled!()),
      "fwd"),
    v("te-leading-space-first-line", TeObfuscation, "Kettle 2019; RFC 9112 §2.2",
      concat!("POST / HTTP/1.1\r\n Transfer-Encoding: chunked\r\nHost: h\r\nContent-Length: %BODY%\r\n\r\n0\r\n\r\n",
              smuggled!()),
      "400"),
    v("te-obs-fold", TeObfuscation, "Kettle 2019; RFC 9112 §5.2",
      concat!("POST / HTTP/1.1\r\nHost: h\r\nContent-Length: %BODY%\r\nTransfer-Encoding:\r\n chunked\r\n\r\n0\r\n\r\n",
              smuggled!()),
      "400"),
    v("te-foreign-then-chunked", TeObfuscation, "Kettle 2019",
      concat!("POST / HTTP/1.1\r\nHost: h\r\nContent-Length: %BODY%\r\nTransfer-Encoding: x\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n",
              smuggled!()),
      "501"),
    v("te-chunked-twice", TeObfuscation, "RFC 9112 §6.1",
      "POST / HTTP/1.1\r\nHost: h\r\nTransfer-Encoding: chunked\r\nTransfer-Encoding: chunked\r\n\r\n5\r\nhello\r\n0\r\n\r\n",
      "400"),
    v("te-quoted", TeObfuscation, "Kettle 2019",
      concat!("POST / HTTP/1.1\r\nHost: h\r\nContent-Length: %BODY%\r\nTransfer-Encoding: \"chunked\"\r\n\r\n0\r\n\r\n",
              smuggled!()),
      "501"),
    v("te-uppercase", TeObfuscation, "RFC 9112 §7 (codings are case-insensitive)",
      "POST / HTTP/1.1\r\nHost: h\r\nTransfer-Encoding: CHUNKED\r\n\r\n5\r\nhello\r\n0\r\n\r\n",
      "fwd"),
    v("te-underscore", TeObfuscation, "Kettle 2019 (CGI maps _ to -)",
      concat!("POST / HTTP/1.1\r\nHost: h\r\nContent-Length: %BODY%\r\nTransfer_Encoding: chunked\r\n\r\n0\r\n\r\n",
              smuggled!()),
      "400"),
    v("te-vertical-tab", TeObfuscation, "Kettle 2019",
      concat!("POST / HTTP/1.1\r\nHost: h\r\nContent-Length: %BODY%\r\nTransfer-Encoding:\x0bchunked\r\n\r\n0\r\n\r\n",
              smuggled!()),
      "400"),
    v("te-empty-list-element", TeObfuscation, "RFC 9110 §5.6.1",
      "POST / HTTP/1.1\r\nHost: h\r\nTransfer-Encoding: , chunked\r\n\r\n5\r\nhello\r\n0\r\n\r\n",
      "fwd"),
    v("te-gzip-chunked", TeObfuscation, "RFC 9112 §6.1",
      "POST / HTTP/1.1\r\nHost: h\r\nTransfer-Encoding: gzip, chunked\r\n\r\n5\r\nhello\r\n0\r\n\r\n",
      "501"),
    v("te-chunk", TeObfuscation, "Kettle 2019",
      concat!("POST / HTTP/1.1\r\nHost: h\r\nContent-Length: %BODY%\r\nTransfer-Encoding: chunk\r\n\r\n0\r\n\r\n",
              smuggled!()),
      "501"),
    v("te-after-bare-lf", TeObfuscation, "Kettle 2019",
      concat!("POST / HTTP/1.1\r\nHost: h\r\nContent-Length: %BODY%\r\nX: 1\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n",
              smuggled!()),
      "fwd"),
    // ---- Content-Length ----
    v("cl-twice-same", ContentLength, "RFC 9110 §8.6; RFC 9112 §6.3",
      "POST / HTTP/1.1\r\nHost: h\r\nContent-Length: 5\r\nContent-Length: 5\r\n\r\nhello",
      "fwd"),
    v("cl-twice-different", ContentLength, "Linhart 2005; RFC 9112 §6.3",
      concat!("POST / HTTP/1.1\r\nHost: h\r\nContent-Length: 5\r\nContent-Length: %BODY%\r\n\r\nhello",
              smuggled!()),
      "400"),
    v("cl-list-different", ContentLength, "RFC 9110 §8.6",
      concat!("POST / HTTP/1.1\r\nHost: h\r\nContent-Length: 5, %BODY%\r\n\r\nhello", smuggled!()),
      "400"),
    v("cl-list-same", ContentLength, "RFC 9110 §8.6",
      "POST / HTTP/1.1\r\nHost: h\r\nContent-Length: 5, 5\r\n\r\nhello",
      "fwd"),
    v("cl-plus-sign", ContentLength, "RFC 9110 §8.6",
      "POST / HTTP/1.1\r\nHost: h\r\nContent-Length: +5\r\n\r\nhello",
      "400"),
    v("cl-negative", ContentLength, "RFC 9110 §8.6",
      "POST / HTTP/1.1\r\nHost: h\r\nContent-Length: -1\r\n\r\n",
      "400"),
    v("cl-hex", ContentLength, "RFC 9110 §8.6",
      "POST / HTTP/1.1\r\nHost: h\r\nContent-Length: 0x5\r\n\r\nhello",
      "400"),
    v("cl-inner-space", ContentLength, "RFC 9110 §8.6",
      concat!("POST / HTTP/1.1\r\nHost: h\r\nContent-Length: 4 0\r\n\r\nhello", smuggled!()),
      "400"),
    v("cl-overflow", ContentLength, "RFC 9112 §6.3 (2^64 + 5)",
      "POST / HTTP/1.1\r\nHost: h\r\nContent-Length: 18446744073709551621\r\n\r\nhello",
      "400"),
    v("cl-space-before-colon", ContentLength, "RFC 9112 §5.1",
      concat!("POST / HTTP/1.1\r\nHost: h\r\nContent-Length : 35\r\n\r\n", smuggled!()),
      "400"),
    v("cl-underscore", ContentLength, "CGI maps _ to -",
      concat!("POST / HTTP/1.1\r\nHost: h\r\nContent_Length: 35\r\n\r\n", smuggled!()),
      "400"),
    v("cl-leading-zeros", ContentLength, "RFC 9110 §8.6",
      "POST / HTTP/1.1\r\nHost: h\r\nContent-Length: 005\r\n\r\nhello",
      "fwd"),
    v("cl-empty", ContentLength, "RFC 9110 §8.6",
      concat!("POST / HTTP/1.1\r\nHost: h\r\nContent-Length: \r\n\r\n", smuggled!()),
      "400"),
    v("cl-longer-than-sent", ContentLength, "RFC 9112 §8 (incomplete message)",
      "POST / HTTP/1.1\r\nHost: h\r\nContent-Length: 100\r\n\r\nhello",
      "400 (cut)"),
    // ---- chunk sizes ----
    v("chunk-size-plus", ChunkSize, "Kallus 2025; RFC 9112 §7.1",
      concat!(chunked_post!(), "+5\r\nhello\r\n0\r\n\r\n"), "400"),
    v("chunk-size-minus", ChunkSize, "Kallus 2025",
      concat!(chunked_post!(), "-5\r\nhello\r\n0\r\n\r\n"), "400"),
    v("chunk-size-0x", ChunkSize, "Kallus 2025",
      concat!(chunked_post!(), "0x5\r\nhello\r\n0\r\n\r\n"), "400"),
    v("chunk-size-trailing-space", ChunkSize, "Kallus 2025; issue 19",
      concat!(chunked_post!(), "5 \r\nhello\r\n0\r\n\r\n"), "400"),
    v("chunk-size-leading-space", ChunkSize, "Kallus 2025",
      concat!(chunked_post!(), " 5\r\nhello\r\n0\r\n\r\n"), "400"),
    v("chunk-size-junk", ChunkSize, "Kallus 2025",
      concat!(chunked_post!(), "5g\r\nhello\r\n0\r\n\r\n"), "400"),
    v("chunk-size-overflow", ChunkSize, "issue 19 (HAProxy and nginx answer 400)",
      concat!(chunked_post!(), "fffffffffffffffff\r\nx\r\n0\r\n\r\n"), "400"),
    v("chunk-size-wraps-to-5", ChunkSize, "Kallus 2025 (2^64 + 5)",
      concat!(chunked_post!(), "10000000000000005\r\nhello\r\n0\r\n\r\n"), "400"),
    v("chunk-size-leading-zeros", ChunkSize, "RFC 9112 §7.1",
      concat!(chunked_post!(), "0000000000000000005\r\nhello\r\n0\r\n\r\n"), "fwd"),
    v("chunk-size-uppercase", ChunkSize, "RFC 9112 §7.1 (HEXDIG)",
      concat!(chunked_post!(), "A\r\n0123456789\r\n0\r\n\r\n"), "fwd"),
    v("chunk-size-empty", ChunkSize, "Kallus 2025",
      concat!(chunked_post!(), "\r\nhello\r\n0\r\n\r\n"), "400"),
    v("chunk-data-longer", ChunkSize, "Kallus 2025 (TERM.SPILL)",
      concat!(chunked_post!(), "3\r\nhello\r\n0\r\n\r\n"), "400"),
    v("chunk-data-shorter", ChunkSize, "Kallus 2025 (SPILL.TERM)",
      concat!(chunked_post!(), "8\r\nhello\r\n0\r\n\r\n", smuggled!()), "400"),
    v("chunk-data-without-crlf", ChunkSize, "Kallus 2025",
      concat!(chunked_post!(), "5\r\nhelloXX0\r\n\r\n"), "400"),
    v("chunk-size-nul", ChunkSize, "Kallus 2025",
      concat!(chunked_post!(), "5\0\r\nhello\r\n0\r\n\r\n"), "400"),
    // ---- chunk extensions and trailers ----
    v("chunk-ext-valid", ChunkExtTrailers, "RFC 9112 §7.1.1",
      concat!(chunked_post!(), "5;name=value;q=\"a;b\"\r\nhello\r\n0\r\n\r\n"), "fwd"),
    v("chunk-ext-bare-lf", ChunkExtTrailers, "Kallus 2025 (TERM.EXT)",
      concat!(chunked_post!(), "5;a\nb\r\nhello\r\n0\r\n\r\n"), "400"),
    v("chunk-ext-bare-cr", ChunkExtTrailers, "Kallus 2025",
      concat!(chunked_post!(), "5;a\rb\r\nhello\r\n0\r\n\r\n"), "400"),
    v("chunk-ext-empty", ChunkExtTrailers, "issue 19",
      concat!(chunked_post!(), "5;\r\nhello\r\n0\r\n\r\n"), "400"),
    v("chunk-ext-open-quote", ChunkExtTrailers, "issue 19",
      concat!(chunked_post!(), "5;a=\"b\r\nhello\r\n0\r\n\r\n"), "400"),
    v("last-chunk-ext", ChunkExtTrailers, "RFC 9112 §7.1",
      concat!(chunked_post!(), "5\r\nhello\r\n0;a=b\r\n\r\n"), "fwd"),
    v("trailer-framing-fields", ChunkExtTrailers, "RFC 9110 §6.5.1; issue 19",
      concat!(chunked_post!(),
              "5\r\nhello\r\n0\r\nContent-Length: 35\r\nTransfer-Encoding: chunked\r\nHost: evil\r\nX-Sum: 1\r\n\r\n"),
      "fwd"),
    v("trailer-obs-fold", ChunkExtTrailers, "RFC 9112 §7.1.2",
      concat!(chunked_post!(), "5\r\nhello\r\n0\r\nX-A: a\r\n b\r\n\r\n"), "400"),
    v("request-in-trailer-section", ChunkExtTrailers, "Kettle 2019",
      concat!(chunked_post!(), "5\r\nhello\r\n0\r\n", smuggled!()), "400"),
    // ---- bare LF and bare CR ----
    v("lf-only-head", LineEndings, "RFC 9112 §2.2 (MAY accept)",
      "GET / HTTP/1.1\nHost: h\n\n", "fwd"),
    v("lf-in-one-line", LineEndings, "RFC 9112 §2.2",
      "GET / HTTP/1.1\r\nHost: h\nX-A: 1\r\n\r\n", "fwd"),
    v("cr-inside-value", LineEndings, "RFC 9112 §2.2",
      "GET / HTTP/1.1\r\nHost: h\r\nX-A: a\rb\r\n\r\n", "400"),
    v("cr-as-line-end", LineEndings, "RFC 9112 §2.2",
      "GET / HTTP/1.1\r\nHost: h\rX-A: 1\r\n\r\n", "400"),
    v("cr-cr-lf", LineEndings, "RFC 9112 §2.2",
      "GET / HTTP/1.1\r\r\nHost: h\r\n\r\n", "400"),
    v("lf-chunked-framing", LineEndings, "RFC 9112 §7.1",
      concat!(chunked_post!(), "5\nhello\n0\n\n"), "400"),
    v("lf-after-chunk-data", LineEndings, "Kallus 2025",
      concat!(chunked_post!(), "5\r\nhello\n0\r\n\r\n"), "400"),
    v("lf-lf-ends-head", LineEndings, "RFC 9112 §2.2",
      concat!("GET / HTTP/1.1\r\nHost: h\r\nX: 1\n\n", smuggled!()), "fwd×2"),
    // ---- obs-fold ----
    v("fold-ordinary-field", ObsFold, "RFC 9112 §5.2",
      "GET / HTTP/1.1\r\nHost: h\r\nX-A: a\r\n b\r\n\r\n", "400"),
    v("fold-host", ObsFold, "RFC 9112 §5.2",
      "GET / HTTP/1.1\r\nHost: h\r\n evil\r\n\r\n", "400"),
    v("fold-content-length", ObsFold, "RFC 9112 §5.2",
      "POST / HTTP/1.1\r\nHost: h\r\nContent-Length:\r\n 5\r\n\r\nhello", "400"),
    v("fold-tab", ObsFold, "RFC 9112 §5.2",
      "GET / HTTP/1.1\r\nHost: h\r\nX-A: a\r\n\tb\r\n\r\n", "400"),
    // ---- NUL and control bytes ----
    v("nul-in-value", Nul, "RFC 9110 §5.5",
      "GET / HTTP/1.1\r\nHost: h\r\nX-A: a\0b\r\n\r\n", "400"),
    v("nul-in-name", Nul, "RFC 9110 §5.1",
      "GET / HTTP/1.1\r\nHost: h\r\nX\0A: b\r\n\r\n", "400"),
    v("nul-in-target", Nul, "RFC 9112 §3.2",
      "GET /a\0b HTTP/1.1\r\nHost: h\r\n\r\n", "400"),
    v("nul-after-te", Nul, "Kettle 2019",
      concat!("POST / HTTP/1.1\r\nHost: h\r\nContent-Length: %BODY%\r\nTransfer-Encoding: chunked\0\r\n\r\n0\r\n\r\n",
              smuggled!()),
      "400"),
    v("del-in-value", Nul, "RFC 9110 §5.5",
      "GET / HTTP/1.1\r\nHost: h\r\nX-A: a\x7fb\r\n\r\n", "400"),
    v("obs-text-in-value", Nul, "RFC 9110 §5.5 (obs-text)",
      "GET / HTTP/1.1\r\nHost: h\r\nX-A: caf\u{e9}\r\n\r\n", "fwd"),
    // ---- request line, absolute-form and Host ----
    v("absolute-form-other-host", TargetHost, "RFC 9112 §3.2.2",
      "GET http://a.example/p HTTP/1.1\r\nHost: b.example\r\n\r\n", "fwd"),
    v("absolute-form-userinfo", TargetHost, "RFC 9112 §3.2.2; RFC 9110 §4.2.4",
      "GET http://u:p@a.example/p HTTP/1.1\r\nHost: a.example\r\n\r\n", "fwd"),
    v("absolute-form-no-host", TargetHost, "RFC 9112 §3.2",
      "GET http://a.example/p HTTP/1.1\r\n\r\n", "400"),
    v("absolute-form-no-path", TargetHost, "RFC 9112 §3.2.2",
      "GET http://a.example HTTP/1.1\r\nHost: b.example\r\n\r\n", "fwd"),
    v("host-twice", TargetHost, "RFC 9112 §3.2",
      "GET / HTTP/1.1\r\nHost: a\r\nHost: b\r\n\r\n", "400"),
    v("host-with-path", TargetHost, "RFC 9110 §7.2",
      "GET / HTTP/1.1\r\nHost: a/b\r\n\r\n", "400"),
    v("host-with-space", TargetHost, "RFC 9110 §7.2",
      "GET / HTTP/1.1\r\nHost: a b\r\n\r\n", "400"),
    v("host-missing", TargetHost, "RFC 9112 §3.2",
      "GET / HTTP/1.1\r\n\r\n", "400"),
    v("host-missing-http10", TargetHost, "RFC 9112 §3.2",
      "GET / HTTP/1.0\r\n\r\n", "fwd"),
    v("target-with-space", TargetHost, "RFC 9112 §3",
      "GET /a b HTTP/1.1\r\nHost: h\r\n\r\n", "400"),
    v("target-with-fragment", TargetHost, "RFC 9110 §7.1",
      "GET /a#b HTTP/1.1\r\nHost: h\r\n\r\n", "400"),
    v("request-line-two-spaces", TargetHost, "RFC 9112 §3",
      "GET  / HTTP/1.1\r\nHost: h\r\n\r\n", "400"),
    v("request-line-tabs", TargetHost, "RFC 9112 §3",
      "GET\t/\tHTTP/1.1\r\nHost: h\r\n\r\n", "400"),
    v("http09-request-line", TargetHost, "RFC 9112 §2.3 (no HTTP/0.9)",
      "GET /\r\n\r\n", "400"),
    v("empty-line-before-request", TargetHost, "RFC 9112 §2.2 (SHOULD ignore one)",
      "\r\nGET / HTTP/1.1\r\nHost: h\r\n\r\n", "fwd"),
    v("request-line-trailing-space", TargetHost, "RFC 9112 §3",
      "GET / HTTP/1.1 \r\nHost: h\r\n\r\n", "400"),
    v("host-bad-port", TargetHost, "RFC 9110 §7.2",
      "GET / HTTP/1.1\r\nHost: h:99999\r\n\r\n", "400"),
    v("version-lowercase", TargetHost, "RFC 9112 §2.3",
      "GET / http/1.1\r\nHost: h\r\n\r\n", "400"),
    // ---- requests inside bodies and pipelines ----
    v("get-body-is-a-request", Pipelined, "Kettle 2019",
      concat!("GET / HTTP/1.1\r\nHost: h\r\nContent-Length: 35\r\n\r\n", smuggled!()), "fwd"),
    v("chunk-data-is-a-request", Pipelined, "RFC 9112 §7.1",
      concat!(chunked_post!(), "23\r\n", smuggled!(), "\r\n0\r\n\r\n"), "fwd"),
    v("pipeline-of-two", Pipelined, "RFC 9112 §9.3.2",
      concat!("GET /1 HTTP/1.1\r\nHost: h\r\n\r\n", smuggled!()), "fwd×2"),
    v("request-after-connection-close", Pipelined, "RFC 9112 §9.6",
      concat!("GET / HTTP/1.1\r\nHost: h\r\nConnection: close\r\n\r\n", smuggled!()), "fwd"),
    v("request-after-http10", Pipelined, "RFC 9112 §9.3",
      concat!("GET / HTTP/1.0\r\n\r\n", smuggled!()), "fwd"),
    v("head-with-body", Pipelined, "RFC 9110 §9.3.2",
      concat!("HEAD / HTTP/1.1\r\nHost: h\r\nContent-Length: 35\r\n\r\n", smuggled!()), "fwd"),
    v("cl-0-then-request", Pipelined, "Kettle 2025 (0.CL)",
      concat!("POST / HTTP/1.1\r\nHost: h\r\nContent-Length: 0\r\n\r\n", smuggled!()), "fwd×2"),
    // ---- Expect ----
    v("expect-body-sent-at-once", Expect, "RFC 9110 §10.1.1; Kettle 2025",
      concat!("POST / HTTP/1.1\r\nHost: h\r\nExpect: 100-continue\r\nContent-Length: 5\r\n\r\nhello",
              smuggled!()),
      "fwd×2"),
    v("expect-without-body", Expect, "Kettle 2025",
      concat!("GET / HTTP/1.1\r\nHost: h\r\nExpect: 100-continue\r\n\r\n", smuggled!()), "fwd×2"),
    v("expect-http10", Expect, "RFC 9110 §10.1.1 (ignored in HTTP/1.0)",
      "POST / HTTP/1.0\r\nExpect: 100-continue\r\nContent-Length: 5\r\n\r\nhello", "fwd"),
    v("expect-unknown", Expect, "RFC 9110 §10.1.1 (417)",
      "POST / HTTP/1.1\r\nHost: h\r\nExpect: 101-nope\r\nContent-Length: 5\r\n\r\nhello", "fwd"),
    v("expect-obs-fold", Expect, "Kettle 2025",
      "POST / HTTP/1.1\r\nHost: h\r\nExpect:\r\n 100-continue\r\nContent-Length: 5\r\n\r\nhello", "400"),
    v("expect-chunked", Expect, "RFC 9110 §10.1.1",
      "POST / HTTP/1.1\r\nHost: h\r\nExpect: 100-continue\r\nTransfer-Encoding: chunked\r\n\r\n5\r\nhello\r\n0\r\n\r\n",
      "fwd"),
    // ---- Upgrade, CONNECT and Connection ----
    v("upgrade-websocket-not-accepted", Upgrade, "0ang3el 2019",
      concat!("GET /ws HTTP/1.1\r\nHost: h\r\nUpgrade: websocket\r\nConnection: Upgrade\r\nSec-WebSocket-Version: 1337\r\n\r\n",
              smuggled!()),
      "fwd×2"),
    v("upgrade-h2c", Upgrade, "Bishop Fox 2020",
      concat!("GET / HTTP/1.1\r\nHost: h\r\nUpgrade: h2c\r\nHTTP2-Settings: AAMAAABkAARAAAAAAAIAAAAA\r\nConnection: Upgrade, HTTP2-Settings\r\n\r\n",
              smuggled!()),
      "fwd×2"),
    v("upgrade-on-post", Upgrade, "RFC 9110 §7.8",
      concat!("POST / HTTP/1.1\r\nHost: h\r\nUpgrade: websocket\r\nConnection: Upgrade\r\nContent-Length: 5\r\n\r\nhello",
              smuggled!()),
      "fwd×2"),
    v("upgrade-without-connection", Upgrade, "RFC 9110 §7.8",
      concat!("GET / HTTP/1.1\r\nHost: h\r\nUpgrade: websocket\r\n\r\n", smuggled!()), "fwd×2"),
    v("upgrade-http10", Upgrade, "RFC 9110 §7.8 (ignored in HTTP/1.0)",
      concat!("GET / HTTP/1.0\r\nUpgrade: websocket\r\nConnection: Upgrade, keep-alive\r\n\r\n", smuggled!()),
      "fwd×2"),
    v("connect-then-request", Upgrade, "RFC 9110 §9.3.6",
      concat!("CONNECT h:443 HTTP/1.1\r\nHost: h:443\r\n\r\n", smuggled!()), "fwd 405 fwd"),
    v("connection-names-content-length", Upgrade, "Davison 2019",
      concat!("POST / HTTP/1.1\r\nHost: h\r\nContent-Length: 35\r\nConnection: Content-Length\r\n\r\n", smuggled!()),
      "fwd"),
    v("connection-names-transfer-encoding", Upgrade, "Davison 2019",
      concat!("POST / HTTP/1.1\r\nHost: h\r\nTransfer-Encoding: chunked\r\nConnection: Transfer-Encoding\r\n\r\n",
              "23\r\n", smuggled!(), "\r\n0\r\n\r\n"),
      "fwd"),
    v("connection-names-host", Upgrade, "Davison 2019",
      "GET / HTTP/1.1\r\nHost: h\r\nConnection: Host\r\n\r\n", "fwd"),
];
