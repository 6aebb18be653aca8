//! `${VAR}` expansion (DESIGN §3): done in memory at connect time, never written back.
//!
//! Expanded fields: `command`, each of `args`, each value of `env`, `cwd`, `url`, each value of
//! `headers`. Keys and every other field are taken literally.
//!
//! Syntax, scanned left to right:
//!
//! ```text
//! ${NAME}   the value of variable NAME (NAME: non-empty, no whitespace, `$`, `{` or `}`)
//! $${       a literal `${` (the text after it is not a reference)
//! $         any other `$` stays literal: `$HOME`, `$$`, a trailing `$`
//! ${        without a closing `}` is an error, as is `${}`
//! ```
//!
//! Lookup order of [`default_lookup`]: built-in variables first (see [`builtin_variable`]; the
//! environment cannot override them), then the process environment. Values are inserted as-is
//! and are not rescanned.

use std::path::PathBuf;

use super::transport::check_url;
use super::{ConfigError, HttpConfig, ServerConfig, StdioConfig, TransportConfig};

/// The built-in variable holding the absolute path of the running `mcp-companion` executable,
/// so the config can launch our own subcommands (the default `demo` server does).
pub const BUILTIN_EXE_VARIABLE: &str = "MCP_COMPANION_EXE";

/// The value of a built-in variable, or `None` if `name` is not built in.
///
/// `MCP_COMPANION_EXE` is [`std::env::current_exe`]; it is `None` when the OS cannot tell or
/// the path is not valid UTF-8 (the reference then reports as missing).
pub fn builtin_variable(name: &str) -> Option<String> {
    match name {
        BUILTIN_EXE_VARIABLE => std::env::current_exe()
            .ok()
            .and_then(|p| p.to_str().map(str::to_owned)),
        _ => None,
    }
}

/// The lookup used at connect time: built-in variables, then the process environment.
///
/// An environment value that is not valid UTF-8 counts as unset.
pub fn default_lookup(name: &str) -> Option<String> {
    builtin_variable(name).or_else(|| std::env::var(name).ok())
}

impl ServerConfig {
    /// A copy with every `${VAR}` in the expandable fields replaced through `lookup`.
    ///
    /// Expanded: `command`, each arg, each `env` value, `cwd`, `url`, each `headers` value (keys
    /// and other fields are literal). Syntax, scanned left to right; values are not rescanned:
    ///
    /// ```text
    /// ${NAME}   the value of NAME (non-empty, no whitespace, `$`, `{` or `}`)
    /// $${       a literal `${`
    /// $         any other `$` stays literal: `$HOME`, `$$`, a trailing `$`
    /// ```
    ///
    /// `cwd` that expands to `""` becomes `None`. Expanded URLs are checked again (http/https,
    /// has a host) because a variable may have supplied the scheme or host.
    ///
    /// # Errors
    /// [`ConfigError::MissingVariable`] naming server, field (`env.KEY`, `args[1]`, ...) and
    /// variable; [`ConfigError::Field`] for a malformed reference, a command that expands to
    /// `""`, or an expanded URL that is invalid. Errors never contain values.
    pub fn expand(
        &self,
        lookup: &dyn Fn(&str) -> Option<String>,
    ) -> Result<ServerConfig, ConfigError> {
        let name = self.name.as_str();
        let x = |field: &str, text: &str| expand_text(name, field, text, lookup);
        let transport = match &self.transport {
            TransportConfig::Stdio(c) => {
                let command = x("command", &c.command)?;
                if command.is_empty() {
                    return Err(ConfigError::field(
                        name,
                        "command",
                        "is empty after expanding variables",
                    ));
                }
                let args = c
                    .args
                    .iter()
                    .enumerate()
                    .map(|(i, a)| x(&format!("args[{i}]"), a))
                    .collect::<Result<_, _>>()?;
                let env = c
                    .env
                    .iter()
                    .map(|(k, v)| Ok((k.clone(), x(&format!("env.{k}"), v)?)))
                    .collect::<Result<_, ConfigError>>()?;
                let cwd = match &c.cwd {
                    // A non-UTF-8 path cannot have come from JSON, so it holds no reference.
                    Some(p) => match p.to_str() {
                        Some(s) => Some(x("cwd", s)?)
                            .filter(|s| !s.is_empty())
                            .map(PathBuf::from),
                        None => Some(p.clone()),
                    },
                    None => None,
                };
                TransportConfig::Stdio(StdioConfig {
                    command,
                    args,
                    env,
                    cwd,
                })
            }
            TransportConfig::Sse(h) => TransportConfig::Sse(expand_http(name, h, lookup)?),
            TransportConfig::StreamableHttp(h) => {
                TransportConfig::StreamableHttp(expand_http(name, h, lookup)?)
            }
        };
        Ok(ServerConfig {
            transport,
            ..self.clone()
        })
    }

