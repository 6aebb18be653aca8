//! A `server.json` version → one `config.json` server entry.
//!
//! | source | entry |
//! |---|---|
//! | `npm` package | `npx -y <identifier>@<version> <packageArguments…>` (`runtimeHint` `bunx` also) |
//! | `pypi` package | `uvx <identifier>==<version> <packageArguments…>` |
//! | `oci` package | `docker run -i --rm <runtimeArguments…> -e NAME… <image> <packageArguments…>` (`podman` also) |
//! | other packages, non-stdio package transports | unsupported (the error says which) |
//! | remote `streamable-http` / `sse` | `{"type": "streamableHttp"/"sse", "url", "headers"}` |
//!
//! `runtimeArguments` go between the runtime and the package; named arguments are two argv
//! items (`--flag`, `value`; a `boolean` flag is the flag alone when `true`); positional ones
//! one item. Nothing passes through a shell: identifiers, versions and runtime hints are
//! checked against strict character sets, so a hostile registry cannot smuggle options or
//! shell syntax into the command.

use std::collections::BTreeMap;

use serde::Serialize;
use serde_json::{Map, Value, json};

use super::RegistryError;
use super::inputs::{Field, PendingSecret, Resolver, SecretSink, Values};
use super::model::{Argument, KeyValueInput, Package, ServerDetail, Transport};

/// Which way of running the server to install.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, serde::Deserialize)]
#[serde(tag = "kind", content = "index", rename_all = "camelCase")]
pub enum Choice {
    /// `packages[i]`.
    Package(usize),
    /// `remotes[i]`.
    Remote(usize),
}

/// One way to run the server, as offered to the user.
#[derive(Clone, Debug, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct InstallOption {
    /// Which one.
    pub choice: Choice,
    /// E.g. `npm @scope/pkg@1.2.0` or `remote streamable-http https://…`.
    pub label: String,
    /// Why it cannot be installed, if so.
    pub unsupported: Option<String>,
}

/// The result of mapping one version: the entry and what the user must know.
#[derive(Clone, Debug, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Built {
    /// The `config.json` server entry (without `source`).
    pub entry: Value,
    /// The form fields of this choice.
    pub fields: Vec<Field>,
    /// Config strings per field key, to remember in `source.inputs` for updates.
    pub inputs: BTreeMap<String, String>,
    /// Environment variables the user must export (the ones named with `--set-env`).
    pub exports: Vec<String>,
    /// Secret values given, for [`install::save`](super::install::save) to store once every
    /// check has passed.
    #[serde(skip)]
    pub secrets: Vec<PendingSecret>,
    /// The program the entry runs (stdio), to check it is installed.
    pub program: Option<String>,
    /// The flags (argv items starting with `-`) the registry's `runtimeArguments` and
    /// `packageArguments` add, such as docker's `--privileged`: `add` shows the launch line
    /// and asks before writing an entry that has any.
    pub flags: Vec<String>,
}

/// Every package and remote of `detail`, each marked supported or not.
pub fn options(detail: &ServerDetail) -> Vec<InstallOption> {
    let packages = detail.packages.iter().enumerate().map(|(i, p)| {
        let version = p
            .version
            .as_deref()
            .map(|v| format!("@{v}"))
            .unwrap_or_default();
        InstallOption {
            choice: Choice::Package(i),
            label: format!("{} {}{version}", p.registry_type, p.identifier),
            unsupported: package_runtime(p).err(),
        }
    });
    let remotes = detail
        .remotes
        .iter()
        .enumerate()
        .map(|(i, r)| InstallOption {
            choice: Choice::Remote(i),
            label: format!("remote {} {}", r.kind, r.url.as_deref().unwrap_or("")),
            unsupported: remote_type(r).err(),
        });
    packages.chain(remotes).collect()
}

/// The first supported package, else the first supported remote.
///
/// # Errors
/// [`RegistryError::Unsupported`] listing why each option is unsupported.
pub fn default_choice(detail: &ServerDetail) -> Result<Choice, RegistryError> {
    let all = options(detail);
    all.iter()
        .find(|o| o.unsupported.is_none())
        .map(|o| o.choice)
        .ok_or_else(|| RegistryError::Unsupported {
            name: detail.name.clone(),
            reason: if all.is_empty() {
                "it has no packages and no remotes".into()
            } else {
                all.iter()
                    .map(|o| format!("{}: {}", o.label, o.unsupported.as_deref().unwrap_or("")))
                    .collect::<Vec<_>>()
                    .join("; ")
            },
        })
}

