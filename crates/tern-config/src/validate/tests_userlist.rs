//! `[[userlist]]`, `http_auth(L)`, `http_auth_group(L)`, the `auth` action and
//! `[control] userlist`.

#![allow(clippy::unwrap_used)]

use crate::model::{CryptScheme, Fetch, HttpAction, Password};
use crate::test_support::*;

const SHA512: &str = "$6$saltstring$svn8UoSVapNtMuq1ukKS4tPQd8iKwSMHWjl/O817G3uBnIFNjnQJuesI68u4OTLiBFdcbYEdFCoEOfaS35inz1";

fn with_userlist(frontend: &str, userlist: &str) -> String {
    format!(
        "{}\n[[userlist]]\nname = \"admins\"\n{userlist}\n",
        with_frontend_lines(frontend)
    )
}

#[test]
fn users_groups_and_rules_resolve() {
    let text = with_userlist(
        "http_request = [ { action = \"auth\", unless = \"{ http_auth(admins) }\" },\n  \
         { action = \"deny\", unless = \"{ http_auth_group(admins) ops }\" } ]",
        &format!(
            "groups = [ {{ name = \"ops\", users = [\"bob\"] }}, {{ name = \"dev\" }} ]\n\
             users = [ {{ name = \"alice\", password = \"{SHA512}\", groups = [\"dev\"] }},\n  \
             {{ name = \"bob\", insecure_password = \"elgato\" }} ]"
        ),
    );
    let config = parse_ok(&text);
    let list = &config.userlists[0];
    assert_eq!(list.name, "admins");
    assert_eq!(list.users[0].groups, ["dev"]);
    assert_eq!(list.users[1].groups, ["ops"]);
    assert!(matches!(
        list.users[0].password,
        Password::Crypt {
            scheme: CryptScheme::Sha512,
            ..
        }
    ));
    let rules = &config.frontends[0].http_request;
    assert_eq!(
        rules[0].action,
        HttpAction::Auth {
            realm: "web".into()
        },
        "the realm defaults to the frontend's name"
    );
    let fetches: Vec<&Fetch> = rules[1].condition.fetches().collect();
    assert!(matches!(fetches[0], Fetch::HttpAuthGroup(l) if l.index == 0));
    assert_eq!(config.insecure_passwords(), [("admins", "bob")]);
}

#[test]
fn weak_hashes_and_unknown_names_are_refused_at_their_line() {
    let text = with_userlist(
        "http_request = [ { action = \"auth\", realm = \"a\\\"b\", if = \"!{ http_auth(nope) }\" } ]",
        "groups = [ { name = \"ops\", users = [\"carol\"] } ]\n\
         users = [ { name = \"alice\", password = \"$1$abc$def\" },\n  \
         { name = \"bob\", password = \"x\", groups = [\"dev\"] },\n  \
         { name = \"a:b\", insecure_password = \"p\" } ]",
    );
    // Lines: frontend rule 5, [[userlist]] 11, groups 13, users 14-16.
    assert_error(
        &text,
        5,
        "frontend[0].http_request[0]",
        "no [[userlist]] named `nope`",
    );
    assert_error(
        &text,
        5,
        "frontend[0].http_request[0].realm",
        "double quotes",
    );
    assert_error(
        &text,
        13,
        "userlist[0].groups[0].users[0]",
        "no user `carol`",
    );
    assert_error(&text, 14, "userlist[0].users[0].password", "MD5");
    assert_error(
        &text,
        15,
        "userlist[0].users[1].password",
        "not a password hash",
    );
    assert_error(
        &text,
        15,
        "userlist[0].users[1].groups[0]",
        "group `dev` is not declared",
    );
    assert_error(&text, 16, "userlist[0].users[2].name", "colons");
}

#[test]
fn the_control_listener_takes_a_userlist() {
    let text = format!(
        "{}\n[control]\nhttp = \"127.0.0.1:0\"\nuserlist = \"admins\"\nrealm = \"ops\"\n\
         [[userlist]]\nname = \"admins\"\nusers = [ {{ name = \"a\", insecure_password = \"b\" }} ]\n",
        MINIMAL
    );
    let auth = parse_ok(&text).control.auth.unwrap();
    assert_eq!(
        (auth.users.name.as_str(), auth.realm.as_str()),
        ("admins", "ops")
    );
    let text = format!("{MINIMAL}\n[control]\nuserlist = \"nope\"\n");
    assert_error(
        &text,
        11,
        "control.userlist",
        "no [[userlist]] named `nope`",
    );
}

#[test]
fn auth_is_for_requests_and_http_auth_not_for_responses() {
    let text = with_userlist(
        "http_response = [ { action = \"auth\" },\n  { action = \"deny\", if = \"{ http_auth(admins) }\" } ]",
        "users = [ { name = \"a\", insecure_password = \"b\" } ]",
    );
    assert_error(
        &text,
        5,
        "frontend[0].http_response[0].action",
        "`auth` in http_response",
    );
    assert_error(
        &text,
        6,
        "frontend[0].http_response[1].if",
        "http_auth cannot be used",
    );
}
