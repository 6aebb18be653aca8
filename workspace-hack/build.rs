// A build script is required for cargo to consider build dependencies: the host-side features
// (proc-macro2, syn) are unified through this crate's [build-dependencies].
fn main() {}
