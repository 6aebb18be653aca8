//! The `requestState` the endpoint gives an agent of the 2026-07-28 era for a parked call
//! (MCP 2026-07-28, "Multi Round-Trip Requests": the client echoes it back unchanged, so the
//! server must treat what comes back as untrusted and verify it).
//!
//! Wire form (ASCII): `mcs1.<payload>.<tag>`, both parts base64url without padding.
//!
//! ```text
//! payload = session u64 | park u64 | round u32 | expires u64 (Unix ms) | call [u8; 32]   (big-endian)
//! tag     = HMAC-SHA256(key, "mcp-companion/request-state/v1" | payload)
//! call    = SHA-256(method | 0x00 | len(target) u64 | target | arguments as JSON with object keys sorted)
//! target  = the wrapped tool name, the served prompt name, or the URI read
//! ```
//!
//! The key is 32 bytes drawn from the operating system's random source once per process and
//! never leaves memory, so a state is worth nothing to another companion or after a restart
//! (the call it named is gone then anyway). The payload is signed, not encrypted: it holds
//! nothing secret. [`Sealer::open`] compares tags in constant time (`hmac`'s `verify_slice`).

use std::sync::OnceLock;

use base64::Engine;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use hmac::{Hmac, Mac};
use rmcp::model::JsonObject;
use serde_json::Value;
use sha2::{Digest, Sha256};

const PREFIX: &str = "mcs1";
const DOMAIN: &[u8] = b"mcp-companion/request-state/v1";
const PAYLOAD_LEN: usize = 8 + 8 + 4 + 8 + 32;

/// What a state names: whose parked call, which round, until when, for which call.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Claim {
    /// The agent session the state was issued to ([`super::Parks`]' id).
    pub session: u64,
    /// The parked call, within that session.
    pub park: u64,
    /// How many `InputRequiredResult`s the call had before this one.
    pub round: u32,
    /// When the state stops being accepted, in Unix milliseconds.
    pub expires_ms: u64,
    /// [`request_digest`] of the request it was issued for.
    pub call: [u8; 32],
}

/// Why a state was refused. Each text says why, for the agent's -32602.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum StateError {
    /// Not of the wire form above.
    #[error("it is not a requestState this companion issued (malformed)")]
    Malformed,
    /// The tag does not match: changed, made up, or from another companion process.
    #[error("its signature does not verify: it was altered, or not issued by this companion")]
    Forged,
    /// Issued to another agent session.
    #[error("it was issued to another agent session")]
    OtherSession,
    /// Issued for another request: another method, tool, prompt or resource, or other
    /// arguments.
    #[error(
        "it was issued for another request (another tool, prompt or resource, or other arguments)"
    )]
    OtherCall,
    /// Past its expiry.
    #[error("it expired {} ms ago; call the tool again without it", .ago_ms)]
    Expired {
        /// How long ago, in milliseconds.
        ago_ms: u64,
    },
}

/// What the opening side expects of a state.
#[derive(Clone, Copy, Debug)]
pub struct Expect {
    /// The session the retry arrived on.
    pub session: u64,
    /// [`request_digest`] of the retried request.
    pub call: [u8; 32],
    /// Now, in Unix milliseconds.
    pub now_ms: u64,
}

/// Signs and checks states with this process's key.
pub struct Sealer {
    key: [u8; 32],
}

impl std::fmt::Debug for Sealer {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Sealer { key: <hidden> }")
    }
}

