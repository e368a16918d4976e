//! The in-process ensemble: binding the members' listeners (`bind.rs`) and the members'
//! endpoints and leadership (`member.rs`). The handle's face for them is `handle/members.rs`.

pub(crate) mod bind;
pub(crate) mod member;
