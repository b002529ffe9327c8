//! HAProxy's variable-length integers (`intencode`/`intdecode`): values below 240 take one byte;
//! larger ones set the first byte's top four bits (`value | 0xF0`), subtract 240, shift by 4,
//! then carry 7 bits a byte, the high bit of each byte saying whether another follows. Not
//! LEB128: the first byte carries 4 bits, the rest 7, and each step subtracts what the byte
//! already counted.

use crate::Error;

/// Appends `v` to `out`.
pub fn put(out: &mut Vec<u8>, v: u64) {
    if v < 240 {
        out.push(v as u8);
        return;
    }
    out.push((v as u8) | 0xF0);
    let mut v = (v - 240) >> 4;
    while v >= 128 {
        out.push((v as u8) | 0x80);
        v = (v - 128) >> 7;
    }
    out.push(v as u8);
}

/// Reads a varint from the front of `buf`: the value and the bytes it took.
pub fn get(buf: &[u8]) -> Result<(u64, usize), Error> {
    let first = *buf.first().ok_or(Error::Truncated("varint"))?;
    let mut v = u64::from(first);
    if first < 240 {
        return Ok((v, 1));
    }
    let mut shift = 4u32;
    let mut i = 1;
    loop {
        let b = *buf.get(i).ok_or(Error::Truncated("varint"))?;
        i += 1;
        if shift > 60 {
            return Err(Error::VarintOverflow);
        }
        let add = u64::from(b)
            .checked_shl(shift)
            .filter(|a| a >> shift == u64::from(b))
            .ok_or(Error::VarintOverflow)?;
        v = v.checked_add(add).ok_or(Error::VarintOverflow)?;
        if b < 128 {
            return Ok((v, i));
        }
        shift += 7;
    }
}

/// A cursor over a message payload.
#[derive(Debug)]
pub struct Reader<'a> {
    buf: &'a [u8],
}

impl<'a> Reader<'a> {
    pub fn new(buf: &'a [u8]) -> Self {
        Self { buf }
    }

    /// The next varint.
    pub fn varint(&mut self) -> Result<u64, Error> {
        let (v, n) = get(self.buf)?;
        self.buf = &self.buf[n..];
        Ok(v)
    }

    /// The next varint, which must fit `u32`.
    pub fn varint32(&mut self, what: &'static str) -> Result<u32, Error> {
        u32::try_from(self.varint()?).map_err(|_| Error::Bad(what))
    }

    /// The next `n` bytes.
    pub fn bytes(&mut self, n: usize, what: &'static str) -> Result<&'a [u8], Error> {
        if self.buf.len() < n {
            return Err(Error::Truncated(what));
        }
        let (head, rest) = self.buf.split_at(n);
        self.buf = rest;
        Ok(head)
    }

    /// The next 4 bytes, big-endian.
    pub fn u32_be(&mut self, what: &'static str) -> Result<u32, Error> {
        let b = self.bytes(4, what)?;
        Ok(u32::from_be_bytes([b[0], b[1], b[2], b[3]]))
    }

    pub fn is_empty(&self) -> bool {
        self.buf.is_empty()
    }

    pub fn rest(&self) -> &'a [u8] {
        self.buf
    }

    /// Errors when bytes are left after `what`.
    pub fn finish(&self, what: &'static str) -> Result<(), Error> {
        if self.buf.is_empty() {
            Ok(())
        } else {
            Err(Error::Trailing(self.buf.len(), what))
        }
    }
}
