//! Basic authentication (issue 18) through the real binary, with curl as the client: users of
//! a userlist with each hash tern checks (SHA-512 and SHA-256 crypt made by `openssl passwd`,
//! bcrypt from a known test vector, a plain-text password), `http_request` `auth` with its
//! realm, `http_auth_group`, over HTTP/1.1 and HTTP/2 over TLS, in TOML and in `.cfg`
//! syntax; the control API's HTTP listener behind the same userlist; and `tern check`'s
//! answers to weak hashes and plain-text passwords.

#![allow(clippy::unwrap_used)]

mod support;
use support::*;

use std::net::SocketAddr;
use std::path::Path;
use std::process::{Command, Output, Stdio};

use tern_tls::KeyKind;

/// OpenBSD's bcrypt test vector for the password `U*U`.
const BCRYPT: &str = "$2a$05$CCCCCCCCCCCCCCCCCCCCC.E5YPO9kmyuRGyh0XouQYb4YMJKvyOeW";

fn curl(args: &[&str]) -> Output {
    Command::new("curl")
        .args(["-sS", "--max-time", "20"])
        .args(args)
        .stdin(Stdio::null())
        .output()
        .expect("curl runs (the tests need it: .ci/run installs it)")
}

/// The response head (lower case) of `url`, with extra `args` (`-u user:pass`, `--http2`).
fn head(args: &[&str], url: &str) -> String {
    let mut all = vec!["-k", "-o", "/dev/null", "-D", "-"];
    all.extend_from_slice(args);
    all.push(url);
    let out = curl(&all);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8_lossy(&out.stdout).to_ascii_lowercase()
}

/// `openssl passwd -6` (or `-5`) of `password`.
fn openssl_hash(flag: &str, password: &str) -> String {
    let out = Command::new("openssl")
        .args(["passwd", flag, password])
        .stdin(Stdio::null())
        .output()
        .expect("openssl runs");
    assert!(out.status.success());
    String::from_utf8(out.stdout).unwrap().trim().to_owned()
}

struct Hashes {
    sha512: String,
    sha256: String,
}

fn hashes() -> Hashes {
    Hashes {
        sha512: openssl_hash("-6", "s3cret-512"),
        sha256: openssl_hash("-5", "s3cret-256"),
    }
}

fn toml(h: &Hashes, cert: &str, term: &Term) -> String {
    format!(
        r#"[global]
workers = 1

[control]
http = "127.0.0.1:0"
userlist = "admins"
realm = "tern stats"

[[userlist]]
name = "admins"
groups = [{{ name = "ops" }}, {{ name = "dev", users = ["s256"] }}]
users = [
  {{ name = "s512", password = "{sha512}", groups = ["ops"] }},
  {{ name = "s256", password = "{sha256}" }},
  {{ name = "bc", password = "{BCRYPT}", groups = ["ops"] }},
  {{ name = "bcy", password = "{bcrypt_y}" }},
  {{ name = "plain", insecure_password = "elgato" }},
]

[[frontend]]
name = "web"
bind = ["127.0.0.1:0", {{ address = "127.0.0.1:0", tls = {{ certs = ["{cert}"], alpn = ["h2", "http/1.1"] }} }}]
default_backend = "app"
use_backend = [{{ backend = "ops", if = "{{ path_beg /ops/ }}" }}]
http_request = [
  {{ action = "auth", realm = "Admin Area", if = "{{ path_beg /admin/ }} !{{ http_auth(admins) }}" }},
]

[[backend]]
name = "app"
servers = [{{ name = "t", address = "{addr}" }}]

[[backend]]
name = "ops"
http_request = [{{ action = "auth", unless = "{{ http_auth_group(admins) ops }}" }}]
servers = [{{ name = "t", address = "{addr}" }}]
"#,
        sha512 = h.sha512,
        sha256 = h.sha256,
        bcrypt_y = BCRYPT.replace("$2a$", "$2y$"),
        addr = term.addr
    )
}

