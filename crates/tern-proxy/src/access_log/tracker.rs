//! Following one connection and its requests for the access log.
//!
//! A [`Tracker`] lives in the session while the access log is on for its frontend. The data
//! path calls it at the phase boundaries (each call site is one `if let Some(..)`): head bytes
//! arrived, head complete, server picked, connected, relayed or answered; it reads the clock at
//! those points only and keeps the durations in microseconds. [`Tracker::emit`] turns the
//! request into a [`Record`], hands it to the queue and starts over for the next request on
//! the connection.
//!
//! Timers follow HAProxy's definitions (`Th`, `Ti`, `TR`, `Tw`, `Tc`, `Tr`, `Ta`, see
//! [`Timers`]); the termination state is HAProxy's two characters (who ended the session, in
//! which phase), the subset tern produces being listed in docs/configuration.md.

use std::net::SocketAddr;
use std::sync::Arc;
use std::time::SystemTime;

use rustls::{CipherSuite, HandshakeKind, ProtocolVersion, ServerConnection};
use tern_h1::{Field, RequestHead, Version};
use tokio::time::Instant;

use tern_config::{Capture, LogTemplate, RequestLog};

use super::record::{Extra, Record, Request, Text, Timers, TlsFields};
use crate::http1::relay::{End, Fault, Outcome, Stage};
use crate::tls::handshake::HandshakeEnd;
use crate::tls::stats::{AdmissionEvent, Failure};
use crate::tunnel::{self, Ending, Side};
use crate::worker::{Shared, Worker};

/// The access log's view of one client connection.
#[derive(Debug)]
pub(crate) struct Tracker {
    /// The connection's fields (client, frontend, TLS) and the current request's.
    record: Record,
    /// When the session started (accept).
    accepted: Instant,
    /// `Th` of the next request: the handshake for the first one, then 0.
    handshake: i64,
    /// When the wait for the current request head began.
    wait_from: Instant,
    /// When its first byte arrived.
    first_byte: Option<Instant>,
    /// The last phase boundary (head complete, server picked, connected).
    mark: Instant,
    /// Time spent in connection attempts that failed, counted in `Tc` if one succeeds.
    failed_connects: i64,
    backend: Option<usize>,
    server: Option<usize>,
    /// The frontend's `log_format`, given to every line.
    template: Option<Arc<LogTemplate>>,
    /// How many request and response fields the frontend captures.
    captures: (usize, usize),
}

/// Microseconds from `from` to `to` (0 if `to` is earlier).
fn micros(from: Instant, to: Instant) -> i64 {
    i64::try_from(to.saturating_duration_since(from).as_micros()).unwrap_or(i64::MAX)
}

impl Tracker {
    /// Starts following a connection accepted now, when the access log is on for `frontend`.
    pub(crate) fn start(shared: &Shared, frontend: usize, client: SocketAddr) -> Option<Box<Self>> {
        shared.access_log()?;
        let config = shared.config();
        let name = &config.frontends.get(frontend)?.name;
        if !config.access_log.as_ref()?.logs_frontend(name) {
            return None;
        }
        let mut tracker = Self::starting(Record::new(client, name));
        tracker.follow(&config.frontends[frontend].request_log);
        Some(tracker)
    }

    /// Takes the frontend's `log_format` and capture counts.
    fn follow(&mut self, log: &RequestLog) {
        self.template.clone_from(&log.log_format);
        self.captures = (log.capture_request.len(), log.capture_response.len());
    }

    /// A tracker for HTTP/2 stream `id` of this connection, which starts now: the connection's
    /// fields (client, frontend, TLS) are copied, and its lines say `HTTP/2.0` and the stream.
    pub(crate) fn stream(&self, id: u32) -> Box<Self> {
        let mut record = self.record.clone();
        record.stream = id;
        record.extra = None;
        let mut tracker = Self::starting(record);
        tracker.template.clone_from(&self.template);
        tracker.captures = self.captures;
        tracker
    }

