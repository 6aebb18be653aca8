//! Moving plain-text secrets out of a config document into the keychain (`secret migrate`,
//! and the import offer in the window).
//!
//! A value moves when its key under `env` or `headers` looks secret ([`looks_secret`]), it is
//! non-empty and it holds no `${…}` reference yet. The keychain name is `SERVER.KEY` (characters
//! a name cannot have become `_`; `-2`, `-3`… when that name already holds a different value).
//! An `Authorization` value `Bearer xyz` / `Basic xyz` / `Token xyz` keeps its scheme in the
//! config: `Bearer ${secret:docs.Authorization}`. [`plan`] decides and shows; [`apply`] stores
//! every value first and only then rewrites the document, so a keychain failure leaves the
//! document untouched.

use serde::Serialize;
use serde_json::Value;

use crate::secret::{SecretError, SecretStore, validate_name};

/// Whether an `env` or `headers` key names a secret: it contains `TOKEN`, `KEY`, `SECRET`,
/// `PASSWORD` or `PASSWD` (any case), or is `Authorization` / `Proxy-Authorization`.
pub fn looks_secret(key: &str) -> bool {
    let upper = key.to_ascii_uppercase();
    ["TOKEN", "KEY", "SECRET", "PASSWORD", "PASSWD"]
        .iter()
        .any(|w| upper.contains(w))
        || upper == "AUTHORIZATION"
        || upper == "PROXY-AUTHORIZATION"
}

/// One plain-text value that moves to the keychain. The value itself is private and never
/// serialised or printed.
#[derive(Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct SecretMove {
    /// The server's name under `mcpServers`.
    pub server: String,
    /// The field: `env.KEY` or `headers.KEY`.
    pub field: String,
    /// The keychain name the value is stored under.
    pub secret: String,
    /// What the config holds afterwards, e.g. `Bearer ${secret:docs.Authorization}`.
    pub reference: String,
    /// Whether the keychain already holds this exact value under `secret` (nothing to store).
    pub already_stored: bool,
    #[serde(skip)]
    value: String,
    /// The whole plain-text field (scheme included), so [`rewrite`] replaces only what was
    /// planned.
    #[serde(skip)]
    original: String,
}

impl std::fmt::Debug for SecretMove {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("SecretMove")
            .field("server", &self.server)
            .field("field", &self.field)
            .field("secret", &self.secret)
            .field("reference", &self.reference)
            .finish_non_exhaustive()
    }
}

/// The moves for the servers of `doc` (a whole config document, `mcpServers` inside), limited
/// to `only` when given, for every key that [`looks_secret`]. Reads `store` to pick names that
/// do not clash.
///
/// # Errors
/// The store's error (e.g. [`SecretError::Unavailable`]); nothing is changed.
pub fn plan(
    doc: &Value,
    only: Option<&[String]>,
    store: &dyn SecretStore,
) -> Result<Vec<SecretMove>, SecretError> {
    plan_with(doc, only, &|_, key| looks_secret(key), store)
}

/// The moves for the fields named in `fields` (`env.KEY`, `headers.KEY`) of every server in
/// `doc`: the window's "keep this value in the keychain" choices, whatever the key looks like.
///
/// # Errors
/// As [`plan`].
pub fn plan_fields(
    doc: &Value,
    fields: &[String],
    store: &dyn SecretStore,
) -> Result<Vec<SecretMove>, SecretError> {
    plan_with(
        doc,
        None,
        &|section, key| fields.iter().any(|f| *f == format!("{section}.{key}")),
        store,
    )
}

