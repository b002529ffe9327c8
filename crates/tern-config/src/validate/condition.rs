//! ACL tables (`acl = { ... }`) and rule conditions (`if = "..."`, `unless = "..."`).
//!
//! Conditions use HAProxy's grammar: terms are ACL names or `{ inline expression }`, each
//! possibly negated with `!`; adjacent terms are AND-ed, `||` (or `or`) separates OR-ed groups.
//! Names resolve against the table of the frontend or backend holding the rule, then against
//! HAProxy's predefined ACLs (`TRUE`, `METH_GET`, `LOCALHOST`, ...), and are inlined, so the
//! model carries no names.

mod expr;

pub(crate) use expr::key_fetch;
pub(crate) use expr::network;
pub(crate) use expr::regex as compile_regex;
mod words;

#[cfg(test)]
mod tests;

use std::collections::BTreeMap;
use std::path::Path;

use super::Checker;
use crate::locate::KeyPath;
use crate::model::{Acl, Condition, Term};
use crate::raw::RawAcls;

use words::{words, Word};

/// The parsed ACLs of one frontend or backend, by name.
#[derive(Debug, Default)]
pub(crate) struct Acls(BTreeMap<String, Acl>);

/// HAProxy's predefined ACLs (doc/configuration.txt §7.4) that tern can evaluate.
const PREDEFINED: &[(&str, &str)] = &[
    ("TRUE", "always_true"),
    ("FALSE", "always_false"),
    ("HTTP", "always_true"),
    ("HTTP_1.0", "req.ver 1.0"),
    ("HTTP_1.1", "req.ver 1.1"),
    ("HTTP_URL_ABS", "url_reg ^[^/:]*://"),
    ("HTTP_URL_SLASH", "url_beg /"),
    ("HTTP_URL_STAR", "url *"),
    ("LOCALHOST", "src 127.0.0.1/8 ::1"),
    ("METH_CONNECT", "method CONNECT"),
    ("METH_DELETE", "method DELETE"),
    ("METH_GET", "method GET HEAD"),
    ("METH_HEAD", "method HEAD"),
    ("METH_OPTIONS", "method OPTIONS"),
    ("METH_POST", "method POST"),
    ("METH_PUT", "method PUT"),
    ("METH_TRACE", "method TRACE"),
];

/// Predefined ACLs that need a feature tern does not have.
const PREDEFINED_UNSUPPORTED: &[&str] = &[
    "HTTP_2.0",
    "HTTP_CONTENT",
    "RDP_COOKIE",
    "REQ_CONTENT",
    "WAIT_END",
];

impl Checker<'_> {
    /// The ACL table of a frontend or backend (`acl` key); problems are recorded at `path`.
    pub(super) fn acls(&mut self, raw: Option<&RawAcls>, path: &KeyPath) -> Acls {
        let mut acls = Acls::default();
        for (name, def) in raw.into_iter().flatten() {
            let at = path.key(name);
            if !valid_acl_name(name) {
                self.issue(
                    &at,
                    "an ACL name uses only letters, digits, `_`, `.`, `:` and `-`",
                );
                continue;
            }
            let exprs = def.expressions();
            if exprs.is_empty() {
                self.issue(&at, "an empty list defines nothing");
            }
            let mut tests = Vec::new();
            for (i, text) in exprs.iter().enumerate() {
                let at = if exprs.len() > 1 || matches!(def, crate::raw::RawAclDef::Many(_)) {
                    at.index(i)
                } else {
                    at.clone()
                };
                match words(text).and_then(|w| expr::acl_test(&w, self.base_dir)) {
                    Ok(test) => tests.push(test),
                    Err(e) => self.issue(&at, e),
                }
            }
            acls.0.insert(name.clone(), Acl { tests });
        }
        acls
    }

    /// The condition of a rule: `if`, `unless` or neither (always). Problems at `path`.
    pub(super) fn rule_condition(
        &mut self,
        acls: &Acls,
        if_: Option<&str>,
        unless: Option<&str>,
        path: &KeyPath,
    ) -> Condition {
        let (text, invert, key) = match (if_, unless) {
            (None, None) => return Condition::always(),
            (Some(_), Some(_)) => {
                self.issue(path, "give `if` or `unless`, not both");
                return Condition::always();
            }
            (Some(text), None) => (text, false, "if"),
            (None, Some(text)) => (text, true, "unless"),
        };
        match condition(text, invert, acls, self.base_dir) {
            Ok(c) => c,
            Err(e) => {
                self.issue(&path.key(key), e);
                Condition::always()
            }
        }
    }
}

