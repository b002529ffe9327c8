//! Header edits made by configured rules (`set-header`, `add-header`, `del-header`), collected
//! per message and applied while the head is rewritten.
//!
//! The parsed head is never changed: it is spans into the read buffer, and a rule's new value
//! would not fit there. Instead the rules fill a [`HeaderEdits`] (names to drop, field lines to
//! add) and the rewrite ([`crate::write_request_edited`], [`crate::write_response_edited`])
//! skips the dropped fields while copying and appends the added lines after them. Both lists
//! are byte buffers kept across messages, so once warm, editing allocates nothing.
//!
//! The operations follow HAProxy's order semantics: `set` is `del` then `add`, and a `del`
//! also drops lines an earlier rule added for that name. Only fields the rewrite copies as they
//! are can be dropped (any field but framing and hop-by-hop ones, which tern manages itself;
//! the configuration refuses rules on those names).

mod line;

pub use line::LineEdits;

use crate::fields::{Field, FieldKind};

/// Names to drop and field lines to add, for one message.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct HeaderEdits {
    /// Lower-cased names, each followed by `\n` (names are tokens: no `\n` inside).
    deleted: Vec<u8>,
    /// Field lines, `name: value\r\n` each.
    added: Vec<u8>,
    /// The start line's changes.
    line: LineEdits,
}

impl HeaderEdits {
    /// No edits.
    pub fn new() -> Self {
        Self::default()
    }

    /// Forgets every edit, keeping the buffers for the next message.
    pub fn clear(&mut self) {
        self.deleted.clear();
        self.added.clear();
        self.line.clear();
    }

    /// Whether there is nothing to do.
    pub fn is_empty(&self) -> bool {
        self.deleted.is_empty() && self.added.is_empty() && self.line.is_empty()
    }

    /// The start line's changes.
    pub fn line(&self) -> &LineEdits {
        &self.line
    }

    /// The start line's changes, to make some.
    pub fn line_mut(&mut self) -> &mut LineEdits {
        &mut self.line
    }

    /// Drops every field named `name` (case-insensitive) from the message, including lines added
    /// earlier. `name` must be a token.
    pub fn delete(&mut self, name: &[u8]) {
        if !self.deletes(name) {
            self.deleted
                .extend(name.iter().map(|b| b.to_ascii_lowercase()));
            self.deleted.push(b'\n');
        }
        if !self.added.is_empty() {
            self.drop_added(name);
        }
    }

    /// Starts a field line `name: ` to add; the caller writes the value through the returned
    /// [`FieldValue`], which ends the line when dropped. `name` must be a token.
    pub fn add(&mut self, name: &[u8]) -> FieldValue<'_> {
        self.added.extend_from_slice(name);
        self.added.extend_from_slice(b": ");
        FieldValue {
            out: &mut self.added,
            line: true,
        }
    }

    /// [`HeaderEdits::delete`], then [`HeaderEdits::add`].
    pub fn set(&mut self, name: &[u8]) -> FieldValue<'_> {
        self.delete(name);
        self.add(name)
    }

    /// Whether fields named `name` are dropped.
    pub fn deletes(&self, name: &[u8]) -> bool {
        self.deleted_names().any(|d| d.eq_ignore_ascii_case(name))
    }

    /// The field lines to add.
    pub fn added(&self) -> &[u8] {
        &self.added
    }

    /// Whether the rewrite must drop `f` (parsed from `buf`). Framing and hop-by-hop fields are
    /// never dropped here: tern writes or removes those itself.
    pub(crate) fn drops(&self, f: Field, buf: &[u8]) -> bool {
        matches!(
            f.kind,
            FieldKind::Other
                | FieldKind::Host
                | FieldKind::XForwardedFor
                | FieldKind::XForwardedProto
        ) && self.deletes(f.name(buf))
    }

    fn deleted_names(&self) -> impl Iterator<Item = &[u8]> {
        self.deleted
            .split(|b| *b == b'\n')
            .filter(|n| !n.is_empty())
    }

    /// Removes the added lines named `name`.
    fn drop_added(&mut self, name: &[u8]) {
        let mut kept = 0;
        let mut at = 0;
        while at < self.added.len() {
            let end = self.added[at..]
                .windows(2)
                .position(|w| w == b"\r\n")
                .map_or(self.added.len(), |i| at + i + 2);
            let line_name = self.added[at..end].split(|b| *b == b':').next();
            if !line_name.is_some_and(|n| n.eq_ignore_ascii_case(name)) {
                self.added.copy_within(at..end, kept);
                kept += end - at;
            }
            at = end;
        }
        self.added.truncate(kept);
    }
}

/// The value of a field line being added; the line ends (CRLF) when this is dropped.
#[derive(Debug)]
pub struct FieldValue<'a> {
    out: &'a mut Vec<u8>,
    /// Whether dropping it ends a field line.
    line: bool,
}

impl<'a> FieldValue<'a> {
    /// A value written to the end of `out`, with the same filtering, that ends no line: for
    /// values that go elsewhere than a field line (a request target, a regex replacement).
    pub fn detached(out: &'a mut Vec<u8>) -> Self {
        Self { out, line: false }
    }
}

impl FieldValue<'_> {
    /// Appends `bytes` to the value, without CR, LF and NUL: a value can never end the line or
    /// the head early, whatever a client sent into a fetched sample.
    pub fn push(&mut self, bytes: &[u8]) {
        self.out
            .extend(bytes.iter().filter(|b| !matches!(b, b'\r' | b'\n' | 0)));
    }

    /// The buffer the value is written to, for formatting numbers and addresses in place; the
    /// caller writes no CR, LF or NUL.
    pub fn raw(&mut self) -> &mut Vec<u8> {
        self.out
    }
}

impl Drop for FieldValue<'_> {
    fn drop(&mut self) {
        if self.line {
            self.out.extend_from_slice(b"\r\n");
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn text(e: &HeaderEdits) -> &str {
        std::str::from_utf8(e.added()).unwrap_or("?")
    }

    #[test]
    fn set_replaces_and_delete_drops_earlier_additions() {
        let mut e = HeaderEdits::new();
        e.add(b"X-A").push(b"1");
        e.add(b"X-B").push(b"2");
        e.set(b"x-a").push(b"3");
        assert_eq!(text(&e), "X-B: 2\r\nx-a: 3\r\n");
        assert!(e.deletes(b"X-A") && !e.deletes(b"X-B"));
        e.delete(b"X-B");
        assert_eq!(text(&e), "x-a: 3\r\n");
        e.add(b"X-B").push(b"4");
        assert_eq!(text(&e), "x-a: 3\r\nX-B: 4\r\n");
        e.clear();
        assert!(e.is_empty());
    }

    #[test]
    fn values_lose_line_breaks_and_nul() {
        let mut e = HeaderEdits::new();
        e.add(b"X-Evil").push(b"a\r\nInjected: 1\0");
        assert_eq!(text(&e), "X-Evil: aInjected: 1\r\n");
    }

    #[test]
    fn a_name_is_recorded_once() {
        let mut e = HeaderEdits::new();
        e.delete(b"X-A");
        e.delete(b"x-a");
        assert_eq!(e.deleted_names().count(), 1);
    }
}
