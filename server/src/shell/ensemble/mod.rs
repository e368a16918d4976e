//! The in-process ensemble: the members' endpoints and leadership (`member.rs`), and the
//! handle's member controls (`control.rs`).

pub(crate) mod control;
pub(crate) mod member;
