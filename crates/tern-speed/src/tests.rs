#![allow(clippy::unwrap_used)]

use std::time::Duration;

use super::*;

fn args(list: &[&str]) -> SpeedArgs {
    SpeedArgs {
        algorithms: list.iter().map(|s| (*s).to_owned()).collect(),
        seconds: 1.0,
        multi: 1,
        cpus: None,
        elapsed: false,
        json: None,
        no_openssl: true,
        list: false,
    }
}

fn quick(threads: usize) -> Settings {
    Settings {
        duration: Duration::from_millis(50),
        threads,
        cpus: Vec::new(),
        basis: Basis::Cpu,
    }
}

#[test]
fn no_filter_selects_everything_in_table_order() {
    assert_eq!(select(&[]).unwrap(), Algo::ALL.to_vec());
}

#[test]
fn filter_takes_names_groups_and_openssl_aliases() {
    let names = |list: &[&str]| {
        let list: Vec<String> = list.iter().map(|s| (*s).to_owned()).collect();
        select(&list)
            .unwrap()
            .into_iter()
            .map(Algo::name)
            .collect::<Vec<_>>()
    };
    assert_eq!(
        names(&["handshake", "aes-128-gcm", "x25519", "rsa2048"]),
        [
            "rsa2048",
            "x25519",
            "aes-128-gcm",
            "handshake-rsa2048",
            "handshake-ecdsap256",
            "handshake-ed25519"
        ]
    );
    assert_eq!(
        names(&["RSA", "rsa4096"]),
        ["rsa2048", "rsa3072", "rsa4096"]
    );
    assert_eq!(names(&["ecdhx25519", "ecdhp256"]), ["x25519", "p256"]);
    assert_eq!(
        names(&["kx"]),
        ["x25519", "p256", "mlkem768", "x25519mlkem768"]
    );
    assert_eq!(
        names(&["ciphers"]),
        ["aes-128-gcm", "aes-256-gcm", "chacha20-poly1305"]
    );
}

#[test]
fn unknown_algorithm_is_an_error_that_lists_the_names() {
    let err = select(&["x25519".to_owned(), "rsa1024".to_owned()]).unwrap_err();
    let text = err.to_string();
    assert!(text.contains("\"rsa1024\""), "{text}");
    assert!(text.contains("chacha20-poly1305"), "{text}");
    assert!(Plan::from_args(&args(&["md5"])).is_err());
}

#[test]
fn bad_durations_threads_and_cpu_lists_are_refused() {
    for seconds in [0.0, -1.0, f64::NAN, f64::INFINITY, 3601.0] {
        let mut bad = args(&[]);
        bad.seconds = seconds;
        let err = Plan::from_args(&bad).unwrap_err();
        assert!(matches!(err, SpeedError::BadSeconds(_)), "{seconds}: {err}");
    }
    let mut bad = args(&[]);
    bad.multi = 0;
    assert!(matches!(
        Plan::from_args(&bad),
        Err(SpeedError::BadMulti(0))
    ));
    for list in ["", "a", "3-1", "0,,1", "1-", "99999999"] {
        let mut bad = args(&[]);
        bad.cpus = Some(list.to_owned());
        let err = Plan::from_args(&bad).unwrap_err();
        assert!(matches!(err, SpeedError::BadCpus { .. }), "{list:?}: {err}");
    }
}

#[test]
fn good_options_make_a_plan() {
    let mut good = args(&["x25519"]);
    good.seconds = 0.05;
    good.multi = 2;
    good.cpus = Some("0, 0-0".to_owned());
    good.elapsed = true;
    let plan = Plan::from_args(&good).unwrap();
    assert_eq!(plan.algos, [Algo::X25519]);
    assert_eq!(plan.settings.duration, Duration::from_millis(50));
    assert_eq!(plan.settings.threads, 2);
    assert_eq!(plan.settings.cpus, [0]);
    assert_eq!(plan.settings.basis, Basis::Wall);
    assert!(!plan.openssl);
    assert_eq!(parse_cpu_list("0-2,5").unwrap(), [0, 1, 2, 5]);
    // Several threads are summed per wall-clock second, like openssl speed -multi.
    good.elapsed = false;
    assert_eq!(Plan::from_args(&good).unwrap().settings.basis, Basis::Wall);
    good.multi = 1;
    assert_eq!(Plan::from_args(&good).unwrap().settings.basis, Basis::Cpu);
}

