//! `${VAR}` and `${secret:NAME}` expansion (DESIGN §3): done in memory at connect time, never
//! written back.
//!
//! Expanded fields: `command`, each of `args`, each value of `env`, `cwd`, `url`, each value of
//! `headers`. Keys and every other field are taken literally.
//!
//! Syntax, scanned left to right:
//!
//! ```text
//! ${NAME}         the value of variable NAME (NAME: non-empty, no whitespace, `$`, `{` or `}`)
//! ${secret:NAME}  the secret NAME from the OS keychain (see crate::secret; NAME as in
//!                 crate::secret::validate_name)
//! $${       a literal `${` (the text after it is not a reference)
//! $         any other `$` stays literal: `$HOME`, `$$`, a trailing `$`
//! ${        without a closing `}` is an error, as is `${}`
//! ```
//!
//! Lookup order of [`default_lookup`]: built-in variables first (see [`builtin_variable`]; the
//! environment cannot override them), then the process environment. Values are inserted as-is
//! and are not rescanned. Secrets are read through a [`SecretStore`] (the OS keychain in
//! [`ServerConfig::expand_from_env`]) only for references that are actually present; a missing
//! secret is [`ConfigError::MissingSecret`], which names the secret and the command that sets
//! it, and fails that server only.

use std::path::PathBuf;
use std::sync::Arc;

use super::transport::check_url;
use super::{ConfigError, HttpConfig, ServerConfig, StdioConfig, TransportConfig};
use crate::secret::{self, SecretError, SecretStore};

/// What a reference starts with when it names a keychain secret: `${secret:NAME}`.
pub const SECRET_PREFIX: &str = "secret:";

/// The built-in variable holding the absolute path of the running `mcp-companion` executable,
/// so the config can launch our own subcommands (the default `demo` server does).
pub const BUILTIN_EXE_VARIABLE: &str = "MCP_COMPANION_EXE";

/// The value of a built-in variable, or `None` if `name` is not built in.
///
/// `MCP_COMPANION_EXE` is [`std::env::current_exe`]; it is `None` when the OS cannot tell or
/// the path is not valid UTF-8 (the reference then reports as missing). Linux names a binary
/// that was replaced while it runs `<path> (deleted)`; when `<path>` holds a file again (a
/// package upgrade, or `connect`/`serve` refreshing the stable copy agents start) that file is
/// named: the same program, its newer build.
pub fn builtin_variable(name: &str) -> Option<String> {
    match name {
        BUILTIN_EXE_VARIABLE => std::env::current_exe()
            .ok()
            .and_then(|p| p.to_str().map(replaced_exe)),
        _ => None,
    }
}

/// `exe` without Linux's ` (deleted)` when a file is at that path again.
fn replaced_exe(exe: &str) -> String {
    match exe.strip_suffix(" (deleted)") {
        Some(path) if cfg!(target_os = "linux") && std::path::Path::new(path).is_file() => {
            path.to_owned()
        }
        _ => exe.to_owned(),
    }
}

/// The lookup used at connect time: built-in variables, then the process environment.
///
/// An environment value that is not valid UTF-8 counts as unset.
pub fn default_lookup(name: &str) -> Option<String> {
    builtin_variable(name).or_else(|| std::env::var(name).ok())
}

