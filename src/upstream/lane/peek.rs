//! [`fast_id`]: the fast-lane request number a line answers, read from its `id` and the names
//! of its members: a line with a `method` is a request (or notification) from the server, never
//! an answer, whatever its id.

use serde::de::{self, Deserializer, IgnoredAny, MapAccess, Visitor};

/// The `<n>` of a line whose top-level `"id"` is the string `"fp-<n>"` and that has no
/// top-level `"method"`; `None` for anything else (another id, no id, a server request that
/// reused one of our ids, not a JSON object).
///
/// Stops reading once the id and a `result` or `error` member name are seen: servers write the
/// id first, so a large answer's `result` is not scanned here (the fast call parses it once,
/// later).
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
        let mut id = None;
        while let Some(key) = map.next_key::<Key>()? {
            match key {
                Key::Id => {
                    let value: serde_json::Value = map.next_value()?;
                    id = Some(
                        value
                            .as_str()
                            .and_then(|s| s.strip_prefix("fp-"))
                            .and_then(|n| n.parse().ok()),
                    );
                }
                // A request or notification from the server: not an answer to us.
                Key::Method => return Err(de::Error::custom("a request")),
                Key::Outcome if id.is_some() => break,
                Key::Outcome | Key::Other => {
                    map.next_value::<IgnoredAny>()?;
                }
            }
            if id == Some(None) {
                return Err(de::Error::custom("not our id"));
            }
        }
        *self.found = id.flatten();
        // Ends the walk early: the rest of the line is the fast call's to read.
        Err(de::Error::custom("id found"))
    }
}

/// A member name, remembered only as the few that matter (no allocation for the others).
enum Key {
    Id,
    Method,
    /// `result` or `error`.
    Outcome,
    Other,
}

impl<'de> de::Deserialize<'de> for Key {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Key, D::Error> {
        struct KeyVisitor;
        impl Visitor<'_> for KeyVisitor {
            type Value = Key;
            fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                f.write_str("a member name")
            }
            fn visit_str<E: de::Error>(self, s: &str) -> Result<Key, E> {
                Ok(match s {
                    "id" => Key::Id,
                    "method" => Key::Method,
                    "result" | "error" => Key::Outcome,
                    _ => Key::Other,
                })
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
        assert_eq!(fast_id(br#"{"jsonrpc":"2.0","id":"fp-6"}"#), Some(6));
        assert_eq!(
            fast_id(br#"{"jsonrpc":"2.0","id":"fp-7","method":"ping"}"#),
            None,
            "a server request reusing our id"
        );
        assert_eq!(
            fast_id(br#"{"method":"roots/list","jsonrpc":"2.0","id":"fp-7"}"#),
            None
        );
        assert_eq!(
            fast_id(br#"{"jsonrpc":"2.0","result":{},"error":{},"id":"fp-8"}"#),
            Some(8)
        );
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