#[test]
fn the_loop_counts_operations_for_the_given_time() {
    for threads in [1, 2] {
        let started = std::time::Instant::now();
        let measured = measure(&quick(threads), || {
            let mut x = 0u64;
            let op: Op = Box::new(move |_| {
                x = std::hint::black_box(x.wrapping_add(1));
                Ok(())
            });
            Ok(op)
        })
        .unwrap();
        assert!(measured.ops > 1000, "{measured:?}");
        assert!(
            measured.rate > 0.0 && measured.cpu_seconds > 0.0,
            "{measured:?}"
        );
        assert!(measured.wall_seconds >= 0.05, "{measured:?}");
        assert!(started.elapsed() < Duration::from_secs(5));
        assert_eq!(measured.part_shares, [0.0, 0.0]);
    }
}

#[test]
fn split_operations_share_out_the_time() {
    let measured = measure(&quick(1), || {
        let spin = |n: u64| {
            std::hint::black_box((0..n).fold(0u64, |acc, i| std::hint::black_box(acc ^ i)));
        };
        let op: Op = Box::new(move |split| {
            split.time(0, || spin(2_000));
            split.time(1, || spin(6_000));
            Ok(())
        });
        Ok(op)
    })
    .unwrap();
    let [client, server] = measured.part_shares;
    assert!((client + server - 1.0).abs() < 1e-9, "{measured:?}");
    assert!(server > client, "{measured:?}");
    // Each side alone is faster than the pair.
    assert!(measured.part_rates[0] > measured.rate && measured.part_rates[1] > measured.rate);
}

#[test]
fn a_failing_operation_fails_the_measurement_on_every_thread_count() {
    for threads in [1, 3] {
        let result = measure(&quick(threads), || {
            let op: Op = Box::new(|_| Err(SpeedError::Handshake("broken".to_owned())));
            Ok(op)
        });
        assert!(matches!(result, Err(SpeedError::Handshake(_))));
        let result = measure(&quick(threads), || Err(SpeedError::ThreadPanicked));
        assert!(matches!(result, Err(SpeedError::ThreadPanicked)));
    }
}

#[test]
fn every_section_measures_real_operations() {
    let settings = Settings {
        duration: Duration::from_millis(20),
        ..quick(1)
    };
    let algos = select(&[
        "ecdsap256".to_owned(),
        "ed25519".to_owned(),
        "p256".to_owned(),
        "mlkem768".to_owned(),
        "x25519mlkem768".to_owned(),
        "chacha20-poly1305".to_owned(),
        "handshake-ed25519".to_owned(),
    ])
    .unwrap();
    let mut rows = sig::run(&algos, &settings).unwrap();
    rows.extend(kx::run(&algos, &settings).unwrap());
    rows.extend(aead::run(&algos, &settings).unwrap());
    rows.extend(handshake::run(&algos, &settings).unwrap());
    let ops: Vec<(&str, &str, Option<usize>)> = rows
        .iter()
        .map(|r| (r.algorithm.as_str(), r.operation.as_str(), r.bytes))
        .collect();
    // ECDSA P-256 gets a batched signing row where the machine has the IFMA kernel.
    let batched_p256 = usize::from(tern_mb::Kernel::detect().is_some());
    assert_eq!(
        ops.len(),
        2 + batched_p256 + 2 + 3 + 3 + 1 + 6 + 2,
        "{ops:?}"
    );
    for row in &rows {
        assert!(row.ops > 0 && row.ops_per_sec > 0.0, "{row:?}");
    }
    let exchange = rows
        .iter()
        .find(|r| r.algorithm == "x25519mlkem768")
        .unwrap();
    assert!(exchange.split.is_some(), "{exchange:?}");
    let handshakes: Vec<&Row> = rows
        .iter()
        .filter(|r| r.section == Section::Handshake)
        .collect();
    for row in &handshakes {
        let detail = row.handshake.as_ref().unwrap();
        assert!(detail.negotiated.starts_with(&detail.version), "{detail:?}");
        let split = row.split.as_ref().unwrap();
        assert!(
            split.server_share > 0.1 && split.server_share < 0.9,
            "{split:?}"
        );
    }
    let table = table::render(Section::Handshake, &rows);
    assert!(
        table.contains("TLSv1.2") && table.contains("TLSv1.3"),
        "{table}"
    );
    let table = table::render(Section::Cipher, &rows);
    assert!(
        table.contains("ChaCha20-Poly1305 tern") && table.contains("16384 bytes"),
        "{table}"
    );
}

