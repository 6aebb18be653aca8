//! The inputs of a `server.json` package or remote (`environmentVariables`, headers,
//! `runtimeArguments`/`packageArguments`, URL `variables`, and the `variables` of any value
//! template) as form fields, and their resolution to config strings.
//!
//! A *config string* is what goes into `config.json`: text from the user or the registry is
//! escaped (`${` → `$${`) so it is never expanded, and secrets are references to the keychain
//! (`${secret:NAME}`), never plain text. The companion's environment is read only where the
//! person asked for it (`--set-env KEY=VAR` → `${VAR}`): a registry that names an input after
//! one of the person's variables (`AWS_SECRET_ACCESS_KEY`) gets nothing from it.

use std::collections::BTreeMap;

use serde::Serialize;

use super::RegistryError;
use super::model::Input;

/// One field of the install form.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Field {
    /// The key of `--set KEY=VALUE` and of the form: an environment variable or header name,
    /// a named argument without its leading dashes, a positional argument's `valueHint`, or a
    /// `{variable}` name.
    pub key: String,
    /// Where the value goes, e.g. `env GITHUB_TOKEN`, `header Authorization`, `argument --port`.
    pub target: String,
    /// The registry's description.
    pub description: Option<String>,
    /// Whether a value must be given.
    pub required: bool,
    /// Value used when none is given.
    pub default: Option<String>,
    /// Example text.
    pub placeholder: Option<String>,
    /// Allowed values (empty: any).
    pub choices: Vec<String>,
    /// `string`, `number`, `boolean` or `filepath`.
    pub format: String,
    /// Stored in the keychain, never in the file.
    pub secret: bool,
}

/// Where secret values go: the OS keychain, or nowhere (no keychain on this machine).
///
/// Nothing is stored while an entry is planned: the resolver writes the reference
/// (`${secret:NAME}`) and keeps the value as a [`PendingSecret`]; [`SecretSink::store`] runs
/// only once every check has passed (`install::save`), so a refused or dry-run install
/// leaves the keychain as it was.
pub trait SecretSink: Send + Sync {
    /// Whether values can be kept at all.
    ///
    /// # Errors
    /// A human-readable reason (no keychain answers).
    fn available(&self) -> Result<(), String>;
    /// Stores `value` under keychain name `name`.
    ///
    /// # Errors
    /// A human-readable reason (the keychain refused).
    fn store(&self, name: &str, value: &str) -> Result<(), String>;
}

/// The sink when no keychain answers. A secret value given with `--set` is refused (never
/// dropped, never written to the file), and a secret not given is a missing input: nothing
/// installed from a registry reads the companion's environment unless the person wrote that
/// reference (`--set-env KEY=VAR`, see [`Values::env`]).
#[derive(Clone, Debug, Default)]
pub struct NoKeychainSink;

impl SecretSink for NoKeychainSink {
    fn available(&self) -> Result<(), String> {
        Err(
            "no OS keychain is available to keep it, and secrets are never written to the \
             config file; export it in an environment variable of your choice and pass \
             --set-env KEY=VAR instead"
                .to_owned(),
        )
    }

    fn store(&self, _name: &str, _value: &str) -> Result<(), String> {
        self.available()
    }
}

/// Whether `name` is a plain environment variable name (`[A-Za-z_][A-Za-z0-9_]*`): what a
/// person may name with `--set-env`. Anything else (`secret:…`, spaces, braces) could read
/// more than one variable.
pub fn is_env_var_name(name: &str) -> bool {
    let mut chars = name.chars();
    chars
        .next()
        .is_some_and(|c| c.is_ascii_alphabetic() || c == '_')
        && chars.all(|c| c.is_ascii_alphanumeric() || c == '_')
}

/// Secrets written to a store (the OS keychain) through `set`, referenced as
/// `${secret:NAME}` with NAME = [`secret_name`]`(server, key)`. A required secret the user did
/// not give is a missing input (there is no reference to fall back to).
pub struct StoredSecrets<F>
where
    F: Fn(&str, &str) -> Result<(), String> + Send + Sync,
{
    set: F,
}

impl<F> StoredSecrets<F>
where
    F: Fn(&str, &str) -> Result<(), String> + Send + Sync,
{
    /// A sink storing each value with `set(name, value)`.
    pub fn new(set: F) -> StoredSecrets<F> {
        StoredSecrets { set }
    }
}

