//! The grammar of chunk extensions (RFC 9112 §7.1.1), one byte at a time:
//!
//! ```text
//! chunk-ext      = *( BWS ";" BWS chunk-ext-name [ BWS "=" BWS chunk-ext-val ] )
//! chunk-ext-name = token
//! chunk-ext-val  = token / quoted-string
//! ```
//!
//! tern drops extensions when it re-frames a body (no one defines one that a proxy should
//! keep, and HAProxy drops them too), but it checks them first: what one parser takes for the
//! end of an extension (a quote, a backslash, a bare CR) another may not, and an extension that
//! is not in the grammar is a sign of a message built to be read two ways. Whitespace is
//! accepted only where the grammar has BWS; in particular whitespace right before the CRLF (a
//! size followed by spaces, or an extension followed by spaces) is refused, as llhttp does.

use crate::span::{is_ows, is_tchar};

/// Where the parser is within the extensions of a chunk-size line.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Ext {
    /// Whitespace after the size or after a value: only `;` may follow.
    Bws,
    /// After `;`: whitespace, then a name.
    NameStart,
    /// In a name.
    Name,
    /// Whitespace after a name: `=` or `;` may follow.
    AfterName,
    /// After `=`: whitespace, then a token or a quoted string.
    ValueStart,
    /// In a token value.
    Token,
    /// In a quoted-string value.
    Quoted,
    /// After a backslash in a quoted string.
    QuotedPair,
    /// After the closing quote.
    AfterQuoted,
}

/// What a byte of a chunk-size line after the size leads to.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Next {
    /// Still in the extensions.
    Ext(Ext),
    /// The CR that ends the line.
    End,
}

impl Ext {
    /// The state after `b`, the end of the line, or why `b` is not allowed here.
    pub(super) fn next(self, b: u8) -> Result<Next, &'static str> {
        use Ext::*;
        let next = match (self, b) {
            (Name | Token | AfterQuoted, b'\r') => return Ok(Next::End),
            (Bws | NameStart | AfterName | ValueStart, b'\r') => {
                return Err("chunk-size line ends in whitespace or an empty extension")
            }
            (Bws | AfterQuoted | Token, b) if is_ows(b) => Bws,
            (Bws | Name | AfterName | Token | AfterQuoted, b';') => NameStart,
            (NameStart | ValueStart | AfterName, b) if is_ows(b) => self,
            (NameStart | Name, b) if is_tchar(b) => Name,
            (Name, b) if is_ows(b) => AfterName,
            (Name | AfterName, b'=') => ValueStart,
            (ValueStart | Token, b) if is_tchar(b) => Token,
            (ValueStart, b'"') => Quoted,
            (Quoted, b'"') => AfterQuoted,
            (Quoted, b'\\') => QuotedPair,
            (Quoted, b) if is_qdtext(b) => Quoted,
            (QuotedPair, b) if b == b'\t' || b == b' ' || is_vchar_or_obs(b) => Quoted,
            _ => return Err("invalid byte in chunk extension"),
        };
        Ok(Next::Ext(next))
    }
}

/// `qdtext` of RFC 9110 §5.6.4: HTAB, SP, visible characters but `"` and `\`, obs-text.
fn is_qdtext(b: u8) -> bool {
    b == b'\t' || b == b' ' || (is_vchar_or_obs(b) && b != b'"' && b != b'\\')
}

/// VCHAR or obs-text: any byte from `!` up, but DEL.
fn is_vchar_or_obs(b: u8) -> bool {
    b >= 0x21 && b != 0x7f
}