    /// [`ServerConfig::expand`] with [`default_lookup`] (built-ins, then the process
    /// environment).
    ///
    /// # Errors
    /// As [`ServerConfig::expand`].
    pub fn expand_from_env(&self) -> Result<ServerConfig, ConfigError> {
        self.expand(&default_lookup)
    }
}

fn expand_http(
    server: &str,
    h: &HttpConfig,
    lookup: &dyn Fn(&str) -> Option<String>,
) -> Result<HttpConfig, ConfigError> {
    let url = expand_text(server, "url", &h.url, lookup)?;
    check_url(server, &url)?;
    let headers = h
        .headers
        .iter()
        .map(|(k, v)| {
            Ok((
                k.clone(),
                expand_text(server, &format!("headers.{k}"), v, lookup)?,
            ))
        })
        .collect::<Result<_, ConfigError>>()?;
    let text = |field: &str, v: &Option<String>| {
        v.as_deref()
            .map(|v| expand_text(server, &format!("oauth.{field}"), v, lookup))
            .transpose()
    };
    let oauth = crate::config::OAuthConfig {
        client_id: text("clientId", &h.oauth.client_id)?,
        client_secret: text("clientSecret", &h.oauth.client_secret)?,
        client_metadata_url: text("clientMetadataUrl", &h.oauth.client_metadata_url)?,
        scopes: h.oauth.scopes.clone(),
    };
    Ok(HttpConfig {
        url,
        headers,
        oauth,
    })
}

/// Checks the reference syntax of `text` without looking anything up (used at load time, so a
/// malformed `${` fails the entry early rather than at connect time).
pub(crate) fn check_references(server: &str, field: &str, text: &str) -> Result<(), ConfigError> {
    expand_text(server, field, text, &|_| Some(String::new())).map(|_| ())
}