impl<F> SecretSink for StoredSecrets<F>
where
    F: Fn(&str, &str) -> Result<(), String> + Send + Sync,
{
    fn available(&self) -> Result<(), String> {
        Ok(())
    }

    fn store(&self, name: &str, value: &str) -> Result<(), String> {
        (self.set)(name, value)
    }
}

/// A secret value the user gave, to be stored under `name` once the install is checked. The
/// value is never serialised or printed.
#[derive(Clone, PartialEq, Eq)]
pub struct PendingSecret {
    /// The input's key.
    pub key: String,
    /// The keychain name the reference in the entry points to.
    pub name: String,
    value: String,
}

impl PendingSecret {
    /// Stores this value through `sink`.
    ///
    /// # Errors
    /// [`RegistryError::Secret`] naming the input.
    pub fn store(&self, sink: &dyn SecretSink) -> Result<(), RegistryError> {
        sink.store(&self.name, &self.value)
            .map_err(|reason| RegistryError::Secret {
                key: self.key.clone(),
                reason,
            })
    }
}

impl std::fmt::Debug for PendingSecret {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("PendingSecret")
            .field("key", &self.key)
            .field("name", &self.name)
            .finish_non_exhaustive()
    }
}

/// The keychain name of input `key` of server `server` (see [`crate::secret::entry_secret_name`]).
pub fn secret_name(server: &str, key: &str) -> String {
    crate::secret::entry_secret_name(server, key)
}

/// `text` as a literal config string: every `${` becomes `$${`.
pub fn escape(text: &str) -> String {
    text.replace("${", "$${")
}

/// The values the user gave (`plain`, validated and escaped here; `env`, references the
/// person wrote) and those kept from an earlier install (`stored`: config strings, used as
/// they are).
#[derive(Clone, Debug, Default)]
pub struct Values {
    /// Values typed by the user, by field key.
    pub plain: BTreeMap<String, String>,
    /// Environment variables the person chose to read an input from (`--set-env KEY=VAR`),
    /// by field key: written as `${VAR}`. The only way an install reads the environment.
    pub env: BTreeMap<String, String>,
    /// Config strings remembered in the entry's `source.inputs`.
    pub stored: BTreeMap<String, String>,
}

/// Collects fields and resolves values for one package or remote.
pub(crate) struct Resolver<'a> {
    pub(crate) server: &'a str,
    pub(crate) values: &'a Values,
    pub(crate) secrets: &'a dyn SecretSink,
    /// Fields in the order met, one per key.
    pub(crate) fields: Vec<Field>,
    /// Config strings chosen per key (what `source.inputs` remembers).
    pub(crate) chosen: BTreeMap<String, String>,
    /// When set, values are not required (listing fields only).
    pub(crate) listing: bool,
    /// Variables referenced as `${VAR}` (chosen by the person) that must be exported.
    pub(crate) exports: Vec<String>,
    /// Secret values given, stored only when the install is saved.
    pub(crate) pending: Vec<PendingSecret>,
}

