//! Byte-level input and output shared by every room: the bounded line reader for input from
//! outside the process ([`lines`]) and the one atomic file write ([`atomic`]).

pub mod atomic;
pub mod lines;

pub use lines::{LineReader, Overflow, Read};
