//! Checking the signature `mcpb sign` appends to a bundle.
//!
//! Layout (the reference CLI's `signMcpbFile`/`extractSignatureBlock`): the zip's bytes, then
//! `MCPB_SIG_V1`, a little-endian `u32` length, that many bytes of a DER PKCS#7 / CMS
//! `SignedData` (RFC 5652) whose content is *detached* — it is the zip's bytes, everything
//! before `MCPB_SIG_V1` — and `MCPB_SIG_END`.
//!
//! [`verify`] checks, for every `SignerInfo`: the signer's certificate is in the block
//! (found by issuer and serial number), the digest of the signed bytes (SHA-256, -384 or -512)
//! equals the `messageDigest` signed attribute, the `contentType` attribute is `id-data`, and
//! the RSA PKCS#1 v1.5 signature over the signed attributes verifies with the certificate's
//! key (RFC 5652 §5.4: the attributes as the DER `SET OF` they were sent as — the reference
//! CLI does not sort them, so they are taken from the block's bytes, never re-encoded).
//! Without signed attributes the signature is over the bytes themselves.
//!
//! What a valid signature proves: the bytes are exactly what the holder of the certificate's
//! key signed. It does not prove who that is: the companion keeps no list of trusted
//! publishers and does not build a chain to the OS's certificate authorities, so a
//! certificate's subject is a claim, and anyone can make a self-signed one with any name.
//! The certificate's SHA-256 fingerprint is shown so a person can compare it with one the
//! publisher made known. `mcpb sign` only makes RSA signatures; other key types are refused
//! as not verifiable.

use std::time::SystemTime;

use cms::cert::CertificateChoices;
use cms::content_info::ContentInfo;
use cms::signed_data::{SignedData, SignerIdentifier, SignerInfo};
use der::asn1::{AnyRef, ObjectIdentifier, OctetStringRef};
use der::{Decode, Encode, Reader, SliceReader, Tag, TagNumber, Tagged};
use rsa::RsaPublicKey;
use rsa::pkcs1v15::{Signature, VerifyingKey};
use rsa::pkcs8::DecodePublicKey;
use rsa::signature::Verifier;
use serde::Serialize;
use sha2::{Digest, Sha256, Sha384, Sha512};
use x509_cert::Certificate;

const ID_SIGNED_DATA: ObjectIdentifier = ObjectIdentifier::new_unwrap("1.2.840.113549.1.7.2");
const ID_DATA: ObjectIdentifier = ObjectIdentifier::new_unwrap("1.2.840.113549.1.7.1");
const ID_CONTENT_TYPE: ObjectIdentifier = ObjectIdentifier::new_unwrap("1.2.840.113549.1.9.3");
const ID_MESSAGE_DIGEST: ObjectIdentifier = ObjectIdentifier::new_unwrap("1.2.840.113549.1.9.4");
const RSA_ENCRYPTION: ObjectIdentifier = ObjectIdentifier::new_unwrap("1.2.840.113549.1.1.1");
const SHA256_WITH_RSA: ObjectIdentifier = ObjectIdentifier::new_unwrap("1.2.840.113549.1.1.11");
const SHA384_WITH_RSA: ObjectIdentifier = ObjectIdentifier::new_unwrap("1.2.840.113549.1.1.12");
const SHA512_WITH_RSA: ObjectIdentifier = ObjectIdentifier::new_unwrap("1.2.840.113549.1.1.13");
const ID_SHA256: ObjectIdentifier = ObjectIdentifier::new_unwrap("2.16.840.1.101.3.4.2.1");
const ID_SHA384: ObjectIdentifier = ObjectIdentifier::new_unwrap("2.16.840.1.101.3.4.2.2");
const ID_SHA512: ObjectIdentifier = ObjectIdentifier::new_unwrap("2.16.840.1.101.3.4.2.3");

/// A signature that verified: who the certificate says signed, and how far to believe it.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Signer {
    /// The signing certificate's subject (RFC 4514 text, e.g. `CN=Acme,O=Acme Inc,C=US`).
    pub subject: String,
    /// Its issuer, the same form.
    pub issuer: String,
    /// Whether the issuer is the subject itself (nobody else vouches for the name).
    pub self_signed: bool,
    /// SHA-256 of the certificate's DER, lower-case hex.
    pub fingerprint: String,
    /// Whether now is outside the certificate's validity period.
    pub expired: bool,
}

/// What a bundle's signature means, in one sentence for a person: none, or who the
/// certificate names and that this proves integrity, not identity.
pub fn describe(signature: Option<&Signer>) -> String {
    match signature {
        None => "not signed: nothing vouches for the file beyond where you got it".into(),
        Some(s) => {
            let by = if s.self_signed {
                format!("a self-signed certificate naming \"{}\"", s.subject)
            } else {
                format!(
                    "a certificate naming \"{}\", issued by \"{}\"",
                    s.subject, s.issuer
                )
            };
            format!(
                "valid, made with {by} (SHA-256 {}). It proves the file is unchanged since that \
                 key signed it, not who holds the key: the companion keeps no list of trusted \
                 publishers",
                s.fingerprint
            )
        }
    }
}