    /// A tracker of `record`'s connection, starting now.
    fn starting(record: Record) -> Box<Self> {
        let now = Instant::now();
        Box::new(Self {
            record,
            accepted: now,
            handshake: 0,
            wait_from: now,
            first_byte: None,
            mark: now,
            failed_connects: 0,
            backend: None,
            server: None,
            template: None,
            captures: (0, 0),
        })
    }

    /// The TLS handshake completed: notes the session and the handshake time.
    pub(crate) fn handshaken(&mut self, conn: &ServerConnection) {
        self.handshaken_as(
            conn.protocol_version().map_or("-", version_name),
            conn.negotiated_cipher_suite()
                .map_or("-", |s| cipher_name(s.suite())),
            conn.server_name().unwrap_or_default(),
            conn.handshake_kind() == Some(HandshakeKind::Resumed),
        );
    }

    /// The TLS handshake completed with this version, suite (IANA name), SNI and resumption:
    /// what [`Self::handshaken`] reads from rustls, given by another engine.
    pub(crate) fn handshaken_as(
        &mut self,
        version: &'static str,
        cipher: &'static str,
        sni: &str,
        resumed: bool,
    ) {
        self.handshake = micros(self.accepted, Instant::now());
        self.record.tls = Some(TlsFields {
            version,
            cipher,
            sni: Text::from_bytes(sni.as_bytes()),
            resumed,
        });
    }

    /// The TLS handshake did not complete: logs the connection.
    pub(crate) fn handshake_failed(mut self: Box<Self>, shared: &Shared, why: HandshakeEnd) {
        let (termination, reason) = handshake_end(why);
        let r = &mut self.record;
        r.termination = termination;
        r.request = Request::Tls(reason);
        r.timers.handshake = micros(self.accepted, Instant::now());
        r.time = ago(self.accepted.elapsed());
        let extra = self.record.extra.take();
        self.record.extra = self.completed(extra, None);
        if let Some(sink) = shared.access_log() {
            sink.send(self.record);
        }
    }

    /// The connection is a TCP-mode session, relayed whole: its line is a `tcplog` one, timed
    /// from the accept (`Tt`), with `Tw` and `Tc` from the end of the handshake.
    pub(crate) fn tcp_session(&mut self) {
        self.record.request = Request::Tcp;
        self.wait_from = self.accepted;
        self.first_byte = Some(self.accepted);
        self.mark = Instant::now();
    }

    /// The wait for a request head began at `since`; `pending`: bytes of it are already here
    /// (pipelined, or read before the session was built), so they came now at the latest.
    pub(crate) fn waiting(&mut self, since: Instant, pending: bool) {
        self.wait_from = since;
        self.first_byte = pending.then(Instant::now);
    }

    /// Bytes of a request head arrived.
    pub(crate) fn arrived(&mut self) {
        if self.first_byte.is_none() {
            self.first_byte = Some(Instant::now());
        }
    }

    /// A complete head of `hlen` bytes is at the front of `buf`.
    pub(crate) fn request(&mut self, head: &RequestHead, buf: &[u8], hlen: usize) {
        let now = Instant::now();
        let r = &mut self.record;
        r.timers.request = self.first_byte.map_or(0, |at| micros(at, now));
        r.request = Request::Line;
        r.method.set(head.method_bytes(buf));
        r.target.set(head.target().get(buf));
        r.version = if r.stream != 0 {
            20
        } else if head.version() == Version::Http10 {
            10
        } else {
            11
        };
        r.bytes_in = hlen as u64;
        self.mark = now;
    }

    /// Body bytes of the request were taken from the client.
    pub(crate) fn received(&mut self, bytes: usize) {
        self.record.bytes_in += bytes as u64;
    }

    /// The request goes to `backend`.
    pub(crate) fn backend(&mut self, backend: usize) {
        self.backend = Some(backend);
    }