fn valid_acl_name(name: &str) -> bool {
    !name.is_empty()
        && name
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || "_.:-".contains(c))
}

/// Parses a condition string.
pub(crate) fn condition(
    text: &str,
    invert: bool,
    acls: &Acls,
    base_dir: &Path,
) -> Result<Condition, String> {
    let words = words(text)?;
    let mut groups: Vec<Vec<Term>> = vec![Vec::new()];
    let mut rest = &words[..];
    while let Some((word, tail)) = rest.split_first() {
        rest = tail;
        if word.is("||") || word.is("or") {
            if groups.last().is_some_and(Vec::is_empty) {
                return Err(format!("`{}` needs a term on each side", word.text));
            }
            groups.push(Vec::new());
            continue;
        }
        let (negate, inner) = match word.text.strip_prefix('!') {
            Some(inner) if !word.quoted => (true, inner),
            _ => (false, word.text.as_str()),
        };
        let acl = match inner {
            "" if negate => {
                let (next, tail) = rest.split_first().ok_or("`!` needs a term after it")?;
                rest = tail;
                term(next, &mut rest, acls, base_dir)?
            }
            "{" if !word.quoted => inline(&mut rest, base_dir)?,
            _ if word.quoted => return Err(format!("`{}` is not an ACL name", word.text)),
            name => named(name, acls, base_dir)?,
        };
        if let Some(group) = groups.last_mut() {
            group.push(Term { negate, acl });
        }
    }
    if groups.iter().any(Vec::is_empty) {
        return Err(if words.is_empty() {
            "an empty condition: name an ACL or write `{ ... }`".into()
        } else {
            "`||` needs a term on each side".into()
        });
    }
    Ok(Condition::new(groups, invert))
}

/// The term after a lone `!`.
fn term(word: &Word, rest: &mut &[Word], acls: &Acls, base_dir: &Path) -> Result<Acl, String> {
    if word.is("{") {
        inline(rest, base_dir)
    } else if word.quoted || word.text.starts_with('!') || word.is("||") || word.is("or") {
        Err(format!(
            "`!` must be followed by an ACL name or `{{`, not `{}`",
            word.text
        ))
    } else {
        named(&word.text, acls, base_dir)
    }
}

/// An inline ACL: the words up to the matching `}` (consumed).
fn inline(rest: &mut &[Word], base_dir: &Path) -> Result<Acl, String> {
    let end = rest
        .iter()
        .position(|w| w.is("}"))
        .ok_or("a `{` is not closed: write `{ fetch patterns }` with spaces around the braces")?;
    let inner = &rest[..end];
    *rest = &rest[end + 1..];
    if inner.iter().any(|w| w.is("{")) {
        return Err("braces do not nest".into());
    }
    let test = expr::acl_test(inner, base_dir).map_err(|e| format!("in `{{ ... }}`: {e}"))?;
    Ok(Acl { tests: vec![test] })
}

fn named(name: &str, acls: &Acls, base_dir: &Path) -> Result<Acl, String> {
    if let Some(acl) = acls.0.get(name) {
        return Ok(acl.clone());
    }
    if let Some((_, text)) = PREDEFINED.iter().find(|(n, _)| *n == name) {
        let test = expr::acl_test(&words(text)?, base_dir)?;
        return Ok(Acl { tests: vec![test] });
    }
    if PREDEFINED_UNSUPPORTED.contains(&name) {
        return Err(format!("the predefined ACL `{name}` is not supported yet"));
    }
    let known: Vec<&str> = acls.0.keys().map(String::as_str).collect();
    Err(if known.is_empty() {
        format!(
            "unknown ACL `{name}`: none is defined here (add it to `acl`, or write `{{ ... }}`)"
        )
    } else {
        format!(
            "unknown ACL `{name}`: defined here are {}",
            known.join(", ")
        )
    })
}
