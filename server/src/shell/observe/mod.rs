//! What a server says about itself: the four-letter words and the reports behind them.

pub(crate) mod admin;
pub(crate) mod report;
