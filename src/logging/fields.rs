//! [`InertFields`]: the fields of every event and span in the companion's log written as inert
//! text, so what a server wrote is read, not obeyed, by the terminal showing the log.

use std::fmt;

use tracing_subscriber::field::RecordFields;
use tracing_subscriber::fmt::FormatFields;
use tracing_subscriber::fmt::format::{DefaultFields, Writer};

/// A [`FormatFields`] that writes fields as [`DefaultFields`] does (`message name=value …`),
/// then escapes the result with [`crate::io::text::log_field`]: control characters but tab
/// (ESC and so colour, clear-screen and title sequences; BEL, CR, newline, C1) and the Unicode
/// bidirectional controls become escapes such as `\x1b` and `\u{202e}`.
///
/// Field names are not set in italics on a colour terminal: the formatter's own colours (the
/// level, dimmed punctuation) are written outside the fields and kept.
#[derive(Clone, Copy, Debug, Default)]
pub struct InertFields;

impl<'writer> FormatFields<'writer> for InertFields {
    fn format_fields<R: RecordFields>(
        &self,
        mut writer: Writer<'writer>,
        fields: R,
    ) -> fmt::Result {
        let mut text = String::new();
        DefaultFields::new().format_fields(Writer::new(&mut text), fields)?;
        fmt::Write::write_str(&mut writer, &crate::io::text::log_field(&text))
    }
}

#[cfg(test)]
mod tests {
    use crate::logging::test_log::logged;

    /// Outside text in any field of an event or of its span, in the message too, on a colour
    /// terminal or not: written as escapes; only the formatter's own colours are sequences.
    #[test]
    fn outside_text_in_every_field_is_written_as_escapes() {
        let said = "x\u{1b}[31mRED\u{1b}[0m tab\there bel\u{7} \u{9b}c1 \u{202e}evil \u{2066}iso\u{2069} cr\rX";
        let want = "x\\x1b[31mRED\\x1b[0m tab\there bel\\x07 \\x9bc1 \\u{202e}evil \\u{2066}iso\\u{2069} cr\\x0dX";
        for ansi in [false, true] {
            let text = logged(ansi, || {
                let span = tracing::info_span!("server", name = %said);
                let _in = span.enter();
                tracing::info!("{said}");
                tracing::warn!(error = %said, "start failed");
                tracing::warn!(error = said, "start failed");
            });
            let lines: Vec<&str> = text.lines().collect();
            assert_eq!(lines.len(), 3, "{text:?}");
            for line in &lines {
                assert!(
                    line.contains(&format!("name={want}")),
                    "the span field: {line:?}"
                );
                assert!(
                    !line.contains(['\u{7}', '\r', '\u{9b}', '\u{202e}', '\u{2066}']),
                    "{line:?}"
                );
                assert!(!line.contains("\u{1b}[31mRED"), "{line:?}");
                assert_eq!(line.contains('\u{1b}'), ansi, "only our colours: {line:?}");
            }
            // tracing-subscriber escapes the message's ESC, DEL and C1 itself first (C1 as `\u{9b}`).
            let message = want.replace("\\x9b", "\\u{9b}");
            assert!(lines[0].ends_with(&message), "{:?}", lines[0]);
            assert!(
                lines[1].contains(&format!("error={want}")),
                "{:?}",
                lines[1]
            );
            if ansi {
                assert!(
                    lines[1].contains("\u{1b}[33m"),
                    "the WARN colour is kept: {:?}",
                    lines[1]
                );
            }
        }
    }
}
