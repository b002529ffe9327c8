//! `[[userlist]]`: users, their password hashes and their groups; then the userlists that
//! `http_auth(L)`, `http_auth_group(L)` and `[control] userlist` name, resolved to indexes.
//!
//! As in HAProxy, a group a user names must be declared in the userlist (`groups`), and a
//! user a group names must exist. Passwords are checked for shape here ([`CryptScheme::of`]),
//! so a hash cut short or in a refused format is an error at its line, not a user who can
//! never log in.

use std::collections::HashMap;

use super::Checker;
use crate::locate::KeyPath;
use crate::model::{
    Backend, CryptScheme, Fetch, Frontend, HttpAction, HttpRule, Password, User, Userlist,
};
use crate::raw::{RawUser, RawUserlist};

impl Checker<'_> {
    /// Every `[[userlist]]`, at `userlist[i]`.
    pub(super) fn userlists(&mut self, raw: &[RawUserlist]) -> Vec<Userlist> {
        let all: Vec<Userlist> = raw
            .iter()
            .enumerate()
            .map(|(i, list)| self.userlist(list, &KeyPath::root().key("userlist").index(i)))
            .collect();
        self.unique_names("userlist", raw.iter().map(|u| u.name.as_deref()));
        all
    }

    fn userlist(&mut self, raw: &RawUserlist, path: &KeyPath) -> Userlist {
        let name = self.name(&path.key("name"), raw.name.as_deref());
        let groups = raw.groups.as_deref().unwrap_or_default();
        let mut declared: Vec<&str> = Vec::new();
        for (i, g) in groups.iter().enumerate() {
            let at = path.key("groups").index(i).key("name");
            match g.name.as_deref() {
                Some(n) if valid_word(n, ",") => {
                    if declared.contains(&n) {
                        self.issue(&at, format!("group `{n}` is declared twice"));
                    }
                    declared.push(n);
                }
                Some(n) => self.issue(
                    &at,
                    format!("`{n}` is not a group name: no spaces or commas"),
                ),
                None => self.issue(&at, "missing key `name`"),
            }
        }
        let raw_users = raw.users.as_deref().unwrap_or_default();
        let mut users: Vec<User> = raw_users
            .iter()
            .enumerate()
            .map(|(i, u)| self.user(u, &declared, &path.key("users").index(i)))
            .collect();
        let mut seen: HashMap<&str, usize> = HashMap::new();
        for (i, u) in raw_users.iter().enumerate() {
            if let Some(n) = u.name.as_deref() {
                if let Some(first) = seen.insert(n, i) {
                    let at = path.key("users").index(i).key("name");
                    self.issue(&at, format!("user `{n}` is already users[{first}]"));
                }
            }
        }
        // A group's `users` add the group to each of them.
        for (i, g) in groups.iter().enumerate() {
            let Some(group) = g.name.as_deref() else {
                continue;
            };
            for (j, member) in g.users.as_deref().unwrap_or_default().iter().enumerate() {
                match users.iter_mut().find(|u| u.name == *member) {
                    Some(u) if !u.groups.iter().any(|x| x == group) => {
                        u.groups.push(group.to_owned());
                    }
                    Some(_) => {}
                    None => {
                        let at = path.key("groups").index(i).key("users").index(j);
                        self.issue(&at, format!("no user `{member}` in this userlist"));
                    }
                }
            }
        }
        Userlist { name, users }
    }

    fn user(&mut self, raw: &RawUser, groups: &[&str], path: &KeyPath) -> User {
        let name = match raw.name.as_deref() {
            // Basic credentials are `user:password`: a colon cannot be part of a user name.
            Some(n) if valid_word(n, ":") => n.to_owned(),
            Some(n) => {
                let message = format!("`{n}` is not a user name: no spaces, colons or controls");
                self.issue(&path.key("name"), message);
                n.to_owned()
            }
            None => {
                self.issue(&path.key("name"), "missing key `name`");
                String::new()
            }
        };
        let password = match (&raw.password, &raw.insecure_password) {
            (Some(hash), None) => match CryptScheme::of(hash) {
                Ok(scheme) => Password::Crypt {
                    scheme,
                    hash: hash.clone(),
                },
                Err(message) => {
                    self.issue(&path.key("password"), message);
                    Password::Insecure(String::new())
                }
            },
            (None, Some(plain)) => Password::Insecure(plain.clone()),
            (Some(_), Some(_)) => {
                self.issue(path, "give `password` or `insecure_password`, not both");
                Password::Insecure(String::new())
            }
            (None, None) => {
                self.issue(
                    path,
                    "missing key `password` (a crypt(3) hash: `openssl passwd -6`)",
                );
                Password::Insecure(String::new())
            }
        };
        let mut own = Vec::new();
        for (i, g) in raw.groups.as_deref().unwrap_or_default().iter().enumerate() {
            if !groups.contains(&g.as_str()) {
                let at = path.key("groups").index(i);
                self.issue(
                    &at,
                    format!("group `{g}` is not declared in this userlist's `groups`"),
                );
            } else if !own.contains(g) {
                own.push(g.clone());
            }
        }
        User {
            name,
            password,
            groups: own,
        }
    }

    /// Resolves the userlist of every `http_auth(L)` and `http_auth_group(L)` in the rules of
    /// `frontends` and `backends`; a name no `[[userlist]]` has is an issue at the rule.
    pub(super) fn resolve_userlists(
        &mut self,
        lists: &[Userlist],
        frontends: &mut [Frontend],
        backends: &mut [Backend],
    ) {
        let root = KeyPath::root();
        for (i, fe) in frontends.iter_mut().enumerate() {
            let at = root.key("frontend").index(i);
            for (j, r) in fe.use_backend.iter_mut().enumerate() {
                self.resolve(
                    lists,
                    r.condition.fetches_mut(),
                    &at.key("use_backend").index(j),
                );
            }
            default_realm(&mut fe.http_request, &fe.name);
            for (key, rules) in [
                ("http_request", &mut fe.http_request),
                ("http_response", &mut fe.http_response),
            ] {
                for (j, r) in rules.iter_mut().enumerate() {
                    self.resolve(lists, r.condition.fetches_mut(), &at.key(key).index(j));
                }
            }
        }
        for (i, be) in backends.iter_mut().enumerate() {
            let at = root.key("backend").index(i);
            default_realm(&mut be.http_request, &be.name);
            for (key, rules) in [
                ("http_request", &mut be.http_request),
                ("http_response", &mut be.http_response),
            ] {
                for (j, r) in rules.iter_mut().enumerate() {
                    self.resolve(lists, r.condition.fetches_mut(), &at.key(key).index(j));
                }
            }
        }
    }

    fn resolve<'f>(
        &mut self,
        lists: &[Userlist],
        fetches: impl Iterator<Item = &'f mut Fetch>,
        at: &KeyPath,
    ) {
        for fetch in fetches {
            let (Fetch::HttpAuth(list) | Fetch::HttpAuthGroup(list)) = fetch else {
                continue;
            };
            match lists.iter().position(|l| l.name == list.name) {
                Some(index) => list.index = index,
                None => self.issue(at, no_userlist(&list.name, lists)),
            }
        }
    }
}

