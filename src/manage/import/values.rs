//! What `${…}` in another client's file means, and its equivalent in ours.
//!
//! Our config expands `${VAR}` (the companion's environment) and `${secret:NAME}` (the
//! keychain), and `$${` is a literal `${` (see `config::expand`). Copying another client's text
//! verbatim would turn its inert text into live references, or keep its references as text
//! that reads the wrong thing. So each expandable string (`command`, `args`, `env` values,
//! `cwd`, `url`, `headers` values, `oauth.clientId`/`clientSecret`/`clientMetadataUrl`) is
//! translated:
//!
//! | client | `${…}` in its file | becomes |
//! |---|---|---|
//! | Claude Desktop, nanobot | not expanded: literal text | `$${…}`: literal text here too (noted) |
//! | VS Code, Cursor | `${env:NAME}` | `${NAME}`: the same variable, read at start |
//! | VS Code, Cursor | `${userHome}`, `${pathSeparator}`, `${/}` | their value on this machine, as text |
//! | VS Code | `${input:ID}` (asked of the person at start) | `${secret:SERVER.ID}`: a keychain secret the person sets |
//! | VS Code, Cursor | anything else (`${workspaceFolder}`, `${config:…}`, `${command:…}`) | literal text; the entry is imported disabled and the report says what to edit |
//!
//! `${env:NAME}` is translated because the person wrote it in their own file to read their own
//! variable `NAME`; ours reads exactly that variable, nothing more. A name that is not a plain
//! variable name (`${env:secret:x}` would become a keychain read) stays literal text. No
//! translation ever produces a reference the source did not already make: what a value can
//! read is never widened.

use serde_json::Value;

use super::ClientKind;
use crate::manage::registry::inputs::{escape, is_env_var_name};

/// The result of translating one entry's strings.
#[derive(Debug, Default)]
pub(super) struct Translated {
    /// One line per translated or flagged reference, naming the field.
    pub notes: Vec<String>,
    /// Whether some reference has no meaning here (the entry is imported disabled).
    pub unresolved: bool,
}

/// Translates every expandable string of `entry` (already in our shape) from `client`'s
/// conventions; `server` is the name it is imported under (it names `${input:…}` secrets).
pub(super) fn translate_entry(entry: &mut Value, client: ClientKind, server: &str) -> Translated {
    let mut out = Translated::default();
    let Some(obj) = entry.as_object_mut() else {
        return out;
    };
    let mut one = |field: String, v: &mut Value| {
        if let Some(text) = v.as_str() {
            let (new, notes, unresolved) = translate(text, client, server);
            out.notes
                .extend(notes.into_iter().map(|n| format!("{field}: {n}")));
            out.unresolved |= unresolved;
            *v = Value::String(new);
        }
    };
    for key in ["command", "cwd", "url"] {
        if let Some(v) = obj.get_mut(key) {
            one(key.to_owned(), v);
        }
    }
    if let Some(Value::Array(args)) = obj.get_mut("args") {
        for (i, a) in args.iter_mut().enumerate() {
            one(format!("args[{i}]"), a);
        }
    }
    for section in ["env", "headers"] {
        if let Some(Value::Object(map)) = obj.get_mut(section) {
            for (k, v) in map.iter_mut() {
                one(format!("{section}.{k}"), v);
            }
        }
    }
    if let Some(Value::Object(oauth)) = obj.get_mut("oauth") {
        for key in ["clientId", "clientSecret", "clientMetadataUrl"] {
            if let Some(v) = oauth.get_mut(key) {
                one(format!("oauth.{key}"), v);
            }
        }
    }
    out
}

/// One string: (config string, notes, whether something stayed unresolved).
fn translate(text: &str, client: ClientKind, server: &str) -> (String, Vec<String>, bool) {
    let mut notes = Vec::new();
    if !text.contains("${") {
        return (text.to_owned(), notes, false);
    }
    if matches!(client, ClientKind::ClaudeDesktop | ClientKind::Nanobot) {
        notes.push(format!(
            "{} does not expand `${{…}}`; kept as literal text (write `${{VAR}}` here to read a variable)",
            client.label()
        ));
        return (escape(text), notes, false);
    }
    let mut out = String::new();
    let mut literal = String::new();
    let mut unresolved = false;
    let mut rest = text;
    while let Some(at) = rest.find("${") {
        literal.push_str(&rest[..at]);
        let after = &rest[at + 2..];
        let Some(end) = after.find('}') else {
            literal.push_str(&rest[at..]);
            rest = "";
            break;
        };
        let inner = &after[..end];
        let whole = &rest[at..at + 2 + end + 1];
        rest = &after[end + 1..];
        match meaning(inner, client, server) {
            Meaning::Text(value) => {
                notes.push(format!("{whole} is \"{value}\" on this machine"));
                literal.push_str(&value);
            }
            Meaning::Reference { to, note } => {
                notes.push(note);
                out.push_str(&escape(&literal));
                literal.clear();
                out.push_str(&to);
            }
            Meaning::None(why) => {
                notes.push(format!("{whole} {why}; kept as literal text"));
                unresolved = true;
                literal.push_str(whole);
            }
        }
    }
    literal.push_str(rest);
    out.push_str(&escape(&literal));
    (out, notes, unresolved)
}