/// The digests a signer may use.
#[derive(Clone, Copy)]
enum Hash {
    Sha256,
    Sha384,
    Sha512,
}

impl Hash {
    fn of(oid: ObjectIdentifier) -> Option<Hash> {
        match oid {
            ID_SHA256 => Some(Hash::Sha256),
            ID_SHA384 => Some(Hash::Sha384),
            ID_SHA512 => Some(Hash::Sha512),
            _ => None,
        }
    }

    fn digest(self, bytes: &[u8]) -> Vec<u8> {
        match self {
            Hash::Sha256 => Sha256::digest(bytes).to_vec(),
            Hash::Sha384 => Sha384::digest(bytes).to_vec(),
            Hash::Sha512 => Sha512::digest(bytes).to_vec(),
        }
    }

    fn rsa_verify(self, key: RsaPublicKey, msg: &[u8], sig: &Signature) -> bool {
        match self {
            Hash::Sha256 => VerifyingKey::<Sha256>::new(key).verify(msg, sig).is_ok(),
            Hash::Sha384 => VerifyingKey::<Sha384>::new(key).verify(msg, sig).is_ok(),
            Hash::Sha512 => VerifyingKey::<Sha512>::new(key).verify(msg, sig).is_ok(),
        }
    }
}

/// Verifies `block` (the DER between the length and `MCPB_SIG_END`) over `signed` (the bytes
/// before `MCPB_SIG_V1`) at time `now`. Returns the first signer (the one `mcpb sign` puts
/// first); every signer must verify.
///
/// # Errors
/// Why it does not verify, as a sentence fragment: the block does not parse, the bytes do
/// not match their digest, the signature does not match the key, an algorithm not supported.
pub fn verify(block: &[u8], signed: &[u8], now: SystemTime) -> Result<Signer, String> {
    let info = ContentInfo::from_der(block)
        .map_err(|e| format!("the signature block is not PKCS#7 DER: {e}"))?;
    if info.content_type != ID_SIGNED_DATA {
        return Err(format!(
            "the signature block is PKCS#7 content {} rather than signed data",
            info.content_type
        ));
    }
    let raw = info
        .content
        .to_der()
        .map_err(|e| format!("the signature block does not re-encode: {e}"))?;
    let data = SignedData::from_der(&raw)
        .map_err(|e| format!("the signature block's signed data does not parse: {e}"))?;
    if data.encap_content_info.econtent.is_some() {
        return Err(
            "the signature block carries its own content instead of signing the bundle".into(),
        );
    }
    let certs: Vec<&Certificate> = data
        .certificates
        .as_ref()
        .map(|c| {
            c.0.iter()
                .filter_map(|c| match c {
                    CertificateChoices::Certificate(c) => Some(c),
                    CertificateChoices::Other(_) => None,
                })
                .collect()
        })
        .unwrap_or_default();
    let signers = raw_signer_infos(&raw)
        .map_err(|e| format!("the signature block's signer infos do not parse: {e}"))?;
    let mut first = None;
    for raw_signer in &signers {
        let signer = check_signer(raw_signer, &certs, signed, now)?;
        first.get_or_insert(signer);
    }
    first.ok_or_else(|| "the signature block names no signer".to_owned())
}

