//! Response compression (`compression`, HAProxy's `compression algo|type|offload`).
//!
//! A frontend or backend with a `compression` table compresses the responses it relays when
//! the request's `Accept-Encoding` accepts one of its codings and the response is worth it
//! (the skip rules are tern-proxy's `compress` module). The backend's table, when it has one,
//! is the one used, as in HAProxy; `offload` holds when either side sets it.

/// A content coding tern can produce.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Coding {
    /// gzip (RFC 1952): DEFLATE with a gzip header and CRC-32.
    Gzip,
    /// `deflate` as RFC 9110 §8.4.1.2 defines it: DEFLATE in the zlib format (RFC 1950).
    Deflate,
    /// HAProxy's `raw-deflate`: DEFLATE without the zlib wrapper, labelled `deflate` (what
    /// some old browsers expected).
    RawDeflate,
    /// Brotli (RFC 7932), `br`.
    Brotli,
    /// Zstandard (RFC 8878), `zstd`.
    Zstd,
}

impl Coding {
    /// Every coding with its configuration name.
    pub const ALL: [(&'static str, Coding); 5] = [
        ("gzip", Coding::Gzip),
        ("deflate", Coding::Deflate),
        ("raw-deflate", Coding::RawDeflate),
        ("br", Coding::Brotli),
        ("zstd", Coding::Zstd),
    ];

    /// The coding a configuration name stands for.
    pub fn from_name(name: &str) -> Option<Coding> {
        Self::ALL.iter().find(|(n, _)| *n == name).map(|(_, c)| *c)
    }

    /// The `Accept-Encoding` / `Content-Encoding` token (`raw-deflate` answers `deflate`).
    pub fn token(self) -> &'static str {
        match self {
            Coding::Gzip => "gzip",
            Coding::Deflate | Coding::RawDeflate => "deflate",
            Coding::Brotli => "br",
            Coding::Zstd => "zstd",
        }
    }
}

/// Default `min_size`: below about a kilobyte a response fits in one or two TCP segments
/// either way, so compressing it saves no round trip, only CPU.
pub const DEFAULT_MIN_SIZE: u64 = 1024;
/// Default gzip/deflate level: HAProxy's `tune.comp.maxlevel` default.
pub const DEFAULT_GZIP_LEVEL: u32 = 1;
/// Default brotli quality: the highest of brotli's fast match finders (5 and up switch to
/// slower ones, 10 and 11 are meant for static files compressed once).
pub const DEFAULT_BR_LEVEL: u32 = 4;
/// Default zstd level: zstd's own default, fast enough for every response.
pub const DEFAULT_ZSTD_LEVEL: i32 = 3;

/// The `compression` table of a frontend or backend.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Compression {
    /// The codings offered, in order of preference when the client weighs several equally.
    pub algos: Vec<Coding>,
    /// Content types compressed, lower-cased; a response's type matches a prefix (HAProxy's
    /// rule). Empty: every type but `multipart/*`.
    pub types: Vec<String>,
    /// Remove `Accept-Encoding` from requests that tern will compress, so that servers send
    /// identity bodies (HAProxy's `compression offload`).
    pub offload: bool,
    /// Responses with a Content-Length below this are sent as they are.
    pub min_size: u64,
    /// gzip, deflate and raw-deflate level (1 to 9).
    pub gzip_level: u32,
    /// Brotli quality (0 to 11).
    pub br_level: u32,
    /// Zstandard level (1 to 19).
    pub zstd_level: i32,
}

impl Compression {
    /// The table in force for a request of `frontend` routed to `backend`: the backend's, else
    /// the frontend's, with `offload` from either (HAProxy's rule).
    pub fn effective<'a>(
        frontend: Option<&'a Compression>,
        backend: Option<&'a Compression>,
    ) -> Option<(&'a Compression, bool)> {
        let table = backend.or(frontend)?;
        let offload = frontend.is_some_and(|c| c.offload) || backend.is_some_and(|c| c.offload);
        Some((table, offload))
    }
}
