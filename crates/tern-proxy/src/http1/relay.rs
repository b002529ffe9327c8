//! One exchange in flight: the rest of the request body goes up while the response comes down.
//!
//! Once the request head has left for the server, a [`Relay`] drives four directions from the
//! session task, in one `poll`:
//! - **upload**: client → request body → server: a body framed by length passes unchanged, a
//!   chunked one is re-framed by the [`BodyReader`] (the data under size lines tern writes, the
//!   trailer fields that may be trailers, see `tern_h1::BodyReader::forward`); bytes after its
//!   end stay in the client buffer as the next (pipelined) request;
//! - **download**: the response head is read, rewritten into the output buffer and written with
//!   the first body bytes in one write; the body follows, carried by the [`tern_h1::ResponsePlan`]
//!   (passed on as the upload is, de-chunked for an HTTP/1.0 client, or chunked when the
//!   server's body runs until it closes). Each piece is written, then flushed, so a TLS client
//!   gets full records.
//!
//! Either way a piece is one vectored write (`flight.rs`): tern's framing and the data ranges of
//! the read buffer, no data copied, one write per read as when bytes were passed through.
//!
//! Both run at once, so a server that answers before it has read the whole upload (an error, an
//! echo) is relayed at once, and the upload goes on after its response. The relay ends when both
//! messages are complete, or at the first fault. A `101` that accepts an upgrade request is a
//! message without body: once its head is written the relay ends in [`End::Switched`], and the
//! caller turns both connections into a tunnel ([`crate::tunnel`]); bytes after the request
//! head stay in the client buffer and bytes after the 101 in the server buffer, for the tunnel.
//!
//! Timeouts are inactivity timeouts per side, armed only while that side is what the relay waits
//! for: `client` while a read of the upload or a write of the response is pending; `server`
//! while a write of the upload or a read of the response is pending, except while the upload
//! waits for the client (the server is then not to blame). The wait for the response head
//! therefore counts from the end of the upload, or from when the server stopped taking it.

use std::cell::RefCell;
use std::io;
use std::pin::Pin;
use std::task::{Context, Poll};
use std::time::Duration;

use tern_config::{Capture, HttpRule};
use tern_h1::{BodyReader, ClientBody, H1Error, HeaderEdits, RequestInfo, ResponseHead};
use tokio::io::AsyncWrite;

use crate::access_log::Tracker;
use crate::buffer::Buffer;
use crate::compress::{Encoder, Offer};
use crate::exchange::upstream::ServerConn;
use crate::listen::client::ClientStream;
use crate::rules::facts::{ConnFacts, ResponseFacts};
use crate::rules::vars::Vars;
use crate::rules::{self, Refusal};
use crate::timer::{Idle, Timer};
use flight::Flight;
use tern_proxy_protocol::Tlvs;

