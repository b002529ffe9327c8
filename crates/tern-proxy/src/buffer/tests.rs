#![allow(clippy::unwrap_used)]

use std::task::Waker;

use super::*;

/// Reads everything `bytes` offers into `buf` (one read per call).
fn read(buf: &mut Buffer, mut bytes: &[u8]) -> io::Result<usize> {
    let mut cx = Context::from_waker(Waker::noop());
    match buf.poll_read_from(&mut bytes, &mut cx) {
        Poll::Ready(r) => r,
        Poll::Pending => panic!("a slice never pends"),
    }
}

#[test]
fn reads_append_and_consuming_everything_rewinds() {
    let mut buf = Buffer::new(8, 8);
    assert_eq!(read(&mut buf, b"abc").unwrap(), 3);
    assert_eq!(read(&mut buf, b"de").unwrap(), 2);
    assert_eq!(buf.data(), b"abcde");
    buf.consume(2);
    assert_eq!(buf.data(), b"cde");
    buf.consume(3);
    assert!(buf.is_empty());
    // Rewound: the whole memory is free again, 8 bytes in one read.
    assert_eq!(read(&mut buf, b"12345678").unwrap(), 8);
    assert_eq!(buf.data(), b"12345678");
}

#[test]
fn consume_never_passes_the_end() {
    let mut buf = Buffer::new(8, 8);
    read(&mut buf, b"abc").unwrap();
    buf.consume(100);
    assert!(buf.is_empty());
}

#[test]
fn a_full_tail_moves_the_data_to_the_front() {
    let mut buf = Buffer::new(8, 8);
    read(&mut buf, b"12345678").unwrap();
    buf.consume(5);
    assert_eq!(
        read(&mut buf, b"abcdef").unwrap(),
        5,
        "room for 5 after moving 3"
    );
    assert_eq!(buf.data(), b"678abcde");
}

#[test]
fn grows_up_to_its_maximum_then_reports_full() {
    let mut buf = Buffer::new(4, 10);
    assert_eq!(read(&mut buf, b"0123456789xyz").unwrap(), 4);
    assert_eq!(read(&mut buf, b"456789xyz").unwrap(), 4, "doubled to 8");
    assert_eq!(read(&mut buf, b"89xyz").unwrap(), 2, "capped at 10");
    assert_eq!(buf.data(), b"0123456789");
    let err = read(&mut buf, b"xyz").unwrap_err();
    assert_eq!(err.kind(), io::ErrorKind::OutOfMemory);
}

#[test]
fn end_of_stream_reads_zero() {
    let mut buf = Buffer::new(4, 4);
    assert_eq!(read(&mut buf, b"").unwrap(), 0);
    assert!(buf.is_empty());
}

#[test]
fn appended_bytes_fit_after_a_compaction_or_a_growth_within_max() {
    let mut buf = Buffer::new(4, 8);
    assert!(buf.append(b"abc"));
    buf.consume(2);
    assert!(buf.append(b"def"), "compacted to make room");
    assert_eq!(buf.data(), b"cdef");
    assert!(buf.append(b"gh"), "grown up to max");
    assert_eq!(buf.data(), b"cdefgh");
    assert!(!buf.append(b"ijk"), "beyond max");
    assert_eq!(buf.data(), b"cdefgh");
    let mut none = Buffer::empty();
    assert!(!none.append(b"x"));
}
