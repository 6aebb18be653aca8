//! [`capped`]: the one cap on outside text in a log line (a server's message, an error it
//! quoted, an elicitation's prompt), so one request cannot write a 20 MiB line; [`capped_at`]
//! the same cut at another size.

use std::borrow::Cow;

/// The most bytes of outside text one log field keeps: 1 KiB.
pub const LOG_TEXT_MAX: usize = 1024;

/// `text` as a log line may carry it: whole when it has at most [`LOG_TEXT_MAX`] bytes, else
/// its first ones (cut at a character boundary) and `… (<n> bytes in all)`.
pub fn capped(text: &str) -> Cow<'_, str> {
    capped_at(text, LOG_TEXT_MAX)
}

/// `text` whole when it has at most `max` bytes, else its first ones (cut at a character
/// boundary) and `… (<n> bytes in all)`.
pub fn capped_at(text: &str, max: usize) -> Cow<'_, str> {
    if text.len() <= max {
        return Cow::Borrowed(text);
    }
    let mut end = max;
    while !text.is_char_boundary(end) {
        end -= 1;
    }
    Cow::Owned(format!("{}… ({} bytes in all)", &text[..end], text.len()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn long_text_is_cut_at_a_character_boundary_and_says_so() {
        assert_eq!(capped("short"), "short");
        let long = "é".repeat(LOG_TEXT_MAX);
        let cut = capped(&long);
        assert!(cut.len() < LOG_TEXT_MAX + 40, "{}", cut.len());
        assert!(
            cut.ends_with(&format!("… ({} bytes in all)", long.len())),
            "{cut}"
        );
    }
}
