//! `userlist` sections, `http-request auth`, `http_auth(L)` and `stats auth`.

use super::*;

const SHA512: &str = "$6$saltstring$svn8UoSVapNtMuq1ukKS4tPQd8iKwSMHWjl/O817G3uBnIFNjnQJuesI68u4OTLiBFdcbYEdFCoEOfaS35inz1";

#[test]
fn userlists_and_auth_rules_convert() {
    let text = format!(
        "{HEAD}frontend f\n  bind :80\n  acl ok http_auth(admins)\n  \
         http-request auth realm Restricted unless ok\n  \
         http-request deny if !{{ http_auth_group(admins) ops }}\n  default_backend b\n\
         backend b\n  server s 10.0.0.1:80\n\
         userlist admins\n  group ops users bob\n  group dev\n  \
         user alice password {SHA512} groups dev\n  user bob insecure-password elgato\n"
    );
    let c = convert(&text);
    assert_has(
        &c,
        r#"{ action = "auth", realm = "Restricted", unless = "ok" },"#,
    );
    assert_has(&c, r#"{ name = "bob", insecure_password = "elgato" },"#);
    assert_has(&c, r#"{ name = "ops", users = ["bob"] },"#);
    let (config, _) = super::super::parse(&text, Path::new("haproxy.cfg")).unwrap();
    let list = &config.userlists[0];
    assert_eq!(list.users[0].groups, ["dev"]);
    assert_eq!(list.users[1].groups, ["ops"]);
}

#[test]
fn a_refused_hash_is_reported_at_its_cfg_line() {
    let text = format!(
        "{HEAD}frontend f\n  bind :80\n  http-request auth unless {{ http_auth(admins) }}\n  \
         default_backend b\nbackend b\n  server s 10.0.0.1:80\n\
         userlist admins\n  user alice password $1$abc$xyz\n  user bob secret x\n"
    );
    let errors = check_errors(&text);
    assert!(
        errors
            .iter()
            .any(|e| e.contains("haproxy.cfg:14:") && e.contains("unexpected 'secret'")),
        "{errors:?}"
    );
    let text = text.replace("  user bob secret x\n", "");
    let errors = check_errors(&text);
    assert!(
        errors
            .iter()
            .any(|e| e.contains("haproxy.cfg:13:") && e.contains("MD5")),
        "{errors:?}"
    );
}

#[test]
fn stats_auth_guards_the_control_listener() {
    let text = format!(
        "{HEAD}listen stats\n  bind 127.0.0.1:8404\n  stats enable\n  stats uri /stats\n  \
         stats realm Ops\n  stats auth admin:s3cret\n  stats auth ro:other\n\
         frontend f\n  bind :80\n  default_backend b\nbackend b\n  server s 10.0.0.1:80\n"
    );
    let c = convert(&text);
    assert_has(&c, r#"userlist = "stats-auth""#);
    let (config, _) = super::super::parse(&text, Path::new("haproxy.cfg")).unwrap();
    let auth = config.control.auth.unwrap();
    assert_eq!(auth.realm, "Ops");
    let users: Vec<&str> = auth.users.users.iter().map(|u| u.name.as_str()).collect();
    assert_eq!(users, ["admin", "ro"]);
}