/// Maps `detail` (installed as server `server`) with `choice` and the user's `values`.
/// With `listing`, missing required values are not errors (to show the form first).
///
/// # Errors
/// [`RegistryError::Unsupported`], [`RegistryError::Hostile`] (identifier, version, runtime
/// hint or URL refused), [`RegistryError::MissingInput`], [`RegistryError::BadInput`],
/// [`RegistryError::Secret`].
pub fn build(
    detail: &ServerDetail,
    choice: Choice,
    server: &str,
    values: &Values,
    secrets: &dyn SecretSink,
    listing: bool,
) -> Result<Built, RegistryError> {
    let mut r = Resolver::new(server, values, secrets, listing);
    let (entry, program, flags) = match choice {
        Choice::Package(i) => {
            let p = detail
                .packages
                .get(i)
                .ok_or_else(|| no_choice(detail, choice))?;
            package_entry(detail, p, &mut r)?
        }
        Choice::Remote(i) => {
            let t = detail
                .remotes
                .get(i)
                .ok_or_else(|| no_choice(detail, choice))?;
            (remote_entry(detail, t, &mut r)?, None, Vec::new())
        }
    };
    Ok(Built {
        entry,
        fields: r.fields,
        inputs: r.chosen,
        exports: r.exports,
        secrets: r.pending,
        program,
        flags,
    })
}

fn no_choice(detail: &ServerDetail, choice: Choice) -> RegistryError {
    RegistryError::Unsupported {
        name: detail.name.clone(),
        reason: format!("it has no {choice:?}"),
    }
}

/// The runtime program of a package: the hint when allowed for its type, else the default.
fn package_runtime(p: &Package) -> Result<&str, String> {
    let (default, allowed): (&str, &[&str]) = match p.registry_type.as_str() {
        "npm" => ("npx", &["npx", "bunx"]),
        "pypi" => ("uvx", &["uvx"]),
        "oci" => ("docker", &["docker", "podman"]),
        other => {
            return Err(format!(
                "package type \"{other}\" is not supported (npm, pypi, oci are)"
            ));
        }
    };
    if let Some(t) = &p.transport
        && t.kind != "stdio"
    {
        return Err(format!(
            "package transport \"{}\" is not supported (stdio is; install a remote instead)",
            t.kind
        ));
    }
    match p.runtime_hint.as_deref() {
        None => Ok(default),
        Some(h) => allowed.iter().find(|a| **a == h).copied().ok_or_else(|| {
            format!(
                "runtimeHint \"{}\" is not supported for {} (use {})",
                super::client::quote(h),
                p.registry_type,
                allowed.join(", ")
            )
        }),
    }
}

fn package_entry(
    detail: &ServerDetail,
    p: &Package,
    r: &mut Resolver<'_>,
) -> Result<(Value, Option<String>, Vec<String>), RegistryError> {
    let runtime = package_runtime(p).map_err(|reason| RegistryError::Unsupported {
        name: detail.name.clone(),
        reason,
    })?;
    check_token("identifier", &p.identifier, IDENTIFIER_CHARS)?;
    if let Some(v) = &p.version {
        check_token("version", v, VERSION_CHARS)?;
    }
    let mut env = Map::new();
    for kv in &p.environment_variables {
        check_token("environment variable name", &kv.name, ENV_CHARS)?;
        if let Some(v) = r.input(&kv.name, &format!("env {}", kv.name), &kv.input)? {
            env.insert(kv.name.clone(), Value::String(v));
        }
    }
    let runtime_args = arguments(&p.runtime_arguments, r)?;
    let package_args = arguments(&p.package_arguments, r)?;
    let flags = runtime_args
        .iter()
        .chain(&package_args)
        .filter(|a| a.starts_with('-'))
        .cloned()
        .collect();
    let mut args: Vec<String> = Vec::new();
    match p.registry_type.as_str() {
        "npm" => {
            if runtime == "npx" && !runtime_args.iter().any(|a| a == "-y" || a == "--yes") {
                args.push("-y".into());
            }
            args.extend(runtime_args);
            args.push(match &p.version {
                Some(v) => format!("{}@{v}", p.identifier),
                None => p.identifier.clone(),
            });
        }
        "pypi" => {
            args.extend(runtime_args);
            args.push(match &p.version {
                Some(v) => format!("{}=={v}", p.identifier),
                None => p.identifier.clone(),
            });
        }
        _ => {
            args.extend(["run", "-i", "--rm"].map(String::from));
            args.extend(runtime_args);
            for name in env.keys() {
                args.extend(["-e".to_owned(), name.clone()]);
            }
            let tagged = p
                .identifier
                .rsplit('/')
                .next()
                .is_some_and(|last| last.contains(':'))
                || p.identifier.contains('@');
            args.push(match &p.version {
                Some(v) if !tagged => format!("{}:{v}", p.identifier),
                _ => p.identifier.clone(),
            });
        }
    }
    args.extend(package_args);
    let mut entry = Map::new();
    entry.insert("command".into(), json!(runtime));
    entry.insert("args".into(), json!(args));
    if !env.is_empty() {
        entry.insert("env".into(), Value::Object(env));
    }
    Ok((Value::Object(entry), Some(runtime.to_owned()), flags))
}

