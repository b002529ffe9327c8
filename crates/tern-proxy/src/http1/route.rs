//! Routing an HTTP/1.1 request: between its parsed head and the exchange with a server.
//!
//! The decision is [`rules::route_request`]'s, which knows no protocol: the frontend's
//! `http_request` rules run first, then `use_backend` names the backend (the first rule that
//! holds, else `default_backend`), then that backend's `http_request` rules. What is HTTP/1.1
//! here is the answers rules give themselves: a `deny` answers tern's page of its status, a
//! `return` its own response, a `redirect` its redirect, an `auth` a 401 with its challenge
//! (the credentials were checked before the rules ran: `rules/auth.rs`); a request no rule
//! routes, on a frontend without `default_backend`, gets 503 as in HAProxy. Those answers keep
//! the connection open when the whole request (body included) was already received, like the
//! monitor URI's. A `tarpit` answers tern's page after `timeouts.tarpit` and closes; `reject`
//! closes and `silent-drop` resets the connection without an answer.
//!
//! A frontend without rules, routing to a backend without rules, goes straight to the
//! exchange: no fact is read, nothing is evaluated ([`rules::Routing::without_rules`]).

use std::rc::Rc;

use tern_config::HttpAction;
use tern_h1::local::{write_redirect, write_reply, Page};

use crate::http1::error_page::write_either;
use tern_h1::Method;

use crate::http1::conn::{H1Conn, Next};
use crate::listen::client::ClientStream;
use crate::rules::auth::AuthSeen;
use crate::rules::facts::RequestFacts;
use crate::rules::{self, Verdict};
use crate::stats::bump;