/// The same in HAProxy's syntax (`$` in hashes is literal there).
fn cfg(h: &Hashes, term: &Term) -> String {
    format!(
        "global\n  nbthread 1\n\
         defaults\n  mode http\n  timeout client 30s\n  timeout server 30s\n  timeout connect 5s\n\
         userlist admins\n  group ops\n  group dev users s256\n\
         \x20 user s512 password {sha512} groups ops\n  user s256 password {sha256}\n\
         \x20 user bc password {BCRYPT} groups ops\n  user bcy password {bcrypt_y}\n\
         \x20 user plain insecure-password elgato\n\
         frontend web\n  bind 127.0.0.1:0\n  bind 127.0.0.1:0 ssl crt site.pem alpn h2,http/1.1\n\
         \x20 acl admin path_beg /admin/\n\
         \x20 http-request auth realm \"Admin Area\" if admin !{{ http_auth(admins) }}\n\
         \x20 use_backend ops if {{ path_beg /ops/ }}\n  default_backend app\n\
         backend app\n  server t {addr}\n\
         backend ops\n  http-request auth unless {{ http_auth_group(admins) ops }}\n  server t {addr}\n\
         listen stats\n  bind 127.0.0.1:0\n  stats enable\n  stats uri /stats\n  \
         stats realm \"tern stats\"\n  stats auth s512:s3cret-512\n",
        sha512 = h.sha512,
        sha256 = h.sha256,
        bcrypt_y = BCRYPT.replace("$2a$", "$2y$"),
        addr = term.addr
    )
}

/// Runs tern on `text` written to `dir/name`; also returns the control HTTP address.
fn run(dir: &Path, name: &str, text: &str) -> (Tern, SocketAddr) {
    let path = dir.join(name);
    std::fs::write(&path, text).unwrap();
    let mut proc = Proc::spawn(&["run", "-c", path.to_str().unwrap()], dir);
    proc.wait_line("ready:");
    let control = proc
        .seen
        .iter()
        .find_map(|l| l.strip_prefix("control: http http://"))
        .expect("a control: http line before ready:")
        .parse()
        .unwrap();
    let binds = proc.listening();
    let tern = Tern {
        proc,
        dir: dir.to_owned(),
        binds,
    };
    (tern, control)
}

/// Both syntaxes, each with its running tern and control address.
fn both(tag: &str, term: &Term) -> Vec<(Tern, SocketAddr)> {
    let h = hashes();
    let dir = temp_dir(&format!("{tag}-toml"));
    let cert = write_cert(&dir, "site", KeyKind::EcdsaP256);
    let toml_tern = run(&dir, "tern.toml", &toml(&h, &cert, term));
    let dir = temp_dir(&format!("{tag}-cfg"));
    write_cert(&dir, "site", KeyKind::EcdsaP256);
    let cfg_tern = run(&dir, "haproxy.cfg", &cfg(&h, term));
    vec![toml_tern, cfg_tern]
}

fn status(head: &str) -> &str {
    head.split_whitespace().nth(1).unwrap_or_default()
}

#[test]
fn auth_rules_challenge_and_admit_over_http1_and_h2_in_both_syntaxes() {
    let term = Term::start("auth");
    for (tern, _) in both("auth", &term) {
        let port = tern.binds[1].1.port();
        let resolve = format!("localhost:{port}:127.0.0.1");
        let plain = |path: &str| format!("http://{}{path}", tern.binds[0].1);
        let tls = |path: &str| format!("https://localhost:{port}{path}");
        // No rule asks for credentials here.
        assert_eq!(status(&head(&[], &plain("/public"))), "200");
        // No, wrong or unknown credentials: 401 with the realm; a scheme other than Basic too.
        for args in [
            &[][..],
            &["-u", "s512:wrong"],
            &["-u", "nobody:s3cret-512"],
            &["-H", "Authorization: Bearer s3cret-512"],
        ] {
            let h = head(args, &plain("/admin/x"));
            assert_eq!(status(&h), "401", "{args:?}: {h}");
            assert!(
                h.contains("\r\nwww-authenticate: basic realm=\"admin area\"\r\n"),
                "{h}"
            );
        }
        // Every hash type with its password, over HTTP/1.1 and HTTP/2 over TLS.
        for proto in ["--http1.1", "--http2"] {
            for user in [
                "s512:s3cret-512",
                "s256:s3cret-256",
                "bc:U*U",
                "bcy:U*U",
                "plain:elgato",
            ] {
                let args = [proto, "--resolve", resolve.as_str(), "-u", user];
                let h = head(&args, &tls("/admin/x"));
                assert_eq!(status(&h), "200", "{proto} {user}: {h}");
            }
            let args = [proto, "--resolve", resolve.as_str(), "-u", "bc:U*V"];
            let h = head(&args, &tls("/admin/x"));
            assert_eq!(status(&h), "401", "{h}");
            assert!(
                h.contains("www-authenticate: basic realm=\"admin area\""),
                "{h}"
            );
        }
        // Groups, in the backend's rules; its realm defaults to the backend's name.
        assert_eq!(
            status(&head(&["-u", "s512:s3cret-512"], &plain("/ops/x"))),
            "200"
        );
        assert_eq!(status(&head(&["-u", "bc:U*U"], &plain("/ops/x"))), "200");
        let h = head(&["-u", "s256:s3cret-256"], &plain("/ops/x"));
        assert_eq!(status(&h), "401", "s256 is in dev, not ops: {h}");
        assert!(h.contains("www-authenticate: basic realm=\"ops\""), "{h}");
        let counters = tern.stop();
        assert_eq!(counters.get("frontend web", "auth_challenges"), 7);
    }
}

