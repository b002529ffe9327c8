//! `peers NAME` sections → `[[peers]]`, with `localpeer` of `global` as their `local_peer`.
//!
//! ```text
//! global
//!     localpeer lb1
//! peers fleet
//!     bind 10.0.0.1:10000          # 2.0+: this node's address, with a `server` without one
//!     server lb1
//!     server lb2 10.0.0.2:10000
//!     peer lb3 10.0.0.3:10000      # the older form, one line per node, this one included
//! ```
//!
//! Read by a pass of its own, like userlists, since tables name sections written anywhere.
//! HAProxy's `-L` option has no equivalent in a file: without `localpeer`, tern (like HAProxy)
//! takes the host name.

use super::diag::Diag;
use super::emit::Table;
use super::named::{global_lines, named_sections};
use super::settings::Src;
use super::toml_text::{string, Inline};

/// Reads every `peers NAME` section of `text` into a `[[peers]]` table.
pub(crate) fn peers_sections(
    text: &str,
    env: &dyn Fn(&str) -> Option<String>,
    diag: &mut Diag,
) -> Vec<Table> {
    // The last `localpeer` of `global` wins, as HAProxy reads it.
    let local = global_lines(text, "localpeer", env)
        .into_iter()
        .rev()
        .find_map(|(no, words)| Some((words.get(1)?.clone(), no)));
    let mut tables = Vec::new();
    for named in named_sections(text, "peers", env, diag) {
        let mut table = Table::new("peers", named.no, named.context);
        table.set("name", string(&named.name), named.no);
        let mut peers = Vec::new();
        for (no, words) in &named.lines {
            line(words, *no, &mut table, &mut peers, diag);
        }
        if let Some((l, no)) = &local {
            table.set("local_peer", string(l), *no);
        }
        let line = table.line;
        table.items("peer", peers, line);
        tables.push(table);
    }
    tables
}

/// One line of a peers section.
fn line(
    words: &[String],
    no: usize,
    table: &mut Table,
    peers: &mut Vec<Src<String>>,
    diag: &mut Diag,
) {
    let context = table.context.clone();
    match words[0].as_str() {
        kw @ ("peer" | "server") => {
            let Some(name) = words.get(1) else {
                diag.error(no, &context, format!("'{kw}' needs a name"));
                return;
            };
            let mut p = Inline::new();
            p.set("name", string(name));
            match (kw, words.get(2)) {
                (_, Some(address)) => {
                    p.set("address", string(address));
                }
                ("peer", None) => {
                    diag.error(no, &context, "'peer' needs a name and an address");
                    return;
                }
                _ => {}
            }
            if words.len() > 3 {
                diag.unsupported(no, &context, &format!("{kw} ... {}", words[3]));
            }
            peers.push(Src::new(p.text(), no));
        }
        "bind" => match words.get(1) {
            Some(address) if words.len() == 2 => table.set("bind", string(address), no),
            Some(_) => diag.unsupported(no, &context, &format!("bind ... {}", words[2])),
            None => diag.error(no, &context, "'bind' needs an address"),
        },
        "enabled" => {}
        kw @ ("disabled" | "default-bind" | "default-server" | "log" | "shards" | "table") => {
            diag.unsupported(no, &context, &format!("peers ... {kw}"));
        }
        other => diag.error(
            no,
            &context,
            format!("unknown keyword '{other}' in a peers section"),
        ),
    }
}
