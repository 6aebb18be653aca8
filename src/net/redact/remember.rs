//! Registering secrets the moment they exist: which parts of a remote server's URL and headers,
//! a stdio server's `env`, an expanded `${VAR}`, an `Authorization` value or an OAuth body are
//! credentials.

use super::store::remember;

/// Remembers the secret parts of a remote server's `url` and its header `values`, so that
/// [`scrub`](crate::net::scrub) masks them wherever they turn up: the URL's username and password, its query
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
/// bodies) so [`scrub`](crate::net::scrub) masks it from now on. Values shorter than 8 bytes are skipped.
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
