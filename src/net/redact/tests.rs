use std::collections::{BTreeSet, VecDeque};

use super::store::Remembered;
use super::*;

#[test]
fn the_oldest_secrets_make_room_and_registering_again_keeps_one() {
    let mut r = Remembered {
        set: BTreeSet::new(),
        order: VecDeque::new(),
    };
    r.add(vec!["keep-me-registered".into()], 3);
    for i in 0..10 {
        r.add(vec![format!("filler-secret-{i}")], 3);
        r.add(vec!["keep-me-registered".into()], 3);
    }
    let held: Vec<&str> = r.order.iter().map(String::as_str).collect();
    assert_eq!(
        held,
        ["filler-secret-8", "filler-secret-9", "keep-me-registered"]
    );
    assert_eq!(r.set.len(), 3);
}

#[test]
fn secrets_and_paths_are_dropped() {
    let cases = [
        (
            "https://user:secret@host.example/sse",
            "https://host.example/...",
        ),
        ("http://h:8080/mcp?token=abc#frag", "http://h:8080/..."),
        ("http://h/", "http://h/"),
        ("http://h", "http://h/"),
        ("http://[::1]:3000/a/b", "http://[::1]:3000/..."),
        ("https://h:443/x", "https://h/..."),
        ("http://h/?q=1", "http://h/"),
        ("not a url", "<redacted-url>"),
    ];
    for (input, want) in cases {
        assert_eq!(redact(input), want, "{input}");
    }
}

#[test]
fn every_url_in_free_text_is_redacted() {
    let cases = [
        (
            "error sending request for url (http://127.0.0.1:9/mcp?token=SEKRET)",
            "error sending request for url (http://127.0.0.1:9/...)",
        ),
        (
            "GET https://u:SEKRET@h.example/x#SEKRET failed; retry https://h.example/?a=SEKRET.",
            "GET https://h.example/... failed; retry https://h.example/.",
        ),
        (
            "uri=\"http://h/mcp?k=SEKRET\" next",
            "uri=\"http://h/...\" next",
        ),
        (
            "a\x1b[3mhttp://h/p?k=SEKRET\x1b[0m",
            "a\x1b[3mhttp://h/...\x1b[0m",
        ),
        ("no urls :// here", "no urls :// here"),
        ("relative://", "relative://"),
        ("ws://h:1/?x=SEKRET", "ws://h:1/"),
        ("http://[bad?x=SEKRET", "<redacted-url>"),
        (
            "Url { scheme: \"http\", cannot_be_a_base: false, username: \"SEKRET\", password: Some(\"SEKRET\"), host: Some(Domain(\"h\")), port: None, path: \"/SEKRET\", query: Some(\"k=SEKRET\\\"x\"), fragment: Some(\"SEKRET\") }",
            "Url { scheme: \"http\", cannot_be_a_base: false, username: \"<redacted>\", password: Some(\"<redacted>\"), host: Some(Domain(\"h\")), port: None, path: \"<redacted>\", query: Some(\"<redacted>\"), fragment: Some(\"<redacted>\") }",
        ),
    ];
    for (input, want) in cases {
        let got = redact_urls(input);
        assert_eq!(got, want, "{input}");
        assert!(!got.contains("SEKRET"), "{got}");
    }
}