impl Sealer {
    /// The process's sealer; `None` (logged once) when the operating system gave no random
    /// key, and then no call is parked.
    pub fn process() -> Option<&'static Sealer> {
        static SEALER: OnceLock<Option<Sealer>> = OnceLock::new();
        SEALER
            .get_or_init(|| {
                let mut key = [0u8; 32];
                match getrandom::fill(&mut key) {
                    Ok(()) => Some(Sealer { key }),
                    Err(e) => {
                        tracing::warn!(error = %e, "no random key for signing requestState: servers' requests cannot reach agents of the 2026-07-28 era");
                        None
                    }
                }
            })
            .as_ref()
    }

    fn mac(&self, payload: &[u8]) -> Hmac<Sha256> {
        // HMAC takes a key of any length; 32 bytes never fails.
        let mut mac = <Hmac<Sha256> as Mac>::new_from_slice(&self.key)
            .unwrap_or_else(|_| unreachable!("HMAC accepts any key length"));
        mac.update(DOMAIN);
        mac.update(payload);
        mac
    }

    /// `claim` as a signed state.
    pub fn seal(&self, claim: &Claim) -> String {
        let mut payload = Vec::with_capacity(PAYLOAD_LEN);
        payload.extend_from_slice(&claim.session.to_be_bytes());
        payload.extend_from_slice(&claim.park.to_be_bytes());
        payload.extend_from_slice(&claim.round.to_be_bytes());
        payload.extend_from_slice(&claim.expires_ms.to_be_bytes());
        payload.extend_from_slice(&claim.call);
        let tag = self.mac(&payload).finalize().into_bytes();
        format!(
            "{PREFIX}.{}.{}",
            URL_SAFE_NO_PAD.encode(&payload),
            URL_SAFE_NO_PAD.encode(tag)
        )
    }

    /// The claim of `state`, once its signature verifies and it fits `expect`.
    ///
    /// # Errors
    /// [`StateError`], checked in this order: form, signature, session, call, expiry.
    pub fn open(&self, state: &str, expect: Expect) -> Result<Claim, StateError> {
        let mut parts = state.split('.');
        let (Some(PREFIX), Some(payload), Some(tag), None) =
            (parts.next(), parts.next(), parts.next(), parts.next())
        else {
            return Err(StateError::Malformed);
        };
        let payload = URL_SAFE_NO_PAD
            .decode(payload)
            .map_err(|_| StateError::Malformed)?;
        let tag = URL_SAFE_NO_PAD
            .decode(tag)
            .map_err(|_| StateError::Malformed)?;
        if payload.len() != PAYLOAD_LEN {
            return Err(StateError::Malformed);
        }
        self.mac(&payload)
            .verify_slice(&tag)
            .map_err(|_| StateError::Forged)?;
        let claim = decode(&payload);
        if claim.session != expect.session {
            return Err(StateError::OtherSession);
        }
        if claim.call != expect.call {
            return Err(StateError::OtherCall);
        }
        if expect.now_ms > claim.expires_ms {
            return Err(StateError::Expired {
                ago_ms: expect.now_ms - claim.expires_ms,
            });
        }
        Ok(claim)
    }
}

/// The fields of a payload of [`PAYLOAD_LEN`] bytes.
fn decode(payload: &[u8]) -> Claim {
    let u64_at = |at: usize| {
        let mut b = [0u8; 8];
        b.copy_from_slice(&payload[at..at + 8]);
        u64::from_be_bytes(b)
    };
    let mut round = [0u8; 4];
    round.copy_from_slice(&payload[16..20]);
    let mut call = [0u8; 32];
    call.copy_from_slice(&payload[28..60]);
    Claim {
        session: u64_at(0),
        park: u64_at(8),
        round: u32::from_be_bytes(round),
        expires_ms: u64_at(20),
        call,
    }
}

