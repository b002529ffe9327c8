//! Response compression (`compression` on a frontend or backend), for both protocols: an
//! HTTP/2 stream's response is written by the HTTP/1.1 relay too (design note 0003), so the
//! relay (`http1/relay/download.rs`) is the one place that compresses.
//!
//! Three steps, each in its own file:
//! - **negotiate** (`negotiate.rs`), when the request is forwarded: the coding the request's
//!   `Accept-Encoding` accepts among those configured ([`negotiate`]); with `offload`, the
//!   request then goes to the server without `Accept-Encoding`.
//! - **judge** (`judge.rs`), on the response head: HAProxy's rules for what not to compress
//!   (status other than 200 to 203, already encoded, `no-transform`, multipart or unlisted
//!   content types, a bad or repeated ETag, a body framed by neither length nor chunks, an
//!   HTTP/1.0 message), plus ranges and tern's `min_size`. A response worth it gets
//!   `Content-Encoding`, `Vary: Accept-Encoding` and a weak ETag through the response's
//!   header edits, and goes chunked without `Content-Length` (tern-h1
//!   `write_response_encoded`).
//! - **encode** (`encoder.rs`): one streaming encoder per compressed response, fed the data of
//!   each read of the server's body and flushed at its end, so a response that streams keeps
//!   streaming; what it made goes out as one chunk. Memory is the encoder's state and window
//!   (set to 256 KiB for brotli and zstd) and the output of one read, whatever the body's size.
//!
//! A request of a frontend and backend without `compression` pays two `Option` checks: no
//! field is read, nothing is allocated. The encoder is allocated (boxed) only for a response
//! that is compressed.
//!
//! CPU per MiB against HAProxy's compressor, on the same text at the same level:
//! `bench/compression-cost.sh` (not measured yet: it wants a quiet machine).

mod encoder;
mod judge;
mod negotiate;

pub(crate) use encoder::Encoder;
pub(crate) use judge::{edit_head, worth_compressing};
pub(crate) use negotiate::{negotiate, Offer};

#[cfg(test)]
mod tests;