enum Meaning {
    /// A value known now, inserted as text.
    Text(String),
    /// One of our references, `to`.
    Reference { to: String, note: String },
    /// No equivalent here; why.
    None(String),
}

/// What `${inner}` of `client`'s file means here.
fn meaning(inner: &str, client: ClientKind, server: &str) -> Meaning {
    let label = client.label();
    if let Some(name) = inner.strip_prefix("env:") {
        return if is_env_var_name(name) {
            Meaning::Reference {
                to: format!("${{{name}}}"),
                note: format!("${{env:{name}}} reads environment variable {name}, as in {label}"),
            }
        } else {
            Meaning::None("does not name a plain environment variable".into())
        };
    }
    if let Some(id) = inner.strip_prefix("input:")
        && client == ClientKind::VsCode
    {
        let name = crate::secret::entry_secret_name(server, id);
        return match crate::secret::validate_name(&name) {
            Ok(()) => Meaning::Reference {
                to: format!("${{secret:{name}}}"),
                note: format!(
                    "${{input:{id}}} (asked of you by VS Code) is keychain secret {name}: set it with `mcp-companion secret set {name}`"
                ),
            },
            Err(_) => Meaning::None("names an input we cannot keep in the keychain".into()),
        };
    }
    match inner {
        "userHome" => match dirs::home_dir().and_then(|h| h.to_str().map(str::to_owned)) {
            Some(home) => Meaning::Text(home),
            None => Meaning::None("has no value here (no home directory)".into()),
        },
        "pathSeparator" | "/" => Meaning::Text(std::path::MAIN_SEPARATOR.to_string()),
        _ => Meaning::None(format!(
            "has no meaning outside {label} (edit the entry, then enable it)"
        )),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn expand(config_string: &str) -> String {
        // Every reference resolves to a marker naming what it read.
        let lookup = |name: &str| Some(format!("<env {name}>"));
        let doc = serde_json::json!({"mcpServers": {"s": {"command": config_string}}});
        let cfg = crate::config::parse(&doc.to_string(), std::path::Path::new("t")).unwrap();
        let entry = cfg.servers[0].entry.as_ref().unwrap();
        let store = crate::secret::MemoryStore::new();
        match entry.expand(&lookup, &store) {
            Ok(e) => match e.transport {
                crate::config::TransportConfig::Stdio(s) => s.command,
                other => panic!("{other:?}"),
            },
            Err(e) => format!("<error {e}>"),
        }
    }

    #[test]
    fn claude_desktop_text_stays_text_whatever_it_looks_like() {
        for text in [
            "${AWS_SECRET_ACCESS_KEY}",
            "a$${B}c",
            "${secret:gh.TOKEN}",
            "$",
            "x${",
        ] {
            let (out, notes, unresolved) = translate(text, ClientKind::ClaudeDesktop, "s");
            assert_eq!(expand(&out), text, "{text} → {out}");
            assert!(!unresolved);
            assert_eq!(notes.len(), usize::from(text.contains("${")), "{notes:?}");
        }
    }

    #[test]
    fn vs_code_references_are_translated_or_flagged_never_widened() {
        let cases = [
            ("Bearer ${env:GH_TOKEN}", "Bearer ${GH_TOKEN}", false),
            ("${env:secret:gh.T}", "$${env:secret:gh.T}", true),
            ("${env:A B}", "$${env:A B}", true),
            ("${input:api-key}", "${secret:files.api-key}", false),
            ("${workspaceFolder}/src", "$${workspaceFolder}/src", true),
            ("${config:x}${command:y}", "$${config:x}$${command:y}", true),
            ("$HOME ${unterminated", "$HOME $${unterminated", false),
            ("a${/}b", &format!("a{}b", std::path::MAIN_SEPARATOR), false),
        ];
        for (text, want, flagged) in cases {
            let (out, notes, unresolved) = translate(text, ClientKind::VsCode, "files");
            assert_eq!(out, want, "{text}");
            assert_eq!(unresolved, flagged, "{text}: {notes:?}");
        }
        // `${env:X}` reads X and only X; flagged text reads nothing.
        let (out, ..) = translate(
            "${env:GH_TOKEN}-${workspaceFolder}",
            ClientKind::Cursor,
            "s",
        );
        assert_eq!(expand(&out), "<env GH_TOKEN>-${workspaceFolder}");
        // `${input:…}` is VS Code's alone.
        let (out, _, unresolved) = translate("${input:k}", ClientKind::Cursor, "s");
        assert!(unresolved && out == "$${input:k}", "{out}");
    }
}
