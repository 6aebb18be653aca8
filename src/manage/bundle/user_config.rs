//! `user_config` of a bundle's manifest: the options the person is asked for, checked.

use serde_json::Value;

use super::BundleError;
use super::manifest::{bad, quote, text};

/// The type of a `user_config` option.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum OptionType {
    /// Text.
    String,
    /// A number, optionally within `min`..=`max`.
    Number,
    /// `true` or `false`.
    Boolean,
    /// A directory path.
    Directory,
    /// A file path.
    File,
}

/// One `user_config` option.
#[derive(Clone, Debug, PartialEq)]
pub struct UserOption {
    /// Its key (`${user_config.KEY}`, `--set KEY=VALUE`).
    pub key: String,
    /// Type.
    pub kind: OptionType,
    /// Display name.
    pub title: String,
    /// Help text.
    pub description: String,
    /// Whether a value must be given.
    pub required: bool,
    /// Default values as text (one item unless `multiple`), `${HOME}`… not yet substituted.
    pub default: Vec<String>,
    /// Whether several paths may be given.
    pub multiple: bool,
    /// Kept in the keychain, never in the file.
    pub sensitive: bool,
    /// Lower bound (numbers).
    pub min: Option<f64>,
    /// Upper bound (numbers).
    pub max: Option<f64>,
}

/// Whether `key` is usable as a `user_config` key (`--set KEY=VALUE`, `${user_config.KEY}`).
fn is_option_key(key: &str) -> bool {
    !key.is_empty()
        && key.len() <= 64
        && key
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-')
}

/// The `user_config` object of a manifest, in its order.
///
/// # Errors
/// [`BundleError::Manifest`] naming the option and field.
pub fn parse(value: Option<&Value>) -> Result<Vec<UserOption>, BundleError> {
    let Some(value) = value else {
        return Ok(Vec::new());
    };
    let obj = value
        .as_object()
        .ok_or_else(|| bad("user_config", "must be an object"))?;
    let mut out = Vec::new();
    for (key, spec) in obj {
        let field = format!("user_config.{key}");
        if !is_option_key(key) {
            return Err(bad(
                "user_config",
                format!("key \"{}\" must be letters, digits, _ or -", quote(key)),
            ));
        }
        let spec = spec
            .as_object()
            .ok_or_else(|| bad(&field, "must be an object"))?;
        let kind = match text(spec, &format!("{field}.type"), "type")?.as_str() {
            "string" => OptionType::String,
            "number" => OptionType::Number,
            "boolean" => OptionType::Boolean,
            "directory" => OptionType::Directory,
            "file" => OptionType::File,
            other => {
                return Err(bad(
                    &format!("{field}.type"),
                    format!(
                        "\"{}\" is not string, number, boolean, directory or file",
                        quote(other)
                    ),
                ));
            }
        };
        let flag = |name: &str| -> Result<bool, BundleError> {
            match spec.get(name) {
                None => Ok(false),
                Some(Value::Bool(b)) => Ok(*b),
                Some(_) => Err(bad(&format!("{field}.{name}"), "must be true or false")),
            }
        };
        let number = |name: &str| -> Result<Option<f64>, BundleError> {
            match spec.get(name) {
                None => Ok(None),
                Some(v) => v
                    .as_f64()
                    .map(Some)
                    .ok_or_else(|| bad(&format!("{field}.{name}"), "must be a number")),
            }
        };
        let default = match spec.get("default") {
            None | Some(Value::Null) => Vec::new(),
            Some(Value::String(s)) => vec![s.clone()],
            Some(Value::Bool(b)) => vec![b.to_string()],
            Some(Value::Number(n)) => vec![n.to_string()],
            Some(Value::Array(items)) => items
                .iter()
                .map(|v| {
                    v.as_str()
                        .map(str::to_owned)
                        .ok_or_else(|| bad(&format!("{field}.default"), "must hold strings"))
                })
                .collect::<Result<_, _>>()?,
            Some(_) => return Err(bad(&format!("{field}.default"), "has an unusable type")),
        };
        out.push(UserOption {
            key: key.clone(),
            kind,
            title: text(spec, &format!("{field}.title"), "title")?,
            description: spec
                .get("description")
                .and_then(Value::as_str)
                .unwrap_or_default()
                .to_owned(),
            required: flag("required")?,
            default,
            multiple: flag("multiple")?,
            sensitive: flag("sensitive")?,
            min: number("min")?,
            max: number("max")?,
        });
    }
    Ok(out)
}