/// SHA-256 of the request's `method` (`tools/call`, `prompts/get`, `resources/read`), its
/// `target` (the wrapped tool name, the served prompt name, the URI as the agent gave it) and
/// its `arguments` (keys sorted at every depth, so the same arguments in another key order are
/// the same request).
pub fn request_digest(method: &str, target: &str, arguments: Option<&JsonObject>) -> [u8; 32] {
    let mut hash = Sha256::new();
    hash.update(method.as_bytes());
    hash.update([0]);
    hash.update(
        u64::try_from(target.len())
            .unwrap_or(u64::MAX)
            .to_be_bytes(),
    );
    hash.update(target.as_bytes());
    if let Some(arguments) = arguments {
        let sorted = crate::io::json::canonical(&Value::Object(arguments.clone()));
        hash.update(sorted.to_string().as_bytes());
    }
    hash.finalize().into()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sealer(byte: u8) -> Sealer {
        Sealer { key: [byte; 32] }
    }

    fn claim() -> Claim {
        Claim {
            session: 7,
            park: 3,
            round: 1,
            expires_ms: 10_000,
            call: request_digest("tools/call", "mcp_x_ask", None),
        }
    }

    fn expect() -> Expect {
        Expect {
            session: 7,
            call: request_digest("tools/call", "mcp_x_ask", None),
            now_ms: 9_000,
        }
    }

    #[test]
    fn a_sealed_state_opens_to_its_claim() {
        let s = sealer(1);
        assert_eq!(s.open(&s.seal(&claim()), expect()), Ok(claim()));
    }

    #[test]
    fn every_way_of_getting_a_state_wrong_is_refused_with_its_reason() {
        let s = sealer(1);
        let good = s.seal(&claim());
        let (_, tail) = good.split_at(PREFIX.len() + 1);
        let (payload, tag) = tail.split_once('.').expect("two parts");
        // One bit of the payload changed (the park id's last byte), signature kept.
        let mut bytes = URL_SAFE_NO_PAD.decode(payload).expect("b64");
        bytes[15] ^= 1;
        let flipped = format!("{PREFIX}.{}.{tag}", URL_SAFE_NO_PAD.encode(&bytes));
        let mut later = expect();
        later.now_ms = 12_500;
        let mut other_session = expect();
        other_session.session = 8;
        let mut other_call = expect();
        let mut args = JsonObject::new();
        args.insert("a".into(), Value::from(1));
        other_call.call = request_digest("tools/call", "mcp_x_ask", Some(&args));
        let cases: Vec<(String, Expect, StateError)> = vec![
            ("".into(), expect(), StateError::Malformed),
            ("demo-confirm-1".into(), expect(), StateError::Malformed),
            (format!("{good}.x"), expect(), StateError::Malformed),
            (
                format!("{PREFIX}.{payload}.!!"),
                expect(),
                StateError::Malformed,
            ),
            (flipped, expect(), StateError::Forged),
            (sealer(2).seal(&claim()), expect(), StateError::Forged),
            (good.clone(), other_session, StateError::OtherSession),
            (good.clone(), other_call, StateError::OtherCall),
            (good.clone(), later, StateError::Expired { ago_ms: 2_500 }),
        ];
        for (state, expect, error) in cases {
            assert_eq!(s.open(&state, expect), Err(error.clone()), "{state}");
        }
    }

    #[test]
    fn the_request_digest_ignores_key_order_but_not_values_names_or_kinds() {
        let a: JsonObject =
            serde_json::from_str(r#"{"x":1,"y":{"p":[1,{"b":2,"a":1}],"q":2}}"#).expect("a");
        let b: JsonObject =
            serde_json::from_str(r#"{"y":{"q":2,"p":[1,{"a":1,"b":2}]},"x":1}"#).expect("b");
        let c: JsonObject =
            serde_json::from_str(r#"{"x":2,"y":{"p":[1,{"b":2,"a":1}],"q":2}}"#).expect("c");
        let digest = |method, target, args| request_digest(method, target, Some(args));
        assert_eq!(digest("tools/call", "t", &a), digest("tools/call", "t", &b));
        assert_ne!(digest("tools/call", "t", &a), digest("tools/call", "t", &c));
        assert_ne!(digest("tools/call", "t", &a), digest("tools/call", "u", &a));
        // The same name asked as a prompt is another request.
        assert_ne!(
            digest("tools/call", "t", &a),
            digest("prompts/get", "t", &a)
        );
    }
}
