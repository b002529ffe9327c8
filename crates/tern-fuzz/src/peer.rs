//! A server played from the fuzzer's bytes, for the targets that read what servers send
//! (`health_reply`, `h2_response`): tern's side of an in-memory stream is handed to the code
//! under test, the other side writes the input (in pieces, with turns of the event loop in
//! between) and reads and drops whatever tern sends.

use std::cell::RefCell;
use std::future::Future;

use tokio::io::{AsyncReadExt, AsyncWriteExt, DuplexStream};

/// Turns of the event loop after each piece, so tern reads the pieces apart.
const SETTLE_POLLS: usize = 8;

thread_local! {
    /// One event loop per thread (timers on: checks have deadlines), reused for every input.
    static RUNTIME: RefCell<Option<tokio::runtime::Runtime>> = const { RefCell::new(None) };
}

/// Runs `tern` on its end of a stream whose other end sends `reply` in pieces of `piece`
/// bytes (0: all at once) then ends its side; what `tern` returns.
pub fn play<F, Fut, T>(reply: &[u8], piece: usize, tern: F) -> T
where
    F: FnOnce(DuplexStream) -> Fut,
    Fut: Future<Output = T>,
{
    RUNTIME.with(|cell| {
        let mut cell = cell.borrow_mut();
        let rt = cell.get_or_insert_with(|| {
            tokio::runtime::Builder::new_current_thread()
                .enable_time()
                .build()
                .unwrap_or_else(|e| panic!("event loop: {e}"))
        });
        let (ours, theirs) = tokio::io::duplex(64 * 1024);
        let (mut peer_read, mut peer_write) = tokio::io::split(theirs);
        rt.block_on(async move {
            let write = async {
                let size = if piece == 0 {
                    reply.len().max(1)
                } else {
                    piece
                };
                for part in reply.chunks(size) {
                    // tern may stop reading: what it does not read is dropped.
                    if peer_write.write_all(part).await.is_err() {
                        break;
                    }
                    for _ in 0..SETTLE_POLLS {
                        tokio::task::yield_now().await;
                    }
                }
                let _ = peer_write.shutdown().await;
                // Kept until tern is done: dropping it closes both halves.
                peer_write
            };
            let read = async {
                let mut sink = vec![0u8; 16 * 1024];
                while matches!(peer_read.read(&mut sink).await, Ok(n) if n > 0) {}
            };
            let (got, _, _) = tokio::join!(tern(ours), write, read);
            got
        })
    })
}
