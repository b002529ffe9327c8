//! Start-line edits made by rules: a new method or target for a request (`set-method`,
//! `set-path`, `set-query`, `set-uri`, `replace-path`, `replace-uri`), a new status for a
//! response (`set-status`). Kept beside the header edits in [`super::HeaderEdits`] and applied
//! by the same rewrite, so a rewritten request line costs no second pass over the head.
//!
//! The buffers are kept across messages: once warm, a rewrite allocates nothing. The caller
//! puts only valid bytes here (a method is a token, a target has no space or control byte);
//! the rewrite copies them as they are.

/// A new method, target or status, each present only once a rule set it.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct LineEdits {
    method: Vec<u8>,
    has_method: bool,
    target: Vec<u8>,
    has_target: bool,
    /// The new status and its reason phrase.
    status: Option<u16>,
    reason: Vec<u8>,
}

impl LineEdits {
    /// Forgets every edit, keeping the buffers.
    pub fn clear(&mut self) {
        self.has_method = false;
        self.has_target = false;
        self.status = None;
    }

    /// Whether nothing is changed.
    pub fn is_empty(&self) -> bool {
        !self.has_method && !self.has_target && self.status.is_none()
    }

    /// The new method, if a rule set one.
    pub fn method(&self) -> Option<&[u8]> {
        self.has_method.then_some(self.method.as_slice())
    }

    /// Replaces the method with `method` (a token).
    pub fn set_method(&mut self, method: &[u8]) {
        self.method.clear();
        self.method.extend_from_slice(method);
        self.has_method = true;
    }

    /// The new target, if a rule set one.
    pub fn target(&self) -> Option<&[u8]> {
        self.has_target.then_some(self.target.as_slice())
    }

    /// Replaces the target with `target` (no space or control byte).
    pub fn set_target(&mut self, target: &[u8]) {
        self.target.clear();
        self.target.extend_from_slice(target);
        self.has_target = true;
    }

    /// The new status and reason, if a rule set one.
    pub fn status(&self) -> Option<(u16, &[u8])> {
        self.status.map(|s| (s, self.reason.as_slice()))
    }

    /// Replaces the response's status and reason phrase (CR, LF and NUL are dropped).
    pub fn set_status(&mut self, status: u16, reason: &[u8]) {
        self.status = Some(status);
        self.reason.clear();
        self.reason
            .extend(reason.iter().filter(|b| !matches!(b, b'\r' | b'\n' | 0)));
    }
}
