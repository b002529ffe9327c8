#![allow(clippy::unwrap_used)]

use super::*;

#[test]
fn of_finds_a_sub_slice_and_refuses_foreign_ones() {
    let buf = b"hello world";
    assert_eq!(Span::of(buf, &buf[6..]).range(), 6..11);
    assert_eq!(Span::of(buf, &buf[..0]).range(), 0..0);
    let other = b"world";
    assert_eq!(Span::of(buf, other), Span::EMPTY);
    assert_eq!(Span::of(&buf[..5], &buf[3..8]), Span::EMPTY);
}

#[test]
fn get_never_panics_on_the_wrong_buffer() {
    let s = Span::new(4, 9);
    assert_eq!(s.get(b"0123456789"), b"45678");
    assert_eq!(s.get(b"012"), b"");
    assert_eq!(Span::new(9, 4).len(), 0, "end is clamped to start");
}

#[test]
fn sub_stays_inside_the_span() {
    let buf = b"x: value";
    let s = Span::new(2, buf.len());
    assert_eq!(s.sub(1, 3).get(buf), b"va");
    assert_eq!(s.sub(3, 100).end(), buf.len());
    assert_eq!(s.sub(50, 100).len(), 0);
    assert_eq!(s.sub(4, 2).len(), 0, "to before from");
}
