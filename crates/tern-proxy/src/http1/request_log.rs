//! What a request gives a frontend's request id and log line while it is routed (see
//! `rules/request_id.rs`): before the rules, the id (sent in `unique_id_header`, read by
//! `%[unique-id]`) and the captured request fields; after them, the `log_format`'s samples,
//! so that they see the variables rules set. Called only for a frontend with a request id,
//! captures or a `log_format`.

use std::time::SystemTime;

use tern_config::RequestLog;

use crate::access_log::template;
use crate::http1::conn::H1Conn;
use crate::listen::client::ClientStream;
use crate::rules::auth::AuthSeen;
use crate::rules::facts::{RequestFacts, Samples};
use crate::rules::request_id::{self, AtRequest};

impl<S: ClientStream> H1Conn<S> {
    /// Makes the request's id and captures its fields.
    pub(super) fn identify(&mut self, log: &RequestLog, frontend: &str) {
        let counter = request_id::next_counter();
        let local = if log.reads_local_address() {
            self.addrs.local().or_else(|| self.io.local_addr().ok())
        } else {
            None
        };
        // Made before the rules, and before the credentials are checked.
        let facts = RequestFacts {
            head: &self.head,
            buf: self.buf.data(),
            conn: &self.conn,
            sni: self.io.sni(),
            pp_tlvs: self.addrs.pp_tlvs(),
            vars: &self.vars,
            auth: AuthSeen::default(),
        };
        let mut id = Vec::new();
        if let Some(format) = &log.unique_id_format {
            let values = AtRequest {
                facts: &facts,
                client: self.addrs.peer,
                local,
                frontend,
                tls: self.conn.tls,
                now: SystemTime::now(),
                counter,
            };
            template::render(format, &values, &mut id);
            if let Some(name) = &log.unique_id_header {
                self.req_edits.add(name.as_bytes()).push(&id);
            }
            // No rule runs yet: the variables are not borrowed.
            if let Ok(mut vars) = self.vars.try_borrow_mut() {
                vars.set_unique_id(&id);
            }
        }
        if let Some(tracker) = self.log.as_deref_mut() {
            let extra = tracker.extra();
            extra.unique_id = id;
            extra.counter = counter;
            extra.local = local;
            request_id::capture(
                &log.capture_request,
                facts.head.fields(),
                facts.buf,
                &mut extra.request_captures,
            );
        }
    }

    /// Takes the `log_format`'s samples of the request.
    pub(super) fn sample_for_log(&mut self, log: &RequestLog) {
        let Some(format) = log.log_format.as_deref().filter(|f| f.samples > 0) else {
            return;
        };
        let Some(tracker) = self.log.as_deref_mut() else {
            return;
        };
        let w = std::rc::Rc::clone(&self.w);
        let facts = RequestFacts {
            head: &self.head,
            buf: self.buf.data(),
            conn: &self.conn,
            sni: self.io.sni(),
            pp_tlvs: self.addrs.pp_tlvs(),
            vars: &self.vars,
            auth: AuthSeen {
                lists: &w.shared.config().userlists,
                users: &self.auth_users,
            },
        };
        tracker.take_samples(format, &|fetch, out| facts.sample(fetch, out));
    }
}