    /// Microseconds since the last phase boundary, which is now.
    fn lap(&mut self) -> i64 {
        let now = Instant::now();
        micros(std::mem::replace(&mut self.mark, now), now)
    }

    /// A server was chosen (after the queue, if the request waited).
    pub(crate) fn picked(&mut self, server: usize) {
        let lap = self.lap();
        add(&mut self.record.timers.queue, lap);
        self.server = Some(server);
    }

    /// tern refused the request after its head (`PD`: an invalid body).
    pub(crate) fn refused(&mut self, termination: [u8; 2]) {
        self.record.termination = termination;
    }

    /// No server could take the request (answered 503): `termination` says why.
    pub(crate) fn no_server(&mut self, termination: [u8; 2]) {
        let lap = self.lap();
        add(&mut self.record.timers.queue, lap);
        self.record.termination = termination;
    }

    /// A connection to the server is ready (taken from the pool or opened).
    pub(crate) fn connected(&mut self) {
        let lap = self.lap();
        self.record.timers.connect = std::mem::take(&mut self.failed_connects) + lap;
    }

    /// A connection attempt failed; if it was the last one, the request is answered 503.
    pub(crate) fn connect_failed(&mut self, timed_out: bool) {
        // The time counts towards `Tc` of the attempt that succeeds, if one does.
        self.failed_connects += self.lap();
        self.record.termination = if timed_out { *b"sC" } else { *b"SC" };
    }

    /// The request is tried again (`redispatch`: on another server).
    pub(crate) fn retried(&mut self, redispatch: bool) {
        self.record.retries += 1;
        self.record.redispatched |= redispatch;
    }

    /// The exchange with the server ended as `outcome` says.
    pub(crate) fn relayed(&mut self, outcome: &Outcome) {
        let r = &mut self.record;
        if let Some(at) = outcome.responded_at {
            r.timers.response = micros(self.mark, at);
        }
        if let Some(status) = outcome.status {
            r.status = i32::from(status);
        }
        r.bytes_out += outcome.sent;
        r.bytes_in += outcome.uploaded;
        r.termination = match &outcome.end {
            End::Complete { .. } | End::Switched => *b"--",
            End::Failed { fault, stage, .. } => fault_state(fault, *stage),
        };
    }

    /// The tunnel that followed the `101` ended as `report` says: its bytes and who ended it.
    pub(crate) fn tunnelled(&mut self, report: &tunnel::Report) {
        let r = &mut self.record;
        r.bytes_in += report.up;
        r.bytes_out += report.down;
        r.termination = match &report.ending {
            Ending::Closed => *b"--",
            Ending::Timeout(Side::Client) => *b"cD",
            Ending::Timeout(Side::Server) => *b"sD",
            Ending::Failed(Side::Client, _) => *b"CD",
            Ending::Failed(Side::Server, _) => *b"SD",
        };
    }

    /// tern answered with `status` itself (`bytes` sent).
    pub(crate) fn answered(&mut self, status: u16, bytes: usize) {
        self.record.status = i32::from(status);
        self.record.bytes_out += bytes as u64;
    }

    /// No request could be read: `termination` and why (`Request::Missing`).
    pub(crate) fn no_request(&mut self, termination: [u8; 2], why: &'static str) {
        self.record.termination = termination;
        self.record.request = Request::Missing(why);
    }

    /// Whether anything of a request was seen (bytes, or an answer from tern).
    pub(crate) fn seen(&self) -> bool {
        self.first_byte.is_some() || self.record.status >= 0
    }

    /// Logs the request (at `level`: a rule's `set-log-level`, `Some(None)` for no line) and
    /// gets ready for the next one on the connection.
    pub(crate) fn emit_at(&mut self, w: &Worker, level: Option<Option<u8>>) {
        match level {
            Some(None) => self.reset(),
            Some(Some(severity)) => {
                self.record.severity = severity;
                self.emit(w);
                self.record.severity = super::record::SEVERITY_INFO;
            }
            None => self.emit(w),
        }
    }

