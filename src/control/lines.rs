//! Control API lines as text: [`crate::io::LineReader`] (which enforces the limit while
//! reading) with each line decoded as UTF-8, the form both ends of the control API want.

use tokio::io::AsyncBufRead;

use crate::io::{LineReader, Overflow, Read};

/// One line read by [`read_line`].
#[derive(Debug, PartialEq, Eq)]
pub enum Line {
    /// A line within the limit, without its newline (a trailing `\r` is kept).
    Text(String),
    /// A line over the limit (skipped through its newline).
    TooLong,
    /// Not UTF-8.
    NotUtf8,
}

/// A reader of control lines of at most `max` bytes (newline excluded) from `read`.
pub fn reader<R: AsyncBufRead + Unpin>(read: R, max: usize) -> LineReader<R> {
    LineReader::new(read, max, Overflow::Skip)
}

/// Reads the next line. `Ok(None)` at end of input; a last line without a newline still
/// counts. Holds at most the reader's limit plus one read buffer. Cancel-safe.
///
/// # Errors
/// The I/O error of the underlying reader.
pub async fn read_line<R: AsyncBufRead + Unpin>(
    reader: &mut LineReader<R>,
) -> std::io::Result<Option<Line>> {
    loop {
        match reader.next().await? {
            Read::Line | Read::Last => {
                let line = reader.take_line();
                let line = match line.strip_suffix(b"\n") {
                    Some(text) => text.to_vec(),
                    None => line,
                };
                return Ok(Some(match String::from_utf8(line) {
                    Ok(text) => Line::Text(text),
                    Err(_) => Line::NotUtf8,
                }));
            }
            Read::TooLong => return Ok(Some(Line::TooLong)),
            Read::Eof => return Ok(None),
            // Neither pieces (`Overflow::Skip`) nor stalls (no deadline) come here.
            Read::Piece | Read::Stalled => {}
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn lines_come_as_text_and_long_or_broken_ones_are_named() {
        let input: &[u8] = b"abc\r\nabcdefg\n\xff\xfe\nlast";
        let mut lines = reader(tokio::io::BufReader::with_capacity(3, input), 6);
        let mut out = Vec::new();
        while let Some(line) = read_line(&mut lines).await.unwrap() {
            out.push(line);
        }
        let text = |s: &str| Line::Text(s.to_owned());
        assert_eq!(
            out,
            vec![text("abc\r"), Line::TooLong, Line::NotUtf8, text("last")]
        );
    }
}
