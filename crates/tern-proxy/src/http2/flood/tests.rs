#![allow(clippy::unwrap_used)]

use super::*;

const PING: u8 = 0x6;
const SETTINGS: u8 = 0x4;
const WINDOW_UPDATE: u8 = 0x8;

fn frame(kind: u8, payload_len: usize) -> Vec<u8> {
    let len = u32::try_from(payload_len).unwrap().to_be_bytes();
    let mut f = vec![len[1], len[2], len[3], kind, 0, 0, 0, 0, 1];
    f.resize(HEAD_LEN + payload_len, 0xaa);
    f
}

fn kinds(cursor: &mut FrameCursor, bytes: &[u8]) -> Vec<u8> {
    let mut seen = Vec::new();
    assert_eq!(
        cursor
            .feed(bytes, |k| {
                seen.push(k);
                true
            })
            .bytes,
        bytes.len()
    );
    seen
}

#[test]
fn the_cursor_finds_each_header_whatever_the_read_boundaries() {
    let mut stream = b"PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n".to_vec();
    for (kind, len) in [
        (SETTINGS, 12),
        (HEADERS, 300),
        (DATA, 0),
        (PING, 8),
        (DATA, 70_000),
    ] {
        stream.extend(frame(kind, len));
    }
    let want = [SETTINGS, HEADERS, DATA, PING, DATA];
    for chunk in [1, 2, 7, 9, 10, 4096, stream.len()] {
        let mut cursor = FrameCursor::new(PREFACE_LEN);
        let seen: Vec<u8> = stream
            .chunks(chunk)
            .flat_map(|c| kinds(&mut cursor, c))
            .collect();
        assert_eq!(seen, want, "chunks of {chunk}");
    }
}

#[test]
fn the_cursor_stops_after_the_header_its_caller_refuses() {
    let mut stream = frame(PING, 8);
    stream.extend(frame(SETTINGS, 6));
    stream.extend(frame(PING, 8));
    let mut cursor = FrameCursor::new(0);
    let used = cursor.feed(&stream, |kind| kind != SETTINGS);
    assert_eq!(used.bytes, HEAD_LEN + 8 + HEAD_LEN);
}

#[test]
fn control_frames_beyond_the_budget_exceed_it() {
    let budget = ControlBudget::new(3);
    for kind in [SETTINGS, PING, WINDOW_UPDATE] {
        assert!(budget.received(kind));
    }
    assert!(!budget.received(PING));
    assert!(budget.exceeded());
}

#[test]
fn requests_and_data_sent_earn_control_frames_and_data_costs_none() {
    let budget = ControlBudget::new(0);
    assert!(budget.received(HEADERS));
    budget.sent(DATA);
    budget.sent(HEADERS);
    for kind in [DATA, CONTINUATION, DATA] {
        assert!(budget.received(kind));
    }
    // One for the request, two for the DATA frame sent.
    for _ in 0..3 {
        assert!(budget.received(WINDOW_UPDATE));
    }
    assert!(!budget.received(WINDOW_UPDATE));
}

#[test]
fn going_over_budget_wakes_the_connection_task() {
    struct Flag(std::sync::atomic::AtomicBool);
    impl std::task::Wake for Flag {
        fn wake(self: std::sync::Arc<Self>) {
            self.0.store(true, std::sync::atomic::Ordering::SeqCst);
        }
    }
    let flag = std::sync::Arc::new(Flag(false.into()));
    let waker = Waker::from(flag.clone());
    let budget = ControlBudget::new(1);
    assert!(!budget.poll_exceeded(&mut Context::from_waker(&waker)));
    assert!(budget.received(PING));
    assert!(!flag.0.load(std::sync::atomic::Ordering::SeqCst));
    assert!(!budget.received(PING));
    assert!(flag.0.load(std::sync::atomic::Ordering::SeqCst));
    assert!(budget.poll_exceeded(&mut Context::from_waker(&waker)));
}

#[tokio::test]
async fn the_guard_stops_reading_once_over_budget() {
    use tokio::io::{AsyncReadExt, AsyncWriteExt};
    let (client, server) = tokio::io::duplex(1 << 16);
    let budget = ControlBudget::new(2);
    let mut guard = FloodGuard::new(server, Rc::clone(&budget));
    let mut client = client;
    let mut bytes = b"PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n".to_vec();
    for _ in 0..3 {
        bytes.extend(frame(PING, 8));
    }
    client.write_all(&bytes).await.unwrap();
    // The third PING goes over budget: the guard passes on its header, not its payload.
    let mut got = vec![0; bytes.len() - 8];
    guard.read_exact(&mut got).await.unwrap();
    assert!(budget.exceeded());
    assert_eq!(got, bytes[..got.len()]);
    client.write_all(&frame(PING, 8)).await.unwrap();
    let more = tokio::time::timeout(std::time::Duration::from_millis(50), guard.read_u8()).await;
    assert!(more.is_err(), "read after the budget ran out");
    // What tern writes is still accounted: a DATA frame sent earns two more.
    guard.write_all(&frame(DATA, 100)).await.unwrap();
    assert!(!budget.exceeded());
}

