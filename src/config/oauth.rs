//! The `oauth` object of a remote server entry: how the companion identifies itself when it
//! signs in (MCP authorization, 2025-11-25 "Client Registration Approaches").
//!
//! ```text
//! "linear": {"url": "https://mcp.linear.app/mcp",
//!            "oauth": {"clientId": "abc", "clientSecret": "${secret:LINEAR_CLIENT_SECRET}",
//!                      "clientMetadataUrl": "https://example.com/client.json",
//!                      "scopes": ["read"]}}
//! ```
//!
//! Every key is optional; without the object the companion uses dynamic client registration
//! (RFC 7591) when the authorization server offers it.

use serde_json::Value;

use super::ConfigError;
use super::error::json_type;
use super::expand::check_references;
use super::fields::Fields;

/// The keys the `oauth` object may have.
const KEYS: &[&str] = &["clientId", "clientSecret", "clientMetadataUrl", "scopes"];

/// Client identity and scope overrides for a server's OAuth sign-in.
#[derive(Clone, Default, PartialEq, Eq)]
pub struct OAuthConfig {
    /// A client id registered with the authorization server out of band ("pre-registration");
    /// takes priority over every other mechanism.
    pub client_id: Option<String>,
    /// The secret paired with `client_id` (confidential clients). May hold `${secret:NAME}`;
    /// never logged.
    pub client_secret: Option<String>,
    /// HTTPS URL of a client ID metadata document, used as the client id when the
    /// authorization server advertises `client_id_metadata_document_supported`.
    pub client_metadata_url: Option<String>,
    /// Scopes to request instead of the spec's choice (challenge, else `scopes_supported`).
    pub scopes: Option<Vec<String>>,
}

impl std::fmt::Debug for OAuthConfig {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("OAuthConfig")
            .field("client_id", &self.client_id)
            .field("client_secret", &self.client_secret.as_ref().map(|_| "…"))
            .field("client_metadata_url", &self.client_metadata_url)
            .field("scopes", &self.scopes)
            .finish()
    }
}

/// Reads the `oauth` field of entry `name` (`None` or `null`: all defaults), pushing a warning
/// per unknown key.
pub(crate) fn parse_oauth(
    name: &str,
    value: Option<&Value>,
    warnings: &mut Vec<String>,
) -> Result<OAuthConfig, ConfigError> {
    let Some(value) = value.filter(|v| !v.is_null()) else {
        return Ok(OAuthConfig::default());
    };
    let obj = value.as_object().ok_or_else(|| {
        ConfigError::field(
            name,
            "oauth",
            format!("expected an object, found {}", json_type(value)),
        )
    })?;
    for key in obj.keys().filter(|k| !KEYS.contains(&k.as_str())) {
        warnings.push(format!(
            "server \"{name}\": unknown key \"oauth.{key}\" is ignored (kept in the file)"
        ));
    }
    let f = Fields { name, obj };
    let text = |key: &str| -> Result<Option<String>, ConfigError> {
        let v = f
            .string(key)
            .map_err(|e| rename_field(e, key))?
            .filter(|s| !s.is_empty());
        if let Some(v) = v {
            check_references(name, &format!("oauth.{key}"), v)?;
        }
        Ok(v.map(str::to_owned))
    };
    let client_metadata_url = text("clientMetadataUrl")?;
    if let Some(u) = &client_metadata_url
        && !u.contains("${")
        && !url::Url::parse(u).is_ok_and(|p| p.scheme() == "https" && p.path() != "/")
    {
        return Err(ConfigError::field(
            name,
            "oauth.clientMetadataUrl",
            "must be an https URL with a path (a client ID metadata document)",
        ));
    }
    let client_id = text("clientId")?;
    let client_secret = text("clientSecret")?;
    if client_secret.is_some() && client_id.is_none() {
        return Err(ConfigError::field(
            name,
            "oauth.clientSecret",
            "needs oauth.clientId (a secret belongs to a pre-registered client)",
        ));
    }
    Ok(OAuthConfig {
        client_id,
        client_secret,
        client_metadata_url,
        scopes: f
            .string_list("scopes")
            .map_err(|e| rename_field(e, "scopes"))?,
    })
}

/// Field errors from [`Fields`] name the key alone; inside `oauth` they say `oauth.KEY`.
fn rename_field(e: ConfigError, key: &str) -> ConfigError {
    match e {
        ConfigError::Field {
            server,
            field,
            message,
        } if field == key || field.starts_with(&format!("{key}[")) => ConfigError::Field {
            server,
            field: format!("oauth.{field}"),
            message,
        },
        other => other,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn parse(v: Value) -> Result<OAuthConfig, ConfigError> {
        parse_oauth("srv", Some(&v), &mut Vec::new())
    }

    #[test]
    fn every_key_is_read_and_absent_means_defaults() {
        let got = parse(json!({"clientId": "id", "clientSecret": "${secret:S}",
            "clientMetadataUrl": "https://c.example/meta.json", "scopes": ["a", "b"]}))
        .unwrap();
        assert_eq!(got.client_id.as_deref(), Some("id"));
        assert_eq!(got.client_secret.as_deref(), Some("${secret:S}"));
        assert_eq!(
            got.client_metadata_url.as_deref(),
            Some("https://c.example/meta.json")
        );
        assert_eq!(got.scopes, Some(vec!["a".to_owned(), "b".to_owned()]));
        assert_eq!(
            parse_oauth("srv", None, &mut Vec::new()).unwrap(),
            OAuthConfig::default()
        );
    }

    #[test]
    fn bad_values_name_the_oauth_field() {
        for (v, field) in [
            (json!("x"), "\"oauth\""),
            (json!({"clientId": 3}), "oauth.clientId"),
            (json!({"clientSecret": "s"}), "oauth.clientSecret"),
            (
                json!({"clientMetadataUrl": "http://x/meta"}),
                "oauth.clientMetadataUrl",
            ),
            (json!({"scopes": [1]}), "oauth.scopes[0]"),
        ] {
            let err = parse(v.clone()).expect_err("invalid").to_string();
            assert!(err.contains(field), "{v}: {err}");
        }
    }

    #[test]
    fn the_secret_is_not_in_debug_output() {
        let got = parse(json!({"clientId": "id", "clientSecret": "hunter2"})).unwrap();
        assert!(!format!("{got:?}").contains("hunter2"));
    }
}
