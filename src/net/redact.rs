//! URLs and secrets as they may appear in logs, statuses and errors (DESIGN §9, nanobot §11.5).
//!
//! | function | for |
//! |---|---|
//! | [`redact`] | one URL we hold: scheme, host and port only |
//! | [`redact_urls`] | free text (an error chain, a log line): every URL in it redacted |
//! | [`remember_secrets`] | the secret parts of a remote server's config (URL userinfo, query and fragment values, header values), recorded once per connect |
//! | [`remember_env_secrets`] | the values of a stdio server's `env` whose names say secret (`*KEY*`, `*TOKEN*`, `*SECRET*`, `*PASS*`…) |
//! | [`remember_expanded`] | what a `${VAR}` in a server's config expanded to, when the name says secret (or `*_PAT`), and the password of a URL-valued one |
//! | [`remember_credential`] | one credential the moment it exists: an OAuth access or refresh token received or loaded, an authorization code or PKCE verifier sent, a client secret, a registry token |
//! | [`remember_oauth_form`] / [`remember_oauth_json`] | the credentials in an OAuth request's form body / an answer's JSON body |
//! | [`scrub`] | free text: [`redact_urls`] plus every remembered secret replaced by `<redacted>` |
//! | [`scrub_known`] | free text from a server (a JSON-RPC error message): remembered secrets only, its URLs kept |
//! | [`scrub_cut`] | [`scrub`] for the first bytes of a longer text (a quoted HTTP body): a secret cut at the end is masked too |
//!
//! Every string that leaves through a log line ([`crate::logging`]), a status field
//! (`lastError`) or an error an agent receives goes through [`scrub`] (or [`scrub_known`] for
//! the server's own words).
//!
//! This is the one redaction mechanism: whatever holds or sends a credential registers it
//! here when it is created, received or loaded, so a server quoting it back (a 401's
//! `error_description`, a token endpoint's error) is masked in whatever text carries it. The
//! set keeps the [`MAX_SECRETS`] most recently registered values (registering again counts as
//! recent), so refreshed tokens never crowd out the ones in use.

use std::collections::{BTreeSet, VecDeque};
use std::sync::RwLock;

/// Shorter remembered values are not replaced: they would mangle ordinary words in logs.
const MIN_SECRET_LEN: usize = 8;
/// At most this many secrets are remembered (reload and refresh loops must not grow the set
/// forever); the least recently registered go first.
pub const MAX_SECRETS: usize = 1024;
/// What a remembered secret becomes.
const MASK: &str = "<redacted>";

/// The remembered values, and their order of registration (oldest first) for eviction.
struct Remembered {
    set: BTreeSet<String>,
    order: VecDeque<String>,
}

static SECRETS: RwLock<Remembered> = RwLock::new(Remembered {
    set: BTreeSet::new(),
    order: VecDeque::new(),
});

/// Redacts `url` for logging: `https://user:pw@h:8443/mcp?key=x` → `https://h:8443/...`.
///
/// `/` stays `/`; an unparsable URL becomes `<redacted-url>`.
pub fn redact(url: &str) -> String {
    let Ok(parsed) = url::Url::parse(url) else {
        return "<redacted-url>".to_owned();
    };
    let Some(host) = parsed.host() else {
        return "<redacted-url>".to_owned();
    };
    let mut out = format!("{}://{host}", parsed.scheme());
    if let Some(port) = parsed.port() {
        out.push_str(&format!(":{port}"));
    }
    match parsed.path() {
        "" | "/" => out.push('/'),
        _ => out.push_str("/..."),
    }
    out
}

/// Redacts every URL in `text` (anything of the form `scheme://…` up to a space, quote, angle
/// bracket, backslash or control character) with [`redact`], keeping trailing punctuation.
/// The fields of a `Debug`-printed `url::Url` (`Url { … query: Some("…") … }`) that can hold
/// secrets are masked too.
pub fn redact_urls(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    while let Some(at) = rest.find("://") {
        let scheme_start = rest[..at]
            .char_indices()
            .rev()
            .take_while(|(_, c)| c.is_ascii_alphanumeric() || matches!(c, '+' | '-' | '.'))
            .last()
            .map(|(i, _)| i);
        // A scheme starts with a letter: `3mhttp` (after an ANSI escape) is `mhttp`.
        let start = scheme_start.and_then(|i| {
            rest[i..at]
                .find(|c: char| c.is_ascii_alphabetic())
                .map(|j| i + j)
        });
        let Some(start) = start else {
            out.push_str(&rest[..at + 3]);
            rest = &rest[at + 3..];
            continue;
        };
        let tail = &rest[at + 3..];
        let len = tail
            .find(|c: char| {
                c.is_whitespace()
                    || c.is_control()
                    || matches!(c, '"' | '\'' | '<' | '>' | '`' | '\\')
            })
            .unwrap_or(tail.len());
        let mut end = at + 3 + len;
        while end > at + 3 && rest[..end].ends_with(['.', ',', ';', ':', ')', ']', '}', '!', '?']) {
            end -= 1;
        }
        if end == at + 3 {
            out.push_str(&rest[..end]);
        } else {
            out.push_str(&rest[..start]);
            out.push_str(&redact(&rest[start..end]));
        }
        rest = &rest[end..];
    }
    out.push_str(rest);
    mask_debug_url_fields(&out)
}

