//! A [`Record`]'s values for a `log_format` ([`Values`]), on the writer thread.
//!
//! The timers HAProxy derives are derived here from tern's: `Tt = Th + Ti + Ta` (for a TCP
//! session, the time since the accept), `Tq = Th + Ti + TR`, `Td = Ta - (TR + Tw + Tc + Tr)`,
//! `Tu = Tt - Ti`; any of them is `-1` when a phase it needs did not happen. The accept date
//! (`%t`, `%T`, `%Ts`, `%ms`) is the request's start less `Th` and `Ti`.

use std::time::{Duration, SystemTime, UNIX_EPOCH};

use tern_config::{Fetch, LogFlags, LogVar};

use super::format::{int, millis, padded, version_name, Civil};
use super::record::{Record, Request, Timers};
use super::template::{self, address, encoded, number, Escape, Values};

impl Values for Record {
    fn var(&self, var: LogVar, flags: LogFlags, out: &mut Vec<u8>) {
        let extra = self.extra.as_deref();
        let hex = flags.hex;
        let t = &self.timers;
        use LogVar::*;
        match var {
            ClientIp => address(out, self.client.ip(), hex),
            ClientPort => number(out, u64::from(self.client.port()), hex),
            FrontendIp => {
                if let Some(local) = extra.and_then(|e| e.local) {
                    address(out, local.ip(), hex);
                }
            }
            FrontendPort => {
                if let Some(local) = extra.and_then(|e| e.local) {
                    number(out, u64::from(local.port()), hex);
                }
            }
            ServerIp => {
                if let Some(server) = extra.and_then(|e| e.server) {
                    address(out, server.ip(), hex);
                }
            }
            ServerPort => {
                if let Some(server) = extra.and_then(|e| e.server) {
                    number(out, u64::from(server.port()), hex);
                }
            }
            Frontend | FrontendTransport => {
                encoded(out, self.frontend.get(), Escape::Url);
                if var == FrontendTransport && self.tls.is_some() {
                    out.push(b'~');
                }
            }
            Backend if self.backend.is_empty() => encoded(out, self.frontend.get(), Escape::Url),
            Backend => encoded(out, self.backend.get(), Escape::Url),
            Server if self.server.is_empty() => out.extend_from_slice(b"<NOSRV>"),
            Server => encoded(out, self.server.get(), Escape::Url),
            AcceptDate => Civil::of(self.accepted()).write_haproxy(out),
            AcceptDateGmt => Civil::of(self.accepted()).write_gmt(out),
            Timestamp => number(out, unix(self.accepted()).as_secs(), hex),
            Millis => {
                let ms = unix(self.accepted()).subsec_millis();
                if hex {
                    out.extend_from_slice(format!("{ms:02X}").as_bytes());
                } else {
                    padded(out, ms, 3);
                }
            }
            RequestDate => Civil::of(self.time).write_haproxy(out),
            RequestDateGmt => Civil::of(self.time).write_gmt(out),
            Th | Ti | TR | Tw | Tc | Tr | Ta | Tt | Tq | Td | Tu => {
                int(out, millis(self.timer(var, t)));
            }
            Status => int(out, i64::from(self.status)),
            BytesOut => number(out, self.bytes_out, false),
            BytesIn => number(out, self.bytes_in, false),
            Retries => {
                if self.redispatched {
                    out.push(b'+');
                }
                int(out, i64::from(self.retries));
            }
            Termination => out.extend_from_slice(&self.termination),
            TerminationCookie => {
                out.extend_from_slice(&self.termination);
                out.extend_from_slice(b"--");
            }
            CapturedCookie => {}
            CapturedRequest | CapturedRequestList => {
                let list = extra.map_or(&[][..], |e| &e.request_captures[..]);
                template::captures(out, list, var == CapturedRequestList, flags.quote);
            }
            CapturedResponse | CapturedResponseList => {
                let list = extra.map_or(&[][..], |e| &e.response_captures[..]);
                template::captures(out, list, var == CapturedResponseList, flags.quote);
            }
            RequestLine => self.request_line(out),
            Method | Uri | UriPath | PathOnly | Query | Version => self.request_part(var, out),
            UniqueId => {
                let id = extra.map_or(&[][..], |e| &e.unique_id[..]);
                encoded(out, id, Escape::Url);
            }
            Pid => number(out, u64::from(std::process::id()), hex),
            Hostname => out.extend_from_slice(template::hostname().as_bytes()),
            RequestCounter => number(out, extra.map_or(0, |e| e.counter), hex),
            SslVersion => {
                if let Some(tls) = &self.tls {
                    out.extend_from_slice(tls.version.as_bytes());
                }
            }
            SslCipher => {
                if let Some(tls) = &self.tls {
                    out.extend_from_slice(tls.cipher.as_bytes());
                }
            }
        }
    }