#[tokio::test]
async fn a_flood_is_read_a_slice_per_turn_and_a_client_within_its_allowance_is_not() {
    use std::future::poll_fn;
    use tokio::io::AsyncWriteExt;

    // One read of up to 16 KiB in a turn, then another in the same turn.
    async fn two_reads(guard: &mut FloodGuard<tokio::io::DuplexStream>) -> (usize, bool) {
        let mut space = vec![0; 16 * 1024];
        poll_fn(|cx| {
            let mut buf = ReadBuf::new(&mut space);
            let first = Pin::new(&mut *guard).poll_read(cx, &mut buf);
            assert!(matches!(first, Poll::Ready(Ok(()))));
            let n = buf.filled().len();
            let mut rest = [0u8; 64];
            let second = Pin::new(&mut *guard).poll_read(cx, &mut ReadBuf::new(&mut rest));
            Poll::Ready((n, second.is_pending()))
        })
        .await
    }

    let (mut client, server) = tokio::io::duplex(1 << 20);
    let budget = ControlBudget::new(10_000);
    let mut guard = FloodGuard::new(server, Rc::clone(&budget));
    let mut bytes = b"PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n".to_vec();
    for _ in 0..40 {
        bytes.extend(frame(PING, 8));
    }
    client.write_all(&bytes).await.unwrap();
    // Within the allowance: everything in one read.
    let (n, _) = two_reads(&mut guard).await;
    assert_eq!(n, bytes.len());
    assert!(!budget.paced());

    let burst: Vec<u8> = (0..200).flat_map(|_| frame(PING, 8)).collect();
    client.write_all(&burst).await.unwrap();
    let (n, yielded) = two_reads(&mut guard).await;
    assert_eq!(n, burst.len(), "the read that crosses the line is whole");
    assert!(budget.paced());
    // Paced during the turn: its rest is spent, so the next read yields (an empty read would
    // be the end of the stream to the `h2` crate).
    assert!(yielded);
    client.write_all(&burst).await.unwrap();
    // Paced: a slice, then the turn ends; the next turn reads the next slice.
    let (n, yielded) = two_reads(&mut guard).await;
    assert_eq!((n, yielded), (pace::PACED.bytes, true));
    let (n, yielded) = two_reads(&mut guard).await;
    assert_eq!((n, yielded), (pace::PACED.bytes, true));
    assert!(!budget.exceeded());
}

/// One turn of the connection task: reads until the guard returns `Pending`; returns the
/// bytes read and whether the turn ended at its budget (a yield) rather than for want of bytes.
async fn one_turn(
    guard: &mut FloodGuard<tokio::io::DuplexStream>,
    budget: &ControlBudget,
) -> (usize, bool) {
    let mut space = vec![0; 64 * 1024];
    let n = std::future::poll_fn(|cx| {
        let mut total = 0;
        loop {
            let mut buf = ReadBuf::new(&mut space);
            match Pin::new(&mut *guard).poll_read(cx, &mut buf) {
                Poll::Ready(Ok(())) if !buf.filled().is_empty() => total += buf.filled().len(),
                Poll::Ready(r) => panic!("end of stream or error: {r:?}"),
                Poll::Pending => return Poll::Ready(total),
            }
        }
    })
    .await;
    (n, budget.take_yields() == 1)
}

#[tokio::test]
async fn a_turn_reads_at_most_its_share_of_header_block() {
    use tokio::io::AsyncWriteExt;
    let (mut client, server) = tokio::io::duplex(1 << 20);
    let budget = ControlBudget::new(10);
    let mut guard = FloodGuard::new(server, Rc::clone(&budget));
    let mut bytes = b"PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n".to_vec();
    bytes.extend(frame(HEADERS, 40_000));
    client.write_all(&bytes).await.unwrap();
    // The preface and the frame's header, then exactly the share of header block.
    let (n, yielded) = one_turn(&mut guard, &budget).await;
    assert_eq!(
        (n, yielded),
        (PREFACE_LEN + HEAD_LEN + pace::OPEN.header, true)
    );
    let (n, yielded) = one_turn(&mut guard, &budget).await;
    assert_eq!((n, yielded), (pace::OPEN.header, true));
    // The rest, and the turn ends for want of bytes.
    let (n, yielded) = one_turn(&mut guard, &budget).await;
    assert_eq!((n, yielded), (40_000 - 2 * pace::OPEN.header, false));
}

#[tokio::test]
async fn a_turn_reads_at_most_its_bytes_of_data() {
    use tokio::io::AsyncWriteExt;
    let (mut client, server) = tokio::io::duplex(1 << 20);
    let budget = ControlBudget::new(10);
    let mut guard = FloodGuard::new(server, Rc::clone(&budget));
    let mut bytes = b"PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n".to_vec();
    bytes.extend(frame(DATA, 100_000));
    client.write_all(&bytes).await.unwrap();
    let mut turns = Vec::new();
    loop {
        let (n, yielded) = one_turn(&mut guard, &budget).await;
        turns.push(n);
        if !yielded {
            break;
        }
    }
    // DATA is not held to the header share: whole turns of bytes. The first turn's first
    // read could see only the preface as surely not header block.
    assert_eq!(turns.iter().sum::<usize>(), bytes.len());
    assert!(turns.iter().all(|&n| n <= pace::OPEN.bytes), "{turns:?}");
    assert_eq!(
        turns[1..turns.len() - 1],
        vec![pace::OPEN.bytes; turns.len() - 2]
    );
}

#[tokio::test]
async fn a_small_request_does_not_spend_the_turn() {
    use tokio::io::AsyncWriteExt;
    let (mut client, server) = tokio::io::duplex(1 << 20);
    let budget = ControlBudget::new(10);
    let mut guard = FloodGuard::new(server, Rc::clone(&budget));
    let mut bytes = b"PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n".to_vec();
    bytes.extend(frame(SETTINGS, 12));
    bytes.extend(frame(HEADERS, 300));
    bytes.extend(frame(DATA, 2_000));
    client.write_all(&bytes).await.unwrap();
    assert_eq!(one_turn(&mut guard, &budget).await, (bytes.len(), false));
}