#[test]
fn rsa_rows_include_the_batched_rate_on_ifma() {
    let settings = Settings {
        duration: Duration::from_millis(20),
        ..quick(1)
    };
    let algos = select(&["rsa2048".to_owned()]).unwrap();
    let rows = sig::run(&algos, &settings).unwrap();
    let batched = rows.iter().find(|r| r.operation == batched::OPERATION);
    let table = table::render(Section::Signature, &rows);
    assert!(table.contains("batched/s"), "{table}");
    if tern_mb::Batcher::new().has_kernel() {
        let row = batched.unwrap();
        // Eight signatures per batch: the count is a multiple of eight.
        assert!(row.ops >= 8 && row.ops % 8 == 0, "{row:?}");
        assert!(row.ops_per_sec > 0.0, "{row:?}");
        assert!(batched::note().contains("AVX-512 IFMA (tern-mb)"));
    } else {
        assert!(batched.is_none(), "{rows:?}");
        assert!(batched::note().contains("lacks AVX-512 IFMA"));
    }
}

#[test]
fn p256_rows_include_the_batched_rate_on_ifma() {
    let settings = Settings {
        duration: Duration::from_millis(20),
        ..quick(1)
    };
    let algos = select(&["ecdsap256".to_owned()]).unwrap();
    let rows = sig::run(&algos, &settings).unwrap();
    let batched = rows.iter().find(|r| r.operation == batched::OPERATION);
    if tern_mb::Kernel::detect().is_some() {
        let row = batched.unwrap();
        assert!(row.ops > 0 && row.ops_per_sec > 0.0, "{row:?}");
        let table = table::render(Section::Signature, &rows);
        assert!(table.contains("ecdsap256"), "{table}");
    } else {
        assert!(batched.is_none(), "{rows:?}");
    }
}

#[test]
fn x25519_rows_include_the_batched_rates_on_ifma() {
    let settings = Settings {
        duration: Duration::from_millis(20),
        ..quick(1)
    };
    let rows = kx::run(&[Algo::X25519], &settings).unwrap();
    let table = table::render(Section::KeyAgreement, &rows);
    for operation in [batched::X25519_KEYGEN, batched::X25519_DERIVE] {
        let row = rows.iter().find(|r| r.operation == operation);
        if tern_mb::Batcher::new().has_kernel() {
            let row = row.unwrap();
            // Eight operations per batch: the count is a multiple of eight.
            assert!(row.ops >= 8 && row.ops % 8 == 0, "{row:?}");
            assert!(table.contains(operation), "{table}");
        } else {
            assert!(row.is_none(), "{rows:?}");
        }
    }
}

#[test]
fn seed_002_table_has_every_row_with_positive_rates() {
    let rows = cbc::run(&[Algo::Aes128CbcHmacSha1], &quick(1)).unwrap();
    let libraries = if cfg!(feature = "openssl-engine") {
        3
    } else {
        1
    };
    assert_eq!(rows.len(), aead::SIZES.len() * libraries);
    for row in &rows {
        assert_eq!(row.section, Section::CbcVsGcm);
        assert!(row.bytes_per_sec.unwrap() > 0.0, "{row:?}");
        assert!(row.library.is_some(), "{row:?}");
    }
    let table = table::render(Section::CbcVsGcm, &rows);
    assert!(table.contains("AES-128-GCM seal aws-lc-rs"), "{table}");
    assert!(table.contains("16384 bytes"), "{table}");
    let note = cbc::note(&rows);
    assert!(note.contains("seed 002"), "{note}");
    // Selecting another table measures nothing here.
    assert!(cbc::run(&[Algo::Aes128Gcm], &quick(1)).unwrap().is_empty());
}
