#![allow(clippy::unwrap_used)]

use base64::Engine;
use tern_config::{CryptScheme, Password, User, Userlist};

use super::*;

/// The SHA-crypt specification's "Hello world!" examples, and `openssl passwd -6 -salt
/// 'rounds=1000$abc' secret`.
const SHA512: &str = "$6$saltstring$svn8UoSVapNtMuq1ukKS4tPQd8iKwSMHWjl/O817G3uBnIFNjnQJuesI68u4OTLiBFdcbYEdFCoEOfaS35inz1";
const SHA512_ROUNDS: &str = "$6$rounds=1000$abc$MqEcPZUYRGGcOeq7PhMpfjfu/F0HrVEI0OlZBijWvO8mSG77iNUDP5MqFceKpJTBc8iITVtNyLiNTRNCxv6oh0";
const SHA256: &str = "$5$saltstring$5B8vYYiY.CVt1RlTTf8KbXBH3hsxY/GNooZaBBGWEc5";
/// OpenBSD's bcrypt test vector for the password `U*U`.
const BCRYPT: &str = "$2a$05$CCCCCCCCCCCCCCCCCCCCC.E5YPO9kmyuRGyh0XouQYb4YMJKvyOeW";

fn crypt_user(name: &str, hash: &str) -> User {
    User {
        name: name.into(),
        password: Password::Crypt {
            scheme: CryptScheme::of(hash).unwrap(),
            hash: hash.into(),
        },
        groups: vec!["ops".into()],
    }
}

fn lists() -> Vec<Userlist> {
    vec![Userlist {
        name: "admins".into(),
        users: vec![
            crypt_user("s512", SHA512),
            crypt_user("s256", SHA256),
            crypt_user("bc", BCRYPT),
            crypt_user("bcy", &BCRYPT.replace("$2a$", "$2y$")),
            crypt_user("rounds", SHA512_ROUNDS),
            User {
                name: "plain".into(),
                password: Password::Insecure("elgato".into()),
                groups: Vec::new(),
            },
        ],
    }]
}

fn creds(user: &str, password: &str) -> Credentials {
    let text = base64::engine::general_purpose::STANDARD.encode(format!("{user}:{password}"));
    Credentials::from_header(format!("Basic {text}").as_bytes()).unwrap()
}

#[test]
fn each_scheme_checks_its_vector() {
    assert!(verify::crypt(CryptScheme::Sha512, SHA512, b"Hello world!"));
    assert!(!verify::crypt(CryptScheme::Sha512, SHA512, b"Hello world"));
    assert!(verify::crypt(CryptScheme::Sha512, SHA512_ROUNDS, b"secret"));
    assert!(verify::crypt(CryptScheme::Sha256, SHA256, b"Hello world!"));
    assert!(!verify::crypt(CryptScheme::Sha256, SHA256, b"hello world!"));
    assert!(verify::crypt(CryptScheme::Bcrypt, BCRYPT, b"U*U"));
    assert!(!verify::crypt(CryptScheme::Bcrypt, BCRYPT, b"U*V"));
}

#[test]
fn basic_credentials_are_parsed_strictly() {
    let c = creds("alice", "pa:ss");
    assert_eq!((c.user(), c.password()), (&b"alice"[..], &b"pa:ss"[..]));
    assert!(Credentials::from_header(b"basic YTpi").is_some());
    let unpadded = Credentials::from_header(b"Basic YTpiYw").unwrap();
    assert_eq!(unpadded.password(), b"bc");
    for bad in [
        &b"Bearer YTpi"[..],
        b"Basic",
        b"Basic !!!",
        b"Basic YWI=", // no colon
        b"",
    ] {
        assert!(Credentials::from_header(bad).is_none(), "{bad:?}");
    }
    assert!(Credentials::from_header(&[b'a'; 2000]).is_none());
}

#[tokio::test]
async fn users_are_accepted_with_their_password_only() {
    let auth = Authenticator::new(
        &lists(),
        Limits {
            checks: 1,
            waiting: 4,
        },
    );
    assert_eq!(auth.check(0, &creds("s512", "Hello world!")).await, Some(0));
    assert_eq!(auth.check(0, &creds("s256", "Hello world!")).await, Some(1));
    assert_eq!(auth.check(0, &creds("bc", "U*U")).await, Some(2));
    assert_eq!(auth.check(0, &creds("bcy", "U*U")).await, Some(3));
    assert_eq!(auth.check(0, &creds("rounds", "secret")).await, Some(4));
    assert_eq!(auth.check(0, &creds("plain", "elgato")).await, Some(5));
    assert_eq!(auth.check(0, &creds("plain", "elgat")).await, None);
    assert_eq!(auth.check(0, &creds("s512", "wrong")).await, None);
    assert_eq!(auth.check(0, &creds("nobody", "x")).await, None);
    assert_eq!(auth.check(1, &creds("s512", "Hello world!")).await, None);
    let counts = auth.stats().counts();
    assert_eq!((counts.accepted, counts.failed), (6, 4));
}

#[tokio::test]
async fn a_success_is_cached_and_a_wrong_password_never_hits() {
    let auth = Authenticator::new(
        &lists(),
        Limits {
            checks: 1,
            waiting: 4,
        },
    );
    assert_eq!(auth.check(0, &creds("bc", "U*U")).await, Some(2));
    assert_eq!(auth.stats().counts().cache_hits, 0);
    assert_eq!(auth.check(0, &creds("bc", "U*U")).await, Some(2));
    assert_eq!(auth.stats().counts().cache_hits, 1);
    assert_eq!(auth.check(0, &creds("bc", "U*V")).await, None);
    assert_eq!(auth.stats().counts().cache_hits, 1);
    assert_eq!(auth.cache.len(), 1);
}

#[test]
fn the_cache_is_bounded_and_keeps_what_is_used() {
    let cache = Cache::new();
    let first = cache.key(0, &creds("u0", "p"));
    cache.put(first, 7);
    for i in 1..cache::GENERATION * 3 {
        cache.put(cache.key(0, &creds(&format!("u{i}"), "p")), i);
        if i % 1000 == 0 {
            assert_eq!(cache.get(&first), Some(7), "a used entry stays");
        }
    }
    assert!(cache.len() <= 2 * cache::GENERATION);
    assert_ne!(
        first,
        cache.key(1, &creds("u0", "p")),
        "the userlist is part of the key"
    );
    assert_ne!(
        cache.key(0, &creds("ab", "c")),
        cache.key(0, &creds("a", "bc"))
    );
}

#[tokio::test]
async fn checks_beyond_the_waiting_room_fail_at_once() {
    let auth = Arc::new(Authenticator::new(
        &lists(),
        Limits {
            checks: 1,
            waiting: 1,
        },
    ));
    // The one slot is busy: the first guess waits, the seven others are refused unchecked.
    let busy = auth.gate.clone().acquire_owned().await.unwrap();
    let guesses: Vec<_> = (0..8)
        .map(|i| {
            let auth = auth.clone();
            tokio::spawn(async move { auth.check(0, &creds("bc", &format!("guess{i}"))).await })
        })
        .collect();
    for _ in 0..1000 {
        if auth.stats().counts().overloaded == 7 {
            break;
        }
        tokio::task::yield_now().await;
    }
    assert_eq!(auth.stats().counts().overloaded, 7);
    drop(busy);
    for g in guesses {
        assert_eq!(g.await.unwrap(), None);
    }
    assert_eq!(auth.stats().counts().failed, 8);
    assert_eq!(auth.waiting.load(Ordering::Relaxed), 0);
}
