//! RFC 6570 URI templates, for resource-template tools (DESIGN §6).
//!
//! Owns listing a template's variables (they become the wrapped tool's arguments) and
//! expanding it into the URI sent in `resources/read`. Levels 1–4: every operator, the prefix
//! modifier `:n` (strings only) and the explode modifier `*`. Values are strings (numbers and
//! booleans are written as JSON text), lists (JSON arrays of such scalars) or associative arrays
//! (JSON objects of such scalars).
//!
//! ```text
//! {var}    unreserved only         {/var}  "/" + value, "/"-separated
//! {+var}   reserved chars kept     {.var}  "." + value, "."-separated
//! {#var}   "#" + value, reserved   {;var}  ";var=value"
//! {?a,b}   "?a=..&b=.."            {&a}    "&a=.."
//! {/list*} "/a/b/c" from ["a","b","c"]
//! ```
//!
//! Which variables an agent may leave out: RFC 6570 §3.2.1 expands an undefined variable to
//! nothing, and every operator but the simple one then also drops its prefix (`/`, `.`, `;`,
//! `?`, `&`, `#`) — the template author wrote those forms precisely so that the value can be
//! absent (`{/segments*}`, `{?limit}`, `{.ext}`). The same holds for `{+var}`, whose value is
//! inserted as is, and for any exploded variable (an empty list is undefined). A variable is
//! therefore **optional** unless it appears at least once as a simple `{var}` or `{var:n}`;
//! only there does leaving it out almost always produce a wrong URI (`users//posts`), so a
//! missing simple variable is an error naming it. The server judges the rest.
//!
//! Decision: our own parser and expander, not `iri-string`'s `template` module. Reason: half
//! of this file is [`variable_specs`] — which variables a template has, and for each whether
//! any use of it is a simple `{var}` or exploded — and `iri-string` does not expose the
//! expressions of a template: its expansion asks a `Context` for values by variable name only
//! (`Visitor::var_name`), never with the operator or modifiers of the occurrence. So the
//! scanner would stay, and `iri-string` would replace only the expander, while the errors
//! agents see lose their subject: ours name the variable that is missing or whose value cannot
//! be expanded ([`UriTemplateError::MissingVariable`], [`UriTemplateError::UnsupportedValue`]),
//! where a `Context` can only answer "undefined". Revisit if it gains a way to walk a
//! template's expressions.

use serde_json::{Map, Value};

/// Why a template could not be expanded.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum UriTemplateError {
    /// A `{` without its `}`.
    #[error("unclosed expression at byte {position} in uri template {template}")]
    UnclosedExpression {
        /// The whole template.
        template: String,
        /// Byte offset of the `{`.
        position: usize,
    },
    /// An expression whose operator, variable name or modifier is not RFC 6570.
    #[error("invalid expression {{{expression}}} in uri template {template}")]
    InvalidExpression {
        /// The whole template.
        template: String,
        /// The text between the braces.
        expression: String,
    },
    /// A required variable has no value (or is `null`).
    #[error("missing value for uri template variable {name}")]
    MissingVariable {
        /// The variable name as written in the template.
        name: String,
    },
    /// A value that cannot be expanded: nested arrays or objects, or a list or object under a
    /// prefix modifier `:n`.
    #[error(
        "uri template variable {name} must be a string, number, boolean, or a list or object of those (no prefix modifier on lists)"
    )]
    UnsupportedValue {
        /// The variable name as written in the template.
        name: String,
    },
}

/// One variable of a template, as an argument of the wrapped tool.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Variable {
    /// The name as written in the template.
    pub name: String,
    /// True unless some use of the name is a simple `{name}` or `{name:n}` (see the module doc).
    pub optional: bool,
    /// True when some use of the name has the explode modifier (`{/name*}`): the value is
    /// naturally a list.
    pub explode: bool,
}

/// The variable names of `template` in order of first use, without repeats.
///
/// Malformed expressions are skipped; [`expand`] reports them.
pub fn variables(template: &str) -> Vec<String> {
    variable_specs(template)
        .into_iter()
        .map(|v| v.name)
        .collect()
}

/// Like [`variables`] with whether each one may be left out.
pub fn variable_specs(template: &str) -> Vec<Variable> {
    let mut out: Vec<Variable> = Vec::new();
    for part in parse(template).into_iter().flatten() {
        let Part::Expression(expr) = part else {
            continue;
        };
        for spec in &expr.specs {
            let optional = expr.op != Operator::Simple || spec.explode;
            match out.iter_mut().find(|v| v.name == spec.name) {
                Some(existing) => {
                    existing.optional &= optional;
                    existing.explode |= spec.explode;
                }
                None => out.push(Variable {
                    name: spec.name.to_owned(),
                    optional,
                    explode: spec.explode,
                }),
            }
        }
    }
    out
}

