//! `4lw.commands.whitelist`: which four-letter words a server answers, ZooKeeper's default being
//! `srvr` alone.

use std::collections::HashSet;

use shepherd_protocol::FourLetterWord;

/// Which four-letter words a server answers (`4lw.commands.whitelist`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum FourLetterWhitelist {
    /// `*`: every word.
    All,
    /// Only these; ZooKeeper's default is `srvr` alone.
    Only(HashSet<FourLetterWord>),
}

impl FourLetterWhitelist {
    /// ZooKeeper's default: `srvr` only.
    pub fn zookeeper_default() -> FourLetterWhitelist {
        FourLetterWhitelist::Only([FourLetterWord::Srvr].into_iter().collect())
    }

    /// Parses a comma-separated list; `*` means all. Unknown words are returned separately.
    pub fn parse(list: &str) -> (FourLetterWhitelist, Vec<String>) {
        let mut words = HashSet::new();
        let mut unknown = Vec::new();
        for item in list.split(',').map(str::trim).filter(|s| !s.is_empty()) {
            if item == "*" {
                return (FourLetterWhitelist::All, unknown);
            }
            match FourLetterWord::from_name(item) {
                Some(word) => {
                    words.insert(word);
                }
                None => unknown.push(item.to_string()),
            }
        }
        (FourLetterWhitelist::Only(words), unknown)
    }

    /// Whether `word` may run.
    pub fn allows(&self, word: FourLetterWord) -> bool {
        match self {
            FourLetterWhitelist::All => true,
            FourLetterWhitelist::Only(words) => words.contains(&word),
        }
    }
}
