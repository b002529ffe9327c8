//! tern's HTTP/1.1 codec: what the proxy needs to read, judge and rewrite messages, and nothing
//! that does I/O.
//!
//! The proxy loop built on this crate owns two sockets and two read buffers per client
//! connection and forwards heads and bodies between them in one task. The codec is shaped by
//! that loop:
//!
//! - **Zero copy.** A head is parsed in place in the connection's read buffer (by `httparse`).
//!   What the parser learns is kept as [`Span`]s (offsets) into that buffer plus a few derived
//!   facts, in a [`RequestHead`] / [`ResponseHead`] that is reused for every message of the
//!   connection. Nothing is copied out and no header map is built: after the first message the
//!   parse allocates nothing (the header storage is recycled, see `fields.rs`).
//! - **Decide once.** Each header field is classified once at parse time ([`FieldKind`]), and
//!   everything the proxy must decide from the head (body framing, keep-alive, `Expect`,
//!   trailers, the Host, which fields `Connection` names) is computed in the same pass, so the
//!   rewrite is a single loop that copies field lines or skips them.
//! - **Strict where it matters.** This code decides what reaches a server, so the rules that
//!   keep a request from being read two ways (RFC 9112 §6.3, §7.1; RFC 9110 §7.2) are enforced
//!   here and each refusal is an [`H1Error`] that names the status to answer and a counter.
//! - **Bodies are not copied either.** [`BodyReader`] is a state machine over the bytes that
//!   follow a head: it finds where the message ends and, to forward it, says what to write as
//!   offsets into the input ([`Piece`]): the bytes as they are for a body framed by length, the
//!   data under size lines tern writes itself for a chunked body, whose framing and trailer
//!   lines are never passed on as received.
//!
//! The flow for one exchange:
//!
//! ```text
//! parse_request(client_buf) -> RequestHead --write_request--> bytes for the server
//! RequestHead::body_reader() -> BodyReader (forward) for the upload
//! parse_response(server_buf, request method) -> ResponseHead --write_response--> bytes for
//!     the client + ResponsePlan (how to carry the body, whether the client stays)
//! ```

#![forbid(unsafe_code)]

pub mod body;
mod chunked;
mod cookie;
mod edits;
pub mod error;
mod fields;
pub mod limits;
pub mod local;
mod request;
mod response;
mod rewrite;
mod set_cookie;
mod span;
mod target;
mod trailers;

pub use body::{
    encode_chunk, BodyReader, ChunkHeader, Decoded, Piece, Progress, CHUNK_END, LAST_CHUNK,
    MAX_RANGES,
};
pub use cookie::{find_cookie, prefix_server, CookieEdit, PREFIX_DELIMITER};
pub use edits::{FieldValue, HeaderEdits, LineEdits};
pub use error::H1Error;
pub use fields::{Field, FieldKind};
pub use limits::Limits;
pub use request::{parse_request, Framing, RequestHead, RequestInfo, TargetForm};
pub use response::{parse_response, ResponseBody, ResponseHead};
pub use rewrite::{
    write_request, write_request_edited, write_response, write_response_edited,
    write_response_encoded, ClientBody, Edits, Forwarding, ResponsePlan,
};
pub use span::{Method, Span, Status, Version};
