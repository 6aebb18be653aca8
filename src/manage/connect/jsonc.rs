//! A JSONC (JSON with `//` and `/* */` comments and trailing commas) reader that keeps byte
//! spans, so edits touch only the bytes they change: the user's formatting, comments and every
//! other key stay byte-for-byte. Used for VS Code and Zed settings and the JSON files of the
//! other clients.

use serde_json::Value;

/// A JSON value and where it sits in the text (`start..end`, bytes).
#[derive(Clone, Debug)]
pub struct Node {
    /// First byte.
    pub start: usize,
    /// One past the last byte.
    pub end: usize,
    /// Its shape.
    pub kind: Kind,
}

/// The shape of a [`Node`].
#[derive(Clone, Debug)]
pub enum Kind {
    /// `{ … }` with its members in order.
    Object(Vec<Member>),
    /// `[ … ]`.
    Array(Vec<Node>),
    /// A string, number, `true`, `false` or `null`.
    Scalar,
}

/// One `"key": value` of an object.
#[derive(Clone, Debug)]
pub struct Member {
    /// The decoded key.
    pub key: String,
    /// Byte of the key's opening quote.
    pub key_start: usize,
    /// The value.
    pub value: Node,
    /// Byte of the comma after the value, if any.
    pub comma: Option<usize>,
}

/// Where and why the text does not parse.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("line {line}, column {column}: {message}")]
pub struct ParseError {
    /// 1-based line.
    pub line: usize,
    /// 1-based column (characters).
    pub column: usize,
    /// What was expected.
    pub message: String,
}

/// Parses `text`; `Ok(None)` when it holds only whitespace and comments.
///
/// # Errors
/// [`ParseError`] with the line and column where it broke.
pub fn parse(text: &str) -> Result<Option<Node>, ParseError> {
    let mut p = Parser { text, pos: 0 };
    p.skip()?;
    if p.pos == text.len() {
        return Ok(None);
    }
    let node = p.value(0)?;
    p.skip()?;
    if p.pos != text.len() {
        return Err(p.error("unexpected text after the end of the document"));
    }
    Ok(Some(node))
}

/// Nesting deeper than this is refused (no stack overflow on hostile files).
const MAX_DEPTH: usize = 200;

struct Parser<'a> {
    text: &'a str,
    pos: usize,
}