    fn sample(&self, _fetch: &Fetch, slot: usize, out: &mut Vec<u8>) {
        let value = self
            .extra
            .as_deref()
            .and_then(|e| e.samples.get(slot))
            .and_then(Option::as_deref);
        if let Some(v) = value {
            encoded(out, v, Escape::Url);
        }
    }
}

impl Record {
    /// When the connection (or, after the first request, the wait for this request) began.
    fn accepted(&self) -> SystemTime {
        if self.request == Request::Tcp {
            return self.time;
        }
        let before = self.timers.handshake.max(0) + self.timers.idle.max(0);
        let before = Duration::from_micros(u64::try_from(before).unwrap_or(0));
        self.time.checked_sub(before).unwrap_or(self.time)
    }

    /// A timer in microseconds, derived ones included; -1 when it did not run.
    fn timer(&self, var: LogVar, t: &Timers) -> i64 {
        let all = |timers: &[i64]| {
            timers
                .iter()
                .try_fold(0i64, |sum, &v| (v >= 0).then_some(sum + v))
                .unwrap_or(-1)
        };
        let total = if self.request == Request::Tcp {
            t.active
        } else {
            all(&[t.handshake.max(0), t.idle.max(0), t.active])
        };
        match var {
            LogVar::Th => t.handshake,
            LogVar::Ti => t.idle,
            LogVar::TR => t.request,
            LogVar::Tw => t.queue,
            LogVar::Tc => t.connect,
            LogVar::Tr => t.response,
            LogVar::Ta => t.active,
            LogVar::Tt => total,
            LogVar::Tq => all(&[t.handshake.max(0), t.idle.max(0), t.request]),
            LogVar::Td => {
                let before = all(&[t.request, t.queue, t.connect, t.response]);
                if before < 0 || t.active < 0 {
                    -1
                } else {
                    (t.active - before).max(0)
                }
            }
            LogVar::Tu if total >= 0 => total - t.idle.max(0),
            _ => -1,
        }
    }

    /// `%r`: `METHOD TARGET VERSION`, `<BADREQ>` without a request; nothing for TCP.
    fn request_line(&self, out: &mut Vec<u8>) {
        match self.request {
            Request::Line => {
                encoded(out, self.method.get(), Escape::Url);
                out.push(b' ');
                encoded(out, self.target.get(), Escape::Url);
                out.push(b' ');
                out.extend_from_slice(version_name(self.version).as_bytes());
            }
            Request::Missing(_) | Request::Tls(_) => out.extend_from_slice(b"<BADREQ>"),
            Request::Tcp => {}
        }
    }

    /// `%HM`, `%HU`, `%HP`, `%HPO`, `%HQ`, `%HV`; `<BADREQ>` without a request (HAProxy's).
    fn request_part(&self, var: LogVar, out: &mut Vec<u8>) {
        if self.request != Request::Line {
            out.extend_from_slice(b"<BADREQ>");
            return;
        }
        let target = self.target.get();
        let (uri, path, query) = template::target_parts(target);
        let part = match var {
            LogVar::Method => self.method.get(),
            LogVar::Uri => target,
            LogVar::UriPath => uri,
            LogVar::PathOnly => path,
            LogVar::Query => query,
            _ => version_name(self.version).as_bytes(),
        };
        encoded(out, part, Escape::Url);
    }
}

fn unix(t: SystemTime) -> Duration {
    t.duration_since(UNIX_EPOCH).unwrap_or_default()
}
