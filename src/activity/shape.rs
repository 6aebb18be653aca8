//! Arguments and results as stored: by default their **shape** — the same JSON with every
//! value replaced by its type (`"string(12)"` with its length in bytes, `"number"`,
//! `"boolean"`, `"null"`, `["array(3)", <shape of the first item>]`), object keys kept with
//! every known secret masked — and with `recordPayloads` the JSON text in full, every known
//! secret masked ([`crate::net::scrub_known`]). A shape never holds a value.

use std::cell::Cell;
use std::collections::HashSet;

use serde::de::{DeserializeSeed, Deserializer, MapAccess, SeqAccess, Visitor};

use crate::io::json::Skip;

/// Objects nest at most this deep in a shape; deeper ones become `"object"`.
const MAX_DEPTH: usize = 8;
/// At most this many keys of one object are kept in a shape.
const MAX_KEYS: usize = 64;
/// A payload kept in full is cut after this many bytes (the rest is counted, not kept).
pub const MAX_FULL_BYTES: usize = 256 * 1024;

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
    shape_of(json, Note::Nothing).unwrap_or_else(|| UNREADABLE.to_owned())
}

/// A `tools/call` result's JSON text as stored ([`render`]) and whether it says
/// `"isError": true` (a boolean, once, in a top-level object; text that is not JSON says no).
/// In a shape both come from one read of the text.
pub fn render_result(json: &str, full: bool) -> (String, bool) {
    if full {
        return (render(json, true), is_error(json));
    }
    let flag = Flag::default();
    match shape_of(json, Note::Result(&flag)) {
        Some(shape) => (shape, flag.says_error()),
        None => (UNREADABLE.to_owned(), false),
    }
}

/// What a shape says for text that is not JSON.
const UNREADABLE: &str = "\"unreadable\"";

/// The shape of the whole of `json`, noting what `note` asks; `None` when it is not JSON.
fn shape_of(json: &str, note: Note<'_>) -> Option<String> {
    let mut de = serde_json::Deserializer::from_str(json);
    let top = ShapeOf { depth: 0, note };
    top.deserialize(&mut de)
        .and_then(|shape| de.end().map(|()| shape))
        .ok()
}

/// Whether a `tools/call` result's JSON says `"isError": true`.
pub fn is_error(result: &str) -> bool {
    #[derive(serde::Deserialize)]
    struct Flag {
        #[serde(rename = "isError", default)]
        is_error: Option<bool>,
    }
    serde_json::from_str::<Flag>(result).is_ok_and(|f| f.is_error == Some(true))
}

/// A result's `isError` as read while shaping it: how often the key came, and whether its
/// last value was `true`.
#[derive(Default)]
struct Flag {
    seen: Cell<u32>,
    is_true: Cell<bool>,
}

impl Flag {
    /// As [`is_error`] reads it: one `isError` key, `true` (a repeated key is refused).
    fn says_error(&self) -> bool {
        self.seen.get() == 1 && self.is_true.get()
    }
}

/// What a [`ShapeOf`] notes besides the shape.
#[derive(Clone, Copy)]
enum Note<'f> {
    Nothing,
    /// The value is a call's result: note its top-level `isError` in the flag.
    Result(&'f Flag),
    /// The value is that `isError`: note whether it is `true`.
    IsError(&'f Flag),
}

/// The shape of the JSON value being parsed, as JSON text (module doc), written while parsing,
/// without building the value or its shape. It reads every value the way `serde_json::Value` does
/// (`deserialize_any`, so it accepts and refuses the same texts: depth limit, lone surrogates,
/// numbers out of range), and keeps objects' keys as `serde_json::Value`'s order-keeping map does: in the
/// order first seen, a repeated key's last value winning.
struct ShapeOf<'f> {
    depth: usize,
    note: Note<'f>,
}

impl<'f> ShapeOf<'f> {
    /// The seed of a value inside this one, noting nothing.
    fn inner(&self) -> ShapeOf<'f> {
        ShapeOf {
            depth: self.depth + 1,
            note: Note::Nothing,
        }
    }
}

impl<'de> DeserializeSeed<'de> for ShapeOf<'_> {
    type Value = String;

    fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<String, D::Error> {
        d.deserialize_any(self)
    }
}