impl<'a> Resolver<'a> {
    pub(crate) fn new(
        server: &'a str,
        values: &'a Values,
        secrets: &'a dyn SecretSink,
        listing: bool,
    ) -> Resolver<'a> {
        Resolver {
            server,
            values,
            secrets,
            fields: Vec::new(),
            chosen: BTreeMap::new(),
            listing,
            exports: Vec::new(),
            pending: Vec::new(),
        }
    }

    /// Resolves one input: its fixed `value` template with `{variables}` substituted, else the
    /// value given for `key`, else its default. `None` when optional and not given.
    ///
    /// # Errors
    /// [`RegistryError::MissingInput`] / [`RegistryError::BadInput`].
    pub(crate) fn input(
        &mut self,
        key: &str,
        target: &str,
        input: &Input,
    ) -> Result<Option<String>, RegistryError> {
        if let Some(template) = &input.value {
            return self.template(template, &input.variables, target).map(Some);
        }
        self.field(key, target, input)
    }

    /// Substitutes each `{name}` of `template` that names one of `variables`; other text is
    /// literal (escaped), unknown `{names}` stay as written.
    pub(crate) fn template(
        &mut self,
        template: &str,
        variables: &BTreeMap<String, Input>,
        target: &str,
    ) -> Result<String, RegistryError> {
        let mut out = String::new();
        let mut literal = String::new();
        let mut rest = template;
        while let Some(open) = rest.find('{') {
            literal.push_str(&rest[..open]);
            let after = &rest[open + 1..];
            match after.find('}') {
                Some(close) if variables.contains_key(&after[..close]) => {
                    let name = &after[..close];
                    let var_target = format!("{target} {{{name}}}");
                    let value = self
                        .field(name, &var_target, &variables[name])?
                        .unwrap_or_default();
                    push_piece(&mut out, &escape(&literal));
                    literal.clear();
                    push_piece(&mut out, &value);
                    rest = &after[close + 1..];
                }
                _ => {
                    literal.push('{');
                    rest = after;
                }
            }
        }
        literal.push_str(rest);
        push_piece(&mut out, &escape(&literal));
        Ok(out)
    }

    fn field(
        &mut self,
        key: &str,
        target: &str,
        input: &Input,
    ) -> Result<Option<String>, RegistryError> {
        let field = Field {
            key: key.to_owned(),
            target: target.to_owned(),
            description: input.description.clone(),
            required: input.is_required,
            default: input.default.clone(),
            placeholder: input.placeholder.clone(),
            choices: input.choices.clone(),
            format: input.format.clone().unwrap_or_else(|| "string".into()),
            secret: input.is_secret,
        };
        if let Some(done) = self.chosen.get(key) {
            return Ok(Some(done.clone()));
        }
        if !self.fields.iter().any(|f| f.key == key) {
            self.fields.push(field.clone());
        }
        let value = self.value(&field)?;
        if let Some(v) = &value {
            self.chosen.insert(key.to_owned(), v.clone());
        }
        Ok(value)
    }

    fn value(&mut self, field: &Field) -> Result<Option<String>, RegistryError> {
        if let Some(given) = self.values.plain.get(&field.key) {
            check_value(field, given)?;
            if field.secret {
                self.secrets
                    .available()
                    .map_err(|reason| RegistryError::Secret {
                        key: field.key.clone(),
                        reason,
                    })?;
                let name = secret_name(self.server, &field.key);
                self.pending.retain(|p| p.key != field.key);
                self.pending.push(PendingSecret {
                    key: field.key.clone(),
                    name: name.clone(),
                    value: given.clone(),
                });
                return Ok(Some(format!("${{secret:{name}}}")));
            }
            return Ok(Some(escape(given)));
        }
        if let Some(var) = self.values.env.get(&field.key) {
            if !is_env_var_name(var) {
                return Err(RegistryError::BadInput {
                    key: field.key.clone(),
                    reason: format!(
                        "--set-env needs an environment variable name ([A-Za-z_][A-Za-z0-9_]*), got \"{}\"",
                        super::client::quote(var)
                    ),
                });
            }
            if !self.exports.iter().any(|e| e == var) {
                self.exports.push(var.clone());
            }
            return Ok(Some(format!("${{{var}}}")));
        }
        if let Some(stored) = self.values.stored.get(&field.key) {
            return Ok(Some(stored.clone()));
        }
        if let Some(default) = &field.default {
            return Ok(Some(escape(default)));
        }
        if field.required && !self.listing {
            return Err(RegistryError::MissingInput {
                key: field.key.clone(),
                target: field.target.clone(),
            });
        }
        Ok(None)
    }
}

/// Appends config string `piece` to config string `out` so that a literal `$` at the end of
/// `out` and a `{` at the start of `piece` do not join into a `${` reference.
pub(crate) fn push_piece(out: &mut String, piece: &str) {
    if out.ends_with('$') && piece.starts_with('{') {
        out.push('$');
    }
    out.push_str(piece);
}

/// Checks a typed value against the field's `choices` and `format`.
fn check_value(field: &Field, value: &str) -> Result<(), RegistryError> {
    let bad = |reason: String| RegistryError::BadInput {
        key: field.key.clone(),
        reason,
    };
    if !field.choices.is_empty() && !field.choices.iter().any(|c| c == value) {
        return Err(bad(format!("must be one of {}", field.choices.join(", "))));
    }
    match field.format.as_str() {
        "number" if value.trim().parse::<f64>().is_err() => Err(bad("must be a number".into())),
        "boolean" if !matches!(value, "true" | "false") => Err(bad("must be true or false".into())),
        _ if value.chars().any(|c| c == '\0') => Err(bad("contains a NUL character".into())),
        _ => Ok(()),
    }
}

#[cfg(test)]
#[path = "inputs_tests.rs"]
mod tests;
