#![allow(clippy::unwrap_used)]

use std::future::Future;
use std::time::Duration;

use tokio::io::AsyncWriteExt;
use tokio::time::Sleep;

use super::*;

/// A stream whose flush completes in `steps` steps of `step` each, writing 1000 bytes per step
/// when `progress` (a slow but steady reader on the other end) and nothing otherwise.
struct SlowFlush {
    steps: u32,
    step: Duration,
    progress: bool,
    sent: u64,
    sleep: Pin<Box<Sleep>>,
}

impl SlowFlush {
    fn new(steps: u32, step: Duration, progress: bool) -> Self {
        Self {
            steps,
            step,
            progress,
            sent: 0,
            sleep: Box::pin(tokio::time::sleep(step)),
        }
    }
}

impl Progress for SlowFlush {
    fn bytes_sent(&self) -> Option<u64> {
        Some(self.sent)
    }
}

impl AsyncRead for SlowFlush {
    fn poll_read(
        self: Pin<&mut Self>,
        _: &mut Context<'_>,
        _: &mut ReadBuf<'_>,
    ) -> Poll<io::Result<()>> {
        Poll::Pending
    }
}

impl AsyncWrite for SlowFlush {
    fn poll_write(
        self: Pin<&mut Self>,
        _: &mut Context<'_>,
        buf: &[u8],
    ) -> Poll<io::Result<usize>> {
        Poll::Ready(Ok(buf.len()))
    }

    fn poll_flush(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        let this = self.get_mut();
        while this.steps > 0 {
            ready!(this.sleep.as_mut().poll(cx));
            this.steps -= 1;
            if this.progress {
                this.sent += 1000;
            }
            let next = Instant::now() + this.step;
            this.sleep.as_mut().reset(next);
        }
        Poll::Ready(Ok(()))
    }

    fn poll_shutdown(self: Pin<&mut Self>, _: &mut Context<'_>) -> Poll<io::Result<()>> {
        Poll::Ready(Ok(()))
    }
}

fn client_io(inner: SlowFlush) -> (ClientIo<SlowFlush>, Arc<WorkerStats>) {
    let stats = Arc::new(WorkerStats::new(1, &[]));
    let timeouts = ClientTimeouts {
        client: Duration::from_secs(1),
        http_request: Duration::from_secs(10),
        keep_alive: Duration::from_secs(10),
    };
    let io = ClientIo::new(
        inner,
        Phase::new(Instant::now()),
        timeouts,
        Arc::clone(&stats),
        0,
    );
    (io, stats)
}

#[tokio::test(start_paused = true)]
async fn a_slow_but_steady_reader_is_not_timed_out_during_a_long_flush() {
    // 10 steps of 300 ms: 3 s in all, far over the 1 s client timeout, with progress each step.
    let (mut io, stats) = client_io(SlowFlush::new(10, Duration::from_millis(300), true));
    io.flush().await.unwrap();
    assert_eq!(
        stats.frontends[0]
            .client_timeouts
            .load(std::sync::atomic::Ordering::Relaxed),
        0
    );
}

#[tokio::test(start_paused = true)]
async fn a_reader_that_stopped_is_timed_out_during_a_flush() {
    let start = Instant::now();
    let (mut io, stats) = client_io(SlowFlush::new(10, Duration::from_millis(300), false));
    let err = io.flush().await.unwrap_err();
    assert_eq!(err.kind(), io::ErrorKind::TimedOut);
    let took = start.elapsed();
    assert!(
        took >= Duration::from_secs(1) && took < Duration::from_millis(1400),
        "{took:?}"
    );
    assert_eq!(
        stats.frontends[0]
            .client_timeouts
            .load(std::sync::atomic::Ordering::Relaxed),
        1
    );
}