/// Why an exchange stopped before both messages were complete.
#[derive(Debug, thiserror::Error)]
pub(crate) enum Fault {
    #[error("client inactive beyond the client timeout")]
    ClientTimeout,
    #[error("client closed before the end of its request body")]
    ClientClosed,
    #[error("client connection: {0}")]
    ClientIo(#[source] io::Error),
    #[error("request body: {0}")]
    BadRequestBody(#[source] H1Error),
    #[error("server inactive beyond the server timeout")]
    ServerTimeout,
    #[error("server closed before the end of its response")]
    ServerClosed,
    #[error("server connection: {0}")]
    ServerIo(#[source] io::Error),
    /// Malformed, too large, a `101` that was not asked for, or a CONNECT tunnel.
    #[error("response refused: {0}")]
    BadResponse(#[source] H1Error),
    /// An `http_response` `deny` rule refused the response; the client gets this status.
    #[error("response denied by a rule ({0})")]
    ResponseDenied(u16),
    /// An `http_response` `return` rule replaced the response: the rule at this index of the
    /// backend's list (`backend`) or of the frontend's.
    #[error("response replaced by a return rule")]
    ResponseReturned { backend: bool, index: usize },
    /// The compressor failed (it writes to memory: not expected to happen).
    #[error("response compression: {0}")]
    Encoder(#[source] io::Error),
}

/// How far the response had got when a fault stopped the exchange.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Stage {
    /// No response head yet: nothing was sent to the client (but `100 Continue`).
    Head,
    /// The response head went (or was going) to the client: the response can only be cut.
    Body,
    /// The response is complete; the upload was not.
    Done,
}

/// How an exchange ended.
#[derive(Debug)]
pub(crate) enum End {
    /// Both messages are complete.
    Complete {
        /// The client connection may carry another request.
        keep_client: bool,
        /// The server connection may carry another request.
        reuse_server: bool,
    },
    Failed {
        fault: Fault,
        stage: Stage,
        /// Whether any byte came from the server.
        received: bool,
    },
    /// The server switched protocols: a `101` answered the upgrade request and its head went to
    /// the client. Neither connection carries HTTP any more; the server buffer holds what came
    /// after the 101, the client buffer what came after the request.
    Switched,
}

/// What a relay reports.
#[derive(Debug)]
pub(crate) struct Outcome {
    /// The status of the response handed to the client, if its head was.
    pub status: Option<u16>,
    /// When the server's final response head was parsed (the balancer's response time).
    pub responded_at: Option<tokio::time::Instant>,
    pub end: End,
    /// Bytes written to the client (`100 Continue`, head, body and framing).
    pub sent: u64,
    /// Request body bytes taken from the client after those that came with the head (as
    /// received, chunk framing included).
    pub uploaded: u64,
}

impl Outcome {
    /// A request body refused before anything was sent.
    pub(crate) fn refused(e: H1Error) -> Self {
        Outcome {
            status: None,
            responded_at: None,
            end: End::Failed {
                fault: Fault::BadRequestBody(e),
                stage: Stage::Head,
                received: false,
            },
            sent: 0,
            uploaded: 0,
        }
    }
}

/// What one direction waits for after a poll.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Wait {
    Nothing,
    Client,
    Server,
}

/// The request on its way to the server.
#[derive(Debug)]
pub(crate) struct Upload {
    /// The request head (with the body bytes that came with it) in the output buffer:
    /// `out[head_pos..head_len]` is still to write.
    head_pos: usize,
    head_len: usize,
    /// Send `100 Continue` to the client once the head is out.
    expect: bool,
    reader: BodyReader,
    /// The body bytes at the front of the client buffer being written.
    flight: Flight,
    /// Body bytes taken from the client and written on (after those that came with the head).
    sent: u64,
    wait: Wait,
}

impl Upload {
    /// The request whose head (and first body bytes) fill the first `head_len` bytes of the
    /// output buffer; `reader` has seen those body bytes.
    pub(crate) fn new(head_len: usize, reader: BodyReader, expect: bool) -> Self {
        Self {
            head_pos: 0,
            head_len,
            expect,
            reader,
            flight: Flight::default(),
            sent: 0,
            wait: Wait::Nothing,
        }
    }

    fn is_done(&self) -> bool {
        self.head_len == 0 && self.flight.is_empty() && self.reader.is_done()
    }
}

/// The response on its way to the client.
#[derive(Debug)]
struct Download {
    stage: Stage,
    plan: ClientBody,
    /// The response is a `101` to an upgrade request: a tunnel follows.
    switched: bool,
    reader: BodyReader,
    body_done: bool,
    received: bool,
    status: Option<u16>,
    responded_at: Option<tokio::time::Instant>,
    keep_client: bool,
    reuse_server: bool,
    wait: Wait,
    /// Bytes written to the client.
    sent: u64,
    /// Output in flight: the output buffer (the head), then the body piece of the server
    /// buffer and its framing, then a tail. A compressed body's chunks are in the output
    /// buffer, and the piece only says how much of the server buffer they stand for.
    flight: Flight,
    unflushed: bool,
    /// The encoder of a compressed response ([`ClientBody::Encoded`]); boxed, and only then.
    encoder: Option<Box<Encoder>>,
}

/// The client side of a relay: the session's connection, read buffer, output buffer and timer.
pub(crate) struct ClientSide<'a, S> {
    pub io: &'a mut S,
    pub buf: &'a mut Buffer,
    pub out: &'a mut Vec<u8>,
    pub timer: &'a mut Timer,
    pub timeout: Duration,
    /// What cookie persistence adds to or changes in the final response head.
    pub extra: &'a crate::exchange::persist::Reply,
    /// Header rules on the response.
    pub rules: ResponseRules<'a>,
    /// The coding the request negotiated, if its frontend or backend compresses.
    pub compress: Option<Offer<'a>>,
}

/// The `http_response` rules of an exchange: the backend's, then the frontend's, with what
/// they read of the connection and where their edits go.
pub(crate) struct ResponseRules<'a> {
    pub backend: &'a [HttpRule],
    pub frontend: &'a [HttpRule],
    pub conn: &'a ConnFacts,
    /// The TLVs of the PROXY v2 header the connection opened with (`fc_pp_tlv`).
    pub pp_tlvs: Option<&'a Tlvs>,
    pub edits: &'a mut HeaderEdits,
    /// The session's variables (`var()` in response rules, `set-var`).
    pub vars: &'a RefCell<Vars>,
    /// The response fields the frontend captures, and the log line they go to (`None` when
    /// it captures none or does not log).
    pub captures: Option<(&'a [Capture], &'a mut Tracker)>,
}

impl ResponseRules<'_> {
    /// Runs the rules on the final response `head` (parsed from `buf`); the edits to apply,
    /// if any rule exists, or the fault of a `deny` or `return` rule that replaced it.
    pub(crate) fn apply(
        &mut self,
        head: &ResponseHead,
        buf: &[u8],
        sni: Option<&str>,
    ) -> Result<Option<&HeaderEdits>, Fault> {
        self.edits.clear();
        if let Some((captures, log)) = self.captures.as_mut() {
            log.capture_response(captures, head.fields(), buf);
        }
        if self.backend.is_empty() && self.frontend.is_empty() {
            return Ok(None);
        }
        let facts = ResponseFacts {
            head,
            buf,
            conn: self.conn,
            sni,
            pp_tlvs: self.pp_tlvs,
            vars: self.vars,
        };
        let refused = |backend: bool| {
            move |r| match r {
                Refusal::Deny(status) => Fault::ResponseDenied(status),
                Refusal::Return(index) => Fault::ResponseReturned { backend, index },
            }
        };
        rules::on_response(self.backend, &facts, self.edits).map_err(refused(true))?;
        rules::on_response(self.frontend, &facts, self.edits).map_err(refused(false))?;
        Ok(Some(self.edits))
    }
}

