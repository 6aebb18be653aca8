//! Keys that occur more than once in one JSON object of a config file. A JSON object keeps only
//! the last of them, silently (serde_json, like most readers), so a pasted second `mcpServers`
//! block or a doubled `command` would hide the first without a word; the config's warnings name
//! each one instead.

use std::collections::HashSet;
use std::fmt;

use serde::de::{DeserializeSeed, Deserializer, MapAccess, SeqAccess, Visitor};

/// One repeated key: the object keys leading to its object (empty at the top level), and the key.
pub(crate) type Duplicate = (Vec<String>, String);

/// Every key repeated within one object of `text`, in the order met; empty when `text` is not
/// JSON (the caller reports that).
pub(crate) fn duplicate_keys(text: &str) -> Vec<Duplicate> {
    let mut found = Vec::new();
    let mut de = serde_json::Deserializer::from_str(text);
    let walk = Walk {
        path: &mut Vec::new(),
        found: &mut found,
    };
    match walk.deserialize(&mut de) {
        Ok(()) => found,
        Err(_) => Vec::new(),
    }
}

/// The warning for one repeated key, naming the server when it is inside one.
pub(crate) fn warning((path, key): &Duplicate) -> String {
    match path.as_slice() {
        [] => format!(
            "key \"{key}\" appears more than once at the top level; only the last one is used"
        ),
        [top] if top == "mcpServers" => format!(
            "server \"{key}\" appears more than once in mcpServers; only the last entry is used"
        ),
        [top, server, rest @ ..] if top == "mcpServers" => {
            let inside = if rest.is_empty() {
                String::new()
            } else {
                format!(" in \"{}\"", rest.join("."))
            };
            format!(
                "server \"{server}\": key \"{key}\" appears more than once{inside}; only the last one is used"
            )
        }
        _ => format!(
            "key \"{key}\" appears more than once in \"{}\"; only the last one is used",
            path.join(".")
        ),
    }
}

struct Walk<'a> {
    path: &'a mut Vec<String>,
    found: &'a mut Vec<Duplicate>,
}

impl<'de> DeserializeSeed<'de> for Walk<'_> {
    type Value = ();

    fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<(), D::Error> {
        d.deserialize_any(self)
    }
}

impl<'de> Visitor<'de> for Walk<'_> {
    type Value = ();

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("any JSON value")
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<(), A::Error> {
        let mut seen = HashSet::new();
        while let Some(key) = map.next_key::<String>()? {
            if !seen.insert(key.clone()) {
                self.found.push((self.path.clone(), key.clone()));
            }
            self.path.push(key);
            map.next_value_seed(Walk {
                path: self.path,
                found: self.found,
            })?;
            self.path.pop();
        }
        Ok(())
    }

    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<(), A::Error> {
        let mut i = 0usize;
        loop {
            self.path.push(format!("[{i}]"));
            let more = seq.next_element_seed(Walk {
                path: self.path,
                found: self.found,
            })?;
            self.path.pop();
            if more.is_none() {
                return Ok(());
            }
            i += 1;
        }
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
    fn visit_unit<E>(self) -> Result<(), E> {
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn repeated_keys_are_found_at_every_depth_and_worded_by_where_they_are() {
        let text = r#"{
            "mcpServers": {"a": {"command": "x", "command": "y", "env": {"K": "1", "K": "2"}}, "a": {}},
            "mcpServers": {"late": {"command": "z"}},
            "registries": [{"url": "u", "url": "v"}]
        }"#;
        let found: Vec<String> = duplicate_keys(text).iter().map(warning).collect();
        assert_eq!(
            found,
            [
                "server \"a\": key \"command\" appears more than once; only the last one is used",
                "server \"a\": key \"K\" appears more than once in \"env\"; only the last one is used",
                "server \"a\" appears more than once in mcpServers; only the last entry is used",
                "key \"mcpServers\" appears more than once at the top level; only the last one is used",
                "key \"url\" appears more than once in \"registries.[0]\"; only the last one is used",
            ]
        );
        assert!(duplicate_keys(r#"{"a": 1, "b": {"a": 2}}"#).is_empty());
        assert!(duplicate_keys("{").is_empty());
    }
}