impl Parser<'_> {
    fn error(&self, message: &str) -> ParseError {
        let before = &self.text[..self.pos.min(self.text.len())];
        let line = before.matches('\n').count() + 1;
        let column = before.rsplit('\n').next().unwrap_or("").chars().count() + 1;
        ParseError {
            line,
            column,
            message: message.to_owned(),
        }
    }

    fn peek(&self) -> Option<u8> {
        self.text.as_bytes().get(self.pos).copied()
    }

    /// Skips whitespace and comments.
    fn skip(&mut self) -> Result<(), ParseError> {
        let bytes = self.text.as_bytes();
        loop {
            match bytes.get(self.pos) {
                Some(b' ' | b'\t' | b'\n' | b'\r') => self.pos += 1,
                Some(b'/') if bytes.get(self.pos + 1) == Some(&b'/') => {
                    self.pos = self.text[self.pos..]
                        .find('\n')
                        .map_or(self.text.len(), |n| self.pos + n);
                }
                Some(b'/') if bytes.get(self.pos + 1) == Some(&b'*') => {
                    match self.text[self.pos + 2..].find("*/") {
                        Some(n) => self.pos += n + 4,
                        None => return Err(self.error("unterminated /* comment")),
                    }
                }
                _ => return Ok(()),
            }
        }
    }

    fn value(&mut self, depth: usize) -> Result<Node, ParseError> {
        if depth > MAX_DEPTH {
            return Err(self.error("nested too deeply"));
        }
        let start = self.pos;
        let kind = match self.peek() {
            Some(b'{') => self.object(depth)?,
            Some(b'[') => self.array(depth)?,
            Some(b'"') => {
                self.string()?;
                Kind::Scalar
            }
            Some(_) => {
                let len = self.text[self.pos..]
                    .find(|c: char| !(c.is_ascii_alphanumeric() || "+-.".contains(c)))
                    .unwrap_or(self.text.len() - self.pos);
                let word = &self.text[self.pos..self.pos + len];
                let ok = matches!(word, "true" | "false" | "null")
                    || (!word.is_empty()
                        && serde_json::from_str::<serde_json::Number>(word).is_ok());
                if !ok {
                    return Err(self.error("expected a value"));
                }
                self.pos += len;
                Kind::Scalar
            }
            None => return Err(self.error("unexpected end of file, expected a value")),
        };
        Ok(Node {
            start,
            end: self.pos,
            kind,
        })
    }

    /// Reads a string token; returns its decoded text.
    fn string(&mut self) -> Result<String, ParseError> {
        let start = self.pos;
        let bytes = self.text.as_bytes();
        let mut i = self.pos + 1;
        loop {
            match bytes.get(i) {
                None | Some(b'\n') => return Err(self.error("unterminated string")),
                Some(b'\\') => i += 2,
                Some(b'"') => break,
                Some(_) => i += 1,
            }
        }
        let raw = &self.text[start..=i];
        let decoded: String =
            serde_json::from_str(raw).map_err(|_| self.error("invalid string"))?;
        self.pos = i + 1;
        Ok(decoded)
    }

    fn object(&mut self, depth: usize) -> Result<Kind, ParseError> {
        self.pos += 1;
        let mut members: Vec<Member> = Vec::new();
        loop {
            self.skip()?;
            match self.peek() {
                Some(b'}') => {
                    self.pos += 1;
                    return Ok(Kind::Object(members));
                }
                Some(b'"') => {}
                _ => return Err(self.error("expected a \"key\" or }")),
            }
            if members.last().is_some_and(|m| m.comma.is_none()) {
                return Err(self.error("expected , between members"));
            }
            let key_start = self.pos;
            let key = self.string()?;
            self.skip()?;
            if self.peek() != Some(b':') {
                return Err(self.error("expected : after the key"));
            }
            self.pos += 1;
            self.skip()?;
            let value = self.value(depth + 1)?;
            self.skip()?;
            let comma = if self.peek() == Some(b',') {
                self.pos += 1;
                Some(self.pos - 1)
            } else if self.peek() == Some(b'}') {
                None
            } else {
                return Err(self.error("expected , or }"));
            };
            members.push(Member {
                key,
                key_start,
                value,
                comma,
            });
        }
    }

    fn array(&mut self, depth: usize) -> Result<Kind, ParseError> {
        self.pos += 1;
        let mut items = Vec::new();
        loop {
            self.skip()?;
            if self.peek() == Some(b']') {
                self.pos += 1;
                return Ok(Kind::Array(items));
            }
            items.push(self.value(depth + 1)?);
            self.skip()?;
            match self.peek() {
                Some(b',') => self.pos += 1,
                Some(b']') => {}
                _ => return Err(self.error("expected , or ]")),
            }
        }
    }
}

/// The value of `node` as JSON, comments dropped (for comparing).
pub fn to_value(text: &str, node: &Node) -> Value {
    match &node.kind {
        Kind::Object(members) => Value::Object(
            members
                .iter()
                .map(|m| (m.key.clone(), to_value(text, &m.value)))
                .collect(),
        ),
        Kind::Array(items) => Value::Array(items.iter().map(|n| to_value(text, n)).collect()),
        Kind::Scalar => serde_json::from_str(&text[node.start..node.end]).unwrap_or(Value::Null),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn comments_trailing_commas_and_spans_are_read() {
        let text =
            "// head\n{ \"a\": 1, /* x */ \"b\": [true, null,], \"c\\u0041\": {\"d\": \"e\"}, }\n";
        let node = parse(text).unwrap().unwrap();
        let Kind::Object(m) = &node.kind else {
            panic!()
        };
        assert_eq!(
            m.iter().map(|m| m.key.as_str()).collect::<Vec<_>>(),
            ["a", "b", "cA"]
        );
        assert_eq!(&text[m[1].value.start..m[1].value.end], "[true, null,]");
        assert!(m[2].comma.is_some());
        assert_eq!(
            to_value(text, &node),
            serde_json::json!({"a": 1, "b": [true, null], "cA": {"d": "e"}})
        );
        assert!(parse("  // only a comment\n").unwrap().is_none());
    }

    #[test]
    fn errors_say_where_the_text_broke() {
        let cases = [
            ("{\n  \"a\": 1\n  \"b\": 2\n}", 3, 3, "expected , or }"),
            ("{\"a\": tru}", 1, 7, "expected a value"),
            ("{\"a\": 1", 1, 8, "expected , or }"),
            ("/* open", 1, 1, "unterminated /* comment"),
            ("{} x", 1, 4, "unexpected text"),
        ];
        for (text, line, column, msg) in cases {
            let e = parse(text).unwrap_err();
            assert_eq!((e.line, e.column), (line, column), "{text}: {e}");
            assert!(e.message.contains(msg), "{text}: {e}");
        }
        let deep = "[".repeat(10_000);
        assert!(parse(&deep).unwrap_err().message.contains("deeply"));
    }
}