/// Expands `template` with `args` (variable name → value) as RFC 6570 §3.2 specifies.
///
/// Values are percent-encoded as UTF-8; `{+…}` and `{#…}` keep reserved characters and
/// existing `%XX` triplets. `null`, an empty list and an empty object count as missing (RFC
/// "undefined"); a missing optional variable is left out with its operator's prefix and
/// separator. Arguments not named in the template are ignored.
///
/// # Errors
///
/// [`UriTemplateError`]: a malformed template, a missing required variable, or a value that
/// cannot be expanded (see [`UriTemplateError::UnsupportedValue`]).
pub fn expand(template: &str, args: &Map<String, Value>) -> Result<String, UriTemplateError> {
    let mut out = String::with_capacity(template.len() + 16);
    for part in parse(template) {
        match part? {
            Part::Literal(text) => out.push_str(text),
            Part::Expression(expr) => expand_expression(&expr, args, &mut out)?,
        }
    }
    Ok(out)
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Operator {
    Simple,
    Reserved,
    Fragment,
    Label,
    Path,
    PathParam,
    Query,
    QueryContinuation,
}

impl Operator {
    fn from_char(c: char) -> Option<Operator> {
        Some(match c {
            '+' => Operator::Reserved,
            '#' => Operator::Fragment,
            '.' => Operator::Label,
            '/' => Operator::Path,
            ';' => Operator::PathParam,
            '?' => Operator::Query,
            '&' => Operator::QueryContinuation,
            _ => return None,
        })
    }

    /// Whether an empty named value keeps its `=` (`?x=` but `;x`).
    fn is_query(self) -> bool {
        matches!(self, Operator::Query | Operator::QueryContinuation)
    }

    /// (first, separator, named, allow reserved) from RFC 6570 appendix A.
    fn rules(self) -> (&'static str, char, bool, bool) {
        match self {
            Operator::Simple => ("", ',', false, false),
            Operator::Reserved => ("", ',', false, true),
            Operator::Fragment => ("#", ',', false, true),
            Operator::Label => (".", '.', false, false),
            Operator::Path => ("/", '/', false, false),
            Operator::PathParam => (";", ';', true, false),
            Operator::Query => ("?", '&', true, false),
            Operator::QueryContinuation => ("&", '&', true, false),
        }
    }
}

struct VarSpec<'t> {
    name: &'t str,
    prefix: Option<usize>,
    explode: bool,
}

struct Expression<'t> {
    op: Operator,
    specs: Vec<VarSpec<'t>>,
}

enum Part<'t> {
    Literal(&'t str),
    Expression(Expression<'t>),
}

fn parse(template: &str) -> Vec<Result<Part<'_>, UriTemplateError>> {
    let mut parts = Vec::new();
    let mut rest = template;
    let mut offset = 0;
    while let Some(open) = rest.find('{') {
        if open > 0 {
            parts.push(Ok(Part::Literal(&rest[..open])));
        }
        let Some(len) = rest[open..].find('}') else {
            parts.push(Err(UriTemplateError::UnclosedExpression {
                template: template.to_owned(),
                position: offset + open,
            }));
            return parts;
        };
        let body = &rest[open + 1..open + len];
        parts.push(
            parse_expression(body).ok_or_else(|| UriTemplateError::InvalidExpression {
                template: template.to_owned(),
                expression: body.to_owned(),
            }),
        );
        offset += open + len + 1;
        rest = &rest[open + len + 1..];
    }
    if !rest.is_empty() {
        parts.push(Ok(Part::Literal(rest)));
    }
    parts
}

fn parse_expression(body: &str) -> Option<Part<'_>> {
    let mut chars = body.chars();
    let (op, list) = match chars.next().and_then(Operator::from_char) {
        Some(op) => (op, chars.as_str()),
        None => (Operator::Simple, body),
    };
    let specs = list
        .split(',')
        .map(parse_varspec)
        .collect::<Option<Vec<_>>>()?;
    Some(Part::Expression(Expression { op, specs }))
}

fn parse_varspec(spec: &str) -> Option<VarSpec<'_>> {
    let (name, prefix, explode) = if let Some(name) = spec.strip_suffix('*') {
        (name, None, true)
    } else if let Some((name, len)) = spec.split_once(':') {
        // max-length is 1–4 digits, not starting with 0 (RFC 6570 §2.4.1).
        if len.is_empty()
            || len.len() > 4
            || len.starts_with('0')
            || !len.bytes().all(|b| b.is_ascii_digit())
        {
            return None;
        }
        (name, Some(len.parse().ok()?), false)
    } else {
        (spec, None, false)
    };
    let valid = !name.is_empty()
        && name
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b == b'_' || b == b'.' || b == b'%');
    valid.then_some(VarSpec {
        name,
        prefix,
        explode,
    })
}

/// A variable's value, resolved: RFC 6570 §2.3 string, list or associative array.
enum Resolved {
    Text(String),
    List(Vec<String>),
    Pairs(Vec<(String, String)>),
}