    /// Logs the request and gets ready for the next one on the connection.
    pub(crate) fn emit(&mut self, w: &Worker) {
        let now = Instant::now();
        let started = self.first_byte.unwrap_or(self.wait_from);
        let r = &mut self.record;
        r.time = ago(now.saturating_duration_since(started));
        r.timers.handshake = std::mem::take(&mut self.handshake);
        r.timers.idle = micros(self.wait_from, started);
        r.timers.active = self.first_byte.map_or(-1, |at| micros(at, now));
        let backend = self.backend.and_then(|b| w.shared.config().backends.get(b));
        r.backend
            .set(backend.map_or(&[][..], |b| b.name.as_bytes()));
        let server = self
            .server
            .and_then(|s| backend.and_then(|b| b.servers.get(s)));
        r.server.set(server.map_or(&[][..], |s| s.name.as_bytes()));
        let extra = r.extra.take();
        let extra = self.completed(extra, server.map(|s| s.address));
        if let Some(sink) = w.shared.access_log() {
            // Without `extra` (the usual case) this is the plain copy it always was.
            let mut line = self.record.clone();
            line.extra = extra;
            sink.send(line);
        }
        self.reset();
    }

    /// This request's part of the line for a frontend with a request id, captures or a
    /// `log_format` (an allocation only there); the request routing step fills it.
    pub(crate) fn extra(&mut self) -> &mut Extra {
        self.record.extra.get_or_insert_with(Box::default)
    }

