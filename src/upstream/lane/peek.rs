//! [`fast_id`]: the fast-lane request number a line answers, read from its `id` alone.

use serde::de::{self, Deserializer, IgnoredAny, MapAccess, Visitor};

/// The `<n>` of a line whose top-level `"id"` is the string `"fp-<n>"`; `None` for anything
/// else (another id, no id, not a JSON object).
///
/// Stops reading at the `id` member: servers write it before `result`, so a large answer is not
/// scanned here (the fast call parses it once, later).
pub fn fast_id(line: &[u8]) -> Option<u64> {
    let mut found = None;
    let mut de = serde_json::Deserializer::from_slice(line);
    // Finding the id ends the walk with a made-up error; any other error means "not ours".
    let _ = de.deserialize_map(IdSeeker { found: &mut found });
    found
}

struct IdSeeker<'a> {
    found: &'a mut Option<u64>,
}

impl<'de> Visitor<'de> for IdSeeker<'_> {
    type Value = ();

    fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("a JSON-RPC message")
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<(), A::Error> {
        while let Some(key) = map.next_key::<Key>()? {
            if key.0 {
                let id: serde_json::Value = map.next_value()?;
                *self.found = id
                    .as_str()
                    .and_then(|s| s.strip_prefix("fp-"))
                    .and_then(|n| n.parse().ok());
                return Err(de::Error::custom("id found"));
            }
            map.next_value::<IgnoredAny>()?;
        }
        Ok(())
    }
}

/// A member name, remembered only as "is it `id`" (no allocation for the others).
struct Key(bool);

impl<'de> de::Deserialize<'de> for Key {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Key, D::Error> {
        struct KeyVisitor;
        impl Visitor<'_> for KeyVisitor {
            type Value = Key;
            fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                f.write_str("a member name")
            }
            fn visit_str<E: de::Error>(self, s: &str) -> Result<Key, E> {
                Ok(Key(s == "id"))
            }
        }
        d.deserialize_str(KeyVisitor)
    }
}

#[cfg(test)]
mod tests {
    use super::fast_id;

    #[test]
    fn only_a_top_level_fp_string_id_counts() {
        assert_eq!(
            fast_id(br#"{"jsonrpc":"2.0","id":"fp-12","result":{}}"#),
            Some(12)
        );
        assert_eq!(fast_id(br#"{"result":{"id":"fp-1"},"id":"fp-3"}"#), Some(3));
        assert_eq!(fast_id(br#"{"jsonrpc":"2.0","id":12,"result":{}}"#), None);
        assert_eq!(fast_id(br#"{"jsonrpc":"2.0","id":"12","result":{}}"#), None);
        assert_eq!(fast_id(br#"{"jsonrpc":"2.0","id":"fp-x"}"#), None);
        assert_eq!(fast_id(br#"{"method":"notifications/progress"}"#), None);
        assert_eq!(fast_id(b"not json"), None);
        assert_eq!(fast_id(br#"["id","fp-1"]"#), None);
        assert_eq!(
            fast_id(br#"{"i\u0064":"fp-4"}"#),
            Some(4),
            "escaped member names"
        );
    }

    #[test]
    fn the_walk_stops_at_the_id() {
        // Broken JSON after the id is the fast call's problem, not the peek's.
        assert_eq!(fast_id(br#"{"id":"fp-5","result":{"#), Some(5));
    }
}
