#![allow(clippy::unwrap_used)]

use super::*;
use crate::measure::Measured;

/// `openssl speed -seconds 1 rsa2048 ecdsap256 ed25519 ecdhx25519 ecdhp256`, OpenSSL 3.0.19.
const ASYMMETRIC: &str = "\
version: 3.0.19
built on: Fri Apr  3 12:29:32 2026 UTC
options: bn(64,64)
compiler: gcc -fPIC -pthread -m64 -Wa,--noexecstack -Wall -O2 -DNDEBUG -D_FORTIFY_SOURCE=2
CPUINFO: OPENSSL_ia32cap=0xfffa32034f8bffff:0x1a415f46f1bf2ffb
                  sign    verify    sign/s verify/s
rsa 2048 bits 0.000356s 0.000019s   2805.1  53299.0
                              sign    verify    sign/s verify/s
 256 bits ecdsa (nistp256)   0.0000s   0.0001s  42655.6  13124.7
                              op      op/s
 256 bits ecdh (nistp256)   0.0001s  16906.0
 253 bits ecdh (X25519)   0.0000s  27949.5
                              sign    verify    sign/s verify/s
 253 bits EdDSA (Ed25519)   0.0000s   0.0001s  24218.6   8707.0
";

/// `openssl speed -seconds 1 -multi 2 rsa2048 ecdhx25519 ecdsap384 ed25519` (summary part).
const MULTI: &str = "\
CPUINFO: OPENSSL_ia32cap=0xfffa32034f8bffff:0x1a415f46f1bf2ffb
                  sign    verify    sign/s verify/s
rsa 2048 bits 0.000348s 0.000019s   2869.8  52944.0
                              sign    verify    sign/s verify/s
 384 bits ecdsa (nistp384)   0.0007s   0.0007s   1355.3   1516.8
                              op      op/s
 253 bits ecdh (X25519)   0.0000s  28450.0
";

/// `openssl speed -seconds 1 -evp aes-128-gcm`.
const CIPHER_TABLE: &str = "\
version: 3.0.19
The 'numbers' are in 1000s of bytes per second processed.
type             16 bytes     64 bytes    256 bytes   1024 bytes   8192 bytes  16384 bytes
AES-128-GCM      36001.66k   139921.02k   525687.19k  1643351.21k  4271800.32k  5030232.93k
";

/// `openssl speed -seconds 1 -multi 2 -aead -bytes 1024 -evp chacha20-poly1305`.
const CIPHER_ONE: &str = "\
CPUINFO: OPENSSL_ia32cap=0xfffa32034f8bffff:0x1a415f46f1bf2ffb
The 'numbers' are in 1000s of bytes per second processed.
type             1024 bytes
ChaCha20-Poly1305    3089249.28k
";

/// `openssl speed -seconds 1 -multi 2 -aead -bytes 1024 -evp aes-128-gcm`: no `type` header.
const CIPHER_MULTI: &str = "\
compiler: gcc -fPIC -pthread -m64 -Wa,--noexecstack -Wall -O2 -DNDEBUG -D_FORTIFY_SOURCE=2
CPUINFO: OPENSSL_ia32cap=0xfffa32034f8bffff:0x1a415f46f1bf2ffb
AES-128-GCM     608410.02k
";

#[test]
fn parses_signatures_and_key_agreement() {
    let figures = parse(ASYMMETRIC);
    assert_eq!(figures.sign_verify.get("rsa2048"), Some(&(2805.1, 53299.0)));
    assert_eq!(
        figures.sign_verify.get("ecdsap256"),
        Some(&(42655.6, 13124.7))
    );
    assert_eq!(figures.sign_verify.get("ed25519"), Some(&(24218.6, 8707.0)));
    assert_eq!(figures.ops.get("ecdhp256"), Some(&16906.0));
    assert_eq!(figures.ops.get("ecdhx25519"), Some(&27949.5));
    assert_eq!(figures.sign_verify.len(), 3);
    assert_eq!(figures.ops.len(), 2);
    assert!(figures.bytes.is_empty());
}

#[test]
fn parses_the_multi_summary() {
    let figures = parse(MULTI);
    assert_eq!(figures.sign_verify.get("rsa2048"), Some(&(2869.8, 52944.0)));
    assert_eq!(
        figures.sign_verify.get("ecdsap384"),
        Some(&(1355.3, 1516.8))
    );
    assert_eq!(figures.ops.get("ecdhx25519"), Some(&28450.0));
}

