//! Where servers come from: the `registries` config key, and the `source` an installed entry
//! remembers.
//!
//! ```json
//! "registries": [
//!   { "name": "work", "url": "https://mcp-registry.corp.example", "token": "${secret:work-registry}" }
//! ],
//! "mcpServers": {
//!   "time": { "command": "uvx", "args": ["mcp-server-time==2026.10.19"],
//!             "source": { "registry": "https://registry.modelcontextprotocol.io",
//!                         "name": "io.github.example/time", "version": "2026.10.19",
//!                         "inputs": { "local-timezone": "UTC" } } }
//! }
//! ```
//!
//! The official registry (named `official`) is always available; it is the default unless the
//! list names another registry first. `token` is sent as `Authorization: Bearer …` and may
//! only be a reference (`${secret:NAME}` or `${VAR}`), so it never sits in the file.

use std::collections::BTreeMap;

use serde::Serialize;
use serde_json::{Map, Value, json};

use super::{RegistryClient, RegistryError};
use crate::config;

/// The official MCP Registry.
pub const OFFICIAL_URL: &str = "https://registry.modelcontextprotocol.io";

/// One configured registry.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct RegistryRef {
    /// Its name in the config (`official` for the official one).
    pub name: String,
    /// Base URL.
    pub url: String,
    /// The bearer token reference (`${secret:…}` / `${VAR}`), unexpanded.
    #[serde(skip)]
    pub token: Option<String>,
}

/// The registries of config document `doc`: the `registries` list in order, then `official`
/// unless listed.
///
/// # Errors
/// [`RegistryError::Config`] naming the bad item (not a list, no url, a token that is plain
/// text instead of a reference…).
pub fn registries(doc: &Value) -> Result<Vec<RegistryRef>, RegistryError> {
    let bad = |i: usize, msg: &str| RegistryError::Config(format!("registries[{i}]: {msg}"));
    let mut out = Vec::new();
    match doc.get("registries") {
        None | Some(Value::Null) => {}
        Some(Value::Array(items)) => {
            for (i, item) in items.iter().enumerate() {
                let obj = item
                    .as_object()
                    .ok_or_else(|| bad(i, "expected an object"))?;
                let url = obj
                    .get("url")
                    .and_then(Value::as_str)
                    .ok_or_else(|| bad(i, "\"url\" must be a string"))?;
                let name = match obj.get("name") {
                    None => url.to_owned(),
                    Some(Value::String(s)) => s.clone(),
                    Some(_) => return Err(bad(i, "\"name\" must be a string")),
                };
                let token = match obj.get("token") {
                    None | Some(Value::Null) => None,
                    Some(Value::String(t)) if is_reference(t) => Some(t.clone()),
                    Some(Value::String(_)) => {
                        return Err(bad(
                            i,
                            "\"token\" must be a reference like \"${secret:NAME}\" or \"${VAR}\", never the token itself",
                        ));
                    }
                    Some(_) => return Err(bad(i, "\"token\" must be a string")),
                };
                out.push(RegistryRef {
                    name,
                    url: url.to_owned(),
                    token,
                });
            }
        }
        Some(_) => {
            return Err(RegistryError::Config(
                "\"registries\" must be a list of {\"name\", \"url\", \"token\"}".into(),
            ));
        }
    }
    if !out.iter().any(|r| r.name == "official") {
        out.push(RegistryRef {
            name: "official".into(),
            url: OFFICIAL_URL.into(),
            token: None,
        });
    }
    Ok(out)
}

/// Whether `text` is exactly one `${…}` reference.
fn is_reference(text: &str) -> bool {
    text.starts_with("${") && text.ends_with('}') && text[2..].find('}') == Some(text.len() - 3)
}

/// The registry named (or with URL) `wanted`, else the default (the first).
///
/// # Errors
/// [`RegistryError::Config`] when none matches.
pub fn pick<'a>(
    list: &'a [RegistryRef],
    wanted: Option<&str>,
) -> Result<&'a RegistryRef, RegistryError> {
    match wanted {
        None => list.first(),
        Some(w) => list
            .iter()
            .find(|r| r.name == w || r.url.trim_end_matches('/') == w.trim_end_matches('/')),
    }
    .ok_or_else(|| {
        RegistryError::Config(format!(
            "no registry named \"{}\" (configured: {})",
            wanted.unwrap_or_default(),
            list.iter()
                .map(|r| r.name.as_str())
                .collect::<Vec<_>>()
                .join(", ")
        ))
    })
}

impl RegistryRef {
    /// A client for this registry, the token expanded through `lookup` (built-in variables,
    /// then the environment; the keychain for `${secret:…}` where available).
    ///
    /// # Errors
    /// [`RegistryError::Config`] when the token's variable is missing (named, never shown);
    /// [`RegistryClient::new`]'s errors.
    pub fn client(
        &self,
        whitelist: &config::SsrfWhitelist,
        lookup: &dyn Fn(&str) -> Option<String>,
    ) -> Result<RegistryClient, RegistryError> {
        let token = match &self.token {
            None => None,
            Some(t) => {
                let inner = t
                    .strip_prefix("${")
                    .and_then(|r| r.strip_suffix('}'))
                    .unwrap_or(t);
                Some(lookup(inner).ok_or_else(|| {
                    RegistryError::Config(format!(
                        "registry \"{}\": the token reference {t} is not set",
                        self.name
                    ))
                })?)
            }
        };
        if let Some(t) = &token {
            crate::net::remember_credential(t);
        }
        RegistryClient::new(&self.url, token.as_deref(), &whitelist.nets)
    }
}