impl ServerConfig {
    /// A copy with every `${VAR}` in the expandable fields replaced through `lookup` and every
    /// `${secret:NAME}` through `secrets`.
    ///
    /// Expanded: `command`, each arg, each `env` value, `cwd`, `url`, each `headers` value (keys
    /// and other fields are literal). Syntax, scanned left to right; values are not rescanned:
    ///
    /// ```text
    /// ${NAME}          the value of NAME (non-empty, no whitespace, `$`, `{` or `}`)
    /// ${secret:NAME}   the secret NAME from `secrets`
    /// $${       a literal `${`
    /// $         any other `$` stays literal: `$HOME`, `$$`, a trailing `$`
    /// ```
    ///
    /// `cwd` that expands to `""` becomes `None`. Expanded URLs are checked again (http/https,
    /// has a host) because a variable may have supplied the scheme or host.
    ///
    /// # Errors
    /// [`ConfigError::MissingVariable`] naming server, field (`env.KEY`, `args[1]`, ...) and
    /// variable; [`ConfigError::MissingSecret`] naming server, field and secret when `secrets`
    /// has no such secret; [`ConfigError::Secret`] when the store fails (no keychain, …);
    /// [`ConfigError::Field`] for a malformed reference (including an invalid secret name), a command that expands to
    /// `""`, or an expanded URL that is invalid. Errors never contain values.
    pub fn expand(
        &self,
        lookup: &dyn Fn(&str) -> Option<String>,
        secrets: &dyn SecretStore,
    ) -> Result<ServerConfig, ConfigError> {
        let name = self.name.as_str();
        let src = Sources { lookup, secrets };
        let x = |field: &str, text: &str| expand_text(name, field, text, &src);
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
            TransportConfig::Sse(h) => TransportConfig::Sse(expand_http(name, h, &src)?),
            TransportConfig::StreamableHttp(h) => {
                TransportConfig::StreamableHttp(expand_http(name, h, &src)?)
            }
        };
        Ok(ServerConfig {
            transport,
            ..self.clone()
        })
    }

    /// [`ServerConfig::expand`] with [`default_lookup`] (built-ins, then the process
    /// environment) and the OS keychain ([`secret::os_keychain`]), which is contacted only
    /// when the entry has a `${secret:…}` reference. May block for a keychain round trip: async
    /// code calls [`expand_for_start`].
    ///
    /// # Errors
    /// As [`ServerConfig::expand`].
    pub fn expand_from_env(&self) -> Result<ServerConfig, ConfigError> {
        let keychain = secret::os_keychain();
        self.expand(&default_lookup, &Remembered(&keychain))
    }

    /// Every `${secret:NAME}` reference in the expandable fields, as (field, name) pairs in
    /// field order (`env.API_KEY`, `headers.Authorization`, `args[2]`…). Malformed text is
    /// skipped (loading reports it).
    pub fn secret_references(&self) -> Vec<(String, String)> {
        let mut found = Vec::new();
        let mut scan = |field: String, text: &str| {
            for name in secret_names_in(text) {
                found.push((field.clone(), name));
            }
        };
        match &self.transport {
            TransportConfig::Stdio(c) => {
                scan("command".into(), &c.command);
                for (i, a) in c.args.iter().enumerate() {
                    scan(format!("args[{i}]"), a);
                }
                for (k, v) in &c.env {
                    scan(format!("env.{k}"), v);
                }
                if let Some(cwd) = c.cwd.as_ref().and_then(|p| p.to_str()) {
                    scan("cwd".into(), cwd);
                }
            }
            TransportConfig::Sse(h) | TransportConfig::StreamableHttp(h) => {
                scan("url".into(), &h.url);
                for (k, v) in &h.headers {
                    scan(format!("headers.{k}"), v);
                }
            }
        }
        found
    }
}

/// [`ServerConfig::expand_from_env`] for async callers: when the entry reads secrets, the
/// keychain round trips run on the blocking pool, so a slow keychain (a D-Bus activation, an
/// unlock prompt) never stalls the runtime's workers.
///
/// # Errors
/// As [`ServerConfig::expand`].
pub async fn expand_for_start(cfg: Arc<ServerConfig>) -> Result<ServerConfig, ConfigError> {
    if cfg.secret_references().is_empty() {
        return cfg.expand_from_env();
    }
    let name = cfg.name.clone();
    tokio::task::spawn_blocking(move || cfg.expand_from_env())
        .await
        .unwrap_or_else(|e| {
            Err(ConfigError::field(
                &name,
                "env",
                format!("expansion stopped: {e}"),
            ))
        })
}

/// The names of the well-formed `${secret:NAME}` references in `text`, in order.
pub fn secret_names_in(text: &str) -> Vec<String> {
    let recorder = Recorder::default();
    let lookup = |_: &str| Some(String::new());
    let src = Sources {
        lookup: &lookup,
        secrets: &recorder,
    };
    // Malformed text stops the scan; the names found before it are still returned.
    let _ = expand_text("", "", text, &src);
    recorder.take()
}

/// Where references are resolved: variables through `lookup`, secrets through `secrets`.
pub(crate) struct Sources<'a> {
    lookup: &'a dyn Fn(&str) -> Option<String>,
    secrets: &'a dyn SecretStore,
}

impl<'a> Sources<'a> {
    /// Variables through `lookup`, secrets through `secrets`.
    pub(crate) fn new(
        lookup: &'a dyn Fn(&str) -> Option<String>,
        secrets: &'a dyn SecretStore,
    ) -> Sources<'a> {
        Sources { lookup, secrets }
    }
}

