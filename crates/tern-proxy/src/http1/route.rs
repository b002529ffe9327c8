//! Routing an HTTP/1.1 request: between its parsed head and the exchange with a server.
//!
//! The decision is [`rules::route_request`]'s, which knows no protocol: the frontend's
//! `http_request` rules run first, then `use_backend` names the backend (the first rule that
//! holds, else `default_backend`), then that backend's `http_request` rules. What is HTTP/1.1
//! here is the answers rules give themselves: a `deny` answers tern's page of its status, a
//! `return` its own response; a request no rule routes, on a frontend without
//! `default_backend`, gets 503 as in HAProxy. Those answers keep the connection open when the
//! whole request (body included) was already received, like the monitor URI's.
//!
//! A frontend without rules, routing to a backend without rules, goes straight to the
//! exchange: no fact is read, nothing is evaluated ([`rules::Routing::without_rules`]).

use std::rc::Rc;

use tern_config::HttpAction;
use tern_h1::local::{write_page, write_reply, Page};
use tern_h1::Method;

use crate::http1::conn::{H1Conn, Next};
use crate::listen::client::ClientStream;
use crate::rules::facts::RequestFacts;
use crate::rules::{self, Verdict};
use crate::stats::bump;

/// How tern answers a request itself, after its rules.
enum Answer<'r> {
    Denied(u16),
    Returned(&'r HttpAction),
    NoBackend,
}

impl<S: ClientStream> H1Conn<S> {
    /// Routes the request whose head (`hlen` bytes) is at the front of the buffer (its rules
    /// and its backend, [`rules::route_request`]) and forwards it, or answers it.
    pub(super) async fn route(&mut self, hlen: usize) -> Next {
        let w = Rc::clone(&self.w);
        let cfg = w.shared.config();
        let fe = &cfg.frontends[self.frontend];
        let routing = &w.shared.routing[self.frontend];
        self.req_edits.clear();
        #[cfg(debug_assertions)]
        crate::panics::trigger(self.head.target().get(self.buf.data()));
        if let Some(b) = routing.without_rules(cfg, fe) {
            self.backend = b;
            return self.forward(hlen).await;
        }
        let facts = RequestFacts {
            head: &self.head,
            buf: self.buf.data(),
            conn: &self.conn,
            sni: self.io.sni(),
        };
        let (verdict, backend) =
            rules::route_request(cfg, fe, routing, &facts, &mut self.req_edits);
        if let Some(b) = backend {
            self.backend = b;
            if let Some(log) = self.log.as_deref_mut() {
                log.backend(b);
            }
        }
        let answer = match (verdict, backend) {
            (Verdict::Deny(status), _) => Answer::Denied(status),
            (Verdict::Return(action), _) => Answer::Returned(action),
            (Verdict::Pass, None) => Answer::NoBackend,
            (Verdict::Pass, Some(_)) => return self.forward(hlen).await,
        };
        self.intercept(hlen, answer).await
    }

    /// Answers the request as its rules decided.
    async fn intercept(&mut self, hlen: usize, answer: Answer<'_>) -> Next {
        let consumed = self.consume_request(hlen);
        let keep = consumed && self.head.keep_alive();
        let head_only = self.head.method() == Method::Head;
        let c = self.counters();
        // HAProxy's termination states: refused by a rule (`PR`), answered locally (`LR`),
        // no server for it (`SC`).
        let (counter, state) = match answer {
            Answer::Denied(_) => (&c.denied, *b"PR"),
            Answer::Returned(_) => (&c.intercepted, *b"LR"),
            Answer::NoBackend => (&c.no_backend, *b"SC"),
        };
        bump(counter);
        if let Some(log) = self.log.as_deref_mut() {
            log.refused(state);
        }
        match answer {
            Answer::Denied(status) => {
                let page = Page::Denied(status);
                self.respond(status, keep, consumed, |out, close| {
                    write_page(page, close, head_only, out);
                })
                .await
            }
            Answer::NoBackend => {
                self.respond(503, keep, consumed, |out, close| {
                    write_page(Page::Unavailable, close, head_only, out);
                })
                .await
            }
            Answer::Returned(HttpAction::Return {
                status,
                content_type,
                body,
            }) => {
                let content_type = content_type.as_deref().map(str::as_bytes);
                self.respond(*status, keep, consumed, |out, close| {
                    write_reply(
                        *status,
                        content_type,
                        body.as_bytes(),
                        close,
                        head_only,
                        out,
                    );
                })
                .await
            }
            // `on_request` returns only `return` actions as `Verdict::Return`.
            Answer::Returned(_) => self.answer(Page::Unavailable, false, head_only).await,
        }
    }
}
