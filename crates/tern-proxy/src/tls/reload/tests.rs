#![allow(clippy::unwrap_used)]

use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;

use tern_tls::KeyKind;

use super::*;

/// A fresh directory for one test's files.
fn temp_dir(tag: &str) -> PathBuf {
    static N: AtomicUsize = AtomicUsize::new(0);
    let n = N.fetch_add(1, Ordering::Relaxed);
    let dir = std::env::temp_dir().join(format!("tern-reload-{}-{tag}-{n}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

/// Writes a self-signed certificate and its key for `site.test` to `path` (one PEM file).
fn write_pem(path: &Path) {
    let cert = tern_tls::self_signed(&["site.test".to_owned()], KeyKind::EcdsaP256).unwrap();
    std::fs::write(path, format!("{}{}", cert.cert_pem, cert.key_pem)).unwrap();
}

/// The rustls configuration of a bind (these tests' binds are all rustls ones).
fn rustls(tls: BindTls) -> Arc<ServerConfig> {
    match tls {
        BindTls::Rustls(config) => config,
        BindTls::OpenSsl(_) => panic!("an OpenSSL bind"),
    }
}

/// A configuration with one frontend whose binds serve these PEM files (`None`: a plain bind);
/// `extra` is added to every TLS table.
fn config(binds: &[Option<&Path>], extra: &str) -> Config {
    let binds: Vec<String> = binds
        .iter()
        .map(|pem| match pem {
            Some(pem) => format!(
                "{{ address = \"127.0.0.1:0\", tls = {{ certs = [{:?}]{extra} }} }}",
                pem.to_str().unwrap()
            ),
            None => "\"127.0.0.1:0\"".to_owned(),
        })
        .collect();
    let text = format!(
        "[[frontend]]\nname = \"web\"\nbind = [{}]\ndefault_backend = \"app\"\n\n\
         [[backend]]\nname = \"app\"\nservers = [ {{ name = \"s1\", address = \"127.0.0.1:1\" }} ]\n",
        binds.join(", ")
    );
    match tern_config::parse(&text, Path::new("tern.toml")) {
        Ok(config) => config,
        Err(errors) => panic!("{errors}\n{text}"),
    }
}

/// The reloader over `config` with two workers, and the slots of the first worker.
fn reloader(config: &Config) -> (Reloader, Vec<Option<TlsSlot>>) {
    let tls = frontend_tls(config).unwrap();
    let (reloader, mut slots) = Reloader::new(config.clone(), tls, Vec::new(), 2);
    assert_eq!(slots.len(), 2);
    (reloader, slots.swap_remove(0))
}

#[tokio::test]
async fn a_reload_hands_new_configurations_to_every_listener() {
    let dir = temp_dir("swap");
    let pem = dir.join("site.pem");
    write_pem(&pem);
    let config = config(&[Some(&pem), None], "");
    let (reloader, mut slots) = reloader(&config);
    assert!(slots[1].is_none(), "a plain bind has no TLS slot");
    let slot = slots[0].as_mut().unwrap();
    let before = slot.current().map(rustls).unwrap();

    write_pem(&pem);
    let summary = reloader.reload().unwrap();
    assert_eq!(
        summary,
        ReloadSummary {
            binds: 1,
            certificates: 1
        }
    );
    assert!(slot.changed().await, "the listener is told");
    let after = slot.current().map(rustls).unwrap();
    assert!(!Arc::ptr_eq(&before, &after), "a new configuration");
    assert!(
        !Arc::ptr_eq(&before.cert_resolver, &after.cert_resolver),
        "with new certificates"
    );
    assert_eq!(
        reloader.counters().snapshot(),
        ReloadSnapshot {
            reloads: 1,
            failed: 0
        }
    );
}

#[test]
fn each_worker_gets_its_own_copy() {
    let dir = temp_dir("copies");
    let pem = dir.join("site.pem");
    write_pem(&pem);
    let config = config(&[Some(&pem)], "");
    let tls = frontend_tls(&config).unwrap();
    let (_reloader, mut slots) = Reloader::new(config, tls, Vec::new(), 2);
    let first = slots[0][0].as_mut().unwrap().current().map(rustls).unwrap();
    let second = slots[1][0].as_mut().unwrap().current().map(rustls).unwrap();
    assert!(!Arc::ptr_eq(&first, &second));
    // The copies share the session cache (only the resolver wrapper differs).
    assert!(Arc::ptr_eq(&first.session_storage, &second.session_storage));
}

#[test]
fn a_broken_file_keeps_every_bind_on_its_current_certificates() {
    let dir = temp_dir("broken");
    let (good, bad) = (dir.join("good.pem"), dir.join("bad.pem"));
    write_pem(&good);
    write_pem(&bad);
    let config = config(&[Some(&good), Some(&bad)], "");
    let (reloader, mut slots) = reloader(&config);
    let before: Vec<_> = slots
        .iter_mut()
        .map(|s| s.as_mut().unwrap().current().map(rustls).unwrap())
        .collect();

    // The first bind's file is fine and new; the second is broken: nothing changes.
    write_pem(&good);
    std::fs::write(&bad, "not a certificate\n").unwrap();
    let error = reloader.reload().unwrap_err().to_string();
    assert!(error.contains(bad.to_str().unwrap()), "{error}");
    assert!(error.contains("no certificate found"), "{error}");
    for (slot, before) in slots.iter_mut().zip(&before) {
        let slot = slot.as_mut().unwrap();
        assert!(!slot.rx.has_changed().unwrap(), "nothing was swapped");
        assert!(Arc::ptr_eq(&slot.current().map(rustls).unwrap(), before));
    }
    assert_eq!(
        reloader.counters().snapshot(),
        ReloadSnapshot {
            reloads: 0,
            failed: 1
        }
    );

    // Fixed on disk, the next reload applies.
    write_pem(&bad);
    assert_eq!(reloader.reload().unwrap().binds, 2);
    assert_eq!(reloader.counters().snapshot().reloads, 1);
}

#[test]
fn the_session_cache_survives_a_reload() {
    let dir = temp_dir("cache");
    let pem = dir.join("site.pem");
    write_pem(&pem);
    let config = config(&[Some(&pem)], ", resumption = { cache_size = 100 }");
    let (reloader, mut slots) = reloader(&config);
    let before = slots[0].as_mut().unwrap().current().map(rustls).unwrap();
    reloader.reload().unwrap();
    let after = slots[0].as_mut().unwrap().current().map(rustls).unwrap();
    assert!(!Arc::ptr_eq(&before, &after));
    assert!(Arc::ptr_eq(&before.session_storage, &after.session_storage));
}

#[test]
fn a_closed_channel_ends_the_wait() {
    let dir = temp_dir("closed");
    let pem = dir.join("site.pem");
    write_pem(&pem);
    let config = config(&[Some(&pem)], "");
    let (reloader, mut slots) = reloader(&config);
    drop(reloader);
    let slot = slots[0].as_mut().unwrap();
    let rt = tokio::runtime::Builder::new_current_thread()
        .build()
        .unwrap();
    assert!(!rt.block_on(slot.changed()));
    assert!(slot.current().is_some(), "the last set stays readable");
}

/// Writes a self-signed ECDSA certificate for `name` and its key to `path`.
fn write_pem_for(path: &Path, name: &str) {
    let cert = tern_tls::self_signed(&[name.to_owned()], KeyKind::EcdsaP256).unwrap();
    std::fs::write(path, format!("{}{}", cert.cert_pem, cert.key_pem)).unwrap();
}

/// The SNI names of every certificate `show tls` reports, per TLS bind.
fn reported_names(reloader: &Reloader) -> Vec<Vec<Vec<String>>> {
    reloader
        .tls_info()
        .iter()
        .map(|bind| {
            bind.certificates
                .iter()
                .map(|c| c.loaded.sni_names.clone())
                .collect()
        })
        .collect()
}

#[test]
fn show_tls_reports_the_loaded_set_and_a_reload_swaps_it() {
    let dir = temp_dir("info");
    let (a, b) = (dir.join("a.pem"), dir.join("b.pem"));
    write_pem_for(&a, "old-a.test");
    write_pem_for(&b, "old-b.test");
    let config = config(&[Some(&a), None, Some(&b)], "");
    // A set that went through a handover: copies of the built configurations (as
    // `handover::apply_sessions` makes) still describe themselves.
    let mut tls = frontend_tls(&config).unwrap();
    for built in tls.iter_mut().flatten().flatten() {
        *built = Arc::new(ServerConfig::clone(built));
    }
    let (reloader, _slots) = Reloader::new(config, tls, Vec::new(), 1);

    let info = reloader.tls_info();
    assert_eq!(info.len(), 2, "plain binds are not listed: {info:?}");
    let first = &info[0];
    assert_eq!(first.frontend, "web");
    assert_eq!(first.address, "127.0.0.1:0".parse().unwrap());
    assert!(!first.strict_sni);
    let cert = &first.certificates[0];
    assert_eq!(cert.loaded.file.as_deref(), Some(a.as_path()));
    assert_eq!(cert.loaded.key_type, "ECDSA P-256");
    assert!(cert.loaded.default);
    assert_eq!(
        cert.days_until_expiry,
        tern_tls::days_until(cert.loaded.not_after, first.taken_at)
    );
    assert!(cert.days_until_expiry > 0, "{cert:?}");
    let tickets = first.tickets.as_ref().unwrap();
    assert_eq!(tickets.rotation_secs, Some(3600));
    assert!(tickets.key_age_secs.unwrap() >= 0);
    assert_eq!(
        reported_names(&reloader),
        [[["old-a.test"]], [["old-b.test"]]]
    );

    // The files change: the command reports what handshakes use until the reload applies.
    write_pem_for(&a, "new-a.test");
    write_pem_for(&b, "new-b.test");
    assert_eq!(
        reported_names(&reloader),
        [[["old-a.test"]], [["old-b.test"]]]
    );
    reloader.reload().unwrap();
    assert_eq!(
        reported_names(&reloader),
        [[["new-a.test"]], [["new-b.test"]]]
    );

    // A refused reload keeps the set and its description together.
    write_pem_for(&a, "newer-a.test");
    std::fs::write(&b, "not a certificate\n").unwrap();
    reloader.reload().unwrap_err();
    assert_eq!(
        reported_names(&reloader),
        [[["new-a.test"]], [["new-b.test"]]]
    );
    let _ = std::fs::remove_dir_all(&dir);
}

/// The server name of each certificate `show tls` reports for the first TLS bind.
#[cfg(feature = "openssl-engine")]
fn first_bind_names(reloader: &Reloader) -> Vec<Vec<String>> {
    reported_names(reloader).swap_remove(0)
}

/// OpenSSL binds ride the same slots: a reload hands every listener a new engine built from
/// the files, `show tls` follows, and a broken file keeps the engine in use.
#[cfg(feature = "openssl-engine")]
#[tokio::test]
async fn a_reload_rebuilds_openssl_binds() {
    let dir = temp_dir("openssl");
    let pem = dir.join("site.pem");
    write_pem_for(&pem, "old.test");
    let config = config(&[Some(&pem)], ", engine = \"openssl\"");
    let tls = frontend_tls(&config).unwrap();
    let openssl = crate::openssl_binds(&config).unwrap();
    let (reloader, mut slots) = Reloader::new(config, tls, openssl, 2);
    let slot = slots[0][0].as_mut().unwrap();
    let Some(BindTls::OpenSsl(before)) = slot.current() else {
        panic!("not an OpenSSL bind");
    };
    assert_eq!(first_bind_names(&reloader), [["old.test"]]);

    write_pem_for(&pem, "new.test");
    let summary = reloader.reload().unwrap();
    assert_eq!(summary.binds, 1);
    assert_eq!(summary.certificates, 1);
    assert!(slot.changed().await, "the listener is told");
    let Some(BindTls::OpenSsl(after)) = slot.current() else {
        panic!("not an OpenSSL bind");
    };
    assert!(!Arc::ptr_eq(&before, &after), "a new engine");
    assert_eq!(first_bind_names(&reloader), [["new.test"]]);

    std::fs::write(&pem, "not a certificate\n").unwrap();
    let error = reloader.reload().unwrap_err().to_string();
    assert!(error.contains("no certificate found"), "{error}");
    assert!(!slot.rx.has_changed().unwrap(), "nothing was swapped");
    assert_eq!(first_bind_names(&reloader), [["new.test"]]);
    assert_eq!(reloader.counters().snapshot().failed, 1);
    let _ = std::fs::remove_dir_all(&dir);
}