#[test]
fn remembered_secrets_are_masked_anywhere() {
    let url = "http://alice-user:pw-Xq81vZ@h/mcp?token=tok-Q9f2kd&short=ab#frag-77aa1";
    let headers = ["Bearer hdr-91jsK2a".to_owned(), "hv-only-7741".to_owned()];
    remember_secrets(url, &headers);
    let text = "server said: pw-Xq81vZ tok-Q9f2kd frag-77aa1 hdr-91jsK2a hv-only-7741 ab";
    let got = scrub_known(text);
    assert_eq!(
        got,
        "server said: <redacted> <redacted> <redacted> <redacted> <redacted> ab"
    );
    // The Basic credential the client built from the userinfo, quoted back by a server.
    assert_eq!(
        scrub_known("auth=Basic YWxpY2UtdXNlcjpwdy1YcTgxdlo="),
        "auth=Basic <redacted>"
    );
    let env = std::collections::BTreeMap::from([
        ("GITHUB_TOKEN".to_owned(), "ghp-env-5521aa".to_owned()),
        ("db_password".to_owned(), "env-pw-0a0a0a".to_owned()),
        ("LOG_LEVEL".to_owned(), "verbose-debugging".to_owned()),
    ]);
    remember_env_secrets(&env);
    assert_eq!(
        scrub_known("t=ghp-env-5521aa p=env-pw-0a0a0a l=verbose-debugging"),
        "t=<redacted> p=<redacted> l=verbose-debugging"
    );
    // Credentials registered when they are sent or received.
    remember_oauth_form(b"grant_type=authorization_code&code=code-81hs2&code_verifier=ver-Zk29%2Bq1&state=st-not-a-secret");
    remember_oauth_json(
        &serde_json::json!({"access_token": "acc-0w9e8r", "nested": {"refresh_token": "ref-5t6y7u"}, "token_type": "Bearer-ish"}),
    );
    remember_authorization("Basic Y2xpZW50LWlkOnNoLWNsaWVudC1zZWNyZXQ=");
    assert_eq!(
        scrub_known(
            "invalid_grant: code code-81hs2 / ver-Zk29+q1 / ver-Zk29%2Bq1; acc-0w9e8r ref-5t6y7u sh-client-secret st-not-a-secret Bearer-ish"
        ),
        "invalid_grant: code <redacted> / <redacted> / <redacted>; <redacted> <redacted> <redacted> st-not-a-secret Bearer-ish"
    );
    // scrub also redacts URLs; scrub_known keeps a docs link readable.
    let link = "see https://docs.example/errors?id=42";
    assert_eq!(scrub_known(link), link);
    assert_eq!(scrub(link), "see https://docs.example/...");
}

#[test]
fn a_secret_is_masked_where_json_or_a_dump_escapes_it() {
    let quoted = "q\"uo\\teZ9-5521";
    let accented = "café-secret-77aa";
    remember_credential(quoted);
    remember_credential(accented);
    let payload = serde_json::json!({ "message": format!("A {quoted} B {accented}"), quoted: 1 });
    let text = payload.to_string();
    let got = scrub_known(&text);
    assert_eq!(got.matches("<redacted>").count(), 3, "{got}");
    assert!(!got.contains("uo"), "{got}");
    assert_eq!(
        scrub_known(&format!("{:?}", quoted)),
        "\"<redacted>\"",
        "a Rust string dump"
    );
    assert_eq!(
        scrub_known("{\"m\":\"caf\\u00e9-secret-77aa\"}"),
        "{\"m\":\"<redacted>\"}",
        "a JSON encoder that keeps to ASCII"
    );
    // A tool result whose text block holds the server's JSON (ASCII-escaped, as Python's
    // json.dumps writes it): the secret is escaped twice in the result's JSON.
    let inner = format!(
        "{{\"x\": {}}}",
        serde_json::Value::from(format!("{quoted} {accented}"))
            .to_string()
            .replace('é', "\\u00e9")
    );
    let result = serde_json::json!({ "content": [{ "type": "text", "text": inner }] }).to_string();
    let got = scrub_known(&result);
    assert!(!got.contains("uo") && !got.contains("secret-77aa"), "{got}");
}

#[test]
fn a_secret_cut_at_the_end_of_a_quote_is_masked() {
    let secret = "cutsecret-0123456789-abcdef";
    remember_credential(secret);
    let cases = [
        // Whole: masked as everywhere.
        (format!("said {secret} ok"), "said <redacted> ok".to_owned()),
        // Cut after 15 of its bytes: the start is masked.
        (
            format!("said {}", &secret[..15]),
            "said <redacted>".to_owned(),
        ),
        // Cut after 4 bytes: still masked.
        (
            format!("said {}", &secret[..4]),
            "said <redacted>".to_owned(),
        ),
        // Three bytes are an ordinary word's worth: kept.
        (
            format!("said {}", &secret[..3]),
            format!("said {}", &secret[..3]),
        ),
        // A start that is not at the end is not a cut secret.
        (
            format!("{} said", &secret[..12]),
            format!("{} said", &secret[..12]),
        ),
    ];
    for (text, want) in cases {
        assert_eq!(scrub_cut(&text), want, "{text}");
    }
}
