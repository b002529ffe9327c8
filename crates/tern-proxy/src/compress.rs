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
//! Measuring CPU per MiB against HAProxy's compressor (not done here: the lead's machine):
//! serve one text file (e.g. 4 MiB of HTML) from the same backend, put tern (`compression =
//! { algos = ["gzip"] }`, level 1) and HAProxy (`compression algo gzip`, `tune.comp.maxlevel 1`)
//! in front on one pinned core each, drive each with the same closed loop (`h2load -n 2000 -c 8
//! -H 'accept-encoding: gzip'`), and divide each proxy's CPU time (`/proc/PID/stat` utime +
//! stime before and after) by the MiB of uncompressed body it relayed; the same run without
//! `accept-encoding` gives the baseline to subtract. Interleave the runs (A/B/A/B).

mod encoder;
mod judge;
mod negotiate;

pub(crate) use encoder::Encoder;
pub(crate) use judge::{edit_head, worth_compressing};
pub(crate) use negotiate::{negotiate, Offer};

#[cfg(test)]
mod tests;
