//! Byte-level input and output shared by every room: the bounded line reader for input from
//! outside the process ([`lines`]), the one atomic file write ([`atomic`]), and reading JSON
//! text without keeping it ([`json`]).

pub mod atomic;
pub mod json;
pub mod lines;

pub use lines::{LineReader, Overflow, Read};