/// Masks the secret-bearing fields of `url::Url`'s `Debug` form.
fn mask_debug_url_fields(text: &str) -> String {
    if !text.contains("Url {") {
        return text.to_owned();
    }
    let mut out = text.to_owned();
    for field in [
        "username: \"",
        "password: Some(\"",
        "path: \"",
        "query: Some(\"",
        "fragment: Some(\"",
    ] {
        let mut from = 0;
        while let Some(found) = out[from..].find(field) {
            let value_start = from + found + field.len();
            let value_len = closing_quote(&out[value_start..]);
            if value_len == 0 {
                from = value_start;
                continue;
            }
            out.replace_range(value_start..value_start + value_len, MASK);
            from = value_start + MASK.len();
        }
    }
    out
}

/// The length of a `Debug`-escaped string body up to its unescaped closing quote.
fn closing_quote(s: &str) -> usize {
    let mut escaped = false;
    for (i, c) in s.char_indices() {
        match c {
            '\\' if !escaped => escaped = true,
            '"' if !escaped => return i,
            _ => escaped = false,
        }
    }
    s.len()
}

/// Remembers the secret parts of a remote server's `url` and its header `values`, so that
/// [`scrub`] masks them wherever they turn up: the URL's username and password, its query
/// (whole and each value), its fragment, and each header value (whole, and its last word: the
/// token of `Bearer <token>`). Values shorter than 8 bytes are skipped.
pub fn remember_secrets<'a>(url: &str, values: impl IntoIterator<Item = &'a String>) {
    let mut found: Vec<String> = Vec::new();
    if let Ok(parsed) = url::Url::parse(url) {
        found.push(parsed.username().to_owned());
        found.extend(parsed.password().map(str::to_owned));
        // The HTTP client sends userinfo as `Authorization: Basic base64(user:password)`,
        // which a server may quote back: that form is the same secret.
        if let Some(password) = parsed.password() {
            use base64::Engine as _;
            let decode = |s: &str| {
                percent_encoding::percent_decode_str(s)
                    .decode_utf8_lossy()
                    .into_owned()
            };
            for pair in [
                format!("{}:{password}", parsed.username()),
                format!("{}:{}", decode(parsed.username()), decode(password)),
            ] {
                found.push(base64::engine::general_purpose::STANDARD.encode(pair));
            }
        }
        found.extend(parsed.query().map(str::to_owned));
        found.extend(parsed.fragment().map(str::to_owned));
        for (_, v) in parsed.query_pairs() {
            found.push(v.into_owned());
        }
        // The raw (percent-encoded) forms too: that is how they appear in URLs.
        if let Some(q) = parsed.query() {
            found.extend(
                q.split('&')
                    .filter_map(|p| p.split_once('='))
                    .map(|(_, v)| v.to_owned()),
            );
        }
    }
    for v in values {
        found.push(v.clone());
        // The credential of `Bearer <token>` / `Basic <b64>`; never the scheme word itself.
        if let Some(last) = v.split_whitespace().last() {
            found.push(last.to_owned());
        }
    }
    remember(found);
}

/// Words in an environment variable's name that mark its value as a secret.
const SECRET_NAME_WORDS: &[&str] = &[
    "KEY", "TOKEN", "SECRET", "PASS", "AUTH", "CRED", "COOKIE", "SESSION",
];

/// Whether an environment variable's name marks its value as a secret (`API_KEY`,
/// `GITHUB_TOKEN`, `DB_PASSWORD`, `*_SECRET`, `*AUTH*`, `*CRED*`…; any case).
pub fn is_secret_name(name: &str) -> bool {
    let upper = name.to_ascii_uppercase();
    SECRET_NAME_WORDS.iter().any(|w| upper.contains(w))
        // A personal access token (`GITHUB_PAT`); a whole word only, since `PATH` is not one.
        || upper.split(|c: char| !c.is_ascii_alphanumeric()).any(|word| word == "PAT")
}

/// Remembers what `${variable}` expanded to in a server's config (`args`, `env`, `url`,
/// headers…), at the moment it is expanded: the whole value when the variable's name marks it
/// as a secret ([`is_secret_name`]), and the password of a URL-valued one
/// (`DATABASE_URL=postgres://user:password@host/db`), so a server that echoes its arguments
/// on stderr does not put them into `status`, `logs`, the errors agents get or the log.
pub fn remember_expanded(variable: &str, value: &str) {
    if is_secret_name(variable) {
        remember_credential(value);
    }
    if let Some(password) = url::Url::parse(value)
        .ok()
        .and_then(|u| u.password().map(str::to_owned))
    {
        let decoded = percent_encoding::percent_decode_str(&password)
            .decode_utf8_lossy()
            .into_owned();
        remember(vec![password, decoded]);
    }
}

