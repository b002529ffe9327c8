//! How much of a client's input one turn of an HTTP/2 connection's task takes in.
//!
//! A worker is one event loop, so the longest stretch one connection's task runs without
//! returning is added to the latency of every other connection waiting meanwhile. The `h2`
//! crate reads and handles frames until its socket has nothing more to give (or tokio's budget
//! of 128 socket operations per poll runs out): a client that sends 80 KiB of header block, or
//! megabytes of DATA, at once had it decrypted and decoded in one poll. With the attacker at
//! idle priority on another CPU, a well-behaved client's p99 on another connection went from
//! 0.7 ms to 2-4 ms under such attacks (BENCHMARKS.md, `bench/h2-attacks.sh`).
//!
//! So each turn of a connection's task reads at most [`OPEN`]'s bytes from the client (32 KiB,
//! of which at most 16 KiB of header blocks), then yields until the worker has polled its
//! sockets again. Reading is what sets the work: the `h2` crate decodes a frame when its last
//! byte is read, HPACK included, and rustls decrypts a record only when asked for plaintext, so
//! the bytes not taken this turn stay undecrypted in the socket or in rustls' buffer. A turn
//! then handles at most its budget plus the frame it completes (16 KiB with the default
//! `max_frame_size`): about 100 µs of CPU for header blocks (Huffman decoding is the dearest
//! work per byte), less for DATA.
//!
//! Header blocks have the tighter share because they cost several times more per byte than
//! DATA. Since what a read brings is only known once it is read, the read is cut so that it
//! cannot hold more header-block bytes than the turn has left: it may take the rest of the
//! DATA (or other) frame it is in, then only the header-block share.
//!
//! A client that floods control frames is held to [`PACED`], a few hundred bytes per turn
//! (`flood.rs`). A well-behaved client rarely reaches either budget: a request is a few hundred
//! bytes; an upload yields once per 32 KiB, one more task poll (about a microsecond) against
//! the tens of microseconds that decrypting and relaying 32 KiB cost.

/// What a turn may read.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) struct TurnLimit {
    /// Bytes in all.
    pub(super) bytes: usize,
    /// Of them, bytes of header blocks (the payload of HEADERS, CONTINUATION, PUSH_PROMISE).
    pub(super) header: usize,
}

/// A client's turn: 32 KiB, at most 16 KiB of it header blocks (one frame of the default
/// `max_frame_size`).
pub(super) const OPEN: TurnLimit = TurnLimit {
    bytes: 32 * 1024,
    header: 16 * 1024,
};

/// The turn of a client paced for flooding control frames (`flood.rs`): about 20 SETTINGS or
/// PING frames.
pub(super) const PACED: TurnLimit = TurnLimit {
    bytes: 384,
    header: 384,
};

/// What the current turn has read.
#[derive(Debug, Default, Clone, Copy, PartialEq, Eq)]
pub(super) struct Turn {
    bytes: usize,
    header: usize,
}

impl Turn {
    /// The most bytes the next read may take under `limit`, when `other_ahead` bytes are known
    /// not to be header block (the rest of the frame being read); 0 once the turn has taken
    /// its bytes or its header blocks' share (or more, when the client became paced during the
    /// turn): the caller then yields and starts the next turn ([`Turn::end`]).
    pub(super) fn allowance(&self, limit: TurnLimit, other_ahead: usize) -> usize {
        if self.bytes >= limit.bytes || self.header >= limit.header {
            return 0;
        }
        let header_left = limit.header - self.header;
        (limit.bytes - self.bytes).min(other_ahead.saturating_add(header_left))
    }

    /// Accounts a read of `bytes`, `header` of them header block.
    pub(super) fn took(&mut self, bytes: usize, header: usize) {
        self.bytes += bytes;
        self.header += header;
    }

    /// The turn is over (the task yields, or the client had nothing more to give): the next
    /// one starts afresh.
    pub(super) fn end(&mut self) {
        *self = Turn::default();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_turn_takes_its_bytes_then_is_spent() {
        let mut turn = Turn::default();
        assert_eq!(turn.allowance(OPEN, 0), OPEN.header);
        turn.took(10_000, 0);
        assert!(turn.allowance(OPEN, 1 << 20) > 0);
        turn.took(OPEN.bytes - 10_000, 0);
        assert_eq!(turn.allowance(OPEN, 1 << 20), 0);
        turn.end();
        assert_eq!(turn.allowance(OPEN, 1 << 20), OPEN.bytes);
    }

    #[test]
    fn header_blocks_spend_the_turn_at_their_share() {
        let mut turn = Turn::default();
        turn.took(OPEN.header, OPEN.header);
        // Even in the middle of a DATA frame: the turn is over.
        assert_eq!(turn.allowance(OPEN, 1 << 20), 0);
    }

    #[test]
    fn a_read_holds_no_more_header_block_than_the_turn_has_left() {
        let mut turn = Turn::default();
        turn.took(12_000, 12_000);
        // Within a header block, or between frames: the header share's rest.
        assert_eq!(turn.allowance(OPEN, 0), OPEN.header - 12_000);
        // Within a DATA frame of 9,000 more bytes: those, then the header share's rest, and
        // never more than the turn's bytes.
        assert_eq!(turn.allowance(OPEN, 9_000), 9_000 + OPEN.header - 12_000);
        assert_eq!(turn.allowance(OPEN, 1 << 20), OPEN.bytes - 12_000);
    }

    #[test]
    fn a_client_paced_during_a_turn_has_spent_it() {
        let mut turn = Turn::default();
        turn.took(3_000, 0);
        assert!(turn.allowance(OPEN, 0) > 0);
        assert_eq!(turn.allowance(PACED, 0), 0);
    }
}