    /// Takes the samples of `format` (a `log_format`) for this line, each written by `sample`
    /// (an empty one is absent: `-` in the line).
    pub(crate) fn take_samples(
        &mut self,
        format: &LogTemplate,
        sample: &dyn Fn(&tern_config::Fetch, &mut tern_h1::FieldValue<'_>),
    ) {
        let samples = &mut self.extra().samples;
        samples.clear();
        samples.resize(format.samples, None);
        for piece in &format.pieces {
            if let tern_config::LogPiece::Sample { fetch, slot, .. } = piece {
                let mut value = Vec::new();
                sample(fetch, &mut tern_h1::FieldValue::detached(&mut value));
                if let Some(s) = samples.get_mut(*slot) {
                    *s = (!value.is_empty()).then_some(value);
                }
            }
        }
    }

    /// The response's captured fields, from its head (`fields` parsed from `buf`).
    pub(crate) fn capture_response(&mut self, captures: &[Capture], fields: &[Field], buf: &[u8]) {
        let extra = self.extra();
        crate::rules::request_id::capture(captures, fields, buf, &mut extra.response_captures);
    }

    /// `extra` with the format, the capture slots and the server's address, when the frontend
    /// has any of them; `None` (nothing to carry) otherwise.
    fn completed(
        &self,
        extra: Option<Box<Extra>>,
        server: Option<SocketAddr>,
    ) -> Option<Box<Extra>> {
        let wanted = self.template.is_some() || self.captures != (0, 0);
        let mut extra = match extra {
            Some(extra) => extra,
            None if wanted => Box::default(),
            None => return None,
        };
        extra.format.clone_from(&self.template);
        extra.server = server;
        // Without a request HAProxy writes no capture block at all.
        if self.record.request == Request::Line {
            extra.request_captures.resize(self.captures.0, Vec::new());
            extra.response_captures.resize(self.captures.1, Vec::new());
        }
        Some(extra)
    }

    /// Clears the request's fields, keeping the connection's.
    fn reset(&mut self) {
        let r = &mut self.record;
        r.extra = None;
        r.timers = Timers {
            handshake: 0,
            ..Timers::NONE
        };
        r.status = -1;
        r.bytes_out = 0;
        r.bytes_in = 0;
        r.retries = 0;
        r.redispatched = false;
        r.termination = *b"--";
        r.request = Request::Missing("bad_request");
        self.first_byte = None;
        self.failed_connects = 0;
        self.backend = None;
        self.server = None;
    }
}

/// The wall-clock time `elapsed` ago.
fn ago(elapsed: std::time::Duration) -> SystemTime {
    let now = SystemTime::now();
    now.checked_sub(elapsed).unwrap_or(now)
}

/// Adds `us` to a timer that may still be -1 (not started).
fn add(timer: &mut i64, us: i64) {
    *timer = (*timer).max(0) + us;
}

/// HAProxy's state for an exchange that failed: who, and in which phase.
fn fault_state(fault: &Fault, stage: Stage) -> [u8; 2] {
    match (fault, stage) {
        (Fault::ClientTimeout, _) => *b"cD",
        (Fault::ClientClosed | Fault::ClientIo(_), _) => *b"CD",
        (Fault::BadRequestBody(_), _) => *b"PD",
        (Fault::ServerTimeout, Stage::Head) => *b"sH",
        (Fault::ServerTimeout, _) => *b"sD",
        (Fault::ServerClosed | Fault::ServerIo(_), Stage::Head) => *b"SH",
        (Fault::ServerClosed | Fault::ServerIo(_), _) => *b"SD",
        (Fault::BadResponse(_), Stage::Head) => *b"PH",
        (Fault::BadResponse(_), _) => *b"PD",
        // HAProxy's state for a response a rule denied.
        (Fault::ResponseDenied(_), _) => *b"PH",
        (Fault::ResponseReturned { .. }, _) => *b"LH",
        // HAProxy's `I`: an internal error (the compressor).
        (Fault::Encoder(_), Stage::Head) => *b"IH",
        (Fault::Encoder(_), _) => *b"ID",
    }
}

/// The state and reason of a handshake that did not complete.
fn handshake_end(why: HandshakeEnd) -> ([u8; 2], &'static str) {
    match why {
        HandshakeEnd::Failed(failure) => match failure {
            Failure::Timeout => (*b"cR", "timeout"),
            Failure::Protocol => (*b"CR", "protocol"),
            Failure::Other => (*b"CR", "other"),
            Failure::BadCertificate => (*b"CR", "bad_certificate"),
            Failure::NoSharedCipher => (*b"PR", "no_shared_cipher"),
            Failure::Version => (*b"PR", "version"),
            Failure::UnknownSni => (*b"PR", "unknown_sni"),
            Failure::ClientNoCert => (*b"PR", "client_no_cert"),
            Failure::ClientUnknownCa => (*b"PR", "client_unknown_ca"),
            Failure::ClientRevoked => (*b"PR", "client_revoked"),
            Failure::ClientExpired => (*b"PR", "client_expired"),
            Failure::ClientCertOther => (*b"PR", "client_cert_other"),
        },
        HandshakeEnd::Refused(event) => match event {
            AdmissionEvent::RateAbandoned => (*b"CR", "rate_abandoned"),
            AdmissionEvent::SourceRefused => (*b"PR", "source_refused"),
            _ => (*b"PR", "rate_expired"),
        },
    }
}

fn version_name(version: ProtocolVersion) -> &'static str {
    match version {
        ProtocolVersion::TLSv1_3 => "TLSv1.3",
        ProtocolVersion::TLSv1_2 => "TLSv1.2",
        _ => "TLS",
    }
}

/// The IANA name of a suite (rustls spells TLS 1.3 suites `TLS13_`).
fn cipher_name(suite: CipherSuite) -> &'static str {
    match suite {
        CipherSuite::TLS13_AES_128_GCM_SHA256 => "TLS_AES_128_GCM_SHA256",
        CipherSuite::TLS13_AES_256_GCM_SHA384 => "TLS_AES_256_GCM_SHA384",
        CipherSuite::TLS13_CHACHA20_POLY1305_SHA256 => "TLS_CHACHA20_POLY1305_SHA256",
        other => other.as_str().unwrap_or("unknown"),
    }
}