/// An `auth` rule without `realm` challenges in the name of its frontend or backend.
fn default_realm(rules: &mut [HttpRule], name: &str) {
    for rule in rules {
        if let HttpAction::Auth { realm } = &mut rule.action {
            if realm.is_empty() {
                name.clone_into(realm);
            }
        }
    }
}

/// The message for a userlist name that no `[[userlist]]` has.
pub(super) fn no_userlist(name: &str, lists: &[Userlist]) -> String {
    let known: Vec<&str> = lists.iter().map(|l| l.name.as_str()).collect();
    if known.is_empty() {
        format!("no [[userlist]] named `{name}`: none is defined")
    } else {
        format!(
            "no [[userlist]] named `{name}`: defined are {}",
            known.join(", ")
        )
    }
}

/// Non-empty, printable, no spaces and none of `banned`.
fn valid_word(word: &str, banned: &str) -> bool {
    !word.is_empty()
        && word
            .chars()
            .all(|c| c.is_ascii_graphic() && !banned.contains(c))
}

impl crate::model::Config {
    /// `(userlist, user)` of every user whose password is in plain text (`insecure_password`):
    /// `tern check` warns about them.
    pub fn insecure_passwords(&self) -> Vec<(&str, &str)> {
        self.userlists
            .iter()
            .flat_map(|l| {
                l.users
                    .iter()
                    .filter(|u| matches!(u.password, Password::Insecure(_)))
                    .map(|u| (l.name.as_str(), u.name.as_str()))
            })
            .collect()
    }
}