impl<'de> Visitor<'de> for ShapeOf<'_> {
    type Value = String;

    fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("any JSON value")
    }

    fn visit_unit<E>(self) -> Result<String, E> {
        Ok("\"null\"".to_owned())
    }

    fn visit_bool<E>(self, v: bool) -> Result<String, E> {
        if let Note::IsError(flag) = self.note {
            flag.is_true.set(v);
        }
        Ok("\"boolean\"".to_owned())
    }

    fn visit_i64<E>(self, _: i64) -> Result<String, E> {
        Ok("\"number\"".to_owned())
    }

    fn visit_u64<E>(self, _: u64) -> Result<String, E> {
        Ok("\"number\"".to_owned())
    }

    fn visit_f64<E>(self, _: f64) -> Result<String, E> {
        Ok("\"number\"".to_owned())
    }

    fn visit_str<E>(self, s: &str) -> Result<String, E> {
        Ok(format!("\"string({})\"", s.len()))
    }

    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<String, A::Error> {
        let first = seq.next_element_seed(self.inner())?;
        let mut n = usize::from(first.is_some());
        while seq.next_element_seed(Skip)?.is_some() {
            n += 1;
        }
        Ok(match first {
            Some(first) => format!("[\"array({n})\",{first}]"),
            None => format!("[\"array({n})\"]"),
        })
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<String, A::Error> {
        if self.depth >= MAX_DEPTH {
            while map.next_entry_seed(Skip, Skip)?.is_some() {}
            return Ok("\"object\"".to_owned());
        }
        // The first MAX_KEYS distinct keys in the order first seen, each with the shape of its
        // last value; the distinct keys after those only counted. A linear search finds a
        // repeated key: objects are mostly small, and the kept ones are at most MAX_KEYS.
        let mut kept: Vec<(String, String)> = Vec::new();
        let mut later: HashSet<String> = HashSet::new();
        while let Some(key) = map.next_key::<String>()? {
            let mut seed = self.inner();
            if let Note::Result(flag) = self.note
                && key == "isError"
            {
                flag.seen.set(flag.seen.get() + 1);
                flag.is_true.set(false);
                seed.note = Note::IsError(flag);
            }
            match kept.iter().position(|(k, _)| *k == key) {
                Some(i) => kept[i].1 = map.next_value_seed(seed)?,
                None if kept.len() < MAX_KEYS => {
                    let value = map.next_value_seed(seed)?;
                    kept.push((key, value));
                }
                None => {
                    if let Note::IsError(_) = seed.note {
                        map.next_value_seed(seed)?;
                    } else {
                        map.next_value_seed(Skip)?;
                    }
                    later.insert(key);
                }
            }
        }
        // Keys as stored, masked: two that mask alike are one, at the first one's place.
        let mut out: Vec<(String, String)> = Vec::with_capacity(kept.len() + 1);
        let mut put = |key: String, value: String| match out.iter().position(|(k, _)| *k == key) {
            Some(i) => out[i].1 = value,
            None => out.push((key, value)),
        };
        for (k, v) in kept {
            put(crate::net::scrub_known(&k), v);
        }
        if !later.is_empty() {
            put("…".to_owned(), format!("\"{} more keys\"", later.len()));
        }
        let mut text = String::with_capacity(
            2 + out
                .iter()
                .map(|(k, v)| k.len() + v.len() + 4)
                .sum::<usize>(),
        );
        text.push('{');
        for (i, (k, v)) in out.iter().enumerate() {
            if i > 0 {
                text.push(',');
            }
            push_json_string(&mut text, k);
            text.push(':');
            text.push_str(v);
        }
        text.push('}');
        Ok(text)
    }
}

