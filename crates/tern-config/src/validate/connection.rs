//! `connection_mode` on frontends and backends (see `model/connection.rs` for the semantics).
//!
//! A backend refuses `"close"`: in HAProxy a backend's `httpclose` closes only server
//! connections, so accepting it would suggest that clients are closed when they are not.

use super::Checker;
use crate::locate::KeyPath;
use crate::model::ConnectionMode;

impl Checker<'_> {
    /// The mode named by `raw` (default `keep-alive`); `frontend` allows `"close"`.
    pub(super) fn connection_mode(
        &mut self,
        raw: Option<&str>,
        path: &KeyPath,
        frontend: bool,
    ) -> ConnectionMode {
        let Some(raw) = raw else {
            return ConnectionMode::KeepAlive;
        };
        match raw {
            "keep-alive" => ConnectionMode::KeepAlive,
            "server-close" => ConnectionMode::ServerClose,
            "close" if frontend => ConnectionMode::Close,
            "close" => {
                self.issue(
                    path,
                    "a backend can only close its server connections: write \"server-close\"; \
                     closing client connections is the frontend's connection_mode = \"close\"",
                );
                ConnectionMode::KeepAlive
            }
            other => {
                let expected = if frontend {
                    "\"keep-alive\", \"server-close\", \"close\""
                } else {
                    "\"keep-alive\", \"server-close\""
                };
                self.issue(
                    path,
                    format!("unknown mode `{other}`: expected one of {expected}"),
                );
                ConnectionMode::KeepAlive
            }
        }
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]

    use crate::model::ConnectionMode;
    use crate::test_support::*;

    #[test]
    fn defaults_to_keep_alive_on_both_sides() {
        let config = parse_ok(MINIMAL);
        assert_eq!(
            config.frontends[0].connection_mode,
            ConnectionMode::KeepAlive
        );
        assert_eq!(
            config.backends[0].connection_mode,
            ConnectionMode::KeepAlive
        );
    }

    #[test]
    fn frontend_takes_the_three_modes() {
        for (text, mode) in [
            ("keep-alive", ConnectionMode::KeepAlive),
            ("server-close", ConnectionMode::ServerClose),
            ("close", ConnectionMode::Close),
        ] {
            let config = parse_ok(&with_frontend_lines(&format!(
                "connection_mode = \"{text}\""
            )));
            assert_eq!(config.frontends[0].connection_mode, mode);
            assert_eq!(mode.as_str(), text);
        }
    }

    #[test]
    fn backend_takes_keep_alive_and_server_close() {
        let be = parse_backend("connection_mode = \"server-close\"");
        assert_eq!(be.connection_mode, ConnectionMode::ServerClose);
        let be = parse_backend("connection_mode = \"keep-alive\"");
        assert_eq!(be.connection_mode, ConnectionMode::KeepAlive);
    }

    #[test]
    fn backend_refuses_close_and_says_what_to_write() {
        assert_error(
            &with_backend_lines("connection_mode = \"close\""),
            8,
            "backend[0].connection_mode",
            "write \"server-close\"",
        );
    }

    #[test]
    fn unknown_modes_list_the_accepted_ones() {
        assert_error(
            &with_frontend_lines("connection_mode = \"tunnel\""),
            5,
            "frontend[0].connection_mode",
            "unknown mode `tunnel`: expected one of \"keep-alive\", \"server-close\", \"close\"",
        );
        assert_error(
            &with_backend_lines("connection_mode = \"httpclose\""),
            8,
            "backend[0].connection_mode",
            "expected one of \"keep-alive\", \"server-close\"",
        );
    }

    #[test]
    fn server_side_closes_when_either_proxy_asks() {
        use ConnectionMode::{Close, KeepAlive, ServerClose};
        assert!(!ConnectionMode::closes_server(KeepAlive, KeepAlive));
        for (fe, be) in [
            (ServerClose, KeepAlive),
            (KeepAlive, ServerClose),
            (Close, KeepAlive),
            (Close, ServerClose),
        ] {
            assert!(ConnectionMode::closes_server(fe, be), "{fe:?} {be:?}");
        }
    }
}