/// How tern answers a request itself, after its rules.
enum Answer<'r> {
    Denied(u16),
    Returned(&'r HttpAction),
    /// A redirect of this code, its field lines in the request's edits.
    Redirected(u16),
    /// 401 with a challenge for this realm (`auth`).
    Challenged(&'r str),
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
        // The previous request's variables end here (an empty list when no rule sets any).
        let vars = self.vars.get_mut();
        vars.end_request();
        vars.track.request_started();
        #[cfg(debug_assertions)]
        crate::panics::trigger(self.head.target().get(self.buf.data()));
        let request_log = fe.request_log.is_active();
        if request_log {
            self.identify(&fe.request_log, &fe.name);
        }
        if let Some(b) = routing.without_rules(cfg, fe) {
            self.backend = b;
            if request_log {
                self.sample_for_log(&fe.request_log);
            }
            return self.forward(hlen).await;
        }
        if let Some(auth) = w.shared.auth.as_deref() {
            let lists = routing.auth_lists();
            if !lists.is_empty() {
                let (head, buf) = (&self.head, self.buf.data());
                rules::auth::check(auth, lists, head, buf, &mut self.auth_users).await;
            }
        }
        let facts = RequestFacts {
            head: &self.head,
            buf: self.buf.data(),
            conn: &self.conn,
            sni: self.io.sni(),
            pp_tlvs: self.addrs.pp_tlvs(),
            vars: &self.vars,
            auth: AuthSeen {
                lists: &cfg.userlists,
                users: &self.auth_users,
            },
        };
        let (verdict, backend) =
            rules::route_request(cfg, fe, routing, &facts, &mut self.req_edits);
        if request_log {
            self.sample_for_log(&fe.request_log);
        }
        if let Some(b) = backend {
            self.backend = b;
            if let Some(log) = self.log.as_deref_mut() {
                log.backend(b);
            }
        }
        let answer = match (verdict, backend) {
            (Verdict::Deny(status), _) => Answer::Denied(status),
            (Verdict::Tarpit(status), _) => return self.tarpit(status).await,
            (Verdict::Reject | Verdict::SilentDrop, _) => return self.drop_request(verdict),
            (Verdict::Return(action), _) => Answer::Returned(action),
            (Verdict::Redirect(code), _) => Answer::Redirected(code),
            (Verdict::Auth(realm), _) => Answer::Challenged(realm),
            (Verdict::Pass, None) => Answer::NoBackend,
            (Verdict::Pass, Some(_)) => return self.forward(hlen).await,
        };
        self.intercept(hlen, answer).await
    }

    /// Answers with the `http_response` `return` rule at `index` of the current backend's list
    /// (`backend`) or the frontend's, in place of the server's response; the connection closes
    /// (the request may not have been read whole).
    pub(super) async fn response_return(
        &mut self,
        backend: bool,
        index: usize,
        head_only: bool,
    ) -> Next {
        let w = Rc::clone(&self.w);
        let cfg = w.shared.config();
        let rules = if backend {
            &cfg.backends[self.backend].http_response
        } else {
            &cfg.frontends[self.frontend].http_response
        };
        let Some(HttpAction::Return {
            status,
            content_type,
            body,
        }) = rules.get(index).map(|r| &r.action)
        else {
            return self.answer(Page::BadGateway, false, head_only).await;
        };
        let content_type = content_type.as_deref().map(str::as_bytes);
        self.respond(*status, false, false, |out, close| {
            write_reply(*status, content_type, body, close, head_only, out);
        })
        .await
    }

    /// `tarpit`: holds the request for the frontend's `timeouts.tarpit` (the client waits,
    /// as an abuser's script would, at the cost of one idle task), then answers `status` and
    /// closes, as HAProxy does.
    async fn tarpit(&mut self, status: u16) -> Next {
        bump(&self.counters().denied);
        if let Some(log) = self.log.as_deref_mut() {
            // HAProxy's termination state of a tarpitted request.
            log.refused(*b"PT");
        }
        tokio::time::sleep(self.frontend_config().timeouts.tarpit).await;
        let w = Rc::clone(&self.w);
        let head_only = self.head.method() == Method::Head;
        let custom = w.shared.config().frontends[self.frontend]
            .error_pages
            .get(status);
        self.respond(status, false, false, |out, close| {
            write_either(custom, Page::Denied(status), close, head_only, out);
        })
        .await
    }

    /// `reject` and `silent-drop`: the connection closes without an answer; `silent-drop`
    /// resets it, so nothing more is sent (not even a FIN).
    fn drop_request(&mut self, verdict: Verdict<'_>) -> Next {
        bump(&self.counters().denied);
        if let Some(log) = self.log.as_deref_mut() {
            log.refused(*b"PR");
        }
        if verdict == Verdict::SilentDrop {
            if let Some(tcp) = self.io.socket() {
                crate::tunnel::reset(tcp);
            }
            return Next::Abort;
        }
        Next::Close
    }

    /// Answers the request as its rules decided.
    async fn intercept(&mut self, hlen: usize, answer: Answer<'_>) -> Next {
        let w = Rc::clone(&self.w);
        let consumed = self.consume_request(hlen);
        let keep = consumed && self.head.keep_alive();
        let head_only = self.head.method() == Method::Head;
        let c = self.counters();
        // HAProxy's termination states: refused by a rule (`PR`), answered locally (`LR`),
        // no server for it (`SC`).
        let (counter, state) = match answer {
            Answer::Denied(_) => (&c.denied, *b"PR"),
            Answer::Returned(_) | Answer::Redirected(_) => (&c.intercepted, *b"LR"),
            Answer::Challenged(_) => (&c.auth_challenges, *b"LR"),
            Answer::NoBackend => (&c.no_backend, *b"SC"),
        };
        bump(counter);
        if let Some(log) = self.log.as_deref_mut() {
            log.refused(state);
        }
        match answer {
            Answer::Denied(status) => {
                let page = Page::Denied(status);
                let custom = w.shared.config().frontends[self.frontend]
                    .error_pages
                    .get(status);
                self.respond(status, keep, consumed, |out, close| {
                    write_either(custom, page, close, head_only, out);
                })
                .await
            }
            Answer::Redirected(code) => {
                // Taken out for the writer, then put back so its buffers stay warm.
                let lines = std::mem::take(&mut self.req_edits);
                let next = self
                    .respond(code, keep, consumed, |out, close| {
                        write_redirect(code, lines.added(), close, out);
                    })
                    .await;
                self.req_edits = lines;
                next
            }
            Answer::Challenged(realm) => {
                let custom = w.shared.config().frontends[self.frontend]
                    .error_pages
                    .get(401);
                self.respond(401, keep, consumed, |out, close| {
                    let start = out.len();
                    write_either(custom, Page::Denied(401), close, head_only, out);
                    rules::auth::add_challenge(out, start, realm);
                })
                .await
            }
            Answer::NoBackend => {
                let custom = w.shared.config().frontends[self.frontend]
                    .error_pages
                    .get(503);
                self.respond(503, keep, consumed, |out, close| {
                    write_either(custom, Page::Unavailable, close, head_only, out);
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
                    write_reply(*status, content_type, body, close, head_only, out);
                })
                .await
            }
            // `on_request` returns only `return` actions as `Verdict::Return`.
            Answer::Returned(_) => self.answer(Page::Unavailable, false, head_only).await,
        }
    }
}
