//! Error pages: what replaces tern's own answer of a status (HAProxy's `errorfile`,
//! `errorfiles` with `http-errors` sections, and `http-error`).
//!
//! A page is loaded and checked when the configuration is, never per request: the status
//! line and fields to send (framing and `Connection` fields removed: tern writes those itself,
//! so a page can never disagree with the body it carries or the connection's fate) and the
//! body. Serving one is a lookup in a short list and a copy.

/// The largest error file tern loads (HAProxy refuses files over its buffer size).
pub const MAX_ERROR_PAGE: usize = 64 * 1024;

/// One page: the head to send and the body.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ErrorPage {
    /// The status line and field lines, each ending in CRLF, without `Content-Length`,
    /// `Transfer-Encoding` and `Connection`.
    pub head: Vec<u8>,
    pub body: Vec<u8>,
}

/// The pages of a frontend or backend, by the status of the answer they replace.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ErrorPages {
    pages: Vec<(u16, ErrorPage)>,
}

impl ErrorPages {
    /// Sets the page of `status` (a later one replaces an earlier one, as in HAProxy).
    pub fn set(&mut self, status: u16, page: ErrorPage) {
        self.pages.retain(|(s, _)| *s != status);
        self.pages.push((status, page));
    }

    /// The page that replaces tern's answer of `status`, if one is configured.
    pub fn get(&self, status: u16) -> Option<&ErrorPage> {
        self.pages
            .iter()
            .find(|(s, _)| *s == status)
            .map(|(_, p)| p)
    }

    pub fn is_empty(&self) -> bool {
        self.pages.is_empty()
    }

    /// The statuses with a page, in the order they were set.
    pub fn statuses(&self) -> impl Iterator<Item = u16> + '_ {
        self.pages.iter().map(|(s, _)| *s)
    }
}
