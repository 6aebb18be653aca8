//! Arguments and results as stored: by default their **shape** — the same JSON with every
//! value replaced by its type (`"string(12)"` with its length in bytes, `"number"`,
//! `"boolean"`, `"null"`, `["array(3)", <shape of the first item>]`), object keys kept with
//! every known secret masked — and with `recordPayloads` the JSON text in full, every known
//! secret masked ([`crate::net::scrub_known`]). A shape never holds a value.

use serde_json::{Map, Value};

/// Objects nest at most this deep in a shape; deeper ones become `"object"`.
const MAX_DEPTH: usize = 8;
/// At most this many keys of one object are kept in a shape.
const MAX_KEYS: usize = 64;
/// A payload kept in full is cut after this many bytes (the rest is counted, not kept).
pub const MAX_FULL_BYTES: usize = 256 * 1024;

/// The shape of `value` (module doc).
pub fn shape(value: &Value) -> Value {
    shape_at(value, 0)
}

fn shape_at(value: &Value, depth: usize) -> Value {
    match value {
        Value::Null => Value::from("null"),
        Value::Bool(_) => Value::from("boolean"),
        Value::Number(_) => Value::from("number"),
        Value::String(s) => Value::from(format!("string({})", s.len())),
        Value::Array(items) => {
            let mut out = vec![Value::from(format!("array({})", items.len()))];
            if let Some(first) = items.first() {
                out.push(shape_at(first, depth + 1));
            }
            Value::Array(out)
        }
        Value::Object(_) if depth >= MAX_DEPTH => Value::from("object"),
        Value::Object(map) => {
            let mut out = Map::new();
            for (k, v) in map.iter().take(MAX_KEYS) {
                out.insert(crate::net::scrub_known(k), shape_at(v, depth + 1));
            }
            if map.len() > MAX_KEYS {
                out.insert(
                    "…".to_owned(),
                    Value::from(format!("{} more keys", map.len() - MAX_KEYS)),
                );
            }
            Value::Object(out)
        }
    }
}

/// `json` (a JSON text) as stored: its shape, or in full (masked, cut at
/// [`MAX_FULL_BYTES`]) when `full`. Text that is not JSON is stored as `"unreadable"` in a
/// shape.
pub fn render(json: &str, full: bool) -> String {
    if full {
        let masked = crate::net::scrub_known(json);
        if masked.len() <= MAX_FULL_BYTES {
            return masked;
        }
        let mut cut = MAX_FULL_BYTES;
        while !masked.is_char_boundary(cut) {
            cut -= 1;
        }
        return format!("{}…(cut: {} bytes in all)", &masked[..cut], masked.len());
    }
    match serde_json::from_str::<Value>(json) {
        Ok(value) => shape(&value).to_string(),
        Err(_) => "\"unreadable\"".to_owned(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn a_shape_keeps_keys_and_types_and_never_a_value() {
        let value = json!({"city": "Paris", "n": 3, "ok": true, "none": null,
                           "tags": ["alpha", "b"], "deep": {"token": "sk-zzz"}, "empty": []});
        let s = shape(&value);
        assert_eq!(
            s,
            json!({"city": "string(5)", "n": "number", "ok": "boolean", "none": "null",
                   "tags": ["array(2)", "string(5)"], "deep": {"token": "string(6)"},
                   "empty": ["array(0)"]})
        );
        let text = s.to_string();
        for value in ["Paris", "alpha", "sk-zzz"] {
            assert!(!text.contains(value), "{text}");
        }
    }

    #[test]
    fn deep_and_wide_objects_are_cut() {
        let mut deep = json!("x");
        for _ in 0..20 {
            deep = json!({ "a": deep });
        }
        let text = shape(&deep).to_string();
        assert!(text.contains("\"object\""), "{text}");
        let wide: Map<String, Value> = (0..100).map(|i| (format!("k{i}"), json!(i))).collect();
        let s = shape(&Value::Object(wide));
        assert_eq!(s.as_object().map(|o| o.len()), Some(MAX_KEYS + 1));
        assert_eq!(s["…"], json!("36 more keys"));
    }

    #[test]
    fn full_payloads_are_kept_but_cut_when_huge() {
        assert_eq!(render(r#"{"a":"b"}"#, true), r#"{"a":"b"}"#);
        let huge = format!("\"{}\"", "é".repeat(MAX_FULL_BYTES));
        let kept = render(&huge, true);
        assert!(kept.len() < MAX_FULL_BYTES + 64);
        assert!(kept.ends_with(&format!("(cut: {} bytes in all)", huge.len())));
        assert_eq!(render("not json", false), "\"unreadable\"");
    }

    #[test]
    fn a_full_payload_masks_a_secret_the_json_text_escapes() {
        let secret = "pw\"with\\quote-831";
        crate::net::remember_credential(secret);
        let json = json!({ "message": format!("it is {secret}"), secret: true }).to_string();
        let stored = render(&json, true);
        assert_eq!(stored.matches("<redacted>").count(), 2, "{stored}");
        assert!(!stored.contains("quote-831"), "{stored}");
    }
}
