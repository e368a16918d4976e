//! The in-process ensemble: the members' endpoints and leadership, and the handle's member controls.

pub(crate) mod control;
pub(crate) mod member;
