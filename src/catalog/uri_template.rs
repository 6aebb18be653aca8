//! RFC 6570 URI templates with string values, for resource-template tools (DESIGN §6).
//!
//! Owns listing a template's variables (they become the wrapped tool's arguments) and
//! expanding it into the URI sent in `resources/read`. Levels 1–3 plus the level-4 prefix
//! modifier; values are strings (numbers and booleans are written as JSON text), so the
//! explode modifier `*` is accepted and changes nothing.
//!
//! ```text
//! {var}    unreserved only         {/var}  "/" + value, "/"-separated
//! {+var}   reserved chars kept     {.var}  "." + value, "."-separated
//! {#var}   "#" + value, reserved   {;var}  ";var=value"
//! {?a,b}   "?a=..&b=.."            {&a}    "&a=.."
//! ```
//!
//! A variable is *optional* when it appears only in `{?…}` / `{&…}` expressions: a missing
//! optional value is left out; any other missing value is an error naming it.

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
    /// A value that is an array or object.
    #[error("uri template variable {name} must be a string, number or boolean")]
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
    /// True when every use of the name is in a `{?…}` or `{&…}` expression.
    pub optional: bool,
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
            let optional = expr.op.is_query();
            match out.iter_mut().find(|v| v.name == spec.name) {
                Some(existing) => existing.optional &= optional,
                None => out.push(Variable {
                    name: spec.name.to_owned(),
                    optional,
                }),
            }
        }
    }
    out
}

/// Expands `template` with `args` (variable name → string value).
///
/// Values are percent-encoded as UTF-8; `{+…}` and `{#…}` keep reserved characters and
/// existing `%XX` triplets. `null` counts as missing. Arguments not named in the template are
/// ignored.
///
/// # Errors
///
/// [`UriTemplateError`]: a malformed template, a missing required variable, or an array/object
/// value.
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
    let (name, prefix) = if let Some(name) = spec.strip_suffix('*') {
        (name, None)
    } else if let Some((name, len)) = spec.split_once(':') {
        // max-length is 1–4 digits, not starting with 0 (RFC 6570 §2.4.1).
        if len.is_empty() || len.len() > 4 || len.starts_with('0') {
            return None;
        }
        (name, Some(len.parse().ok()?))
    } else {
        (spec, None)
    };
    let valid = !name.is_empty()
        && name
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b == b'_' || b == b'.' || b == b'%');
    valid.then_some(VarSpec { name, prefix })
}

