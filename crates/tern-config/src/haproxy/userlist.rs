//! `userlist NAME` sections → `[[userlist]]`, and `stats auth USER:PASS` → a userlist of the
//! control API's HTTP listener.
//!
//! ```text
//! userlist admins
//!     group ops users alice,bob
//!     user alice password $6$...  groups ops
//!     user bob insecure-password s3cret
//! ```
//!
//! Userlists are read by a pass of their own, like `http-errors` (a proxy may name one written
//! after it). Hashes are checked by the TOML stage, so a refused format (DES, MD5) is
//! reported at the `.cfg` line of its user.

use super::diag::Diag;
use super::emit::Table;
use super::named::named_sections;
use super::settings::Src;
use super::toml_text::{string, strings, Inline};

/// The name of the userlist made of a stats page's `stats auth` lines.
pub(crate) const STATS_USERLIST: &str = "stats-auth";

/// One `[[userlist]]` being read.
struct List {
    table: Table,
    users: Vec<Src<String>>,
    groups: Vec<Src<String>>,
}

impl List {
    fn finish(mut self) -> Table {
        let line = self.table.line;
        self.table.items("groups", self.groups, line);
        self.table.items("users", self.users, line);
        self.table
    }
}

/// Reads every `userlist NAME` section of `text` into a `[[userlist]]` table.
pub(crate) fn userlist_sections(
    text: &str,
    env: &dyn Fn(&str) -> Option<String>,
    diag: &mut Diag,
) -> Vec<Table> {
    let mut tables = Vec::new();
    for named in named_sections(text, "userlist", env, diag) {
        let mut table = Table::new("userlist", named.no, named.context.clone());
        table.set("name", string(&named.name), named.no);
        let mut list = List {
            table,
            users: Vec::new(),
            groups: Vec::new(),
        };
        for (no, words) in &named.lines {
            list_line(&mut list, words, *no, &named.context, diag);
        }
        tables.push(list.finish());
    }
    tables
}

/// One line of a userlist.
fn list_line(list: &mut List, words: &[String], no: usize, context: &str, diag: &mut Diag) {
    match words[0].as_str() {
        "user" => {
            if let Some(user) = user(words, no, context, diag) {
                list.users.push(Src::new(user, no));
            }
        }
        "group" => {
            if let Some(group) = group(words, no, context, diag) {
                list.groups.push(Src::new(group, no));
            }
        }
        other => diag.error(
            no,
            context,
            format!("unknown keyword '{other}' in a userlist"),
        ),
    }
}

/// `user NAME [password HASH | insecure-password PASS] [groups G1,G2]`.
fn user(words: &[String], no: usize, context: &str, diag: &mut Diag) -> Option<String> {
    let Some(name) = words.get(1) else {
        diag.error(no, context, "'user' needs a name");
        return None;
    };
    let mut t = Inline::new();
    t.set("name", string(name));
    let mut rest = &words[2..];
    while let [key, value, tail @ ..] = rest {
        match key.as_str() {
            "password" => t.set("password", string(value)),
            "insecure-password" => t.set("insecure_password", string(value)),
            "groups" => t.set("groups", strings(&split_list(value))),
            other => {
                diag.error(
                    no,
                    context,
                    format!(
                        "unexpected '{other}' (expected password, insecure-password or groups)"
                    ),
                );
                return None;
            }
        };
        rest = tail;
    }
    if let [key] = rest {
        diag.error(no, context, format!("'{key}' needs a value"));
        return None;
    }
    Some(t.text())
}

/// `group NAME [users U1,U2]`.
fn group(words: &[String], no: usize, context: &str, diag: &mut Diag) -> Option<String> {
    let mut t = Inline::new();
    match words.get(1..).unwrap_or_default() {
        [name] => t.set("name", string(name)),
        [name, users, list] if users == "users" => t
            .set("name", string(name))
            .set("users", strings(&split_list(list))),
        _ => {
            diag.error(no, context, "'group' reads `group NAME [users U1,U2]`");
            return None;
        }
    };
    Some(t.text())
}

fn split_list(text: &str) -> Vec<&str> {
    text.split(',').filter(|s| !s.is_empty()).collect()
}

/// The userlist of `stats auth USER:PASS` lines (plain-text passwords, as HAProxy takes them).
pub(crate) fn stats_userlist(
    auths: &[Src<String>],
    context: &str,
    diag: &mut Diag,
) -> Option<Table> {
    let first = auths.first()?;
    let mut table = Table::new("userlist", first.line, context);
    table.set("name", string(STATS_USERLIST), first.line);
    let mut users = Vec::new();
    for auth in auths {
        let Some((user, pass)) = auth.v.split_once(':') else {
            diag.error(
                auth.line,
                context,
                "'stats auth' reads `stats auth USER:PASSWORD`",
            );
            continue;
        };
        let mut t = Inline::new();
        t.set("name", string(user))
            .set("insecure_password", string(pass));
        users.push(Src::new(t.text(), auth.line));
    }
    table.items("users", users, first.line);
    Some(table)
}
