//! The reader holds no more than its limit, whatever the input, and each overflow policy does
//! what the module doc's table says.

use std::time::Duration;

use tokio::io::{AsyncWriteExt, BufReader};

use super::*;

/// Every `(read, bytes)` the reader yields for `input`, through a tiny buffer so lines span
/// many reads.
async fn all(input: &[u8], max: usize, overflow: Overflow) -> Vec<(Read, String)> {
    let mut reader = LineReader::new(BufReader::with_capacity(3, input), max, overflow);
    let mut out = Vec::new();
    loop {
        let read = reader.next().await.expect("read");
        assert!(
            reader.line().len() <= max + 3,
            "held {} bytes",
            reader.line().len()
        );
        out.push((read, String::from_utf8_lossy(reader.line()).into_owned()));
        if read == Read::Eof {
            return out;
        }
    }
}

/// An input, the policy, and every `(read, bytes)` it should yield.
type Case = (&'static [u8], Overflow, &'static [(Read, &'static str)]);

#[tokio::test]
async fn each_overflow_policy_treats_long_lines_as_documented() {
    use Overflow::{Cut, Pass, Skip};
    use Read::{Eof, Last, Line, Piece, TooLong};
    let cases: &[Case] = &[
        (b"", Skip, &[(Eof, "")]),
        (b"abc\n", Skip, &[(Line, "abc\n"), (Eof, "")]),
        (b"abc", Skip, &[(Last, "abc"), (Eof, "")]),
        (
            b"abcdef\nxy\n",
            Skip,
            &[(Line, "abcdef\n"), (Line, "xy\n"), (Eof, "")],
        ),
        (
            b"abcdefg\nxy\n",
            Skip,
            &[(TooLong, ""), (Line, "xy\n"), (Eof, "")],
        ),
        (b"abcdefghijklmnop", Skip, &[(TooLong, ""), (Eof, "")]),
        (b"\n\n", Skip, &[(Line, "\n"), (Line, "\n"), (Eof, "")]),
        (
            b"abcdefghij\nxy",
            Cut,
            &[(TooLong, "abcdef"), (Last, "xy"), (Eof, "")],
        ),
        (b"abcdef\n", Cut, &[(Line, "abcdef\n"), (Eof, "")]),
        (
            b"abcdefghij\nxy\n",
            Pass,
            &[
                (TooLong, "abcdefghi"),
                (Piece, "j\n"),
                (Line, "xy\n"),
                (Eof, ""),
            ],
        ),
        (
            b"abcdefghij",
            Pass,
            &[(TooLong, "abcdefghi"), (Piece, "j"), (Eof, "")],
        ),
    ];
    for (input, overflow, want) in cases {
        let got = all(input, 6, *overflow).await;
        let want: Vec<(Read, String)> = want.iter().map(|(r, s)| (*r, (*s).to_owned())).collect();
        assert_eq!(
            got,
            want,
            "{:?} with {overflow:?}",
            String::from_utf8_lossy(input)
        );
    }
}

#[tokio::test]
async fn a_flood_without_newlines_holds_only_the_limit() {
    let (mut tx, rx) = tokio::io::duplex(1 << 16);
    let writer = tokio::spawn(async move {
        let chunk = vec![b'x'; 1 << 16];
        for _ in 0..256 {
            tx.write_all(&chunk).await.expect("write");
        }
        tx.write_all(b"\nafter\n").await.expect("write");
    });
    let mut reader = LineReader::new(BufReader::new(rx), 1024, Overflow::Cut);
    assert_eq!(reader.next().await.expect("read"), Read::TooLong);
    assert_eq!(reader.line().len(), 1024);
    assert_eq!(reader.next().await.expect("read"), Read::Line);
    assert_eq!(reader.line(), b"after\n");
    assert!(
        reader.line.capacity() <= 64 * 1024,
        "{}",
        reader.line.capacity()
    );
    writer.await.expect("writer");
}

#[tokio::test]
async fn a_next_cancelled_mid_line_loses_nothing() {
    let (mut tx, rx) = tokio::io::duplex(64);
    let mut reader = LineReader::new(BufReader::new(rx), 100, Overflow::Skip);
    tx.write_all(b"hel").await.expect("write");
    let cut = tokio::time::timeout(Duration::from_millis(50), reader.next()).await;
    assert!(cut.is_err(), "no line yet");
    tx.write_all(b"lo\n").await.expect("write");
    assert_eq!(reader.next().await.expect("read"), Read::Line);
    assert_eq!(reader.line(), b"hello\n");
}

#[tokio::test(start_paused = true)]
async fn a_line_unfinished_past_its_deadline_stalls_and_an_idle_reader_does_not() {
    let (mut tx, rx) = tokio::io::duplex(64);
    let mut reader = LineReader::new(BufReader::new(rx), 100, Overflow::Skip)
        .with_line_deadline(Duration::from_secs(5));
    let idle = tokio::time::timeout(Duration::from_secs(60), reader.next()).await;
    assert!(idle.is_err(), "idle is not stalled");
    tx.write_all(b"part").await.expect("write");
    assert_eq!(reader.next().await.expect("read"), Read::Stalled);
    assert_eq!(reader.line(), b"part");
}
