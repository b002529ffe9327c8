//! The `PP2_TYPE_CRC32C` checksum (2.2.2): the CRC32c of the whole header, signature to the
//! last TLV, computed with the checksum's own four bytes taken as zero. One function for both
//! directions, so the header tern sends and the one it verifies agree by construction.

use crate::PP2_TYPE_CRC32C;

/// The checksum of `header` whose `PP2_TYPE_CRC32C` value starts at `at`: the bytes before
/// it, four zeros, the bytes after it. `None` when the value does not fit in `header`.
pub fn crc32c_of(header: &[u8], at: usize) -> Option<u32> {
    let after = header.get(at.checked_add(4)?..)?;
    let crc = crc32c::crc32c(&header[..at]);
    let crc = crc32c::crc32c_append(crc, &[0; 4]);
    Some(crc32c::crc32c_append(crc, after))
}

/// Appends a `PP2_TYPE_CRC32C` TLV to a complete v2 `header` (signature, fixed part,
/// addresses, other TLVs), sets its length field to cover the TLV, and fills in the checksum.
/// The TLV goes last, as HAProxy writes it; the receiver finds it wherever it is. Returns
/// `false` (and leaves `header` alone) when it is not a v2 header or would grow too long.
pub fn append_crc32c(header: &mut Vec<u8>) -> bool {
    let Some(body) = header.len().checked_sub(16) else {
        return false;
    };
    let Ok(len) = u16::try_from(body + 7) else {
        return false;
    };
    header.push(PP2_TYPE_CRC32C);
    header.extend_from_slice(&4u16.to_be_bytes());
    let at = header.len();
    header.extend_from_slice(&[0; 4]);
    header[14..16].copy_from_slice(&len.to_be_bytes());
    // The value fits: it was just written.
    let crc = crc32c_of(header, at).unwrap_or(0);
    header[at..at + 4].copy_from_slice(&crc.to_be_bytes());
    true
}
