//! One response's streaming encoder, and the chunks it makes.
//!
//! Each encoder writes into a `Vec` of its own: [`Encoder::write`] feeds it the data of one
//! read of the server's body, [`Encoder::flush_chunk`] flushes it (a sync flush: the client can
//! decode every byte so far, so a response that streams keeps streaming, at the cost of a few
//! bytes per flush) and moves what it made into the output buffer as one chunk;
//! [`Encoder::finish_chunk`] ends the coded stream the same way. The `Vec` keeps its capacity
//! between reads, so a response costs one allocation for the encoder and its buffer whatever
//! its length.
//!
//! Settings: the configured level; brotli's and zstd's windows are 256 KiB (2^18) rather than
//! their 4 MiB and 2 MiB defaults for these levels, which bounds the memory of a compressed
//! response near that of zlib's 32 KiB window and tables (about 256 KiB) at a small cost in
//! ratio on bodies much larger than the window.

use std::io::{self, Write};

use flate2::write::{DeflateEncoder, GzEncoder, ZlibEncoder};
use tern_config::{Coding, Compression};
use tern_h1::{ChunkHeader, CHUNK_END};

/// log2 of brotli's and zstd's window.
const WINDOW_LOG: u32 = 18;
/// Brotli's own output buffer, between its state and the `Vec`.
const BROTLI_BUFFER: usize = 16 * 1024;

/// A streaming encoder of one response body.
pub(crate) struct Encoder {
    kind: Kind,
}

enum Kind {
    Gzip(GzEncoder<Vec<u8>>),
    Zlib(ZlibEncoder<Vec<u8>>),
    Raw(DeflateEncoder<Vec<u8>>),
    Brotli(Box<brotli::CompressorWriter<Vec<u8>>>),
    Zstd(zstd::stream::write::Encoder<'static, Vec<u8>>),
    /// Finished: nothing more to write.
    Done,
}

impl std::fmt::Debug for Encoder {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Encoder")
    }
}

impl Encoder {
    /// An encoder for `coding` at `config`'s level.
    pub(crate) fn new(coding: Coding, config: &Compression) -> io::Result<Self> {
        let level = flate2::Compression::new(config.gzip_level);
        let kind = match coding {
            Coding::Gzip => Kind::Gzip(GzEncoder::new(Vec::new(), level)),
            Coding::Deflate => Kind::Zlib(ZlibEncoder::new(Vec::new(), level)),
            Coding::RawDeflate => Kind::Raw(DeflateEncoder::new(Vec::new(), level)),
            Coding::Brotli => Kind::Brotli(Box::new(brotli::CompressorWriter::new(
                Vec::new(),
                BROTLI_BUFFER,
                config.br_level,
                WINDOW_LOG,
            ))),
            Coding::Zstd => {
                let mut z = zstd::stream::write::Encoder::new(Vec::new(), config.zstd_level)?;
                z.window_log(WINDOW_LOG)?;
                Kind::Zstd(z)
            }
        };
        Ok(Self { kind })
    }

    /// Codes `data` (what the encoder makes stays inside until a flush).
    pub(crate) fn write(&mut self, data: &[u8]) -> io::Result<()> {
        match &mut self.kind {
            Kind::Gzip(e) => e.write_all(data),
            Kind::Zlib(e) => e.write_all(data),
            Kind::Raw(e) => e.write_all(data),
            Kind::Brotli(e) => e.write_all(data),
            Kind::Zstd(e) => e.write_all(data),
            Kind::Done => Err(io::Error::other("write after the end of the coded body")),
        }
    }

    /// Flushes everything written so far and appends it to `out` as one chunk.
    pub(crate) fn flush_chunk(&mut self, out: &mut Vec<u8>) -> io::Result<()> {
        match &mut self.kind {
            Kind::Gzip(e) => e.flush()?,
            Kind::Zlib(e) => e.flush()?,
            Kind::Raw(e) => e.flush()?,
            Kind::Brotli(e) => e.flush()?,
            Kind::Zstd(e) => e.flush()?,
            Kind::Done => return Ok(()),
        }
        if let Some(made) = self.made() {
            chunk(made, out);
        }
        Ok(())
    }

    /// Ends the coded stream and appends its last bytes to `out` as one chunk (the caller
    /// writes the last chunk of the body).
    pub(crate) fn finish_chunk(&mut self, out: &mut Vec<u8>) -> io::Result<()> {
        let rest = match std::mem::replace(&mut self.kind, Kind::Done) {
            Kind::Gzip(e) => e.finish()?,
            Kind::Zlib(e) => e.finish()?,
            Kind::Raw(e) => e.finish()?,
            Kind::Brotli(e) => e.into_inner(),
            Kind::Zstd(e) => e.finish()?,
            Kind::Done => return Ok(()),
        };
        let mut rest = rest;
        chunk(&mut rest, out);
        Ok(())
    }

    /// The bytes made and not yet taken.
    fn made(&mut self) -> Option<&mut Vec<u8>> {
        Some(match &mut self.kind {
            Kind::Gzip(e) => e.get_mut(),
            Kind::Zlib(e) => e.get_mut(),
            Kind::Raw(e) => e.get_mut(),
            Kind::Brotli(e) => e.get_mut(),
            Kind::Zstd(e) => e.get_mut(),
            Kind::Done => return None,
        })
    }
}

/// Moves `made` into `out` as one chunk (nothing when empty: a size of 0 would end the body).
fn chunk(made: &mut Vec<u8>, out: &mut Vec<u8>) {
    if made.is_empty() {
        return;
    }
    out.extend_from_slice(ChunkHeader::new(made.len()).as_bytes());
    out.extend_from_slice(made);
    out.extend_from_slice(CHUNK_END);
    made.clear();
}
