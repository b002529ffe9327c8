//! tern-term
