//! A bundle's manifest and the person's `user_config` values → one `config.json` stdio entry.
//!
//! `mcp_config` (with this platform's override) is rendered into config strings:
//!
//! | in the manifest | in the entry |
//! |---|---|
//! | `${__dirname}` | the unpacked directory (absolute) |
//! | `${HOME}`, `${DESKTOP}`, `${DOCUMENTS}`, `${DOWNLOADS}` | that directory of this user, now |
//! | `${pathSeparator}`, `${/}` | `/` (`\` on Windows) |
//! | `${user_config.KEY}` | the value given (escaped), `${secret:…}` for a `sensitive` one, `${VAR}` for `--set-env KEY=VAR`; an argument that is only this reference becomes one argument per value (`multiple`), or none when no value was given |
//! | any other `${…}`, and all other text | literal (escaped as `$${…}`): a bundle never reads the companion's environment |
//!
//! The entry's `cwd` is the unpacked directory (the spec's own examples name files relative
//! to it). A `command` with a `/` that is not absolute names a file of the bundle.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use serde_json::{Map, Value, json};

use super::BundleError;
use super::manifest::{Manifest, OptionType, UserOption};
use crate::manage::registry::inputs::{Resolver, escape, push_piece};
use crate::manage::registry::model::Input;
use crate::manage::registry::{Built, SecretSink, Values};

/// Whether `name` is an environment variable name a manifest may set.
pub fn is_env_name(name: &str) -> bool {
    crate::manage::registry::inputs::is_env_var_name(name)
}

/// Where the bundle goes and this user's directories, for the `${…}` variables.
#[derive(Clone, Debug)]
pub struct Context {
    /// The directory the bundle is unpacked into (`${__dirname}`).
    pub dir: PathBuf,
    /// `${HOME}`.
    pub home: Option<PathBuf>,
    /// `${DESKTOP}`.
    pub desktop: Option<PathBuf>,
    /// `${DOCUMENTS}`.
    pub documents: Option<PathBuf>,
    /// `${DOWNLOADS}`.
    pub downloads: Option<PathBuf>,
    /// `darwin`, `win32` or `linux`.
    pub platform: String,
}

impl Context {
    /// This user's directories as the OS reports them, the bundle at `dir`.
    pub fn here(dir: PathBuf) -> Context {
        Context {
            dir,
            home: dirs::home_dir(),
            desktop: dirs::desktop_dir(),
            documents: dirs::document_dir(),
            downloads: dirs::download_dir(),
            platform: super::manifest::this_platform().to_owned(),
        }
    }

    fn separator(&self) -> &'static str {
        if self.platform == "win32" { "\\" } else { "/" }
    }

    /// The plain text of a built-in variable, `None` when `name` is not one; `Some(Err)`
    /// when this machine has no such directory.
    fn system(&self, name: &str) -> Option<Result<String, BundleError>> {
        let dir = |d: &Option<PathBuf>| {
            d.as_ref()
                .map(|p| p.display().to_string())
                .ok_or_else(|| BundleError::Incompatible {
                    reason: format!(
                        "the manifest uses ${{{name}}} and this user has no such directory"
                    ),
                })
        };
        Some(match name {
            "__dirname" => Ok(self.dir.display().to_string()),
            "HOME" => dir(&self.home),
            "DESKTOP" => dir(&self.desktop),
            "DOCUMENTS" => dir(&self.documents),
            "DOWNLOADS" => dir(&self.downloads),
            "pathSeparator" | "/" => Ok(self.separator().to_owned()),
            _ => return None,
        })
    }

    /// `text` with the built-in variables replaced by plain text; other `${…}` stay as written
    /// (for `user_config` defaults, which are then escaped as typed text is).
    fn plain(&self, text: &str) -> Result<String, BundleError> {
        let mut out = String::new();
        for piece in pieces(text) {
            match piece {
                Piece::Text(t) => out.push_str(t),
                Piece::Var(name) => match self.system(name) {
                    Some(v) => out.push_str(&v?),
                    None => {
                        out.push_str("${");
                        out.push_str(name);
                        out.push('}');
                    }
                },
            }
        }
        Ok(out)
    }
}

