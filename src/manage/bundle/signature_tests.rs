use super::*;
use crate::manage::bundle::archive::signature_block;

/// A bundle signed by `mcpb sign` with a certificate issued by a test CA (see the fixture's
/// README).
const SIGNED: &[u8] = include_bytes!("../../../tests/fixtures/mcpb/ca-signed.mcpb");

fn check(bytes: &[u8]) -> Result<Signer, String> {
    let (header, block) = signature_block(bytes)
        .map_err(|e| e.to_string())?
        .expect("a signature block");
    verify(&bytes[block], &bytes[..header], SystemTime::now())
}

#[test]
fn a_bundle_signed_by_mcpb_sign_verifies_and_names_its_signer() {
    let s = check(SIGNED).unwrap();
    assert_eq!(s.subject, "O=MCP Companion tests,CN=Test Publisher");
    assert_eq!(s.issuer, "O=MCP Companion tests,CN=Test Publisher CA");
    assert!(!s.self_signed);
    assert!(!s.expired);
    // `openssl x509 -fingerprint -sha256` of the signing certificate.
    assert_eq!(
        s.fingerprint,
        "aadc5880393fb5a7dbbb345d123442730c22d57fcd33cd298ebcf1ced2991213"
    );
}

#[test]
fn a_changed_byte_of_the_bundle_is_refused_as_changed_after_signing() {
    let (header, _) = signature_block(SIGNED).unwrap().unwrap();
    for at in [0, header / 2, header - 1] {
        let mut bytes = SIGNED.to_vec();
        bytes[at] ^= 0x01;
        let e = check(&bytes).unwrap_err();
        assert!(e.contains("changed after it was signed"), "byte {at}: {e}");
    }
}

#[test]
fn a_changed_signature_value_is_refused() {
    // The signature value is the signer info's last OCTET STRING, just before the footer.
    let mut bytes = SIGNED.to_vec();
    let at = bytes.len() - b"MCPB_SIG_END".len() - 10;
    bytes[at] ^= 0x01;
    let e = check(&bytes).unwrap_err();
    assert!(e.contains("does not match the signer's certificate"), "{e}");
}

#[test]
fn a_changed_signed_attribute_is_refused() {
    // Changing the signing time (inside the signed attributes) breaks the signature, not the
    // digest: the attributes are verified as sent.
    let mut bytes = SIGNED.to_vec();
    let (_, block) = signature_block(&bytes).unwrap().unwrap();
    let utc = memchr::memmem::rfind(&bytes[block.clone()], b"\x17\x0d").unwrap() + block.start;
    bytes[utc + 3] = if bytes[utc + 3] == b'1' { b'2' } else { b'1' };
    let e = check(&bytes).unwrap_err();
    assert!(e.contains("does not match the signer's certificate"), "{e}");
}

#[test]
fn a_block_that_is_not_pkcs7_or_cut_short_is_refused() {
    let e = verify(b"\x30\x03\x02\x01\x01", b"zip", SystemTime::now()).unwrap_err();
    assert!(e.contains("not PKCS#7 DER"), "{e}");
    let (header, block) = signature_block(SIGNED).unwrap().unwrap();
    let short = &SIGNED[block.start..block.end - 40];
    assert!(verify(short, &SIGNED[..header], SystemTime::now()).is_err());
}

#[test]
fn a_certificate_used_outside_its_validity_is_reported() {
    let (header, block) = signature_block(SIGNED).unwrap().unwrap();
    let s = verify(&SIGNED[block], &SIGNED[..header], SystemTime::UNIX_EPOCH).unwrap();
    assert!(s.expired);
}
