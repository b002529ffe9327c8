//! Bodies crossing the proxy, streamed frame by frame and never buffered whole.
//!
//! - [`RequestBody`] carries the client's request body to the server. It times the client's
//!   silences (`client` timeout) and records when the upload ended, so the wait for the response
//!   head is measured from there (`server` timeout).
//! - [`ProxyBody`] is what the client receives: the server's body ([`ResponseBody`], which times
//!   the server's silences and counts responses cut short) or a small local page. It and the
//!   request body each hold the stream (`StreamGuard::hold`), so the connection counts as idle only once the whole
//!   response is handed over *and* the whole request body was read.
//!
//! An upstream connection goes back to the worker's pool only when its response body was read to
//! the end and the request body was sent in full (see [`ResponseBody`]'s `Drop`); otherwise it is
//! closed, since the rest of either message would be mistaken for the next one.

use std::cell::Cell;
use std::pin::Pin;
use std::rc::Rc;
use std::sync::Arc;
use std::task::{Context, Poll};
use std::time::Duration;

use bytes::Bytes;
use http_body::{Body, Frame, SizeHint};
use hyper::body::Incoming;
use tokio::time::Instant;

use crate::phase::StreamGuard;
use crate::pool::Lease;
use crate::stats::{bump, WorkerStats};
use crate::timer::Inactivity;

/// Why a body stopped before its end.
#[derive(Debug, thiserror::Error)]
pub(crate) enum BodyError {
    #[error("client sent nothing for {0:?} while sending its request body")]
    ClientTimeout(Duration),
    #[error("server sent nothing for {0:?} while sending its response body")]
    ServerTimeout(Duration),
    #[error("client request body: {0}")]
    Client(#[source] hyper::Error),
    #[error("server response body: {0}")]
    Server(#[source] hyper::Error),
}

/// The body error behind a hyper error, if a body of ours is what made it fail.
pub(crate) fn body_error(e: &hyper::Error) -> Option<&BodyError> {
    let mut cause = std::error::Error::source(e);
    while let Some(c) = cause {
        if let Some(b) = c.downcast_ref::<BodyError>() {
            return Some(b);
        }
        cause = c.source();
    }
    None
}

/// Progress of a request body upload, read by the wait for the response head.
#[derive(Debug)]
pub(crate) struct Upload {
    done_at: Cell<Option<Instant>>,
    /// When the upload began (the request head went to the server connection).
    started: Instant,
    /// When the server connection last took a frame of the body (or the upload began).
    last_progress: Cell<Instant>,
    /// The server connection is waiting for the client's next frame (the `client` timeout's
    /// business), rather than the client's frame waiting for the server.
    waiting_on_client: Cell<bool>,
}

/// Where an unfinished upload stands.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum UploadState {
    /// The whole body was handed over at this instant.
    Done(Instant),
    /// Waiting for the client to send more.
    WaitingOnClient,
    /// Waiting for the server to take more, since this instant.
    WaitingOnServer(Instant),
}

impl Upload {
    pub(crate) fn state(&self) -> UploadState {
        match self.done_at.get() {
            Some(done) => UploadState::Done(done),
            None if self.waiting_on_client.get() => UploadState::WaitingOnClient,
            None => UploadState::WaitingOnServer(self.last_progress.get()),
        }
    }

    pub(crate) fn started(&self) -> Instant {
        self.started
    }

    pub(crate) fn is_done(&self) -> bool {
        self.done_at.get().is_some()
    }
}

/// The client's request body on its way to a server.
#[derive(Debug)]
pub(crate) struct RequestBody {
    inner: Incoming,
    idle: Inactivity,
    timeout: Duration,
    upload: Rc<Upload>,
    /// The stream stays active until its request body is done too: a server may answer before
    /// it has read the whole upload, and the rest of the body must not count as a new head.
    _stream: StreamGuard,
}

impl RequestBody {
    pub(crate) fn new(
        inner: Incoming,
        timeout: Duration,
        stream: StreamGuard,
    ) -> (Self, Rc<Upload>) {
        let now = Instant::now();
        let upload = Rc::new(Upload {
            done_at: Cell::new(inner.is_end_stream().then_some(now)),
            started: now,
            last_progress: Cell::new(now),
            waiting_on_client: Cell::new(false),
        });
        let body = Self {
            inner,
            idle: Inactivity::default(),
            timeout,
            upload: Rc::clone(&upload),
            _stream: stream,
        };
        (body, upload)
    }
}

impl Body for RequestBody {
    type Data = Bytes;
    type Error = BodyError;