/// `runtimeArguments` / `packageArguments` → argv items (config strings).
fn arguments(list: &[Argument], r: &mut Resolver<'_>) -> Result<Vec<String>, RegistryError> {
    let mut out = Vec::new();
    for (i, a) in list.iter().enumerate() {
        match a.kind.as_str() {
            "positional" => {
                let key = a.value_hint.clone().unwrap_or_else(|| format!("arg{i}"));
                if let Some(v) = r.input(&key, &format!("argument <{key}>"), &a.input)? {
                    out.push(v);
                }
            }
            "named" => {
                let name = a.name.as_deref().unwrap_or_default();
                check_token("argument name", name, IDENTIFIER_CHARS)?;
                let key = name.trim_start_matches('-').to_owned();
                let boolean = a.input.format.as_deref() == Some("boolean");
                match r.input(&key, &format!("argument {name}"), &a.input)? {
                    Some(v) if boolean && v == "true" => out.push(name.to_owned()),
                    Some(_) if boolean => {}
                    Some(v) => out.extend([name.to_owned(), v]),
                    None => {}
                }
            }
            other => {
                return Err(RegistryError::Hostile {
                    what: "argument type".into(),
                    value: super::client::quote(other),
                    reason: "expected positional or named".into(),
                });
            }
        }
    }
    Ok(out)
}

fn remote_type(t: &Transport) -> Result<&'static str, String> {
    match t.kind.as_str() {
        "streamable-http" => Ok("streamableHttp"),
        "sse" => Ok("sse"),
        other => Err(format!(
            "remote transport \"{}\" is not supported (streamable-http, sse are)",
            super::client::quote(other)
        )),
    }
}

fn remote_entry(
    detail: &ServerDetail,
    t: &Transport,
    r: &mut Resolver<'_>,
) -> Result<Value, RegistryError> {
    let kind = remote_type(t).map_err(|reason| RegistryError::Unsupported {
        name: detail.name.clone(),
        reason,
    })?;
    let template = t.url.as_deref().unwrap_or_default();
    let url = r.template(template, &t.variables, "url")?;
    let mut headers = Map::new();
    for KeyValueInput { name, input } in &t.headers {
        check_token("header name", name, ENV_CHARS)?;
        if let Some(v) = r.input(name, &format!("header {name}"), input)? {
            headers.insert(name.clone(), Value::String(v));
        }
    }
    let mut entry = Map::new();
    entry.insert("type".into(), json!(kind));
    entry.insert("url".into(), json!(url));
    if !headers.is_empty() {
        entry.insert("headers".into(), Value::Object(headers));
    }
    Ok(Value::Object(entry))
}

/// Package identifiers: npm (`@scope/name`), PyPI, OCI (`host/repo:tag@sha256:…`) names.
const IDENTIFIER_CHARS: &str = "@/._+~:-";
/// Versions: semver with pre-release and build metadata, PEP 440.
const VERSION_CHARS: &str = "._+-";
/// Environment variable and header names.
const ENV_CHARS: &str = "_-.";

/// Refuses values with characters outside ASCII alphanumerics + `extra`, a leading `-` (it
/// would become an option) and empty ones.
fn check_token(what: &str, value: &str, extra: &str) -> Result<(), RegistryError> {
    let hostile = |reason: &str| RegistryError::Hostile {
        what: what.to_owned(),
        value: super::client::quote(value),
        reason: reason.to_owned(),
    };
    if value.is_empty() || value.len() > 200 {
        return Err(hostile("must be 1 to 200 characters"));
    }
    if let Some(c) = value
        .chars()
        .find(|c| !(c.is_ascii_alphanumeric() || extra.contains(*c)))
    {
        return Err(hostile(&format!("character {c:?} is not allowed")));
    }
    if value.starts_with('-') && what != "argument name" {
        return Err(hostile("must not start with '-'"));
    }
    Ok(())
}

#[cfg(test)]
#[path = "entry_tests.rs"]
mod tests;
