use super::*;

fn wrapped(e: Error) -> io::Error {
    io::Error::new(io::ErrorKind::InvalidData, e)
}

#[test]
fn failures_are_sorted_by_reason() {
    let cases = [
        (
            Error::PeerIncompatible(PeerIncompatible::NoCipherSuitesInCommon),
            Failure::NoSharedCipher,
        ),
        (
            Error::PeerIncompatible(PeerIncompatible::SupportedVersionsExtensionRequired),
            Failure::Version,
        ),
        (
            Error::InvalidMessage(rustls::InvalidMessage::InvalidContentType),
            Failure::Protocol,
        ),
        (Error::NoCertificatesPresented, Failure::ClientNoCert),
        (
            Error::InvalidCertificate(CertificateError::UnknownIssuer),
            Failure::ClientUnknownCa,
        ),
        (
            Error::InvalidCertificate(CertificateError::Revoked),
            Failure::ClientRevoked,
        ),
        (
            Error::InvalidCertificate(CertificateError::Expired),
            Failure::ClientExpired,
        ),
        (
            Error::InvalidCertificate(CertificateError::NotValidYet),
            Failure::ClientCertOther,
        ),
        (
            Error::AlertReceived(rustls::AlertDescription::UnknownCA),
            Failure::BadCertificate,
        ),
        (
            Error::General("no server certificate chain resolved".into()),
            Failure::UnknownSni,
        ),
        (Error::General("something".into()), Failure::Other),
    ];
    for (error, want) in cases {
        assert_eq!(classify(&wrapped(error.clone())), want, "{error:?}");
    }
    assert_eq!(
        classify(&io::ErrorKind::UnexpectedEof.into()),
        Failure::Other
    );
}
