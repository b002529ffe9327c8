#![allow(clippy::unwrap_used)]

use super::*;

fn form(t: &str, m: Method) -> Result<TargetForm, H1Error> {
    parse_target(t.as_bytes(), Span::new(0, t.len()), m)
}

#[test]
fn userinfo_is_stripped_from_the_authority() {
    let t = "http://user:pw@[::1]:8080/p";
    let Ok(TargetForm::Absolute { authority, path }) = form(t, Method::Get) else {
        panic!()
    };
    assert_eq!(authority.get(t.as_bytes()), b"[::1]:8080");
    assert_eq!(path.get(t.as_bytes()), b"/p");
    // The last '@' ends the userinfo.
    let t = "http://a@b@host/";
    let Ok(TargetForm::Absolute { authority, .. }) = form(t, Method::Get) else {
        panic!()
    };
    assert_eq!(authority.get(t.as_bytes()), b"host");
}

#[test]
fn ports_are_numbers_up_to_65535() {
    assert!(form("http://h:65535/", Method::Get).is_ok());
    assert!(form("http://h:65536/", Method::Get).is_err());
    assert!(form("http://h:123456/", Method::Get).is_err());
    assert!(form("http://h:8a/", Method::Get).is_err());
    assert!(form("h:1", Method::Connect).is_ok());
    assert!(form("[::1]:1", Method::Connect).is_ok());
    assert!(form("[::1]", Method::Connect).is_err());
}

#[test]
fn host_values() {
    for good in [
        "",
        "h",
        "h:1",
        "[2001:db8::1]",
        "[2001:db8::1]:80",
        "a-b.c_d~e",
    ] {
        assert!(is_valid_host(good.as_bytes()), "{good}");
    }
    for bad in ["[]", "[::1]x", ":80", "h:", "h h", "h\"", "[g::]"] {
        assert!(!is_valid_host(bad.as_bytes()), "{bad}");
    }
}
