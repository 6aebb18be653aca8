use std::cell::RefCell;
use std::collections::BTreeMap;

use super::*;

/// The Windows Credential Manager's limit, used on every OS so the split is tested everywhere.
const WINDOWS: Option<usize> = Some(1280);

/// Entries in memory that refuse, like the Credential Manager, any value over `limit` units.
struct Map {
    limit: usize,
    map: RefCell<BTreeMap<String, String>>,
}

impl Map {
    fn new(limit: usize) -> Map {
        Map {
            limit,
            map: RefCell::default(),
        }
    }
    fn accounts(&self) -> Vec<String> {
        self.map.borrow().keys().cloned().collect()
    }
}

impl Entries for Map {
    fn read(&self, account: &str) -> Result<Option<String>, SecretError> {
        Ok(self.map.borrow().get(account).cloned())
    }
    fn write(&self, account: &str, value: &str) -> Result<(), SecretError> {
        if value.encode_utf16().count() > self.limit {
            return Err(SecretError::TooLong {
                name: account.into(),
                max: self.limit as u32,
            });
        }
        self.map.borrow_mut().insert(account.into(), value.into());
        Ok(())
    }
    fn remove(&self, account: &str) -> Result<bool, SecretError> {
        Ok(self.map.borrow_mut().remove(account).is_some())
    }
}

