//! The test controls: the handle's methods, fault rules and frozen sessions.

pub(crate) mod faults;
pub(crate) mod freeze;
pub(crate) mod methods;