/// Expands `text` (the value of `field` of `server`) by the rules in the module doc.
pub(crate) fn expand_text(
    server: &str,
    field: &str,
    text: &str,
    lookup: &dyn Fn(&str) -> Option<String>,
) -> Result<String, ConfigError> {
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    while let Some(pos) = rest.find('$') {
        out.push_str(&rest[..pos]);
        let after = &rest[pos + 1..];
        if let Some(tail) = after.strip_prefix("${") {
            out.push_str("${");
            rest = tail;
        } else if let Some(tail) = after.strip_prefix('{') {
            let Some(end) = tail.find('}') else {
                return Err(ConfigError::field(
                    server,
                    field,
                    "unterminated `${` (write `$${` for a literal `${`)",
                ));
            };
            let variable = &tail[..end];
            if variable.is_empty() {
                return Err(ConfigError::field(
                    server,
                    field,
                    "empty variable name in `${}`",
                ));
            }
            if variable.contains(|c: char| c == '$' || c == '{' || c.is_whitespace()) {
                return Err(ConfigError::field(
                    server,
                    field,
                    format!("invalid variable name \"{variable}\""),
                ));
            }
            match lookup(variable) {
                Some(value) => out.push_str(&value),
                None => {
                    return Err(ConfigError::MissingVariable {
                        server: server.to_owned(),
                        field: field.to_owned(),
                        variable: variable.to_owned(),
                    });
                }
            }
            rest = &tail[end + 1..];
        } else {
            out.push('$');
            rest = after;
        }
    }
    out.push_str(rest);
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Duration;

    fn lookup(name: &str) -> Option<String> {
        match name {
            "A" => Some("alpha".into()),
            "EMPTY" => Some(String::new()),
            "REF" => Some("${A}".into()),
            "HOST" => Some("example.com".into()),
            "SECRET" => Some("s3cr3t-value".into()),
            _ => None,
        }
    }

    #[test]
    fn expand_text_follows_the_documented_syntax() {
        let cases = [
            ("plain", "plain"),
            ("${A}", "alpha"),
            ("x${A}y${A}", "xalphayalpha"),
            ("${EMPTY}", ""),
            ("$HOME", "$HOME"),
            ("$$", "$$"),
            ("cost $5", "cost $5"),
            ("trailing $", "trailing $"),
            ("$${A}", "${A}"),
            ("$$${A}", "$${A}"),
            ("${REF}", "${A}"),
            ("é${A}ü", "éalphaü"),
        ];
        for (input, want) in cases {
            assert_eq!(
                expand_text("s", "f", input, &lookup).as_ref(),
                Ok(&want.to_owned()),
                "input {input:?}"
            );
        }
    }

    #[test]
    fn malformed_references_are_field_errors() {
        for input in ["${A", "x${", "${}", "${A B}", "${a${A}}"] {
            let err = expand_text("srv", "args[0]", input, &lookup).unwrap_err();
            assert!(
                matches!(&err, ConfigError::Field { server, field, .. } if server == "srv" && field == "args[0]"),
                "input {input:?}: {err:?}"
            );
            assert!(
                check_references("srv", "args[0]", input).is_err(),
                "{input:?}"
            );
        }
        assert!(check_references("srv", "url", "${UNSET_ANYTHING}").is_ok());
    }

    fn stdio(
        command: &str,
        args: &[&str],
        env: &[(&str, &str)],
        cwd: Option<&str>,
    ) -> ServerConfig {
        ServerConfig {
            name: "files".into(),
            transport: TransportConfig::Stdio(StdioConfig {
                command: command.into(),
                args: args.iter().map(|s| s.to_string()).collect(),
                env: env
                    .iter()
                    .map(|(k, v)| (k.to_string(), v.to_string()))
                    .collect(),
                cwd: cwd.map(PathBuf::from),
            }),
            tool_timeout: Duration::from_secs(30),
            connect_timeout: Duration::from_secs(30),
            enabled_tools: vec!["*".into()],
            disabled: false,
        }
    }

    fn http(url: &str, headers: &[(&str, &str)], sse: bool) -> ServerConfig {
        let h = HttpConfig {
            url: url.into(),
            headers: headers
                .iter()
                .map(|(k, v)| (k.to_string(), v.to_string()))
                .collect(),
            oauth: Default::default(),
        };
        ServerConfig {
            name: "docs".into(),
            transport: if sse {
                TransportConfig::Sse(h)
            } else {
                TransportConfig::StreamableHttp(h)
            },
            ..stdio("x", &[], &[], None)
        }
    }

    #[test]
    fn every_expandable_stdio_field_is_expanded() {
        let cfg = stdio(
            "${A}/bin",
            &["-x", "${A}"],
            &[("K", "v-${A}")],
            Some("/home/${A}"),
        );
        let got = cfg.expand(&lookup).unwrap();
        assert_eq!(
            got,
            stdio(
                "alpha/bin",
                &["-x", "alpha"],
                &[("K", "v-alpha")],
                Some("/home/alpha")
            )
        );
        // The original keeps its references.
        assert_eq!(
            cfg,
            stdio(
                "${A}/bin",
                &["-x", "${A}"],
                &[("K", "v-${A}")],
                Some("/home/${A}")
            )
        );
    }

    #[test]
    fn every_expandable_http_field_is_expanded() {
        for sse in [false, true] {
            let cfg = http(
                "https://${HOST}/mcp",
                &[("Authorization", "Bearer ${SECRET}")],
                sse,
            );
            let got = cfg.expand(&lookup).unwrap();
            assert_eq!(
                got,
                http(
                    "https://example.com/mcp",
                    &[("Authorization", "Bearer s3cr3t-value")],
                    sse
                )
            );
        }
    }

    #[test]
    fn cwd_expanding_to_empty_means_none() {
        let got = stdio("c", &[], &[], Some("${EMPTY}"))
            .expand(&lookup)
            .unwrap();
        assert_eq!(got, stdio("c", &[], &[], None));
    }

    #[test]
    fn missing_variable_names_server_field_and_variable_but_no_value() {
        let cases: [(ServerConfig, &str, &str); 6] = [
            (stdio("${NOPE}", &[], &[], None), "command", "files"),
            (stdio("c", &["a", "${NOPE}"], &[], None), "args[1]", "files"),
            (
                stdio("c", &[], &[("API_KEY", "${SECRET}${NOPE}")], None),
                "env.API_KEY",
                "files",
            ),
            (stdio("c", &[], &[], Some("${NOPE}")), "cwd", "files"),
            (http("https://h/${NOPE}", &[], false), "url", "docs"),
            (
                http("https://h/", &[("X-Key", "${SECRET}-${NOPE}")], true),
                "headers.X-Key",
                "docs",
            ),
        ];
        for (cfg, want_field, want_server) in cases {
            let err = cfg.expand(&lookup).unwrap_err();
            assert_eq!(
                err,
                ConfigError::MissingVariable {
                    server: want_server.into(),
                    field: want_field.into(),
                    variable: "NOPE".into(),
                }
            );
            let text = err.to_string();
            assert_eq!(
                text,
                format!(
                    "server \"{want_server}\": field \"{want_field}\": variable \"NOPE\" is not set"
                )
            );
            assert!(!text.contains("s3cr3t"), "{text}");
        }
    }

    #[test]
    fn expanded_url_is_validated_again_without_showing_it() {
        let err = http("${SECRET}", &[], false).expand(&lookup).unwrap_err();
        assert!(
            matches!(&err, ConfigError::Field { field, .. } if field == "url"),
            "{err:?}"
        );
        assert!(!err.to_string().contains("s3cr3t"), "{err}");
    }

    #[test]
    fn command_expanding_to_empty_is_an_error() {
        let err = stdio("${EMPTY}", &[], &[], None)
            .expand(&lookup)
            .unwrap_err();
        assert!(
            matches!(&err, ConfigError::Field { field, .. } if field == "command"),
            "{err:?}"
        );
    }

    #[test]
    fn builtin_exe_variable_is_the_current_executable_and_wins_over_env() {
        let exe = std::env::current_exe().unwrap();
        let exe = exe.to_str().unwrap();
        assert_eq!(builtin_variable(BUILTIN_EXE_VARIABLE).as_deref(), Some(exe));
        assert_eq!(default_lookup(BUILTIN_EXE_VARIABLE).as_deref(), Some(exe));
        assert_eq!(builtin_variable("PATH"), None);
        let got = stdio("${MCP_COMPANION_EXE}", &["demo-server"], &[], None)
            .expand_from_env()
            .unwrap();
        assert_eq!(got, stdio(exe, &["demo-server"], &[], None));
    }

    #[test]
    fn default_lookup_falls_back_to_the_process_environment() {
        // PATH is set in any test environment; read-only, so parallel tests are unaffected.
        assert_eq!(default_lookup("PATH"), std::env::var("PATH").ok());
    }
}
