//! The harness itself works: a proxied GET through a plain and a TLS bind.

mod support;
use support::*;

#[tokio::test]
async fn proxies_plain_and_tls() {
    let term = Term::start("s1");
    let dir = temp_dir("smoke");
    let cert = write_cert(&dir, "ecdsa", tern_tls::KeyKind::EcdsaP256);
    let cfg = Config::new()
        .terms(&[&term])
        .binds(&[
            "\"127.0.0.1:0\"",
            "{ address = \"127.0.0.1:0\", tls = false }",
        ])
        .tls(&[&format!("{cert:?}")]);
    let tern = Tern::run_in(dir, &cfg.toml());
    assert!(tern.is_tls(0) && !tern.is_tls(1));
    let tls = get(tern.binds[0].1, true, "/").await;
    assert_eq!(tls.status, 200);
    assert_eq!(tls.header("x-term-server"), Some("s1"));
    let plain = get(tern.binds[1].1, false, "/test").await;
    assert_eq!(plain.status, 200);
    let c = tern.stop();
    assert_eq!(c.get("frontend web", "requests"), 2);
    assert_eq!(c.get("frontend web", "tls_full"), 1);
}
