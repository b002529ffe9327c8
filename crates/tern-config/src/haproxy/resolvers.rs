//! `resolvers NAME` sections → `[[resolvers]]`.
//!
//! ```text
//! resolvers dns
//!     nameserver ns1 10.0.0.2:53
//!     parse-resolv-conf
//!     resolve_retries 3
//!     timeout resolve 1s
//!     timeout retry   1s
//!     hold valid 10s
//!     hold nx 30s
//!     accepted_payload_size 8192
//! ```
//!
//! Read by a pass of their own, like userlists: a server may name a section written after its
//! backend. Nameserver addresses are checked by the TOML stage, so a bad one is reported at
//! its `.cfg` line.

use super::diag::Diag;
use super::emit::Table;
use super::named::named_sections;
use super::settings::Src;
use super::toml_text::string;
use super::units::{duration, parse_time, parse_uint, Unit};

/// The `hold` statuses HAProxy knows.
const HOLD: &[&str] = &["valid", "nx", "timeout", "refused", "other", "obsolete"];

/// One `[[resolvers]]` being read.
struct Section {
    table: Table,
    nameservers: Vec<Src<String>>,
}

impl Section {
    fn finish(mut self) -> Table {
        let line = self.nameservers.first().map_or(self.table.line, |n| n.line);
        self.table.items("nameservers", self.nameservers, line);
        self.table
    }
}

/// Reads every `resolvers NAME` section of `text` into a `[[resolvers]]` table.
pub(crate) fn resolvers_sections(
    text: &str,
    env: &dyn Fn(&str) -> Option<String>,
    diag: &mut Diag,
) -> Vec<Table> {
    let mut tables = Vec::new();
    for named in named_sections(text, "resolvers", env, diag) {
        let mut table = Table::new("resolvers", named.no, named.context);
        table.set("name", string(&named.name), named.no);
        let mut section = Section {
            table,
            nameservers: Vec::new(),
        };
        for (no, words) in &named.lines {
            line(&mut section, words, *no, diag);
        }
        tables.push(section.finish());
    }
    tables
}

/// One line of a resolvers section.
fn line(section: &mut Section, words: &[String], no: usize, diag: &mut Diag) {
    let context = section.table.context.clone();
    let t = &mut section.table;
    let word = |i: usize| words.get(i).map(String::as_str);
    match (words[0].as_str(), word(1), word(2)) {
        ("nameserver", Some(_), Some(address)) => match address.split_once('@') {
            Some(("udp" | "udp4" | "udp6" | "ipv4" | "ipv6", rest)) => {
                section.nameservers.push(Src::new(string(rest), no));
            }
            Some(_) => {
                diag.unsupported_because(no, &context, address, "tern asks nameservers over UDP")
            }
            None => section.nameservers.push(Src::new(string(address), no)),
        },
        ("nameserver", _, _) => diag.error(
            no,
            &context,
            "'nameserver' reads `nameserver NAME ADDRESS:PORT`",
        ),
        ("parse-resolv-conf", None, _) => t.set("parse_resolv_conf", "true".into(), no),
        ("resolve_retries", Some(n), None) => match parse_uint(n) {
            Ok(n) => t.set("resolve_retries", n.to_string(), no),
            Err(_) => diag.error(
                no,
                &context,
                format!("'resolve_retries': invalid number '{n}'"),
            ),
        },
        ("accepted_payload_size", Some(n), None) => match parse_uint(n) {
            Ok(n) => t.set("accepted_payload_size", n.to_string(), no),
            Err(_) => diag.error(
                no,
                &context,
                format!("'accepted_payload_size': invalid number '{n}'"),
            ),
        },
        ("timeout", Some(which @ ("resolve" | "retry")), Some(time)) => {
            if let Some(ms) = time_arg(time, no, &context, diag) {
                t.set(format!("timeouts.{which}"), string(&duration(ms)), no);
            }
        }
        ("hold", Some(status), Some(time)) if HOLD.contains(&status) => {
            if let Some(ms) = time_arg(time, no, &context, diag) {
                t.set(format!("hold.{status}"), string(&duration(ms)), no);
            }
        }
        ("timeout", _, _) => {
            diag.error(no, &context, "'timeout' reads `timeout resolve|retry TIME`")
        }
        ("hold", _, _) => diag.error(
            no,
            &context,
            "'hold' reads `hold valid|nx|timeout|refused|other|obsolete TIME`",
        ),
        (other, _, _) => diag.error(
            no,
            &context,
            format!("unknown keyword '{other}' in a resolvers section"),
        ),
    }
}

fn time_arg(text: &str, no: usize, context: &str, diag: &mut Diag) -> Option<u64> {
    parse_time(text, Unit::Ms)
        .map_err(|e| diag.error(no, context, e))
        .ok()
}
