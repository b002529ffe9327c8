//! What an algorithm may look at when picking, and how the data path learns which part of the
//! request it has to extract.
//!
//! Most picks need nothing from the request, and extracting a header or a query parameter costs
//! a scan of the head, so the context is filled on demand: the [`Balancer`](crate::Balancer)
//! states once, through [`KeySource`], the one key its algorithm hashes and whether it reads the
//! clock, and the data path fills only that. Fields are borrowed from the request, so building
//! a context never allocates.

use std::net::IpAddr;

/// A monotonic time in nanoseconds from an epoch chosen by the caller (the data path uses its
/// start). Only differences are used.
pub type Nanos = u64;

/// The request data a pick may use. Unfilled fields are `None`: a hashing algorithm whose key is
/// missing falls back to round-robin, as HAProxy does.
#[derive(Debug, Default, Clone, Copy)]
pub struct PickContext<'a> {
    /// The client's address (`source`).
    pub client: Option<IpAddr>,
    /// The request path, without the query (`uri`).
    pub path: Option<&'a [u8]>,
    /// The query string, without the leading `?` (`uri` with `whole`, `url_param`).
    pub query: Option<&'a [u8]>,
    /// The value of the header named by [`KeySource::Header`] (`hdr(NAME)`).
    pub header: Option<&'a [u8]>,
    /// The current time (`ewma`); 0 when the algorithm does not need it.
    pub now: Nanos,
}

impl<'a> PickContext<'a> {
    /// An empty context: enough for every algorithm that hashes nothing.
    pub fn new() -> Self {
        Self::default()
    }

    /// Sets the client address.
    pub fn with_client(mut self, client: IpAddr) -> Self {
        self.client = Some(client);
        self
    }

    /// Sets the request path (without query).
    pub fn with_path(mut self, path: &'a [u8]) -> Self {
        self.path = Some(path);
        self
    }

    /// Sets the query string (without `?`).
    pub fn with_query(mut self, query: &'a [u8]) -> Self {
        self.query = Some(query);
        self
    }

    /// Sets the value of the header the algorithm hashes.
    pub fn with_header(mut self, value: &'a [u8]) -> Self {
        self.header = Some(value);
        self
    }

    /// Sets the current time.
    pub fn with_now(mut self, now: Nanos) -> Self {
        self.now = now;
        self
    }
}

/// The part of the request an algorithm hashes, so the data path extracts only that.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum KeySource<'a> {
    /// Nothing: the algorithm does not hash the request.
    None,
    /// [`PickContext::client`].
    ClientAddr,
    /// [`PickContext::path`].
    Path,
    /// [`PickContext::path`] and [`PickContext::query`].
    PathAndQuery,
    /// [`PickContext::query`] (the algorithm finds its parameter itself).
    Query,
    /// [`PickContext::header`], with the value of the header of this name (case-insensitive).
    Header(&'a str),
}
