//! Recognising "this server wants a sign-in" in transport errors, with the
//! `WWW-Authenticate` challenge `login` later starts from (its `resource_metadata` and `scope`
//! steer discovery and scope choice). The challenge travels with the connect error to the
//! server's supervisor, which keeps it in its snapshot (`Snapshot::sign_in_challenge`) until a
//! session starts: no table of challenges outlives the hub.

use rmcp::transport::auth::AuthError;
use rmcp::transport::streamable_http_client::StreamableHttpError;

/// Why a server needs a (new) sign-in.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SignInNeeded {
    /// The `WWW-Authenticate` header of the refusal, when it had one.
    pub challenge: Option<String>,
    /// `true` for a 403 `insufficient_scope` (more scope wanted than granted).
    pub insufficient_scope: bool,
}

impl SignInNeeded {
    /// A sentence for `status` and the log, quoting the server's `error` and
    /// `error_description`, and the command that fixes it. A careless server may quote the
    /// token it refuses there: the supervisor masks known secrets in every last error
    /// (`supervisor::task`), the log writer in every line.
    pub fn describe(&self, server: &str) -> String {
        let said = |name: &str| self.challenge.as_deref().and_then(|c| param(c, name));
        let mut quoted = if self.insufficient_scope {
            "HTTP 403".to_owned()
        } else {
            "HTTP 401".to_owned()
        };
        if let Some(error) = said("error") {
            quoted.push_str(", ");
            quoted.push_str(&error);
        }
        if let Some(description) = said("error_description") {
            quoted.push_str(": ");
            quoted.push_str(&description);
        }
        let why = if self.insufficient_scope {
            let scope = said("scope")
                .map(|s| format!(", asking for scope \"{s}\""))
                .unwrap_or_default();
            format!("the server refuses the granted access ({quoted}{scope})")
        } else {
            format!("the server asks for a sign-in ({quoted})")
        };
        format!("{why}; run `mcp-companion login {server}`")
    }
}

/// Looks through `error` and its causes for a 401, an `insufficient_scope` 403 or an rmcp
/// "authorization required".
pub fn find(error: &(dyn std::error::Error + 'static)) -> Option<SignInNeeded> {
    let mut cur = Some(error);
    while let Some(e) = cur {
        if let Some(http) = e.downcast_ref::<StreamableHttpError<reqwest::Error>>() {
            match http {
                StreamableHttpError::AuthRequired(a) => {
                    return Some(SignInNeeded {
                        challenge: Some(a.www_authenticate_header.clone()),
                        insufficient_scope: false,
                    });
                }
                StreamableHttpError::InsufficientScope(s) => {
                    return Some(SignInNeeded {
                        challenge: Some(s.www_authenticate_header.clone()),
                        insufficient_scope: true,
                    });
                }
                StreamableHttpError::HttpStatus(s) if s.status == 401 => {
                    return Some(SignInNeeded {
                        challenge: None,
                        insufficient_scope: false,
                    });
                }
                StreamableHttpError::Auth(AuthError::AuthorizationRequired)
                | StreamableHttpError::Auth(AuthError::TokenRefreshRejected(_)) => {
                    return Some(SignInNeeded {
                        challenge: None,
                        insufficient_scope: false,
                    });
                }
                _ => {}
            }
        }
        if let Some(AuthError::AuthorizationRequired) = e.downcast_ref::<AuthError>() {
            return Some(SignInNeeded {
                challenge: None,
                insufficient_scope: false,
            });
        }
        cur = e.source();
    }
    None
}

/// [`find`] for an `initialize` failure (its transport error is not chained as a source).
pub fn in_initialize(e: &rmcp::service::ClientInitializeError) -> Option<SignInNeeded> {
    match e {
        rmcp::service::ClientInitializeError::TransportError { error, .. } => find(error),
        other => find(other),
    }
}

/// The value of `name` in a `WWW-Authenticate` header (`Bearer a="x", b=y`), unquoted.
pub fn param(header: &str, name: &str) -> Option<String> {
    let mut rest = header.trim();
    if let Some(after) = rest.strip_prefix("Bearer") {
        rest = after;
    }
    while !rest.is_empty() {
        rest = rest.trim_start_matches([' ', ',']);
        let eq = rest.find('=')?;
        let key = rest[..eq].trim();
        rest = &rest[eq + 1..];
        let value;
        if let Some(quoted) = rest.strip_prefix('"') {
            let mut out = String::new();
            let mut chars = quoted.char_indices();
            let mut end = quoted.len();
            while let Some((i, c)) = chars.next() {
                match c {
                    '\\' => {
                        if let Some((_, n)) = chars.next() {
                            out.push(n);
                        }
                    }
                    '"' => {
                        end = i + 1;
                        break;
                    }
                    c => out.push(c),
                }
            }
            value = out;
            rest = &quoted[end.min(quoted.len())..];
        } else {
            let end = rest.find(',').unwrap_or(rest.len());
            value = rest[..end].trim().to_owned();
            rest = &rest[end..];
        }
        if key.eq_ignore_ascii_case(name) {
            return Some(value);
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn descriptions_quote_the_server_and_name_the_command() {
        let needed = SignInNeeded {
            challenge: Some(
                r#"Bearer error="invalid_token", error_description="The access token expired""#
                    .to_owned(),
            ),
            insufficient_scope: false,
        };
        assert_eq!(
            needed.describe("docs"),
            "the server asks for a sign-in (HTTP 401, invalid_token: The access token expired); \
             run `mcp-companion login docs`"
        );
        let denied = SignInNeeded {
            challenge: Some(r#"Bearer error="insufficient_scope", scope="files:write""#.to_owned()),
            insufficient_scope: true,
        };
        assert_eq!(
            denied.describe("docs"),
            "the server refuses the granted access (HTTP 403, insufficient_scope, asking for \
             scope \"files:write\"); run `mcp-companion login docs`"
        );
    }

    #[test]
    fn parameters_are_read_quoted_or_not() {
        let h = r#"Bearer error="insufficient_scope", scope="a b", resource_metadata="https://h/.well-known/x", realm=plain"#;
        assert_eq!(param(h, "scope").as_deref(), Some("a b"));
        assert_eq!(param(h, "error").as_deref(), Some("insufficient_scope"));
        assert_eq!(param(h, "realm").as_deref(), Some("plain"));
        assert_eq!(
            param(h, "resource_metadata").as_deref(),
            Some("https://h/.well-known/x")
        );
        assert_eq!(param(h, "missing"), None);
        assert_eq!(
            param(r#"Bearer scope="q\"x""#, "scope").as_deref(),
            Some("q\"x")
        );
    }
}