/// [`plan`] with the choice of keys made by `select(section, key)` (`section`: `env` or
/// `headers`).
///
/// # Errors
/// As [`plan`].
pub fn plan_with(
    doc: &Value,
    only: Option<&[String]>,
    select: &dyn Fn(&str, &str) -> bool,
    store: &dyn SecretStore,
) -> Result<Vec<SecretMove>, SecretError> {
    let mut moves: Vec<SecretMove> = Vec::new();
    let Some(servers) = doc.get("mcpServers").and_then(Value::as_object) else {
        return Ok(moves);
    };
    for (server, entry) in servers {
        if only.is_some_and(|o| !o.iter().any(|n| n == server)) {
            continue;
        }
        for section in ["env", "headers"] {
            let Some(map) = entry.get(section).and_then(Value::as_object) else {
                continue;
            };
            for (key, value) in map {
                let Some(text) = value.as_str() else { continue };
                if !select(section, key) || text.is_empty() || text.contains("${") {
                    continue;
                }
                let (prefix, value) = split_scheme(key, text);
                let base = crate::secret::entry_secret_name(server, key);
                let (secret, already_stored) = free_name(&base, value, store, &moves)?;
                moves.push(SecretMove {
                    server: server.clone(),
                    field: format!("{section}.{key}"),
                    reference: format!("{prefix}${{secret:{secret}}}"),
                    secret,
                    already_stored,
                    value: value.to_owned(),
                    original: text.to_owned(),
                });
            }
        }
    }
    Ok(moves)
}

/// Stores each move's value in `store`, then replaces the values in `doc` with their
/// references. Returns how many values were stored (moves already stored are not written
/// again).
///
/// # Errors
/// The first store error; `doc` is then unchanged (values stored before it stay stored).
pub fn apply(
    doc: &mut Value,
    moves: &[SecretMove],
    store: &dyn SecretStore,
) -> Result<usize, SecretError> {
    let stored = store_values(moves, store)?;
    rewrite(doc, moves);
    Ok(stored)
}

/// The first half of [`apply`]: stores each move's value (skipping those already stored) and
/// returns how many were written.
///
/// # Errors
/// The first store error.
pub fn store_values(moves: &[SecretMove], store: &dyn SecretStore) -> Result<usize, SecretError> {
    let mut stored = 0;
    for m in moves.iter().filter(|m| !m.already_stored) {
        store.set(&m.secret, &m.value)?;
        stored += 1;
    }
    Ok(stored)
}

/// The second half of [`apply`]: replaces each moved value in `doc` with its reference.
/// Fields that are gone from `doc`, or no longer hold the planned value, are left alone.
pub fn rewrite(doc: &mut Value, moves: &[SecretMove]) {
    for m in moves {
        let Some((section, key)) = m.field.split_once('.') else {
            continue;
        };
        if let Some(slot) = doc
            .get_mut("mcpServers")
            .and_then(|s| s.get_mut(&m.server))
            .and_then(|e| e.get_mut(section))
            .and_then(|s| s.get_mut(key))
            && slot.as_str() == Some(m.original.as_str())
        {
            *slot = Value::String(m.reference.clone());
        }
    }
}

/// `Bearer xyz` under an authorization header splits into (`"Bearer "`, `"xyz"`); anything
/// else is ("", whole value).
fn split_scheme<'a>(key: &str, text: &'a str) -> (&'a str, &'a str) {
    if key.to_ascii_uppercase().ends_with("AUTHORIZATION")
        && let Some((scheme, rest)) = text.split_once(' ')
        && ["bearer", "basic", "token"].contains(&scheme.to_ascii_lowercase().as_str())
        && !rest.trim().is_empty()
    {
        return (&text[..scheme.len() + 1], rest);
    }
    ("", text)
}

/// The first of `base`, `base-2`, `base-3`… that is free or already holds `value` (in the
/// store or among the moves planned so far).
fn free_name(
    base: &str,
    value: &str,
    store: &dyn SecretStore,
    planned: &[SecretMove],
) -> Result<(String, bool), SecretError> {
    for n in 1.. {
        let name = if n == 1 {
            base.to_owned()
        } else {
            format!("{base}-{n}")
        };
        validate_name(&name)?;
        if let Some(p) = planned.iter().find(|m| m.secret == name) {
            if p.value == value {
                return Ok((name, true));
            }
            continue;
        }
        match store.get(&name)? {
            None => return Ok((name, false)),
            Some(v) if v == value => return Ok((name, true)),
            Some(_) => continue,
        }
    }
    unreachable!("the loop above returns")
}

#[cfg(test)]
#[path = "secrets_tests.rs"]
mod tests;
