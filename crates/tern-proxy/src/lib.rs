//! tern-proxy