/// What an installed entry remembers of where it came from (`source`).
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Source {
    /// Base URL of the registry.
    pub registry: String,
    /// Registry name of the server, e.g. `io.github.user/weather`.
    pub name: String,
    /// The installed version.
    pub version: String,
    /// Config strings of the inputs used (secrets as references), reused by `update`.
    pub inputs: BTreeMap<String, String>,
    /// `npm`, `pypi`, `oci` or `remote`: what was installed, kept by `update`.
    pub kind: Option<String>,
}

impl Source {
    /// The `source` object written into the entry.
    pub fn to_value(&self) -> Value {
        let mut obj = Map::new();
        obj.insert("registry".into(), json!(self.registry));
        obj.insert("name".into(), json!(self.name));
        obj.insert("version".into(), json!(self.version));
        if let Some(k) = &self.kind {
            obj.insert("kind".into(), json!(k));
        }
        if !self.inputs.is_empty() {
            obj.insert("inputs".into(), json!(self.inputs));
        }
        Value::Object(obj)
    }

    /// The `source` of a raw entry, if it has a well-formed one.
    pub fn of_entry(entry: &Value) -> Option<Source> {
        let s = entry.get("source")?;
        let text = |k: &str| s.get(k).and_then(Value::as_str).map(str::to_owned);
        let inputs = s
            .get("inputs")
            .and_then(Value::as_object)
            .map(|m| {
                m.iter()
                    .filter_map(|(k, v)| Some((k.clone(), v.as_str()?.to_owned())))
                    .collect()
            })
            .unwrap_or_default();
        Some(Source {
            registry: text("registry")?,
            name: text("name")?,
            version: text("version")?,
            inputs,
            kind: text("kind"),
        })
    }
}

/// Whether version `candidate` is newer than `installed`: dot/dash-separated parts compared
/// numerically where both are numbers, else as text; a release is newer than its pre-release.
pub fn is_newer(candidate: &str, installed: &str) -> bool {
    use std::cmp::Ordering;
    let split = |v: &str| -> (Vec<String>, bool) {
        let core = v.split('+').next().unwrap_or(v);
        let (main, pre) = match core.split_once('-') {
            Some((m, _)) => (m, true),
            None => (core, false),
        };
        (main.split('.').map(str::to_owned).collect(), pre)
    };
    let (a, a_pre) = split(candidate);
    let (b, b_pre) = split(installed);
    for i in 0..a.len().max(b.len()) {
        let x = a.get(i).map(String::as_str).unwrap_or("0");
        let y = b.get(i).map(String::as_str).unwrap_or("0");
        let ord = match (x.parse::<u64>(), y.parse::<u64>()) {
            (Ok(x), Ok(y)) => x.cmp(&y),
            _ => x.cmp(y),
        };
        if ord != Ordering::Equal {
            return ord == Ordering::Greater;
        }
    }
    if a_pre != b_pre {
        return !a_pre;
    }
    candidate.split('+').next() != installed.split('+').next() && candidate > installed
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn registries_default_to_official_and_refuse_plain_tokens() {
        let list = registries(&json!({})).unwrap();
        assert_eq!(list.len(), 1);
        assert_eq!(list[0].url, OFFICIAL_URL);
        let doc = json!({"registries": [{"name": "work", "url": "https://r.corp", "token": "${secret:work}"}]});
        let list = registries(&doc).unwrap();
        assert_eq!(
            list.iter().map(|r| r.name.as_str()).collect::<Vec<_>>(),
            ["work", "official"]
        );
        assert_eq!(pick(&list, None).unwrap().name, "work");
        assert_eq!(pick(&list, Some("official")).unwrap().url, OFFICIAL_URL);
        assert!(
            pick(&list, Some("nope"))
                .unwrap_err()
                .to_string()
                .contains("work, official")
        );
        let plain = json!({"registries": [{"url": "https://r.corp", "token": "abc123"}]});
        let err = registries(&plain).unwrap_err().to_string();
        assert!(
            err.contains("registries[0]") && !err.contains("abc123"),
            "{err}"
        );
    }

    #[test]
    fn tokens_are_expanded_from_their_reference_and_a_missing_one_is_named() {
        let r = RegistryRef {
            name: "work".into(),
            url: "https://r.corp".into(),
            token: Some("${WORK_TOKEN}".into()),
        };
        let wl = config::SsrfWhitelist::default();
        assert!(r.client(&wl, &|_| Some("t".into())).is_ok());
        let err = r.client(&wl, &|_| None).unwrap_err().to_string();
        assert!(err.contains("${WORK_TOKEN}"), "{err}");
    }

    #[test]
    fn versions_compare_numerically_with_prereleases_first() {
        assert!(is_newer("1.10.0", "1.9.3"));
        assert!(is_newer("2026.10.19", "2026.8.31"));
        assert!(!is_newer("1.0.0", "1.0.0"));
        assert!(!is_newer("1.0.0-beta", "1.0.0"));
        assert!(is_newer("1.0.0", "1.0.0-beta"));
        assert!(!is_newer("0.9", "1.0"));
    }

    #[test]
    fn source_round_trips_through_the_entry() {
        let s = Source {
            registry: "https://r".into(),
            name: "a/b".into(),
            version: "1.0.0".into(),
            inputs: BTreeMap::from([("k".into(), "${secret:x}".into())]),
            kind: Some("npm".into()),
        };
        let entry = json!({"command": "npx", "source": s.to_value()});
        assert_eq!(Source::of_entry(&entry), Some(s));
    }
}