enum Piece<'a> {
    Text(&'a str),
    Var(&'a str),
}

/// `text` split into literal text and `${name}` references (an unclosed `${` is text).
fn pieces(text: &str) -> Vec<Piece<'_>> {
    let mut out = Vec::new();
    let mut rest = text;
    while let Some(at) = rest.find("${") {
        let Some(end) = rest[at + 2..].find('}') else {
            break;
        };
        if at > 0 {
            out.push(Piece::Text(&rest[..at]));
        }
        out.push(Piece::Var(&rest[at + 2..at + 2 + end]));
        rest = &rest[at + 2 + end + 1..];
    }
    if !rest.is_empty() {
        out.push(Piece::Text(rest));
    }
    out
}

/// The value of one `user_config` option, as config strings.
#[derive(Clone, Debug)]
enum Resolved {
    Values(Vec<String>),
    Missing,
}

/// The form field (registry input shape) for `option`.
fn input_of(option: &UserOption, ctx: &Context) -> Result<Input, BundleError> {
    let format = match option.kind {
        OptionType::String => "string",
        OptionType::Number => "number",
        OptionType::Boolean => "boolean",
        OptionType::Directory | OptionType::File => "filepath",
    };
    let default = match (&option.multiple, option.default.first()) {
        (false, Some(d)) => Some(ctx.plain(d)?),
        _ => None,
    };
    Ok(Input {
        description: Some(format!("{}: {}", option.title, option.description)),
        // A `multiple` option's defaults are a list, applied below.
        is_required: option.required && !option.multiple,
        format: Some(format.to_owned()),
        value: None,
        is_secret: option.sensitive,
        default,
        placeholder: None,
        choices: Vec::new(),
        variables: BTreeMap::new(),
    })
}

fn check_bounds(option: &UserOption, values: &Values) -> Result<(), BundleError> {
    let (Some(given), OptionType::Number) = (values.plain.get(&option.key), option.kind) else {
        return Ok(());
    };
    let Ok(n) = given.trim().parse::<f64>() else {
        return Ok(()); // the resolver says "must be a number"
    };
    let bad = |reason: String| {
        BundleError::Input(crate::manage::registry::RegistryError::BadInput {
            key: option.key.clone(),
            reason,
        })
    };
    if let Some(min) = option.min
        && n < min
    {
        return Err(bad(format!("must be at least {min}")));
    }
    if let Some(max) = option.max
        && n > max
    {
        return Err(bad(format!("must be at most {max}")));
    }
    Ok(())
}

/// The entry for `manifest` unpacked at `ctx.dir`, installed as server `server`. With
/// `listing`, missing required values are not errors (to show the form first).
///
/// `Built::program` is the program to look for on PATH (`node`, `python3`…), or `None` when
/// the command is a file of the bundle.
///
/// # Errors
/// [`BundleError::Input`] (missing or bad values, keychain), [`BundleError::Manifest`] (a
/// reference to an option `user_config` does not declare), [`BundleError::Incompatible`].
pub fn build(
    manifest: &Manifest,
    ctx: &Context,
    server: &str,
    values: &Values,
    secrets: &dyn SecretSink,
    listing: bool,
) -> Result<Built, BundleError> {
    let mut r = Resolver::new(server, values, secrets, listing);
    let mut resolved = BTreeMap::new();
    for option in &manifest.user_config {
        check_bounds(option, values)?;
        let input = input_of(option, ctx)?;
        let got = r
            .input(&option.key, &option.title, &input)
            .map_err(BundleError::Input)?;
        let value = match got {
            Some(v) => Resolved::Values(vec![v]),
            None if option.multiple && !option.default.is_empty() => Resolved::Values(
                option
                    .default
                    .iter()
                    .map(|d| ctx.plain(d).map(|t| escape(&t)))
                    .collect::<Result<_, _>>()?,
            ),
            None if option.required && !listing => {
                return Err(BundleError::Input(
                    crate::manage::registry::RegistryError::MissingInput {
                        key: option.key.clone(),
                        target: option.title.clone(),
                    },
                ));
            }
            None => Resolved::Missing,
        };
        resolved.insert(option.key.clone(), value);
    }
    let config = manifest.config_for(&ctx.platform);
    let render_one = |text: &str, field: &str| render(text, field, ctx, &resolved);
    let command_text = config.command.as_deref().unwrap_or_default();
    let command = render_one(command_text, "server.mcp_config.command")?;
    let mut args = Vec::new();
    for (i, a) in config.args.iter().flatten().enumerate() {
        let field = format!("server.mcp_config.args[{i}]");
        match whole_option(a) {
            Some(key) => match lookup(&resolved, key, &field)? {
                Resolved::Values(v) => args.extend(v.iter().cloned()),
                Resolved::Missing => {}
            },
            None => args.push(render_one(a, &field)?),
        }
    }
    let mut env = Map::new();
    for (k, v) in config.env.iter().flatten() {
        let field = format!("server.mcp_config.env.{k}");
        if let Some(key) = whole_option(v)
            && matches!(lookup(&resolved, key, &field)?, Resolved::Missing)
        {
            continue;
        }
        env.insert(k.clone(), json!(render_one(v, &field)?));
    }
    let (command, program) = resolve_command(manifest, ctx, command_text, command)?;
    let mut entry = json!({
        "type": "stdio",
        "command": command,
        "args": args,
        "cwd": escape(&ctx.dir.display().to_string()),
    });
    if !env.is_empty() {
        entry["env"] = Value::Object(env);
    }
    Ok(Built {
        entry,
        fields: r.fields,
        inputs: r.chosen,
        exports: r.exports,
        secrets: r.pending,
        program,
        flags: Vec::new(),
    })
}

