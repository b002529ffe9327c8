//! Variables of HAProxy's `set-var` / `var()`: values rules set on a request and read later in
//! conditions and values, of the same request and its response (`txn.`, `req.`, `res.`) or of
//! the whole client connection (`sess.`; on HTTP/2, of the stream, each being a session of its
//! own here).
//!
//! A short list searched by name: a configuration sets a handful of variables. The list and its
//! value buffers are kept across requests, so once warm a `set-var` allocates nothing but a new
//! name; a connection whose rules set none never touches it.

/// The variables of one session, and the stick-table entries it tracks (state of the
/// session that rules set and read, like variables).
#[derive(Debug, Default)]
pub(crate) struct Vars {
    /// What `track-sc` rules track (`crate::track`).
    pub(crate) track: crate::track::Tracking,
    /// (full name, value); `None` for a slot whose request ended.
    entries: Vec<(String, Option<Vec<u8>>)>,
    /// The access log level a `set-log-level` rule chose for this request (`Some(None)`:
    /// no line).
    log_level: Option<Option<u8>>,
    /// The request's id (`unique_id_format`), read by `%[unique-id]`; empty when none.
    unique_id: Vec<u8>,
}

impl Vars {
    /// No variable yet, and `track` for the counters.
    pub(crate) fn tracking(track: crate::track::Tracking) -> Self {
        Self {
            track,
            ..Self::default()
        }
    }

    /// The value of `name`, if set.
    pub(crate) fn get(&self, name: &str) -> Option<&[u8]> {
        self.entries
            .iter()
            .find(|(n, _)| n == name)
            .and_then(|(_, v)| v.as_deref())
    }

    /// Sets `name` to `value`.
    pub(crate) fn set(&mut self, name: &str, value: &[u8]) {
        let slot = match self.entries.iter().position(|(n, _)| n == name) {
            Some(i) => &mut self.entries[i].1,
            None => {
                self.entries.push((name.to_owned(), None));
                let last = self.entries.len() - 1;
                &mut self.entries[last].1
            }
        };
        let buf = slot.get_or_insert_with(Vec::new);
        buf.clear();
        buf.extend_from_slice(value);
    }

    /// `set-log-level`: the severity of this request's log line, `None` for none.
    pub(crate) fn set_log_level(&mut self, severity: Option<u8>) {
        self.log_level = Some(severity);
    }

    /// The level a rule chose for the request being logged, forgotten for the next one.
    pub(crate) fn take_log_level(&mut self) -> Option<Option<u8>> {
        self.log_level.take()
    }

    /// The request's id.
    pub(crate) fn unique_id(&self) -> &[u8] {
        &self.unique_id
    }

    /// Sets the request's id.
    pub(crate) fn set_unique_id(&mut self, id: &[u8]) {
        self.unique_id.clear();
        self.unique_id.extend_from_slice(id);
    }

    /// A request ends: every variable but the session's is unset (buffers kept).
    pub(crate) fn end_request(&mut self) {
        self.unique_id.clear();
        for (name, value) in &mut self.entries {
            if !name.starts_with("sess.") {
                if let Some(v) = value {
                    v.clear();
                }
                *value = None;
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn request_variables_end_with_the_request_and_session_ones_stay() {
        let mut v = Vars::default();
        v.set("txn.a", b"1");
        v.set("sess.b", b"2");
        v.set("txn.a", b"3");
        assert_eq!(v.get("txn.a"), Some(&b"3"[..]));
        v.end_request();
        assert_eq!(v.get("txn.a"), None);
        assert_eq!(v.get("sess.b"), Some(&b"2"[..]));
        assert_eq!(v.get("txn.zz"), None);
    }
}