/// The server side of a relay.
pub(crate) struct ServerSide<'a> {
    pub conn: &'a mut ServerConn,
    pub timer: &'a mut Timer,
    pub timeout: Duration,
}

/// Whether the client connection closes after this response (the worker is stopping, or the
/// frontend closes every connection): a response head written from then on says
/// `Connection: close`.
pub(crate) type Stopping<'a> = &'a dyn Fn() -> bool;

/// An exchange in flight (see the module docs).
pub(crate) struct Relay<'a, S> {
    c: ClientSide<'a, S>,
    s: ServerSide<'a>,
    stopping: Stopping<'a>,
    req: RequestInfo,
    up: Upload,
    down: Download,
    /// Bytes of the client buffer (the request as sent) to drop once the response head is in:
    /// kept until then so that the request can be sent again.
    request_bytes: usize,
    client_idle: Idle,
    server_idle: Idle,
    client_progress: bool,
    server_progress: bool,
    /// Bytes were written to the server since its last flush (TLS keeps records it could not
    /// send; plain TCP flushes at no cost).
    server_unflushed: bool,
    last_sent: u64,
}

impl<'a, S: ClientStream> Relay<'a, S> {
    /// Drives the exchange to its end. A plain future over the relay: an `async fn` taking
    /// `self` would hold it twice (argument and local), 3.4 KB copied at every move.
    pub(crate) fn run(mut self) -> impl std::future::Future<Output = Outcome> + 'a {
        std::future::poll_fn(move |cx| self.poll(cx))
    }
}