/// A token bundle as an OAuth sign-in stores it: access, refresh and ID tokens (JWTs with
/// realistic claims), about 6 KB of JSON.
pub fn token_bundle() -> String {
    fn b64(bytes: &[u8]) -> String {
        const A: &[u8] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_";
        bytes
            .chunks(3)
            .flat_map(|c| {
                let n = c.iter().fold(0u32, |n, b| (n << 8) | u32::from(*b)) << (8 * (3 - c.len()));
                (0..=c.len()).map(move |i| A[((n >> (18 - 6 * i)) & 63) as usize] as char)
            })
            .collect()
    }
    fn jwt(claims: &str, sig: usize) -> String {
        let sig: Vec<u8> = (0..sig).map(|i| (i * 37 % 251) as u8).collect();
        format!(
            "{}.{}.{}",
            b64(br#"{"alg":"RS256","kid":"k-2026-11","typ":"JWT"}"#),
            b64(claims.as_bytes()),
            b64(&sig)
        )
    }
    let scopes = (0..40)
        .map(|i| format!("scope.read.{i} scope.write.{i}"))
        .collect::<Vec<_>>()
        .join(" ");
    let access = jwt(
        &format!(
            r#"{{"iss":"https://auth.example.com/","sub":"user-8f14e45f-ceea-467f-a8f0-0d5b1c2a9e37","aud":["https://mcp.example.com/"],"iat":1796400000,"exp":1796403600,"scope":"{scopes}","azp":"mcp-companion","groups":["dev","ops","ünïcode-team"]}}"#
        ),
        512,
    );
    let id = jwt(
        r#"{"iss":"https://auth.example.com/","sub":"user-8f14e45f","aud":"mcp-companion","email":"person@example.com","name":"Person Example","nonce":"n-0S6_WzA2Mj","iat":1796400000,"exp":1796403600}"#,
        256,
    );
    let refresh = jwt(
        r#"{"typ":"refresh","sid":"s-7d0e3b5e","exp":1799000000}"#,
        384,
    );
    serde_json::json!({
        "access_token": access,
        "token_type": "Bearer",
        "expires_in": 3600,
        "refresh_token": refresh,
        "id_token": id,
        "scope": scopes,
    })
    .to_string()
}

#[test]
fn secret_parts_a_value_that_fits_is_stored_as_is() {
    let layout = layout("N", "short ✓", WINDOWS, "0123456789abcdef").unwrap();
    assert_eq!(layout.head, "short ✓");
    assert!(layout.parts.is_empty());
    let exact = "x".repeat(1280);
    assert_eq!(layout_parts(&exact, WINDOWS), 0);
    assert_eq!(layout_parts(&"x".repeat(1281), WINDOWS), 2);
    // No limit: even a large value is one entry.
    assert_eq!(layout_parts(&"x".repeat(100_000), None), 0);
}

fn layout_parts(value: &str, limit: Option<usize>) -> usize {
    layout("N", value, limit, "0123456789abcdef")
        .unwrap()
        .parts
        .len()
}

#[test]
fn secret_parts_a_token_bundle_splits_into_parts_that_each_fit_and_join_back() {
    let bundle = token_bundle();
    assert!(
        (5_000..8_000).contains(&bundle.len()),
        "{} bytes",
        bundle.len()
    );
    let generation = "0123456789abcdef";
    let layout = layout("N", &bundle, WINDOWS, generation).unwrap();
    assert!(layout.parts.len() >= 4, "{} parts", layout.parts.len());
    for part in &layout.parts {
        assert!(part.encode_utf16().count() <= 1280, "{}", part.len());
    }
    assert_eq!(
        layout.head,
        format!("mcp-companion-parts:1:{}:{generation}", layout.parts.len())
    );
    let stored: Vec<Option<String>> = layout.parts.into_iter().map(Some).collect();
    assert_eq!(join(generation, &stored).as_deref(), Some(bundle.as_str()));
}

#[test]
fn secret_parts_never_cut_a_character_or_a_surrogate_pair() {
    // 3-byte and 4-byte (2 UTF-16 units) characters straddle every boundary for some limit.
    let value: String = "a€𝄞".repeat(50);
    for limit in 20..40 {
        let layout = layout("N", &value, Some(limit), "g").unwrap();
        for part in &layout.parts {
            assert!(
                part.encode_utf16().count() <= limit,
                "limit {limit}: {part}"
            );
        }
        let stored: Vec<Option<String>> = layout.parts.into_iter().map(Some).collect();
        assert_eq!(
            join("g", &stored).as_deref(),
            Some(value.as_str()),
            "limit {limit}"
        );
    }
}

#[test]
fn secret_parts_a_value_that_looks_like_a_head_is_stored_in_parts() {
    let tricky = "mcp-companion-parts:1:3:0123456789abcdef";
    let layout = layout("N", tricky, None, "g").unwrap();
    assert_eq!(layout.parts, vec![format!("g:{tricky}")]);
    let map = Map::new(1280);
    set(&map, "N", tricky, None).unwrap();
    assert_eq!(get(&map, "N"), Ok(Some(tricky.to_owned())));
}

#[test]
fn secret_parts_join_refuses_a_missing_part_or_another_generation() {
    let a = Some("g1:abc".to_owned());
    assert_eq!(
        join("g1", &[a.clone(), Some("g1:def".into())]).as_deref(),
        Some("abcdef")
    );
    assert_eq!(join("g1", &[a.clone(), None]), None);
    assert_eq!(join("g1", &[a.clone(), Some("g2:def".into())]), None);
    assert_eq!(join("g1", &[a, Some("g1def".into())]), None);
}

#[test]
fn secret_parts_set_get_delete_through_entries_that_refuse_large_values() {
    let map = Map::new(1280);
    let bundle = token_bundle();
    // Without parts the store refuses it, as the Credential Manager does.
    assert!(matches!(
        map.write("N", &bundle),
        Err(SecretError::TooLong { .. })
    ));
    set(&map, "N", &bundle, WINDOWS).unwrap();
    assert_eq!(get(&map, "N"), Ok(Some(bundle.clone())));
    let count = map.accounts().len() - 1;
    assert!(count >= 4);
    // A shorter value that still needs parts removes the parts it no longer uses.
    set(&map, "N", &bundle[..2000], WINDOWS).unwrap();
    assert_eq!(map.accounts(), vec![".part1.N", ".part2.N", "N"]);
    assert_eq!(get(&map, "N"), Ok(Some(bundle[..2000].to_owned())));
    // A value that fits removes every part.
    set(&map, "N", "small", WINDOWS).unwrap();
    assert_eq!(map.accounts(), vec!["N"]);
    set(&map, "N", &bundle, WINDOWS).unwrap();
    assert_eq!(delete(&map, "N"), Ok(true));
    assert!(map.accounts().is_empty(), "{:?}", map.accounts());
    assert_eq!(delete(&map, "N"), Ok(false));
    assert_eq!(get(&map, "N"), Ok(None));
}

#[test]
fn secret_parts_a_damaged_value_is_an_error_naming_it_not_a_wrong_value() {
    let map = Map::new(1280);
    set(&map, "N", &token_bundle(), WINDOWS).unwrap();
    map.remove(".part2.N").unwrap();
    let err = get(&map, "N").unwrap_err();
    assert!(
        matches!(&err, SecretError::Keychain { name, .. } if name == "N"),
        "{err}"
    );
    // A part from another write (another generation) is not joined in either.
    set(&map, "N", &token_bundle(), WINDOWS).unwrap();
    map.write(".part1.N", "ffffffffffffffff:x").unwrap();
    assert!(get(&map, "N").is_err());
}

#[test]
fn secret_parts_too_many_parts_is_too_long() {
    let err = layout(
        "N",
        &"x".repeat(40 * (MAX_PARTS + 1)),
        Some(40),
        "0123456789abcdef",
    );
    assert!(
        matches!(err, Err(SecretError::TooLong { ref name, .. }) if name == "N"),
        "{err:?}"
    );
}

#[test]
fn secret_parts_generations_differ() {
    let a = new_generation();
    let b = new_generation();
    assert_ne!(a, b);
    assert_eq!(a.len(), 16);
    assert!(a.bytes().all(|c| c.is_ascii_hexdigit()));
}
