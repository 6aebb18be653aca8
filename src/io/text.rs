//! Text someone else wrote, made safe to show or log: control characters (C0, DEL, C1) and the
//! Unicode bidirectional controls written as escapes such as `\x1b` or `\u{202e}`, so a
//! server's words cannot clear a screen, retitle a window, reorder what is read or start a line
//! of their own in a log. One home for the rule: the CLI prints through [`visible`] / [`inert`];
//! the log ([`crate::logging`]) writes every field of an event through [`log_field`] and the
//! whole line through [`log_line`].

use std::borrow::Cow;

/// `text` safe to show on a terminal: every control character except tab and newline (C0, DEL,
/// C1) is written as an escape such as `\x1b`, except colour sequences (`ESC [ digits ; … m`),
/// which are kept. So text a server wrote (its stderr, its error texts, tool descriptions and
/// results) cannot clear the screen, move the cursor or retitle the window of the person
/// reading `status`, `logs`, `tools` or `call`.
pub fn visible(text: &str) -> Cow<'_, str> {
    escape(text, Keep::Layout)
}

/// `text` from a registry (a name, version, cursor, description, argument) as inert text on
/// one line: [`visible`] without exceptions, so tab, newline and colour sequences are escaped
/// too (a colour can hide a word, a newline can fake a line of our own).
pub fn inert(text: &str) -> Cow<'_, str> {
    escape(text, Keep::Nothing)
}

/// The value of a log event's field (a server's stderr line, its error text, its log message)
/// as inert text on one line: every control character but tab escaped, colour sequences too
/// (outside text must not colour, hide or clear anything on the terminal reading the log).
/// Tabs are kept: they cannot move the cursor back or start a line, and stack traces use them.
pub fn log_field(text: &str) -> Cow<'_, str> {
    escape(text, Keep::Tab)
}

/// Lines someone else wrote (a server's stderr) as inert text: each line [`inert`], so colour,
/// conceal, clear-screen and title sequences are shown, not obeyed; only the newlines between
/// lines are kept.
pub fn inert_lines(text: &str) -> String {
    text.split('\n').map(inert).collect::<Vec<_>>().join("\n")
}

/// Whether `c` reorders the text around it on display (the Unicode bidirectional embeddings,
/// overrides and isolates, and the two marks): text can then read differently from what it is
/// ("Trojan Source", CVE-2021-42574).
fn reorders(c: char) -> bool {
    matches!(c, '\u{200e}' | '\u{200f}' | '\u{202a}'..='\u{202e}' | '\u{2066}'..='\u{2069}')
}

/// What [`escape`] leaves as it is.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Keep {
    /// Nothing: every control character is escaped.
    Nothing,
    /// Tab.
    Tab,
    /// Tab, newline and colour sequences (`ESC [ digits ; … m`).
    Layout,
}

fn escape(text: &str, keep: Keep) -> Cow<'_, str> {
    let kept = |c: char| match keep {
        Keep::Nothing => false,
        Keep::Tab => c == '\t',
        Keep::Layout => c == '\t' || c == '\n',
    };
    let unsafe_char = |c: char| (c.is_control() && !kept(c)) || reorders(c);
    if !text.chars().any(unsafe_char) {
        return Cow::Borrowed(text);
    }
    let mut out = String::with_capacity(text.len() + 16);
    let mut rest = text;
    while let Some(c) = rest.chars().next() {
        if keep == Keep::Layout
            && c == '\x1b'
            && let Some(len) = colour_sequence(rest)
        {
            out.push_str(&rest[..len]);
            rest = &rest[len..];
            continue;
        }
        if unsafe_char(c) {
            let code = u32::from(c);
            if code <= 0xff {
                out.push_str(&format!("\\x{code:02x}"));
            } else {
                out.push_str(&format!("\\u{{{code:x}}}"));
            }
        } else {
            out.push(c);
        }
        rest = &rest[c.len_utf8()..];
    }
    Cow::Owned(out)
}

/// One formatted log event (ending in its newline) as one line: [`visible`]'s rule (colour
/// sequences of our own formatter kept), except that a newline or carriage return inside the
/// event is escaped, so outside text in a field cannot forge a log line.
pub fn log_line(text: &str) -> Cow<'_, str> {
    let (body, end) = match text.strip_suffix('\n') {
        Some(body) => (body, "\n"),
        None => (text, ""),
    };
    let inner_breaks = body.contains(['\n', '\r']);
    let escaped = visible(body);
    if !inner_breaks && matches!(escaped, Cow::Borrowed(_)) {
        return Cow::Borrowed(text);
    }
    Cow::Owned(format!(
        "{}{end}",
        escaped.replace('\n', "\\x0a").replace('\r', "\\x0d")
    ))
}

/// The length of the SGR sequence (`ESC [ 0-9;… m`) `text` starts with, if it starts with one.
fn colour_sequence(text: &str) -> Option<usize> {
    let body = text.strip_prefix("\x1b[")?;
    let params = body
        .bytes()
        .take_while(|b| b.is_ascii_digit() || *b == b';')
        .count();
    (body.as_bytes().get(params) == Some(&b'm')).then_some(2 + params + 1)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Each rule over the same outside text: what it keeps and what it writes as an escape.
    #[test]
    fn each_rule_keeps_only_its_own_exceptions() {
        let cases = [
            // (text, visible, inert, log_field)
            ("plain words", "plain words", "plain words", "plain words"),
            ("a\tb", "a\tb", "a\\x09b", "a\tb"),
            ("a\nb", "a\nb", "a\\x0ab", "a\\x0ab"),
            ("cr\rX", "cr\\x0dX", "cr\\x0dX", "cr\\x0dX"),
            (
                "\x1b[31mRED\x1b[0m",
                "\x1b[31mRED\x1b[0m",
                "\\x1b[31mRED\\x1b[0m",
                "\\x1b[31mRED\\x1b[0m",
            ),
            ("\x1b[2J", "\\x1b[2J", "\\x1b[2J", "\\x1b[2J"),
            (
                "bel\x07 del\x7f c1\u{9b}",
                "bel\\x07 del\\x7f c1\\x9b",
                "bel\\x07 del\\x7f c1\\x9b",
                "bel\\x07 del\\x7f c1\\x9b",
            ),
            (
                "\u{202e}evil\u{2066}x\u{2069}",
                "\\u{202e}evil\\u{2066}x\\u{2069}",
                "\\u{202e}evil\\u{2066}x\\u{2069}",
                "\\u{202e}evil\\u{2066}x\\u{2069}",
            ),
        ];
        for (text, shown, inert_, field) in cases {
            assert_eq!(visible(text), shown, "visible {text:?}");
            assert_eq!(inert(text), inert_, "inert {text:?}");
            assert_eq!(log_field(text), field, "log_field {text:?}");
        }
    }
}