fn check_signer(
    raw: &[u8],
    certs: &[&Certificate],
    signed: &[u8],
    now: SystemTime,
) -> Result<Signer, String> {
    let info =
        SignerInfo::from_der(raw).map_err(|e| format!("a signer info does not parse: {e}"))?;
    let SignerIdentifier::IssuerAndSerialNumber(id) = &info.sid else {
        return Err("the signer is named by key identifier, which is not supported".into());
    };
    let cert = certs
        .iter()
        .find(|c| {
            c.tbs_certificate.issuer == id.issuer
                && c.tbs_certificate.serial_number == id.serial_number
        })
        .ok_or("the signer's certificate is not in the signature block")?;
    let hash = Hash::of(info.digest_alg.oid).ok_or_else(|| {
        format!(
            "digest algorithm {} is not supported (SHA-256, -384, -512 are)",
            info.digest_alg.oid
        )
    })?;
    let digest = hash.digest(signed);
    let message = match raw_signed_attrs(raw)
        .map_err(|e| format!("a signer's attributes do not parse: {e}"))?
    {
        Some(attrs_der) => {
            let attrs = info
                .signed_attrs
                .as_ref()
                .ok_or("signed attributes do not parse")?;
            let value = |oid: ObjectIdentifier| {
                attrs
                    .iter()
                    .find(|a| a.oid == oid)
                    .and_then(|a| a.values.iter().next())
            };
            let claimed = value(ID_MESSAGE_DIGEST)
                .and_then(|v| v.decode_as::<OctetStringRef<'_>>().ok())
                .ok_or("the signed attributes hold no message digest")?;
            if claimed.as_bytes() != digest.as_slice() {
                return Err(
                    "the bundle's bytes do not match the digest that was signed: the file was \
                     changed after it was signed"
                        .into(),
                );
            }
            let content_type =
                value(ID_CONTENT_TYPE).and_then(|v| v.decode_as::<ObjectIdentifier>().ok());
            if content_type != Some(ID_DATA) {
                return Err("the signed attributes do not say the content is data".into());
            }
            attrs_der
        }
        None => signed.to_vec(),
    };
    let alg = info.signature_algorithm.oid;
    let expected_hash_ok = match alg {
        RSA_ENCRYPTION => true,
        SHA256_WITH_RSA => matches!(hash, Hash::Sha256),
        SHA384_WITH_RSA => matches!(hash, Hash::Sha384),
        SHA512_WITH_RSA => matches!(hash, Hash::Sha512),
        other => {
            return Err(format!(
                "signature algorithm {other} is not supported (RSA PKCS#1 v1.5, as mcpb sign makes, is)"
            ));
        }
    };
    if !expected_hash_ok {
        return Err(format!(
            "signature algorithm {alg} does not match digest algorithm {}",
            info.digest_alg.oid
        ));
    }
    let spki = cert
        .tbs_certificate
        .subject_public_key_info
        .to_der()
        .map_err(|e| format!("the signer's public key does not encode: {e}"))?;
    let key = RsaPublicKey::from_public_key_der(&spki)
        .map_err(|e| format!("the signer's certificate holds no usable RSA key: {e}"))?;
    let sig = Signature::try_from(info.signature.as_bytes())
        .map_err(|e| format!("the signature value does not parse: {e}"))?;
    if !hash.rsa_verify(key, &message, &sig) {
        return Err(
            "the signature does not match the signer's certificate: the signature block was \
             changed or made with another key"
                .into(),
        );
    }
    let tbs = &cert.tbs_certificate;
    let validity = &tbs.validity;
    let since_epoch = now
        .duration_since(SystemTime::UNIX_EPOCH)
        .unwrap_or_default();
    let expired = since_epoch < validity.not_before.to_unix_duration()
        || since_epoch > validity.not_after.to_unix_duration();
    let fingerprint = cert
        .to_der()
        .map(|d| super::archive::hex(&Sha256::digest(d)))
        .unwrap_or_default();
    Ok(Signer {
        subject: tbs.subject.to_string(),
        issuer: tbs.issuer.to_string(),
        self_signed: tbs.subject == tbs.issuer,
        fingerprint,
        expired,
    })
}

/// Each `SignerInfo` of a DER `SignedData` (`signed_data`, tag included), as its bytes in the
/// order sent (a decoded `SET OF` comes back sorted).
fn raw_signer_infos(signed_data: &[u8]) -> der::Result<Vec<Vec<u8>>> {
    let seq = AnyRef::from_der(signed_data)?;
    let fields = children(seq.value())?;
    let set = fields
        .iter()
        .rev()
        .find(|f| f.tag() == Tag::Set)
        .ok_or_else(|| {
            der::Error::from(der::ErrorKind::TagUnexpected {
                expected: Some(Tag::Set),
                actual: Tag::Null,
            })
        })?;
    children(set.value())?
        .into_iter()
        .map(|s| s.to_der())
        .collect()
}

/// The signed attributes of a DER `SignerInfo` as the `SET OF` the signature covers (the
/// `[0] IMPLICIT` tag replaced by `SET`, the contents byte for byte), if it has any.
fn raw_signed_attrs(signer_info: &[u8]) -> der::Result<Option<Vec<u8>>> {
    let seq = AnyRef::from_der(signer_info)?;
    let attrs_tag = Tag::ContextSpecific {
        constructed: true,
        number: TagNumber::N0,
    };
    match children(seq.value())?
        .into_iter()
        .find(|f| f.tag() == attrs_tag)
    {
        Some(f) => Ok(Some(AnyRef::new(Tag::Set, f.value())?.to_der()?)),
        None => Ok(None),
    }
}

/// The TLVs that make up `value`, in order.
fn children(value: &[u8]) -> der::Result<Vec<AnyRef<'_>>> {
    let mut reader = SliceReader::new(value)?;
    let mut out = Vec::new();
    while !reader.is_finished() {
        out.push(AnyRef::decode(&mut reader)?);
    }
    Ok(out)
}

#[cfg(test)]
#[path = "signature_tests.rs"]
mod tests;
