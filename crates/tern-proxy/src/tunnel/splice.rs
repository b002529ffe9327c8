//! `splice(2)` for a tunnel between two plain TCP sockets: the bytes go from one socket into a
//! pipe and from the pipe into the other socket inside the kernel, never copied to user space.
//!
//! Each direction has its own pipe, used as the direction's buffer is: filled only once empty,
//! so a receiver that does not take its bytes stops the reads from the sender (the pipe holds
//! at most [`CHUNK`] bytes), and a splice into the pipe never waits for pipe space. The waits
//! are the sockets' readiness in tokio's reactor, as for a read or a write; a splice that
//! would block clears that readiness (`try_io`).

use std::io;
use std::os::fd::OwnedFd;
use std::task::{ready, Context, Poll};

use rustix::pipe::{pipe_with, splice, PipeFlags, SpliceFlags};
use tokio::io::Interest;
use tokio::net::TcpStream;

/// Most bytes moved into a pipe at once: a pipe's default capacity (16 pages).
const CHUNK: usize = 64 * 1024;

const FLAGS: SpliceFlags = SpliceFlags::MOVE.union(SpliceFlags::NONBLOCK);

/// One direction's pipe, and how many bytes it holds.
#[derive(Debug)]
pub(crate) struct Pipe {
    read: OwnedFd,
    write: OwnedFd,
    held: usize,
}

impl Pipe {
    pub(crate) fn new() -> io::Result<Self> {
        let (read, write) = pipe_with(PipeFlags::CLOEXEC | PipeFlags::NONBLOCK)?;
        Ok(Self {
            read,
            write,
            held: 0,
        })
    }

    pub(crate) fn is_empty(&self) -> bool {
        self.held == 0
    }

    /// Moves what `from` has (up to [`CHUNK`]) into the pipe, which must be empty. `Ok(0)` is
    /// end of stream.
    pub(crate) fn poll_fill(
        &mut self,
        from: &TcpStream,
        cx: &mut Context<'_>,
    ) -> Poll<io::Result<usize>> {
        debug_assert!(self.is_empty());
        loop {
            ready!(from.poll_read_ready(cx))?;
            let moved = from.try_io(Interest::READABLE, || {
                Ok(splice(from, None, &self.write, None, CHUNK, FLAGS)?)
            });
            match moved {
                Ok(n) => {
                    self.held += n;
                    return Poll::Ready(Ok(n));
                }
                Err(e) if e.kind() == io::ErrorKind::WouldBlock => {}
                Err(e) => return Poll::Ready(Err(e)),
            }
        }
    }

    /// Moves bytes from the pipe (not empty) into `to`; how many.
    pub(crate) fn poll_drain(
        &mut self,
        to: &TcpStream,
        cx: &mut Context<'_>,
    ) -> Poll<io::Result<usize>> {
        debug_assert!(!self.is_empty());
        loop {
            ready!(to.poll_write_ready(cx))?;
            let moved = to.try_io(Interest::WRITABLE, || {
                Ok(splice(&self.read, None, to, None, self.held, FLAGS)?)
            });
            match moved {
                Ok(0) => return Poll::Ready(Err(io::ErrorKind::WriteZero.into())),
                Ok(n) => {
                    self.held -= n.min(self.held);
                    return Poll::Ready(Ok(n));
                }
                Err(e) if e.kind() == io::ErrorKind::WouldBlock => {}
                Err(e) => return Poll::Ready(Err(e)),
            }
        }
    }
}
