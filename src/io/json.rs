//! Reading JSON text without keeping it: [`Skip`] reads one value and keeps nothing, and
//! [`is_object`] says whether a text is a JSON object. Both accept and refuse exactly the texts
//! that parsing into `serde_json::Value` (or a `serde_json::Map`) accepts and refuses — the
//! same reads (`deserialize_any`), so the same depth limit, the same refusal of lone
//! surrogates and of numbers out of range — without allocating a value.

use serde::de::{DeserializeSeed, Deserializer, MapAccess, SeqAccess, Visitor};

/// Whether `text` is one JSON object (surrounding whitespace allowed) that
/// `serde_json::from_str::<serde_json::Map<String, Value>>` reads.
pub fn is_object(text: &str) -> bool {
    let mut de = serde_json::Deserializer::from_str(text);
    de.deserialize_map(Object).and_then(|()| de.end()).is_ok()
}

/// Reads a JSON object's entries, keeping nothing.
struct Object;

impl<'de> Visitor<'de> for Object {
    type Value = ();

    fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("a JSON object")
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<(), A::Error> {
        while map.next_entry_seed(Skip, Skip)?.is_some() {}
        Ok(())
    }
}

/// Reads one JSON value and keeps nothing of it, refusing what `serde_json::Value` refuses.
pub struct Skip;

impl<'de> DeserializeSeed<'de> for Skip {
    type Value = ();

    fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<(), D::Error> {
        d.deserialize_any(self)
    }
}

impl<'de> Visitor<'de> for Skip {
    type Value = ();

    fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("any JSON value")
    }

    fn visit_unit<E>(self) -> Result<(), E> {
        Ok(())
    }

    fn visit_bool<E>(self, _: bool) -> Result<(), E> {
        Ok(())
    }

    fn visit_i64<E>(self, _: i64) -> Result<(), E> {
        Ok(())
    }

    fn visit_u64<E>(self, _: u64) -> Result<(), E> {
        Ok(())
    }

    fn visit_f64<E>(self, _: f64) -> Result<(), E> {
        Ok(())
    }

    fn visit_str<E>(self, _: &str) -> Result<(), E> {
        Ok(())
    }

    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<(), A::Error> {
        while seq.next_element_seed(Skip)?.is_some() {}
        Ok(())
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<(), A::Error> {
        while map.next_entry_seed(Skip, Skip)?.is_some() {}
        Ok(())
    }
}

/// `value` with every object's keys in sorted order (serde_json here keeps insertion order):
/// the same JSON always prints the same text, for fingerprints and digests.
pub fn canonical(value: &serde_json::Value) -> serde_json::Value {
    use serde_json::Value;
    match value {
        Value::Object(map) => {
            let mut keys: Vec<&String> = map.keys().collect();
            keys.sort();
            Value::Object(
                keys.into_iter()
                    .map(|k| (k.clone(), canonical(&map[k])))
                    .collect(),
            )
        }
        Value::Array(items) => Value::Array(items.iter().map(canonical).collect()),
        other => other.clone(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_object_is_what_a_json_map_reads() {
        let deep = format!("{{\"a\":{}{}}}", "[".repeat(200), "]".repeat(200));
        let texts = [
            r#"{"message":"hi"}"#,
            r#" { "a" : [1, {"b": null}], "a": true } "#,
            "{}",
            r#"{"e\u0301":"\ud83d\ude00"}"#,
            "null",
            "[]",
            "\"{}\"",
            "3",
            "",
            r#"{"a":"\ud800"}"#,
            r#"{"\udc00":1}"#,
            r#"{"a":[1e400]}"#,
            r#"{"a":1} {}"#,
            r#"{"a":1,}"#,
            r#"{"a":01}"#,
            deep.as_str(),
        ];
        for text in texts {
            let reads = serde_json::from_str::<serde_json::Map<String, serde_json::Value>>(text);
            assert_eq!(is_object(text), reads.is_ok(), "{text}");
        }
    }
}