    fn poll_frame(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
    ) -> Poll<Option<Result<Frame<Bytes>, BodyError>>> {
        let this = self.get_mut();
        let up = &this.upload;
        match Pin::new(&mut this.inner).poll_frame(cx) {
            Poll::Ready(Some(Ok(frame))) => {
                this.idle.progress();
                let now = Instant::now();
                up.waiting_on_client.set(false);
                up.last_progress.set(now);
                if this.inner.is_end_stream() {
                    up.done_at.set(Some(now));
                }
                Poll::Ready(Some(Ok(frame)))
            }
            Poll::Ready(None) => {
                up.waiting_on_client.set(false);
                up.done_at.set(Some(Instant::now()));
                Poll::Ready(None)
            }
            Poll::Ready(Some(Err(e))) => Poll::Ready(Some(Err(BodyError::Client(e)))),
            Poll::Pending => {
                up.waiting_on_client.set(true);
                if this.idle.expired(this.timeout, cx) {
                    return Poll::Ready(Some(Err(BodyError::ClientTimeout(this.timeout))));
                }
                Poll::Pending
            }
        }
    }

    fn is_end_stream(&self) -> bool {
        self.inner.is_end_stream()
    }

    fn size_hint(&self) -> SizeHint {
        self.inner.size_hint()
    }
}

/// A server's response body on its way to the client.
#[derive(Debug)]
pub(crate) struct ResponseBody {
    inner: Incoming,
    idle: Inactivity,
    timeout: Duration,
    saw_end: bool,
    lease: Option<Lease>,
    upload: Rc<Upload>,
    stats: Arc<WorkerStats>,
    backend: usize,
}

impl ResponseBody {
    pub(crate) fn new(
        inner: Incoming,
        timeout: Duration,
        lease: Lease,
        upload: Rc<Upload>,
        stats: Arc<WorkerStats>,
        backend: usize,
    ) -> Self {
        Self {
            inner,
            idle: Inactivity::default(),
            timeout,
            saw_end: false,
            lease: Some(lease),
            upload,
            stats,
            backend,
        }
    }

    fn aborted(&mut self) {
        bump(&self.stats.backends[self.backend].aborted_responses);
        self.lease = None;
    }
}

impl Drop for ResponseBody {
    fn drop(&mut self) {
        if let Some(lease) = self.lease.take() {
            // Reusable only once both directions are complete: a server that answered early
            // may still be receiving the upload on this connection.
            if (self.saw_end || self.inner.is_end_stream()) && self.upload.is_done() {
                lease.release();
            }
        }
    }
}

impl Body for ResponseBody {
    type Data = Bytes;
    type Error = BodyError;

    fn poll_frame(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
    ) -> Poll<Option<Result<Frame<Bytes>, BodyError>>> {
        let this = self.get_mut();
        match Pin::new(&mut this.inner).poll_frame(cx) {
            Poll::Ready(Some(Ok(frame))) => {
                this.idle.progress();
                Poll::Ready(Some(Ok(frame)))
            }
            Poll::Ready(None) => {
                this.saw_end = true;
                Poll::Ready(None)
            }
            Poll::Ready(Some(Err(e))) => {
                this.aborted();
                Poll::Ready(Some(Err(BodyError::Server(e))))
            }
            Poll::Pending if this.idle.expired(this.timeout, cx) => {
                this.aborted();
                Poll::Ready(Some(Err(BodyError::ServerTimeout(this.timeout))))
            }
            Poll::Pending => Poll::Pending,
        }
    }

    fn is_end_stream(&self) -> bool {
        self.saw_end || self.inner.is_end_stream()
    }

    fn size_hint(&self) -> SizeHint {
        self.inner.size_hint()
    }
}

/// What the client receives.
#[derive(Debug)]
pub(crate) enum Content {
    Upstream(ResponseBody),
    /// A locally generated page; `None` once sent.
    Local(Option<Bytes>),
}

/// A response body plus the guard that ends the stream once the body is done.
#[derive(Debug)]
pub(crate) struct ProxyBody {
    content: Content,
    _stream: StreamGuard,
}

impl ProxyBody {
    pub(crate) fn new(content: Content, stream: StreamGuard) -> Self {
        Self {
            content,
            _stream: stream,
        }
    }
}

impl Body for ProxyBody {
    type Data = Bytes;
    type Error = BodyError;

    fn poll_frame(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
    ) -> Poll<Option<Result<Frame<Bytes>, BodyError>>> {
        match &mut self.get_mut().content {
            Content::Upstream(body) => Pin::new(body).poll_frame(cx),
            Content::Local(bytes) => Poll::Ready(bytes.take().map(|b| Ok(Frame::data(b)))),
        }
    }

    fn is_end_stream(&self) -> bool {
        match &self.content {
            Content::Upstream(body) => body.is_end_stream(),
            Content::Local(bytes) => bytes.as_ref().is_none_or(Bytes::is_empty),
        }
    }

    fn size_hint(&self) -> SizeHint {
        match &self.content {
            Content::Upstream(body) => body.size_hint(),
            Content::Local(bytes) => {
                SizeHint::with_exact(bytes.as_ref().map_or(0, |b| b.len() as u64))
            }
        }
    }
}
