//! Byte-level input and output shared by every room: the bounded line reader for input from
//! outside the process ([`lines`]).

pub mod lines;

pub use lines::{LineReader, Overflow, Read};
