//! What the test controls act on inside the server: fault rules and frozen sessions. Their
//! methods, the handle's faces, live in `handle/`.

pub(crate) mod faults;
pub(crate) mod freeze;
