//! A history written out for outside checkers: Jepsen's EDN ([`to_edn`]) for Knossos and
//! Elle, and Porcupine's JSON ([`to_porcupine_json`]) for its key-value model.
//!
//! Invariant: writing is pure; the caller chooses where the text goes.

mod edn;
mod porcupine;

pub use edn::to_edn;
pub use porcupine::to_porcupine_json;
