//! Which page answers an error: a configured one (`error_pages`, HAProxy's `errorfile`) or
//! tern's own. Kept out of the connection loop: the lookup runs only on the error paths,
//! so requests that end well never see it.
//!
//! As in HAProxy, the backend's pages serve the errors of requests routed to it (tern: the
//! 500, 502, 503 and 504 it answers once a backend was chosen), the frontend's every other.

use tern_config::{Config, ErrorPage};
use tern_h1::local::{write_custom_page, write_page, Page};

/// The configured page replacing `page` for a connection of frontend `fe` whose current
/// backend is `backend`; `None` for tern's own (always for the monitor answer).
pub(crate) fn configured(
    cfg: &Config,
    fe: usize,
    backend: usize,
    page: Page,
) -> Option<&ErrorPage> {
    if page == Page::Monitor {
        return None;
    }
    let status = page.status();
    let from_backend = matches!(status, 500 | 502 | 503 | 504)
        .then(|| cfg.backends.get(backend))
        .flatten()
        .and_then(|b| b.error_pages.get(status));
    from_backend.or_else(|| cfg.frontends.get(fe)?.error_pages.get(status))
}

/// Writes `custom` if there is one, else tern's `page`.
pub(crate) fn write_either(
    custom: Option<&ErrorPage>,
    page: Page,
    close: bool,
    head_only: bool,
    out: &mut Vec<u8>,
) {
    match custom {
        Some(p) => write_custom_page(&p.head, &p.body, close, head_only, out),
        None => write_page(page, close, head_only, out),
    }
}