/// Appends `s` to `text` as a JSON string, escaped as `serde_json` escapes it.
fn push_json_string(text: &mut String, s: &str) {
    // serde_json escapes `"`, `\\` and control characters only.
    if s.bytes().any(|b| b == b'"' || b == b'\\' || b < 0x20) {
        text.push_str(&serde_json::to_string(s).unwrap_or_default());
    } else {
        text.push('"');
        text.push_str(s);
        text.push('"');
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::{Map, Value, json};

    /// The shape of `value` (module doc), built from the parsed value: the reference that
    /// [`render`], which writes it while parsing, is compared with.
    fn shape(value: &Value) -> Value {
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

    /// What [`render`] stores as a shape, parsed.
    fn rendered(value: &Value) -> Value {
        serde_json::from_str(&render(&value.to_string(), false)).expect("a shape is JSON")
    }

    #[test]
    fn a_shape_keeps_keys_and_types_and_never_a_value() {
        let value = json!({"city": "Paris", "n": 3, "ok": true, "none": null,
                           "tags": ["alpha", "b"], "deep": {"token": "sk-zzz"}, "empty": []});
        let s = rendered(&value);
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
        let text = rendered(&deep).to_string();
        assert!(text.contains("\"object\""), "{text}");
        let wide: Map<String, Value> = (0..100).map(|i| (format!("k{i}"), json!(i))).collect();
        let s = rendered(&Value::Object(wide));
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
    fn a_results_is_error_read_while_shaping_is_the_one_read_alone() {
        let flag_past_the_kept_keys = format!(
            "{{{},\"isError\":true}}",
            (0..70)
                .map(|i| format!("\"k{i}\":1"))
                .collect::<Vec<_>>()
                .join(",")
        );
        let texts = [
            r#"{"content":[{"type":"text","text":"no"}],"isError":true}"#,
            r#"{"isError":false}"#,
            r#"{"isError":"true"}"#,
            r#"{"isError":null}"#,
            r#"{"isError":true,"isError":true}"#,
            r#"{"isError":false,"isError":true}"#,
            r#"{"a":{"isError":true}}"#,
            r#"[{"isError":true}]"#,
            r#"{"isError":true} x"#,
            &flag_past_the_kept_keys,
            "true",
            "",
        ];
        for text in texts {
            for full in [false, true] {
                assert_eq!(
                    render_result(text, full),
                    (render(text, full), is_error(text)),
                    "{text} (full: {full})"
                );
            }
        }
        assert!(render_result(&flag_past_the_kept_keys, false).1);
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

    #[test]
    fn the_shape_written_while_parsing_is_the_shape_of_the_parsed_value() {
        let secret = "key-secret-5521";
        crate::net::remember_credential(secret);
        let many: String = (0..70)
            .map(|i| format!("\"k{}\":{i}", 69 - i))
            .collect::<Vec<_>>()
            .join(",");
        let repeated_late: String = (0..70)
            .map(|i| format!("\"k{i}\":{i}"))
            .chain(["\"k3\":[1,2]".to_owned(), "\"k69\":\"x\"".to_owned()])
            .collect::<Vec<_>>()
            .join(",");
        let mut deep_array = "1".to_owned();
        for _ in 0..12 {
            deep_array = format!("[{deep_array},{{\"a\":{deep_array}}}]");
        }
        let texts = [
            r#"{"content":[{"type":"text","text":"Echo: hi"}],"isError":false}"#.to_owned(),
            r#"{"b":1,"a":2,"b":"again"}"#.to_owned(),
            r#"{"…":1,"z":[],"e\u0301":"\ud83d\ude00 \n\"q\""}"#.to_owned(),
            format!(r#"{{"{secret}":1,"x-{secret}":{{"{secret}":true}},"<redacted>":null}}"#),
            format!("{{{many}}}"),
            format!("{{{repeated_late}}}"),
            deep_array,
            "[]".to_owned(),
            "  -1.5e3 ".to_owned(),
            "\"text\"".to_owned(),
            "null".to_owned(),
            r#"[{"a":[[{"b":{}}]]},2,"x"]"#.to_owned(),
            // Refused alike: a lone surrogate (also when skipped), out of range, trailing text,
            // too deep.
            r#"{"a":"\ud800"}"#.to_owned(),
            r#"[1,"\ud800"]"#.to_owned(),
            r#"[1,1e400]"#.to_owned(),
            r#"{"a":1} x"#.to_owned(),
            format!("{}{}", "[".repeat(200), "]".repeat(200)),
            String::new(),
        ];
        for text in texts {
            let expected = match serde_json::from_str::<Value>(&text) {
                Ok(value) => shape(&value).to_string(),
                Err(_) => "\"unreadable\"".to_owned(),
            };
            assert_eq!(render(&text, false), expected, "{text}");
        }
    }
}