impl<'a, S: ClientStream> Relay<'a, S> {
    /// A relay for the request `req`, described by `up`; `request_bytes` of the client buffer
    /// are the request as sent (dropped once the response head is in).
    pub(crate) fn new(
        c: ClientSide<'a, S>,
        s: ServerSide<'a>,
        stopping: Stopping<'a>,
        req: RequestInfo,
        up: Upload,
        request_bytes: usize,
    ) -> Self {
        let last_sent = c.io.bytes_sent();
        Self {
            c,
            s,
            stopping,
            req,
            up,
            down: Download {
                stage: Stage::Head,
                plan: ClientBody::None,
                switched: false,
                reader: BodyReader::none(),
                body_done: false,
                received: false,
                status: None,
                responded_at: None,
                keep_client: false,
                reuse_server: false,
                wait: Wait::Nothing,
                sent: 0,
                flight: Flight::default(),
                unflushed: false,
                encoder: None,
            },
            request_bytes,
            client_idle: Idle::default(),
            server_idle: Idle::default(),
            client_progress: false,
            server_progress: false,
            server_unflushed: false,
            last_sent,
        }
    }

    fn poll(&mut self, cx: &mut Context<'_>) -> Poll<Outcome> {
        self.up.wait = Wait::Nothing;
        self.down.wait = Wait::Nothing;
        if let Err(fault) = self.pump_upload(cx) {
            return Poll::Ready(self.failed(fault));
        }
        if let Err(fault) = self.pump_download(cx) {
            return Poll::Ready(self.failed(fault));
        }
        if self.c.io.poll_cancelled(cx).is_ready() {
            let reset = io::Error::new(io::ErrorKind::ConnectionReset, "cancelled by the client");
            return Poll::Ready(self.failed(Fault::ClientIo(reset)));
        }
        if self.up.is_done() && self.down.stage == Stage::Done {
            let end = if self.down.switched {
                End::Switched
            } else {
                End::Complete {
                    keep_client: self.down.keep_client,
                    reuse_server: self.down.reuse_server,
                }
            };
            return Poll::Ready(Outcome {
                status: self.down.status,
                responded_at: self.down.responded_at,
                end,
                sent: self.down.sent,
                uploaded: self.up.sent,
            });
        }
        match self.poll_timers(cx) {
            Some(fault) => Poll::Ready(self.failed(fault)),
            None => Poll::Pending,
        }
    }

    /// Arms (or polls) each side's inactivity timer while the relay waits for that side.
    fn poll_timers(&mut self, cx: &mut Context<'_>) -> Option<Fault> {
        if std::mem::take(&mut self.client_progress) {
            self.client_idle.progress();
        }
        if std::mem::take(&mut self.server_progress) {
            self.server_idle.progress();
        }
        let (up, down) = (self.up.wait, self.down.wait);
        if up == Wait::Client || down == Wait::Client {
            let deadline = self.client_idle.deadline(self.c.timeout);
            if self.c.timer.poll_at(deadline, cx).is_ready() {
                return Some(Fault::ClientTimeout);
            }
        } else {
            self.client_idle.progress();
        }
        // While the upload waits for the client, the server waits too and is not to blame.
        if up == Wait::Server || (down == Wait::Server && up != Wait::Client) {
            let deadline = self.server_idle.deadline(self.s.timeout);
            if self.s.timer.poll_at(deadline, cx).is_ready() {
                return Some(Fault::ServerTimeout);
            }
        } else {
            self.server_idle.progress();
        }
        None
    }

    fn failed(&mut self, fault: Fault) -> Outcome {
        Outcome {
            status: self.down.status,
            responded_at: self.down.responded_at,
            end: End::Failed {
                fault,
                stage: self.down.stage,
                received: self.down.received,
            },
            sent: self.down.sent,
            uploaded: self.up.sent,
        }
    }
}

impl<S> Relay<'_, S> {
    /// Sends what the server stream still holds (TLS records); true once nothing is left.
    fn flush_server(&mut self, cx: &mut Context<'_>) -> Result<bool, Fault> {
        if !self.server_unflushed {
            return Ok(true);
        }
        match Pin::new(&mut self.s.conn.stream).poll_flush(cx) {
            Poll::Ready(Ok(())) => {
                self.server_unflushed = false;
                Ok(true)
            }
            Poll::Ready(Err(e)) => Err(Fault::ServerIo(e)),
            Poll::Pending => Ok(false),
        }
    }
}

mod download;
mod flight;
mod upload;