#[test]
fn the_control_listener_asks_for_the_same_credentials() {
    let term = Term::start("authc");
    for (tern, control) in both("authc", &term) {
        let url = |path: &str| format!("http://{control}{path}");
        for path in ["/stats", "/metrics", "/v1/info"] {
            let h = head(&[], &url(path));
            assert_eq!(status(&h), "401", "{path}: {h}");
            assert!(
                h.contains("www-authenticate: basic realm=\"tern stats\""),
                "{h}"
            );
            assert_eq!(status(&head(&["-u", "s512:nope"], &url(path))), "401");
            assert_eq!(status(&head(&["-u", "s512:s3cret-512"], &url(path))), "200");
        }
        // Failures are counted, on the data path and on the listener.
        assert_eq!(
            status(&head(
                &["-u", "s512:wrong"],
                &format!("http://{}/admin/", tern.binds[0].1)
            )),
            "401"
        );
        let out = curl(&["-u", "s512:s3cret-512", &url("/metrics")]);
        let text = String::from_utf8_lossy(&out.stdout);
        assert!(
            text.contains("tern_auth_checks_total{result=\"failed\"} 1\n"),
            "{text}"
        );
        assert!(
            text.contains("tern_control_auth_checks_total{result=\"failed\"} 3\n"),
            "{text}"
        );
        assert!(
            text.contains("tern_frontend_rule_answers_total{frontend=\"web\",action=\"auth\"} 1\n"),
            "{text}"
        );
        tern.stop();
    }
}

#[test]
fn check_refuses_weak_hashes_and_warns_about_plain_text() {
    let dir = temp_dir("auth-check");
    let base = "[[frontend]]\nname = \"f\"\nbind = [\"127.0.0.1:0\"]\ndefault_backend = \"b\"\n\
                http_request = [{ action = \"auth\", unless = \"{ http_auth(L) }\" }]\n\n\
                [[backend]]\nname = \"b\"\nservers = [{ name = \"s\", address = \"127.0.0.1:1\" }]\n\n\
                [[userlist]]\nname = \"L\"\n";
    let path = dir.join("md5.toml");
    let md5 = format!("{base}users = [{{ name = \"a\", password = \"$1$abc$xyz\" }}]\n");
    std::fs::write(&path, md5).unwrap();
    let (code, _, err) = tern_output(&["check", "-c", path.to_str().unwrap()]);
    assert_eq!(code, 2, "{err}");
    assert!(
        err.contains("md5.toml:13: userlist[0].users[0].password: MD5 crypt"),
        "{err}"
    );
    let path = dir.join("plain.toml");
    std::fs::write(
        &path,
        format!("{base}users = [{{ name = \"a\", insecure_password = \"b\" }}]\n"),
    )
    .unwrap();
    let (code, _, err) = tern_output(&["check", "-c", path.to_str().unwrap()]);
    assert_eq!(code, 0, "{err}");
    assert!(
        err.contains("userlist 'L': user 'a' has a plain-text password"),
        "{err}"
    );
    let path = dir.join("des.cfg");
    let cfg = "defaults\n  mode http\n  timeout client 5s\n  timeout server 5s\n  timeout connect 5s\n\
               userlist L\n  user a password abJnggxhB/yWI\n\
               frontend f\n  bind 127.0.0.1:0\n  http-request auth unless { http_auth(L) }\n  default_backend b\n\
               backend b\n  server s 127.0.0.1:1\n";
    std::fs::write(&path, cfg).unwrap();
    let (code, _, err) = tern_output(&["check", "-c", path.to_str().unwrap()]);
    assert_eq!(code, 2, "{err}");
    assert!(
        err.contains("des.cfg:7: userlist L: users[0].password: DES crypt"),
        "{err}"
    );
}
