//! Conditions and ACLs: parsing, evaluation on a fake request, located errors.

#![allow(clippy::unwrap_used)]

use std::net::IpAddr;
use std::path::Path;

use super::*;
use crate::model::Facts;
use crate::raw::RawAclDef;

/// A request to evaluate conditions on.
struct Req {
    method: &'static str,
    url: &'static str,
    headers: Vec<(&'static str, &'static str)>,
    src: IpAddr,
    port: u16,
    sni: Option<&'static str>,
}

impl Default for Req {
    fn default() -> Self {
        Self {
            method: "GET",
            url: "/",
            headers: vec![("Host", "www.example.com")],
            src: "192.0.2.7".parse().unwrap(),
            port: 443,
            sni: Some("www.example.com"),
        }
    }
}

impl Facts for Req {
    fn method(&self) -> &[u8] {
        self.method.as_bytes()
    }
    fn url(&self) -> &[u8] {
        self.url.as_bytes()
    }
    fn path(&self) -> &[u8] {
        self.url.split('?').next().unwrap().as_bytes()
    }
    fn any_header(&self, name: &str, each: &mut dyn FnMut(&[u8]) -> bool) -> bool {
        self.headers
            .iter()
            .filter(|(n, _)| n.eq_ignore_ascii_case(name))
            .flat_map(|(_, v)| v.split(',').map(str::trim))
            .any(|v| each(v.as_bytes()))
    }
    fn version(&self) -> (u8, u8) {
        (1, 1)
    }
    fn src(&self) -> IpAddr {
        self.src
    }
    fn dst_port(&self) -> u16 {
        self.port
    }
    fn tls(&self) -> bool {
        self.sni.is_some()
    }
    fn sni(&self) -> Option<&str> {
        self.sni
    }
    fn pp_tlv(&self, id: u8) -> Option<&[u8]> {
        match id {
            0xE1 => Some(b"tenant-7"),
            0xE2 => Some(b""),
            _ => None,
        }
    }
}

fn acls(defs: &[(&str, &str)]) -> Acls {
    let raw: RawAcls = defs
        .iter()
        .map(|(n, e)| (n.to_string(), RawAclDef::One(e.to_string())))
        .collect();
    let mut checker = Checker::new(Path::new("."));
    let acls = checker.acls(Some(&raw), &KeyPath::root().key("acl"));
    assert!(checker.issues.is_empty(), "{:?}", checker.issues);
    acls
}

fn holds(cond: &str, defs: &[(&str, &str)], req: &Req) -> bool {
    condition(cond, false, &acls(defs), Path::new("."))
        .unwrap_or_else(|e| panic!("{cond}: {e}"))
        .matches(req)
}

fn error(cond: &str, defs: &[(&str, &str)]) -> String {
    condition(cond, false, &acls(defs), Path::new("."))
        .err()
        .unwrap_or_else(|| panic!("{cond} parsed"))
}

#[test]
fn named_inline_and_negated_terms() {
    let defs = [
        ("is_api", "path_beg -i /api/ /v2/"),
        ("www", "hdr(host) -i WWW.example.com"),
    ];
    let api = Req {
        url: "/API/users?id=1",
        ..Req::default()
    };
    assert!(holds("is_api", &defs, &api));
    assert!(!holds("!is_api", &defs, &api));
    assert!(holds("is_api www", &defs, &api));
    assert!(!holds("is_api !www", &defs, &api));
    assert!(holds("! www || is_api", &defs, &api));
    assert!(holds("!{ path_end .css } is_api", &defs, &api));
    assert!(holds("{ query -m sub id= }", &defs, &api));
    assert!(!holds("{ ssl_fc_sni -m end .org }", &defs, &api));
    assert!(holds("FALSE or TRUE", &defs, &api));
}

#[test]
fn missing_samples_match_nothing() {
    let plain = Req {
        sni: None,
        headers: vec![],
        ..Req::default()
    };
    assert!(!holds("{ ssl_fc }", &[], &plain));
    assert!(holds("!{ ssl_fc_sni -m found }", &[], &plain));
    assert!(!holds("{ hdr(host) -m found }", &[], &plain));
    assert!(holds("{ ssl_fc }", &[], &Req::default()));
}

#[test]
fn addresses_ports_methods_and_headers() {
    let req = Req {
        method: "HEAD",
        headers: vec![("X-Tags", "a, b,c"), ("Host", "api.example.com:8443")],
        ..Req::default()
    };
    assert!(holds("{ src 192.0.2.0/24 } METH_GET", &[], &req));
    assert!(!holds("LOCALHOST", &[], &req));
    assert!(holds(
        "{ dst_port 443 8443 } { dst_port ge 400 }",
        &[],
        &req
    ));
    assert!(holds("{ hdr(x-tags) b }", &[], &req));
    assert!(holds("{ hdr_dom(host) -i EXAMPLE.com }", &[], &req));
    assert!(holds("{ hdr_reg(host) ^api\\. }", &[], &req));
    assert!(holds("{ src 192.0.2.0/255.255.255.0 }", &[], &req));
}

#[test]
fn unless_inverts() {
    let c = condition("{ path /x }", true, &Acls::default(), Path::new(".")).unwrap();
    assert!(c.matches(&Req::default()));
    assert!(Condition::always().matches(&Req::default()));
}

