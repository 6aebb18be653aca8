//! Reading newline-delimited lines with a length limit enforced while reading: a line longer
//! than the limit is skipped through its newline without ever being held in memory whole.

use tokio::io::{AsyncBufRead, AsyncBufReadExt};

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

/// Reads the next line of at most `max` bytes (newline excluded). `Ok(None)` at end of input;
/// a last line without a newline still counts. Holds at most `max` bytes plus one read buffer.
///
/// # Errors
/// The I/O error of the underlying reader.
pub async fn read_line<R: AsyncBufRead + Unpin>(
    reader: &mut R,
    max: usize,
) -> std::io::Result<Option<Line>> {
    let mut line = Vec::new();
    let mut too_long = false;
    let mut any = false;
    loop {
        let buf = reader.fill_buf().await?;
        if buf.is_empty() {
            if !any {
                return Ok(None);
            }
            break;
        }
        any = true;
        let (chunk, used, done) = match buf.iter().position(|b| *b == b'\n') {
            Some(i) => (&buf[..i], i + 1, true),
            None => (buf, buf.len(), false),
        };
        if !too_long {
            if line.len() + chunk.len() > max {
                too_long = true;
                line = Vec::new();
            } else {
                line.extend_from_slice(chunk);
            }
        }
        reader.consume(used);
        if done {
            break;
        }
    }
    if too_long {
        return Ok(Some(Line::TooLong));
    }
    Ok(Some(match String::from_utf8(line) {
        Ok(text) => Line::Text(text),
        Err(_) => Line::NotUtf8,
    }))
}

#[cfg(test)]
mod tests {
    use super::*;

    async fn all(input: &[u8], max: usize) -> Vec<Line> {
        // A tiny buffer so lines span many reads.
        let mut reader = tokio::io::BufReader::with_capacity(3, input);
        let mut out = Vec::new();
        while let Some(line) = read_line(&mut reader, max).await.unwrap() {
            out.push(line);
        }
        out
    }

    #[tokio::test]
    async fn long_lines_are_skipped_and_the_next_line_still_reads() {
        let text = |s: &str| Line::Text(s.to_owned());
        let cases: &[(&[u8], Vec<Line>)] = &[
            (b"", vec![]),
            (b"abc\n", vec![text("abc")]),
            (b"abc", vec![text("abc")]),
            (b"abcdef\nxy\n", vec![text("abcdef"), text("xy")]),
            (b"abcdefg\nxy\n", vec![Line::TooLong, text("xy")]),
            (b"abcdefghijklmnop", vec![Line::TooLong]),
            (b"\n\n", vec![text(""), text("")]),
            (b"\xff\xfe\nok\n", vec![Line::NotUtf8, text("ok")]),
        ];
        for (input, want) in cases {
            assert_eq!(
                &all(input, 6).await,
                want,
                "{:?}",
                String::from_utf8_lossy(input)
            );
        }
    }
}