/// A view of a store that hands each value it reads to the log scrubber
/// ([`crate::net::remember_secrets`]), so a secret that turns up in any log line anyway (a
/// server echoing its environment to stderr) is masked there.
struct Remembered<'a>(&'a dyn SecretStore);

impl SecretStore for Remembered<'_> {
    fn get(&self, name: &str) -> Result<Option<String>, SecretError> {
        let value = self.0.get(name)?;
        if let Some(v) = &value {
            crate::net::remember_secrets("", std::iter::once(v));
        }
        Ok(value)
    }
    fn set(&self, name: &str, value: &str) -> Result<(), SecretError> {
        self.0.set(name, value)
    }
    fn delete(&self, name: &str) -> Result<bool, SecretError> {
        self.0.delete(name)
    }
    fn names(&self) -> Result<Vec<String>, SecretError> {
        self.0.names()
    }
}

/// A store that has every secret (as `""`) and remembers the names asked for: used to scan
/// and check references without touching a keychain.
#[derive(Default)]
struct Recorder {
    names: std::sync::Mutex<Vec<String>>,
}

impl Recorder {
    fn take(&self) -> Vec<String> {
        std::mem::take(&mut *self.names.lock().unwrap_or_else(|p| p.into_inner()))
    }
}

impl SecretStore for Recorder {
    fn get(&self, name: &str) -> Result<Option<String>, SecretError> {
        secret::validate_name(name)?;
        self.names
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .push(name.to_owned());
        Ok(Some(String::new()))
    }
    fn set(&self, _: &str, _: &str) -> Result<(), SecretError> {
        Ok(())
    }
    fn delete(&self, _: &str) -> Result<bool, SecretError> {
        Ok(false)
    }
    fn names(&self) -> Result<Vec<String>, SecretError> {
        Ok(Vec::new())
    }
}

fn expand_http(server: &str, h: &HttpConfig, src: &Sources) -> Result<HttpConfig, ConfigError> {
    let url = expand_text(server, "url", &h.url, src)?;
    check_url(server, &url)?;
    let headers = h
        .headers
        .iter()
        .map(|(k, v)| {
            Ok((
                k.clone(),
                expand_text(server, &format!("headers.{k}"), v, src)?,
            ))
        })
        .collect::<Result<_, ConfigError>>()?;
    let text = |field: &str, v: &Option<String>| {
        v.as_deref()
            .map(|v| expand_text(server, &format!("oauth.{field}"), v, src))
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

/// Checks the reference syntax of `text` (secret names included) without looking anything up
/// (used at load time, so a malformed `${` fails the entry early rather than at connect time).
pub(crate) fn check_references(server: &str, field: &str, text: &str) -> Result<(), ConfigError> {
    let lookup = |_: &str| Some(String::new());
    let src = Sources {
        lookup: &lookup,
        secrets: &Recorder::default(),
    };
    expand_text(server, field, text, &src).map(|_| ())
}

/// Expands `text` (the value of `field` of `server`) by the rules in the module doc.
pub(crate) fn expand_text(
    server: &str,
    field: &str,
    text: &str,
    src: &Sources,
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
            if let Some(secret_name) = variable.strip_prefix(SECRET_PREFIX) {
                out.push_str(&expand_secret(server, field, secret_name, src.secrets)?);
                rest = &tail[end + 1..];
                continue;
            }
            match (src.lookup)(variable) {
                Some(value) => {
                    crate::net::remember_expanded(variable, &value);
                    out.push_str(&value);
                }
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

/// The value of `${secret:NAME}` in `field` of `server`.
fn expand_secret(
    server: &str,
    field: &str,
    name: &str,
    secrets: &dyn SecretStore,
) -> Result<String, ConfigError> {
    match secrets.get(name) {
        Ok(Some(value)) => Ok(value),
        Ok(None) => Err(ConfigError::MissingSecret {
            server: server.to_owned(),
            field: field.to_owned(),
            secret: name.to_owned(),
        }),
        Err(e @ SecretError::InvalidName { .. }) => {
            Err(ConfigError::field(server, field, e.to_string()))
        }
        Err(e) => Err(ConfigError::Secret {
            server: server.to_owned(),
            field: field.to_owned(),
            secret: name.to_owned(),
            message: e.to_string(),
        }),
    }
}

#[cfg(test)]
#[path = "expand_tests.rs"]
mod tests;