/// The option key when `text` is exactly `${user_config.KEY}` (one reference: a `}` inside
/// means more text follows the first reference, as in `${user_config.a}${user_config.b}`).
fn whole_option(text: &str) -> Option<&str> {
    text.strip_prefix("${user_config.")?
        .strip_suffix('}')
        .filter(|key| !key.contains('}'))
}

fn lookup<'a>(
    resolved: &'a BTreeMap<String, Resolved>,
    key: &str,
    field: &str,
) -> Result<&'a Resolved, BundleError> {
    resolved.get(key).ok_or_else(|| BundleError::Manifest {
        field: field.to_owned(),
        reason: format!(
            "references ${{user_config.{}}}, which user_config does not declare",
            super::manifest::quote(key)
        ),
    })
}

/// `text` from the manifest as a config string (see the module doc).
fn render(
    text: &str,
    field: &str,
    ctx: &Context,
    resolved: &BTreeMap<String, Resolved>,
) -> Result<String, BundleError> {
    let mut out = String::new();
    for piece in pieces(text) {
        let part = match piece {
            Piece::Text(t) => escape(t),
            Piece::Var(name) => {
                if let Some(key) = name.strip_prefix("user_config.") {
                    match lookup(resolved, key, field)? {
                        Resolved::Values(v) if v.len() == 1 => v[0].clone(),
                        Resolved::Values(v) if v.is_empty() => String::new(),
                        Resolved::Values(_) => {
                            return Err(BundleError::Manifest {
                                field: field.to_owned(),
                                reason: format!(
                                    "puts the several values of ${{user_config.{key}}} inside a longer string; only an argument of its own can hold them"
                                ),
                            });
                        }
                        Resolved::Missing => String::new(),
                    }
                } else if let Some(v) = ctx.system(name) {
                    escape(&v?)
                } else {
                    escape(&format!("${{{name}}}"))
                }
            }
        };
        push_piece(&mut out, &part);
    }
    Ok(out)
}

/// The entry's command and the program to find on PATH. A relative command with a `/` is a
/// file of the bundle (`.exe` added on Windows for a `binary`); `python` becomes `python3`
/// where only that is installed.
fn resolve_command(
    manifest: &Manifest,
    ctx: &Context,
    raw: &str,
    rendered: String,
) -> Result<(String, Option<String>), BundleError> {
    let dir_text = escape(&ctx.dir.display().to_string());
    if rendered.starts_with(&dir_text) {
        return Ok((rendered, None));
    }
    if raw.contains('/') && !Path::new(raw).is_absolute() && !raw.starts_with("${") {
        let path = super::paths::inside(&ctx.dir, raw).map_err(|r| BundleError::Manifest {
            field: "server.mcp_config.command".into(),
            reason: r,
        })?;
        let mut text = path.display().to_string();
        if ctx.platform == "win32"
            && manifest.server_type == super::manifest::ServerType::Binary
            && !text.to_ascii_lowercase().ends_with(".exe")
        {
            text.push_str(".exe");
        }
        return Ok((escape(&text), None));
    }
    let program = if rendered == "python"
        && !crate::manage::registry::install::on_path("python")
        && crate::manage::registry::install::on_path("python3")
    {
        "python3".to_owned()
    } else {
        rendered
    };
    Ok((program.clone(), Some(program)))
}

#[cfg(test)]
#[path = "entry_tests.rs"]
mod tests;
