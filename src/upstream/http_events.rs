//! A server's event stream (the answer to a GET, or to a POST answered with
//! `text/event-stream`; MCP 2025-11-25 "Transports", Streamable HTTP) as rmcp reads it, with
//! each event bounded: [`events`] counts the bytes of the event being received and ends the
//! stream with an error once one exceeds the limit, so a server cannot make us buffer without
//! end. The stream ends after its first error; rmcp then re-opens it as after any break. A
//! `tools/list` answer's tools keep their `execution` ([`super::listing::keep_execution`]).

use futures::StreamExt;

use super::http_layer::SseStream;

/// Why an event stream stopped early.
#[derive(Debug, thiserror::Error)]
enum EventStreamError {
    /// One event was longer than the limit.
    #[error("an event of the stream exceeded {max} bytes")]
    TooLarge { max: usize },
    /// The connection failed.
    #[error(transparent)]
    Body(reqwest::Error),
}

/// Counts the bytes of the event being received (from the last blank line): an event is at
/// most `max` bytes, so a server cannot make us buffer without end.
struct EventSize {
    max: usize,
    size: usize,
    at_line_start: bool,
    after_cr: bool,
}

impl EventSize {
    fn observe(&mut self, chunk: &[u8]) -> Result<(), EventStreamError> {
        for &byte in chunk {
            let after_cr = std::mem::replace(&mut self.after_cr, byte == b'\r');
            match byte {
                // The second half of a CRLF line end.
                b'\n' if after_cr => continue,
                b'\r' | b'\n' => {
                    if self.at_line_start {
                        // A blank line ends the event.
                        self.size = 0;
                        continue;
                    }
                    self.at_line_start = true;
                }
                _ => self.at_line_start = false,
            }
            self.size += 1;
            if self.size > self.max {
                return Err(EventStreamError::TooLarge { max: self.max });
            }
        }
        Ok(())
    }
}

/// The events of `resp`'s body, each at most `max` bytes; the stream ends after an error.
pub fn events(resp: reqwest::Response, max: usize) -> SseStream {
    let mut size = EventSize {
        max,
        size: 0,
        at_line_start: true,
        after_cr: false,
    };
    let bytes = resp.bytes_stream().scan(false, move |failed, item| {
        let next = match (*failed, item) {
            (true, _) => None,
            (false, Ok(chunk)) => Some(size.observe(&chunk).map(|()| chunk)),
            (false, Err(e)) => Some(Err(EventStreamError::Body(e))),
        };
        *failed = matches!(next, Some(Err(_)));
        std::future::ready(next)
    });
    sse_stream::SseStream::from_bytes_stream(bytes)
        .map(|event| {
            event.map(|mut event| {
                // A tool's `execution` is kept here as in a JSON answer (`catalog::execution`).
                if let Some(kept) = (event.data.as_deref())
                    .and_then(|data| super::listing::keep_execution(data.as_bytes()))
                    .and_then(|kept| String::from_utf8(kept).ok())
                {
                    event.data = Some(kept);
                }
                event
            })
        })
        .boxed()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_event_is_counted_from_the_last_blank_line() {
        let mut size = EventSize {
            max: 10,
            size: 0,
            at_line_start: true,
            after_cr: false,
        };
        // Many short events in one chunk, with every line end the SSE format allows.
        let many = b"data: 12\n\ndata: 34\r\n\r\ndata: 56\r\rdata: 7\n\n".repeat(20);
        assert!(size.observe(&many).is_ok());
        // One event split over chunks is counted across them.
        assert!(size.observe(b"data: ").is_ok());
        assert!(size.observe(b"0123").is_ok());
        assert!(matches!(
            size.observe(b"4"),
            Err(EventStreamError::TooLarge { max: 10 })
        ));
    }
}
