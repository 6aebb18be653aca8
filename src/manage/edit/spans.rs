//! Where each object member sits in a JSON text: byte offsets of keys and values, so an edit
//! can replace exactly one value and leave every other byte alone.
//!
//! The scanner trusts its input to be valid JSON (callers parse it with `serde_json` first) and
//! only records positions; it never decides what is valid.

/// An object in the text: its braces and members, in text order.
#[derive(Debug)]
pub(super) struct Obj {
    /// Offset of `{`.
    pub open: usize,
    /// Offset of the matching `}`.
    pub close: usize,
    /// Members in text order. With duplicate keys the last one wins, as in `serde_json`.
    pub members: Vec<Member>,
}

/// One `"key": value` member.
#[derive(Debug)]
pub(super) struct Member {
    /// The key, unescaped.
    pub key: String,
    /// Offset of the key's opening quote.
    pub key_start: usize,
    /// Offsets of the value: `value_start..value_end`.
    pub value_start: usize,
    /// End of the value (exclusive).
    pub value_end: usize,
    /// The value's own members when it is an object.
    pub object: Option<Obj>,
}

/// Scans the top-level value of `text`; `None` unless it is an object.
pub(super) fn scan_top(text: &str) -> Option<Obj> {
    let b = text.as_bytes();
    let start = skip_ws(b, 0);
    if b.get(start) != Some(&b'{') {
        return None;
    }
    Some(scan_object(text, start).0)
}

fn skip_ws(b: &[u8], mut i: usize) -> usize {
    while i < b.len() && matches!(b[i], b' ' | b'\t' | b'\n' | b'\r') {
        i += 1;
    }
    i
}

/// Scans the object whose `{` is at `open`; returns it and the offset after `}`.
fn scan_object(text: &str, open: usize) -> (Obj, usize) {
    let b = text.as_bytes();
    let mut members = Vec::new();
    let mut i = skip_ws(b, open + 1);
    while i < b.len() && b[i] != b'}' {
        if b[i] == b',' {
            i = skip_ws(b, i + 1);
            continue;
        }
        let key_start = i;
        let key_end = skip_string(b, i);
        let key = serde_json::from_str::<String>(&text[key_start..key_end]).unwrap_or_default();
        i = skip_ws(b, key_end);
        // The colon.
        i = skip_ws(b, i + 1);
        let value_start = i;
        let (object, value_end) = if b.get(i) == Some(&b'{') {
            let (obj, end) = scan_object(text, i);
            (Some(obj), end)
        } else {
            (None, skip_value(b, i))
        };
        members.push(Member {
            key,
            key_start,
            value_start,
            value_end,
            object,
        });
        i = skip_ws(b, value_end);
    }
    let close = i.min(b.len().saturating_sub(1));
    (
        Obj {
            open,
            close,
            members,
        },
        i + 1,
    )
}

/// The offset after the string starting at `i` (which is `"`).
fn skip_string(b: &[u8], mut i: usize) -> usize {
    i += 1;
    while i < b.len() {
        match b[i] {
            b'\\' => i += 2,
            b'"' => return i + 1,
            _ => i += 1,
        }
    }
    i
}

/// The offset after the value starting at `i`.
fn skip_value(b: &[u8], i: usize) -> usize {
    match b.get(i) {
        Some(b'"') => skip_string(b, i),
        Some(b'{' | b'[') => {
            let mut depth = 0usize;
            let mut j = i;
            while j < b.len() {
                match b[j] {
                    b'"' => {
                        j = skip_string(b, j);
                        continue;
                    }
                    b'{' | b'[' => depth += 1,
                    b'}' | b']' => {
                        depth -= 1;
                        if depth == 0 {
                            return j + 1;
                        }
                    }
                    _ => {}
                }
                j += 1;
            }
            j
        }
        _ => {
            let mut j = i;
            while j < b.len() && !matches!(b[j], b',' | b'}' | b']' | b' ' | b'\t' | b'\n' | b'\r')
            {
                j += 1;
            }
            j
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn members_are_found_with_exact_offsets() {
        let text = "{ \"a\" : [1, {\"x\": \"}\"}] ,\"b\\\"\":{\"c\":true},\"d\":-1.5e3}";
        let top = scan_top(text).unwrap();
        let got: Vec<(&str, &str)> = top
            .members
            .iter()
            .map(|m| (m.key.as_str(), &text[m.value_start..m.value_end]))
            .collect();
        assert_eq!(
            got,
            [
                ("a", "[1, {\"x\": \"}\"}]"),
                ("b\"", "{\"c\":true}"),
                ("d", "-1.5e3")
            ]
        );
        let inner = top.members[1].object.as_ref().unwrap();
        assert_eq!(
            &text[inner.members[0].value_start..inner.members[0].value_end],
            "true"
        );
        assert_eq!(&text[top.close..], "}");
        assert!(scan_top(" [1]").is_none());
    }
}
