//! The inputs of a `server.json` package or remote (`environmentVariables`, headers,
//! `runtimeArguments`/`packageArguments`, URL `variables`, and the `variables` of any value
//! template) as form fields, and their resolution to config strings.
//!
//! A *config string* is what goes into `config.json`: text from the user or the registry is
//! escaped (`${` → `$${`) so it is never expanded, and secrets are references (`${secret:NAME}`
//! in the keychain, else `${VAR}` from the environment), never plain text.

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
    /// Whether a value must be given (secrets without a keychain become `${VAR}` instead).
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

/// Where secret values go.
pub trait SecretSink: Send + Sync {
    /// Stores `value` for input `key` of server `server`; returns the reference to write in the
    /// config (`${secret:NAME}`, or `${VAR}` when there is no keychain and the user must export
    /// `VAR`).
    ///
    /// # Errors
    /// A human-readable reason (the keychain refused).
    fn store(&self, server: &str, key: &str, value: &str) -> Result<String, String>;
    /// The reference for a secret the user did not give, if this sink has one (`${VAR}`).
    fn reference_for_missing(&self, server: &str, key: &str) -> Option<String>;
}

/// The fallback sink when no keychain exists: every secret is `${VAR}`; values given are not
/// stored anywhere (the user exports `VAR` before starting the companion).
#[derive(Clone, Copy, Debug, Default)]
pub struct EnvSecrets;

/// `key` as an environment variable name: upper case, every other character `_`.
pub fn env_var_name(key: &str) -> String {
    let name: String = key
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() {
                c.to_ascii_uppercase()
            } else {
                '_'
            }
        })
        .collect();
    if name.starts_with(|c: char| c.is_ascii_digit()) {
        format!("_{name}")
    } else {
        name
    }
}

impl SecretSink for EnvSecrets {
    fn store(&self, server: &str, key: &str, _value: &str) -> Result<String, String> {
        Ok(self
            .reference_for_missing(server, key)
            .unwrap_or_else(|| format!("${{{}}}", env_var_name(key))))
    }

    fn reference_for_missing(&self, _server: &str, key: &str) -> Option<String> {
        Some(format!("${{{}}}", env_var_name(key)))
    }
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
    fn store(&self, server: &str, key: &str, value: &str) -> Result<String, String> {
        let name = secret_name(server, key);
        (self.set)(&name, value)?;
        Ok(format!("${{secret:{name}}}"))
    }

    fn reference_for_missing(&self, _server: &str, _key: &str) -> Option<String> {
        None
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

/// The values the user gave (`plain`, validated and escaped here) and those kept from an
/// earlier install (`stored`: config strings, used as they are).
#[derive(Clone, Debug, Default)]
pub struct Values {
    /// Values typed by the user, by field key.
    pub plain: BTreeMap<String, String>,
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
    /// Secrets referenced as `${VAR}` that the user must export.
    pub(crate) exports: Vec<String>,
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
                let reference =
                    self.secrets
                        .store(self.server, &field.key, given)
                        .map_err(|reason| RegistryError::Secret {
                            key: field.key.clone(),
                            reason,
                        })?;
                self.note_export(&reference);
                return Ok(Some(reference));
            }
            return Ok(Some(escape(given)));
        }
        if let Some(stored) = self.values.stored.get(&field.key) {
            return Ok(Some(stored.clone()));
        }
        if field.secret
            && let Some(reference) = self.secrets.reference_for_missing(self.server, &field.key)
        {
            if field.required || self.listing {
                self.note_export(&reference);
                return Ok(Some(reference));
            }
            return Ok(None);
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

    fn note_export(&mut self, reference: &str) {
        if let Some(var) = reference
            .strip_prefix("${")
            .and_then(|r| r.strip_suffix('}'))
            .filter(|v| !v.contains(':'))
            && !self.exports.iter().any(|e| e == var)
        {
            self.exports.push(var.to_owned());
        }
    }
}

/// Appends config string `piece` to config string `out` so that a literal `$` at the end of
/// `out` and a `{` at the start of `piece` do not join into a `${` reference.
fn push_piece(out: &mut String, piece: &str) {
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