/// `None` when the value is undefined (missing, `null`, empty list or object).
fn resolve(name: &str, value: Option<&Value>) -> Result<Option<Resolved>, UriTemplateError> {
    let unsupported = || UriTemplateError::UnsupportedValue {
        name: name.to_owned(),
    };
    let scalar = |v: &Value| match v {
        Value::String(s) => Some(s.clone()),
        Value::Number(_) | Value::Bool(_) => Some(v.to_string()),
        _ => None,
    };
    Ok(match value {
        None | Some(Value::Null) => None,
        Some(Value::Array(items)) => {
            let items = items
                .iter()
                .filter(|v| !v.is_null())
                .map(|v| scalar(v).ok_or_else(unsupported))
                .collect::<Result<Vec<_>, _>>()?;
            (!items.is_empty()).then_some(Resolved::List(items))
        }
        Some(Value::Object(map)) => {
            let pairs = map
                .iter()
                .filter(|(_, v)| !v.is_null())
                .map(|(k, v)| Ok((k.clone(), scalar(v).ok_or_else(unsupported)?)))
                .collect::<Result<Vec<_>, _>>()?;
            (!pairs.is_empty()).then_some(Resolved::Pairs(pairs))
        }
        Some(v) => Some(Resolved::Text(scalar(v).ok_or_else(unsupported)?)),
    })
}

fn expand_expression(
    expr: &Expression<'_>,
    args: &Map<String, Value>,
    out: &mut String,
) -> Result<(), UriTemplateError> {
    let (first, separator, named, allow_reserved) = expr.op.rules();
    let mut wrote_any = false;
    for spec in &expr.specs {
        let Some(value) = resolve(spec.name, args.get(spec.name))? else {
            if expr.op == Operator::Simple && !spec.explode {
                return Err(UriTemplateError::MissingVariable {
                    name: spec.name.to_owned(),
                });
            }
            continue;
        };
        if wrote_any {
            out.push(separator);
        } else {
            out.push_str(first);
            wrote_any = true;
        }
        let mut w = Writer {
            op: expr.op,
            named,
            allow_reserved,
            out: &mut *out,
        };
        match (value, spec.explode) {
            (Resolved::Text(text), _) => {
                let text: String = match spec.prefix {
                    Some(len) => text.chars().take(len).collect(),
                    None => text,
                };
                w.named_value(spec.name, &text);
            }
            (_, _) if spec.prefix.is_some() => {
                return Err(UriTemplateError::UnsupportedValue {
                    name: spec.name.to_owned(),
                });
            }
            (Resolved::List(items), false) => {
                w.name_prefix(spec.name);
                w.joined(items.iter().map(String::as_str));
            }
            (Resolved::Pairs(pairs), false) => {
                w.name_prefix(spec.name);
                w.joined(pairs.iter().flat_map(|(k, v)| [k.as_str(), v.as_str()]));
            }
            (Resolved::List(items), true) => {
                for (i, item) in items.iter().enumerate() {
                    if i > 0 {
                        w.out.push(separator);
                    }
                    w.named_value(spec.name, item);
                }
            }
            (Resolved::Pairs(pairs), true) => {
                for (i, (key, v)) in pairs.iter().enumerate() {
                    if i > 0 {
                        w.out.push(separator);
                    }
                    encode_into(key, allow_reserved, w.out);
                    if v.is_empty() && named && !expr.op.is_query() {
                        continue;
                    }
                    w.out.push('=');
                    encode_into(v, allow_reserved, w.out);
                }
            }
        }
    }
    Ok(())
}

/// Writes the pieces of one expression's expansion.
struct Writer<'o> {
    op: Operator,
    named: bool,
    allow_reserved: bool,
    out: &'o mut String,
}

impl Writer<'_> {
    /// `value`, after `name=` for named operators (`;name` alone when the value is empty).
    fn named_value(&mut self, name: &str, value: &str) {
        if self.named {
            self.out.push_str(name);
            if value.is_empty() && !self.op.is_query() {
                return;
            }
            self.out.push('=');
        }
        encode_into(value, self.allow_reserved, self.out);
    }

    /// `name=` for named operators, before a comma-joined composite value.
    fn name_prefix(&mut self, name: &str) {
        if self.named {
            self.out.push_str(name);
            self.out.push('=');
        }
    }

    fn joined<'v>(&mut self, items: impl Iterator<Item = &'v str>) {
        for (i, item) in items.enumerate() {
            if i > 0 {
                self.out.push(',');
            }
            encode_into(item, self.allow_reserved, self.out);
        }
    }
}

fn encode_into(value: &str, allow_reserved: bool, out: &mut String) {
    let bytes = value.as_bytes();
    let mut i = 0;
    while i < bytes.len() {
        let b = bytes[i];
        let keep = b.is_ascii_alphanumeric()
            || matches!(b, b'-' | b'.' | b'_' | b'~')
            || (allow_reserved && b":/?#[]@!$&'()*+,;=".contains(&b));
        let triplet = allow_reserved
            && b == b'%'
            && bytes.get(i + 1).is_some_and(u8::is_ascii_hexdigit)
            && bytes.get(i + 2).is_some_and(u8::is_ascii_hexdigit);
        if keep || triplet {
            out.push(char::from(b));
        } else {
            const HEX: &[u8; 16] = b"0123456789ABCDEF";
            out.push('%');
            out.push(char::from(HEX[usize::from(b >> 4)]));
            out.push(char::from(HEX[usize::from(b & 0x0f)]));
        }
        i += 1;
    }
}

#[cfg(test)]
mod tests;