fn expand_expression(
    expr: &Expression<'_>,
    args: &Map<String, Value>,
    out: &mut String,
) -> Result<(), UriTemplateError> {
    let (first, separator, named, allow_reserved) = expr.op.rules();
    let mut wrote_any = false;
    for spec in &expr.specs {
        let value = match args.get(spec.name) {
            None | Some(Value::Null) if expr.op.is_query() => continue,
            None | Some(Value::Null) => {
                return Err(UriTemplateError::MissingVariable {
                    name: spec.name.to_owned(),
                });
            }
            Some(Value::String(s)) => s.clone(),
            Some(v @ (Value::Number(_) | Value::Bool(_))) => v.to_string(),
            Some(Value::Array(_) | Value::Object(_)) => {
                return Err(UriTemplateError::UnsupportedValue {
                    name: spec.name.to_owned(),
                });
            }
        };
        let value: String = match spec.prefix {
            Some(len) => value.chars().take(len).collect(),
            None => value,
        };
        if wrote_any {
            out.push(separator);
        } else {
            out.push_str(first);
            wrote_any = true;
        }
        if named {
            out.push_str(spec.name);
            if value.is_empty() {
                if expr.op.is_query() {
                    out.push('=');
                }
                continue;
            }
            out.push('=');
        }
        encode_into(&value, allow_reserved, out);
    }
    Ok(())
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
mod tests {
    use serde_json::json;

    use super::*;

    fn args(value: Value) -> Map<String, Value> {
        match value {
            Value::Object(map) => map,
            other => panic!("args must be an object, got {other}"),
        }
    }

    #[test]
    fn expands_each_operator() {
        let vars = args(json!({
            "var": "value", "hello": "Hello World!", "path": "/foo/bar", "empty": "",
            "x": "1024", "y": "768", "n": 5, "b": true, "uni": "é",
            "pct": "a%20b%zz"
        }));
        let cases = [
            ("file:///{var}", "file:///value"),
            ("{hello}", "Hello%20World%21"),
            ("{+hello}", "Hello%20World!"),
            ("{+path}/here", "/foo/bar/here"),
            ("{path}", "%2Ffoo%2Fbar"),
            ("here?ref={+path}", "here?ref=/foo/bar"),
            ("X{#var}", "X#value"),
            ("X{#hello}", "X#Hello%20World!"),
            ("{/var,x}/here", "/value/1024/here"),
            ("{.var}", ".value"),
            ("{;x,y,empty}", ";x=1024;y=768;empty"),
            ("{?x,y}", "?x=1024&y=768"),
            ("{?x,y,empty}", "?x=1024&y=768&empty="),
            ("?fixed=yes{&x}", "?fixed=yes&x=1024"),
            ("{?x,missing}", "?x=1024"),
            ("{?missing}", ""),
            ("{&missing}", ""),
            ("{x,y}", "1024,768"),
            ("{var:3}", "val"),
            ("{var*}", "value"),
            ("n={n}&b={b}", "n=5&b=true"),
            ("{uni}", "%C3%A9"),
            // `%zz` is not a triplet, so its `%` is encoded even in reserved expansion.
            ("{+pct}", "a%20b%25zz"),
            ("no expressions", "no expressions"),
            ("a}b", "a}b"),
        ];
        for (template, want) in cases {
            assert_eq!(expand(template, &vars).as_deref(), Ok(want), "{template}");
        }
    }

    #[test]
    fn missing_required_variable_is_an_error_naming_it() {
        let vars = args(json!({"a": "1", "nothing": null}));
        for (template, name) in [
            ("x/{b}", "b"),
            ("{+a}{/c}", "c"),
            ("{#d}", "d"),
            ("{nothing}", "nothing"),
        ] {
            let err = expand(template, &vars).expect_err(template);
            assert_eq!(
                err,
                UriTemplateError::MissingVariable {
                    name: name.to_owned()
                }
            );
            assert_eq!(
                err.to_string(),
                format!("missing value for uri template variable {name}")
            );
        }
    }

    #[test]
    fn malformed_templates_and_values_are_errors() {
        let vars = args(json!({"a": [1], "o": {"k": 1}}));
        assert!(matches!(
            expand("x{a", &vars),
            Err(UriTemplateError::UnclosedExpression { position: 1, .. })
        ));
        for bad in [
            "{}",
            "{=a}",
            "{a b}",
            "{a:0}",
            "{a:x}",
            "{a:01}",
            "{a:10000}",
            "{a,}",
        ] {
            assert!(
                matches!(
                    expand(bad, &vars),
                    Err(UriTemplateError::InvalidExpression { .. })
                ),
                "{bad}"
            );
        }
        for (template, name) in [("{a}", "a"), ("{?o}", "o")] {
            assert_eq!(
                expand(template, &vars),
                Err(UriTemplateError::UnsupportedValue {
                    name: name.to_owned()
                })
            );
        }
    }

    #[test]
    fn variables_are_listed_in_order_without_repeats() {
        let cases: [(&str, &[&str]); 6] = [
            ("file:///{path}", &["path"]),
            (
                "db://{schema}/{table}{?limit,offset}",
                &["schema", "table", "limit", "offset"],
            ),
            ("{a}{+a}{#b}{/a,c}", &["a", "b", "c"]),
            ("{var:3}{list*}", &["var", "list"]),
            ("plain", &[]),
            ("{ok}{bad name}{", &["ok"]),
        ];
        for (template, want) in cases {
            assert_eq!(variables(template), want, "{template}");
        }
    }

    #[test]
    fn query_only_variables_are_optional() {
        let specs = variable_specs("{a}{?a,q}{&r}");
        let got: Vec<(&str, bool)> = specs
            .iter()
            .map(|v| (v.name.as_str(), v.optional))
            .collect();
        assert_eq!(got, [("a", false), ("q", true), ("r", true)]);
    }
}
