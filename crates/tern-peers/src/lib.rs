//! HAProxy's peers protocol, version 2.1 (HAProxy's doc/peers-v2.0.txt): the text handshake
//! and the binary messages that carry stick-table entries between load balancers, as a codec
//! with no I/O.
//!
//! Why a crate of its own: the wire format is read from untrusted sockets, so it is kept apart
//! from the data path (like `tern-proxy-protocol` and `tern-h1`), fuzzed on its own
//! (`tern-fuzz`), and testable without sockets or clocks. tern-proxy's `peers/` module owns the
//! sessions (sockets, timers, tables); this crate only turns bytes into [`Message`]s and back.
//!
//! The protocol in one screen:
//!
//! | step | bytes |
//! |---|---|
//! | hello (connecting side) | `HAProxyS 2.1\n<remote name>\n<local name> <pid> <relative pid>\n` |
//! | status (accepting side) | `200\n` (or 300 try later, 501 protocol error, 502 bad version, 503 local peer unknown, 504 remote peer unknown) |
//! | message | `class` byte, `type` byte; types ≥ 128 then carry a [varint](varint) length and a payload |
//! | control (class 0) | 0 resync request, 1 resync finished, 2 resync partial, 3 resync confirm, 4 heartbeat |
//! | error (class 1) | 0 protocol error, 1 size limit |
//! | stick table (class 10) | 128 update, 129 incremental update, 130 table definition, 131 switch, 132 ack, 133/134 timed updates |
//!
//! An update names no table: it belongs to the table last defined (or switched to) on the
//! connection, and its values follow the data types that definition listed, in type order
//! ([`table`]). Every length is checked against what is left of its message and against
//! [`MAX_PAYLOAD`]; a malformed message is an [`Error`], never a panic.

#![forbid(unsafe_code)]

pub mod handshake;
pub mod message;
pub mod table;
pub mod varint;

#[cfg(test)]
mod tests;

pub use handshake::{Hello, Status};
pub use message::{decode, encode, Control, Message, UpdateKind};
pub use table::{DataType, Freq, Key, KeyType, TableDef, Update, Value};

/// The largest message payload accepted (HAProxy's messages fit its 16 KiB buffers).
pub const MAX_PAYLOAD: usize = 64 * 1024;

/// What is wrong with received bytes.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum Error {
    #[error("truncated {0}")]
    Truncated(&'static str),
    #[error("varint longer than 64 bits")]
    VarintOverflow,
    #[error("payload of {0} bytes exceeds the {MAX_PAYLOAD}-byte limit")]
    TooLarge(u64),
    #[error("unknown message class {0}")]
    UnknownClass(u8),
    #[error("unknown message type {1} in class {0}")]
    UnknownType(u8, u8),
    #[error("{0} bytes left over after the {1}")]
    Trailing(usize, &'static str),
    #[error("bad {0}")]
    Bad(&'static str),
}
