//! Free text with the remembered secrets masked, in each form text may carry them: as is,
//! JSON-escaped (once or twice, ASCII-only or not), and cut off at the end of the text.

use super::store::{MASK, MIN_SECRET_LEN, SECRETS};
use super::urls::redact_urls;

/// `text` with every URL redacted ([`redact_urls`]) and every remembered secret masked.
pub fn scrub(text: &str) -> String {
    scrub_known(&redact_urls(text))
}

/// `text` with every remembered secret masked; URLs are left as they are (for the server's own
/// words, whose links may matter to the reader). Text is often JSON (a payload, an error's
/// `data`) or a Rust string dump, where a secret holding `"`, `\\`, a control character or
/// (from encoders that keep to ASCII) a non-ASCII character appears escaped, or escaped twice
/// (JSON text inside a JSON string): each of those written forms is masked too.
pub fn scrub_known(text: &str) -> String {
    // Every written form of a remembered secret is at least as long as the secret.
    if text.len() < MIN_SECRET_LEN {
        return text.to_owned();
    }
    let r = SECRETS.read().unwrap_or_else(|p| p.into_inner());
    let mut hits: Vec<String> = r
        .set
        .iter()
        .flat_map(|s| written_forms(s))
        .filter(|s| text.contains(s.as_str()))
        .collect();
    if hits.is_empty() {
        return text.to_owned();
    }
    // Longest first, so a value containing another is masked whole.
    hits.sort_by_key(|s| std::cmp::Reverse(s.len()));
    let mut out = text.to_owned();
    for s in hits {
        out = out.replace(s.as_str(), MASK);
    }
    out
}

/// `value` with every remembered secret masked in each of its strings (object keys kept): a
/// server's log message or error result, whose shape the agent reads.
pub fn scrub_known_value(value: &mut serde_json::Value) {
    match value {
        serde_json::Value::String(s) => {
            let masked = scrub_known(s);
            if masked != *s {
                *s = masked;
            }
        }
        serde_json::Value::Array(items) => items.iter_mut().for_each(scrub_known_value),
        serde_json::Value::Object(map) => map.values_mut().for_each(scrub_known_value),
        _ => {}
    }
}

/// The shortest start of a secret that [`scrub_cut`] masks at the end of cut text: shorter
/// ends would mask ordinary words.
const CUT_MIN_LEN: usize = 4;

/// [`scrub`] for text cut off at its end (the first bytes of a longer body): a remembered
/// secret of which only a start is left at the end (at least 4 bytes of it) is masked too, so
/// a cut never shows most of a secret.
pub fn scrub_cut(text: &str) -> String {
    let mut out = scrub(text);
    let r = SECRETS.read().unwrap_or_else(|p| p.into_inner());
    let bytes = out.as_bytes();
    // Where the earliest trailing secret start begins: everything from there is masked.
    let mut from = out.len();
    for secret in r.set.iter().flat_map(|s| written_forms(s)) {
        let s = secret.as_bytes();
        let window = out.len().saturating_sub(s.len() - 1);
        for at in window..out.len().saturating_sub(CUT_MIN_LEN - 1) {
            if at < from && bytes[at] == s[0] && s.starts_with(&bytes[at..]) {
                from = at;
                break;
            }
        }
    }
    if from < out.len() && out.is_char_boundary(from) {
        out.replace_range(from.., MASK);
    }
    out
}

/// `secret` as it appears in text: as is, inside a JSON string (`"` and `\\` escaped, control
/// characters as `\\n` or `\\u001b`), and inside a JSON string that keeps to ASCII (every other
/// character as `\\u00e9`, lower-case hex, surrogate pairs beyond the BMP).
fn written_forms(secret: &str) -> Vec<String> {
    let mut forms = vec![secret.to_owned()];
    if secret
        .chars()
        .all(|c| c.is_ascii() && c != '"' && c != '\\' && !c.is_control())
    {
        return forms;
    }
    let quoted = serde_json::Value::from(secret).to_string();
    let json = quoted[1..quoted.len() - 1].to_owned();
    let mut ascii = String::with_capacity(json.len() * 2);
    for c in json.chars() {
        if c.is_ascii() {
            ascii.push(c);
        } else {
            let mut units = [0u16; 2];
            for unit in c.encode_utf16(&mut units) {
                ascii.push_str(&format!("\\u{unit:04x}"));
            }
        }
    }
    // A tool result often carries JSON inside a JSON string (a text block holding the
    // server's own JSON): there the escaped forms are escaped once more.
    let again = |form: &str| {
        let quoted = serde_json::Value::from(form).to_string();
        quoted[1..quoted.len() - 1].to_owned()
    };
    let (json_again, ascii_again) = (again(&json), again(&ascii));
    for form in [json, ascii, json_again, ascii_again] {
        if !forms.contains(&form) {
            forms.push(form);
        }
    }
    forms
}