/// Remembers the values of a stdio server's `env` whose names mark them as secrets
/// (`API_KEY`, `GITHUB_TOKEN`, `DB_PASSWORD`, `*_SECRET`, `*AUTH*`, `*CRED*`…), so a server
/// echoing its environment on stderr does not put them into `logs`, errors or the log.
pub fn remember_env_secrets<'a>(env: impl IntoIterator<Item = (&'a String, &'a String)>) {
    let found = env
        .into_iter()
        .filter(|(name, _)| is_secret_name(name))
        .map(|(_, value)| value.clone())
        .collect();
    remember(found);
}

/// Remembers one credential (and its percent-encoded form, as it appears in URLs and form
/// bodies) so [`scrub`] masks it from now on. Values shorter than 8 bytes are skipped.
pub fn remember_credential(value: &str) {
    let encoded: String = url::form_urlencoded::byte_serialize(value.as_bytes()).collect();
    remember(vec![value.to_owned(), encoded]);
}

/// Form fields of OAuth requests that carry credentials (RFC 6749 §4.1.3, §6; RFC 7636;
/// RFC 7523).
const OAUTH_FORM_FIELDS: &[&str] = &[
    "code",
    "code_verifier",
    "refresh_token",
    "client_secret",
    "client_assertion",
    "assertion",
    "password",
];

/// Remembers the credentials in an `application/x-www-form-urlencoded` OAuth request body
/// (the authorization code, PKCE verifier, refresh token, client secret), at the moment they
/// are sent.
pub fn remember_oauth_form(body: &[u8]) {
    for (k, v) in url::form_urlencoded::parse(body) {
        if OAUTH_FORM_FIELDS.contains(&k.as_ref()) {
            remember_credential(&v);
        }
    }
}

/// JSON fields of OAuth answers that carry credentials (RFC 6749 §5.1, RFC 7591 §3.2.1,
/// OpenID Connect).
const OAUTH_JSON_FIELDS: &[&str] = &[
    "access_token",
    "refresh_token",
    "id_token",
    "client_secret",
    "registration_access_token",
];

/// Remembers the credentials in an OAuth JSON document (a token answer, a registration, a
/// stored sign-in), at any depth, at the moment they are received or loaded. Text that is not
/// JSON is ignored.
pub fn remember_oauth_json(value: &serde_json::Value) {
    match value {
        serde_json::Value::Object(map) => {
            for (k, v) in map {
                match v.as_str() {
                    Some(s) if OAUTH_JSON_FIELDS.contains(&k.as_str()) => remember_credential(s),
                    _ => remember_oauth_json(v),
                }
            }
        }
        serde_json::Value::Array(items) => items.iter().for_each(remember_oauth_json),
        _ => {}
    }
}

/// Remembers the credential of an `Authorization` header value we send: the token of
/// `Bearer <token>`, the `Basic` pair and its decoded halves.
pub fn remember_authorization(value: &str) {
    let Some((scheme, credential)) = value.trim().split_once(' ') else {
        remember_credential(value);
        return;
    };
    let credential = credential.trim();
    remember_credential(credential);
    if scheme.eq_ignore_ascii_case("basic") {
        use base64::Engine as _;
        if let Ok(pair) = base64::engine::general_purpose::STANDARD.decode(credential)
            && let Ok(pair) = String::from_utf8(pair)
            && let Some((user, password)) = pair.split_once(':')
        {
            // Basic credentials are form-encoded halves (RFC 6749 §2.3.1).
            let decode = |s: &str| {
                url::form_urlencoded::parse(format!("x={s}").as_bytes())
                    .next()
                    .map(|(_, v)| v.into_owned())
                    .unwrap_or_default()
            };
            remember_credential(password);
            remember_credential(&decode(password));
            remember_credential(&decode(user));
        }
    }
}

fn remember(found: Vec<String>) {
    SECRETS
        .write()
        .unwrap_or_else(|p| p.into_inner())
        .add(found, MAX_SECRETS);
}

impl Remembered {
    /// Adds `found` as the most recent values, keeping at most `max`.
    fn add(&mut self, found: Vec<String>, max: usize) {
        for s in found {
            if s.len() < MIN_SECRET_LEN {
                continue;
            }
            if self.set.contains(&s) {
                self.order.retain(|o| *o != s);
            } else {
                self.set.insert(s.clone());
            }
            self.order.push_back(s);
            while self.order.len() > max {
                if let Some(old) = self.order.pop_front() {
                    self.set.remove(&old);
                }
            }
        }
    }
}

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

#[cfg(test)]
#[path = "redact_tests.rs"]
mod tests;