#[test]
fn parses_cipher_tables_in_bytes_per_second() {
    let figures = parse(CIPHER_TABLE);
    let at = |size| {
        figures
            .bytes
            .get(&("aes-128-gcm".to_owned(), size))
            .copied()
    };
    assert_eq!(at(16), Some(36_001_660.0));
    assert_eq!(at(16384), Some(5_030_232_930.0));
    assert_eq!(figures.bytes.len(), 6);

    let figures = parse(CIPHER_ONE);
    let key = ("chacha20-poly1305".to_owned(), 1024);
    assert_eq!(figures.bytes.get(&key), Some(&3_089_249_280.0));
    assert_eq!(figures.bytes.len(), 1);
}

#[test]
fn cipher_rows_without_a_header_take_the_requested_size() {
    let figures = parse_with_sizes(CIPHER_MULTI, &[1024]);
    let key = ("aes-128-gcm".to_owned(), 1024);
    assert_eq!(figures.bytes.get(&key), Some(&608_410_020.0));
    assert_eq!(figures.bytes.len(), 1);
    // Without the hint the row cannot be placed, so it is not reported.
    assert_eq!(parse(CIPHER_MULTI), Figures::default());
    // A header present in the output wins over the hint.
    let figures = parse_with_sizes(CIPHER_ONE, &[16]);
    assert!(figures
        .bytes
        .contains_key(&("chacha20-poly1305".to_owned(), 1024)));
}

#[test]
fn newer_rsa_lines_with_more_columns_keep_sign_and_verify() {
    let text =
        "rsa  2048 bits 0.000356s 0.000019s 0.000020s 0.000350s 2805.1 53299.0 50000.0 2857.1\n";
    assert_eq!(
        parse(text).sign_verify.get("rsa2048"),
        Some(&(2805.1, 53299.0))
    );
}

#[test]
fn unreadable_output_gives_no_figures() {
    for text in [
        "",
        "Error: unknown algorithm\n",
        "rsa 2048 bits 0.0003s\n",
        "type 16 bytes\nAES-128-GCM  notanumber\n",
        "type 16 bytes 64 bytes\nAES-128-GCM  1.0k\n",
        " 256 bits ecdh (nistp256) 0.0001s\n",
    ] {
        let figures = parse(text);
        assert_eq!(figures, Figures::default(), "{text:?}");
    }
}

fn row(section: Section, algorithm: &str, operation: &str, bytes: Option<usize>) -> Row {
    let measured = Measured {
        ops: 10,
        wall_seconds: 1.0,
        cpu_seconds: 1.0,
        rate: 10.0,
        ..Measured::default()
    };
    let mut row = Row::new(section, algorithm, operation, &measured);
    if let Some(bytes) = bytes {
        row.set_bytes(bytes);
    }
    row
}

#[test]
fn rows_find_their_openssl_figure() {
    let mut figures = parse(ASYMMETRIC);
    merge(&mut figures, parse(CIPHER_TABLE));
    let cases = [
        (
            row(Section::Signature, "rsa2048", "sign", None),
            Some(2805.1),
        ),
        (
            row(Section::Signature, "rsa2048", "verify", None),
            Some(53299.0),
        ),
        (
            row(Section::KeyAgreement, "x25519", "derive", None),
            Some(27949.5),
        ),
        (row(Section::KeyAgreement, "x25519", "keygen", None), None),
        (row(Section::KeyAgreement, "mlkem768", "keygen", None), None),
        (
            row(Section::Cipher, "aes-128-gcm", "seal", Some(64)),
            Some(139_921_020.0),
        ),
        (row(Section::Cipher, "aes-256-gcm", "seal", Some(64)), None),
        (row(Section::Handshake, "rsa2048", "handshake", None), None),
    ];
    for (row, expected) in cases {
        assert_eq!(lookup(&figures, &row), expected, "{row:?}");
    }
    let mut cipher = row(Section::Cipher, "aes-128-gcm", "seal", Some(64));
    cipher.set_openssl(320.0);
    assert_eq!(cipher.ratio, Some(2.0)); // 10 ops/s × 64 bytes = 640 bytes/s
}

#[test]
fn openssl_gets_whole_seconds_threads_and_basis() {
    let mut settings = Settings {
        duration: Duration::from_millis(50),
        threads: 1,
        cpus: Vec::new(),
        basis: Basis::Cpu,
    };
    assert_eq!(common_args(&settings), ["speed", "-seconds", "1"]);
    settings.duration = Duration::from_secs_f64(2.5);
    settings.threads = 2;
    settings.basis = Basis::Wall;
    assert_eq!(
        common_args(&settings),
        ["speed", "-seconds", "3", "-multi", "2", "-elapsed"]
    );
}

#[test]
fn a_command_over_its_time_limit_is_killed() {
    let started = std::time::Instant::now();
    let result = run_bounded(
        Command::new("sh").args(["-c", "exec sleep 30"]),
        Duration::from_millis(200),
    );
    assert!(result.unwrap_err().contains("killed"));
    assert!(started.elapsed() < Duration::from_secs(10));
}
