//! The in-process ensemble: binding the members' listeners (`bind.rs`), the members' endpoints
//! and leadership (`member.rs`), and the handle's member controls (`control.rs`).

pub(crate) mod bind;
pub(crate) mod control;
pub(crate) mod member;