#[test]
fn errors_say_what_is_wrong() {
    let defs = [("a", "path /a")];
    assert!(error("b", &defs).contains("unknown ACL `b`: defined here are a"));
    assert!(error("", &defs).contains("empty condition"));
    assert!(error("a ||", &defs).contains("needs a term"));
    assert!(error("|| a", &defs).contains("needs a term"));
    assert!(error("{ path /a", &defs).contains("not closed"));
    assert!(error("{ pth /a }", &defs).contains("unknown fetch `pth`"));
    assert!(error("{ path -x /a }", &defs).contains("unknown flag `-x`"));
    assert!(error("{ path }", &defs).contains("at least one pattern"));
    assert!(error("{ ssl_fc yes }", &defs).contains("takes no patterns"));
    assert!(error("{ src example.com }", &defs).contains("not an address"));
    assert!(error("{ path_beg -m sub /a }", &defs).contains("already chooses"));
    assert!(error("{ src -m beg 1 }", &defs).contains("does not apply"));
    assert!(error("HTTP_CONTENT", &defs).contains("not supported yet"));
    assert!(error("{ hdr(host,1) a }", &defs).contains("not supported yet"));
    assert!(error("{ path_reg ( }", &defs).contains("bad regular expression"));
    assert!(error("!", &defs).contains("needs a term"));
}

#[test]
fn acl_table_errors_have_paths() {
    let mut raw = RawAcls::new();
    raw.insert("bad name".into(), RawAclDef::One("path /".into()));
    raw.insert(
        "many".into(),
        RawAclDef::Many(vec!["path /".into(), "pth /".into()]),
    );
    let mut checker = Checker::new(Path::new("."));
    checker.acls(Some(&raw), &KeyPath::root().key("acl"));
    let paths: Vec<String> = checker.issues.iter().map(|i| i.path.to_string()).collect();
    assert_eq!(paths, ["acl.bad name", "acl.many[1]"]);
}

#[test]
fn pattern_files_are_read() {
    let dir = std::env::temp_dir().join(format!("tern-acl-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::write(dir.join("bad.lst"), "# blocked\n10.0.0.0/8\n\n192.0.2.7\n").unwrap();
    let cond = condition("{ src -f bad.lst }", false, &Acls::default(), &dir).unwrap();
    std::fs::remove_dir_all(&dir).unwrap();
    assert!(cond.matches(&Req::default()));
    let missing = condition("{ src -f nope.lst }", false, &Acls::default(), &dir);
    assert!(missing.unwrap_err().contains("cannot read pattern file"));
}

const ROUTED: &str = r#"
[[frontend]]
name = "web"
bind = ["127.0.0.1:0"]
default_backend = "www"
acl = { is_api = "path_beg /api/", static = ["path_end .css .js", "hdr_beg(host) static."] }
use_backend = [
  { backend = "api", if = "is_api" },
  { backend = "static", unless = "!static" },
]

[[backend]]
name = "www"
servers = [{ name = "a", address = "127.0.0.1:9001" }]

[[backend]]
name = "api"
acl = { admin = "path_beg /api/admin" }
servers = [{ name = "a", address = "127.0.0.1:9002" }]

[[backend]]
name = "static"
servers = [{ name = "a", address = "127.0.0.1:9003" }]
"#;

#[test]
fn use_backend_rules_parse_in_order() {
    let config = crate::parse(ROUTED, Path::new("t.toml")).unwrap();
    let routes = &config.frontends[0].use_backend;
    assert_eq!(routes.len(), 2);
    assert_eq!(routes[0].backend, "api");
    let css = Req {
        url: "/site.css",
        ..Req::default()
    };
    assert!(!routes[0].condition.matches(&css));
    assert!(routes[1].condition.matches(&css));
}

#[test]
fn use_backend_errors_are_located() {
    let text = ROUTED
        .replace("backend = \"api\", if", "backend = \"apj\", if")
        .replace("unless = \"!static\"", "unless = \"!statik\"")
        .replace("\"path_beg /api/admin\"", "\"path_bgn /x\"");
    let errors = crate::parse(&text, Path::new("t.toml"))
        .unwrap_err()
        .to_string();
    assert!(
        errors.contains("t.toml:8: frontend[0].use_backend[0].backend: no backend named `apj`"),
        "{errors}"
    );
    assert!(
        errors.contains("t.toml:9: frontend[0].use_backend[1].unless: unknown ACL `statik`"),
        "{errors}"
    );
    assert!(
        errors.contains("backend[1].acl.admin: unknown fetch `path_bgn`"),
        "{errors}"
    );
    let both = ROUTED.replace("if = \"is_api\"", "if = \"is_api\", unless = \"is_api\"");
    let errors = crate::parse(&both, Path::new("t.toml"))
        .unwrap_err()
        .to_string();
    assert!(
        errors.contains("give `if` or `unless`, not both"),
        "{errors}"
    );
}

#[test]
fn fc_pp_tlv_reads_the_received_tlvs_by_number_or_name() {
    let req = Req::default();
    assert!(holds("{ fc_pp_tlv(0xE1) tenant-7 }", &[], &req));
    assert!(holds("{ fc_pp_tlv(225) -m beg tenant }", &[], &req));
    assert!(!holds("{ fc_pp_tlv(0xE1) tenant-8 }", &[], &req));
    // Present and empty is found; absent matches nothing.
    assert!(holds("{ fc_pp_tlv(0xE2) -m found }", &[], &req));
    assert!(!holds("{ fc_pp_tlv(0xE3) -m found }", &[], &req));
    assert!(!holds("{ fc_pp_tlv(UNIQUE_ID) -m found }", &[], &req));
    assert!(error("{ fc_pp_tlv(0x1E1) x }", &[]).contains("over 0xFF"));
    assert!(error("{ fc_pp_tlv(FOO) x }", &[]).contains("not a TLV type"));
    assert!(error("{ fc_pp_tlv x }", &[]).contains("needs a TLV type"));
}
