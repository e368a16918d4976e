//! The four-letter admin words (docs/protocol.md §14) that a connection may send instead of a ConnectRequest:
//! their bytes, their whitelist names, and their recognition.
//!
//! Invariant: only the first four bytes of a connection can be a word, and only an exact match
//! of one of [`FourLetterWord::ALL`] is; anything else is a frame length (see [`crate::frame_len`]).

/// The admin commands a connection may send instead of a ConnectRequest (docs/protocol.md §14).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum FourLetterWord {
    /// `ruok`: answers `imok`.
    Ruok,
    /// `stat`: version, clients, and server stats.
    Stat,
    /// `srvr`: server stats.
    Srvr,
    /// `mntr`: metrics as `zk_<key>\t<value>` lines.
    Mntr,
    /// `cons`: connection details.
    Cons,
    /// `crst`: reset connection stats.
    Crst,
    /// `srst`: reset server stats.
    Srst,
    /// `dump`: sessions and ephemerals.
    Dump,
    /// `conf`: configuration.
    Conf,
    /// `envi`: environment.
    Envi,
    /// `wchs`: watch summary.
    Wchs,
    /// `wchc`: watches by connection.
    Wchc,
    /// `wchp`: watches by path.
    Wchp,
    /// `isro`: `rw` or `ro`.
    Isro,
    /// `dirs`: data directory sizes.
    Dirs,
    /// `gtmk`: the trace mask.
    Gtmk,
    /// `stmk`: set the trace mask (8 more bytes follow).
    Stmk,
    /// `hash`: digests by zxid.
    Hash,
    /// The telnet "interrupt process" sequence, which closes the connection.
    TelnetClose,
}

impl FourLetterWord {
    /// Every word.
    pub const ALL: &'static [FourLetterWord] = &[
        FourLetterWord::Ruok,
        FourLetterWord::Stat,
        FourLetterWord::Srvr,
        FourLetterWord::Mntr,
        FourLetterWord::Cons,
        FourLetterWord::Crst,
        FourLetterWord::Srst,
        FourLetterWord::Dump,
        FourLetterWord::Conf,
        FourLetterWord::Envi,
        FourLetterWord::Wchs,
        FourLetterWord::Wchc,
        FourLetterWord::Wchp,
        FourLetterWord::Isro,
        FourLetterWord::Dirs,
        FourLetterWord::Gtmk,
        FourLetterWord::Stmk,
        FourLetterWord::Hash,
        FourLetterWord::TelnetClose,
    ];

    /// The four bytes that spell the word.
    pub const fn bytes(self) -> [u8; 4] {
        match self {
            FourLetterWord::Ruok => *b"ruok",
            FourLetterWord::Stat => *b"stat",
            FourLetterWord::Srvr => *b"srvr",
            FourLetterWord::Mntr => *b"mntr",
            FourLetterWord::Cons => *b"cons",
            FourLetterWord::Crst => *b"crst",
            FourLetterWord::Srst => *b"srst",
            FourLetterWord::Dump => *b"dump",
            FourLetterWord::Conf => *b"conf",
            FourLetterWord::Envi => *b"envi",
            FourLetterWord::Wchs => *b"wchs",
            FourLetterWord::Wchc => *b"wchc",
            FourLetterWord::Wchp => *b"wchp",
            FourLetterWord::Isro => *b"isro",
            FourLetterWord::Dirs => *b"dirs",
            FourLetterWord::Gtmk => *b"gtmk",
            FourLetterWord::Stmk => *b"stmk",
            FourLetterWord::Hash => *b"hash",
            FourLetterWord::TelnetClose => [0xff, 0xf4, 0xff, 0xfd],
        }
    }

    /// The name used in the whitelist (`4lw.commands.whitelist`).
    pub const fn name(self) -> &'static str {
        match self {
            FourLetterWord::Ruok => "ruok",
            FourLetterWord::Stat => "stat",
            FourLetterWord::Srvr => "srvr",
            FourLetterWord::Mntr => "mntr",
            FourLetterWord::Cons => "cons",
            FourLetterWord::Crst => "crst",
            FourLetterWord::Srst => "srst",
            FourLetterWord::Dump => "dump",
            FourLetterWord::Conf => "conf",
            FourLetterWord::Envi => "envi",
            FourLetterWord::Wchs => "wchs",
            FourLetterWord::Wchc => "wchc",
            FourLetterWord::Wchp => "wchp",
            FourLetterWord::Isro => "isro",
            FourLetterWord::Dirs => "dirs",
            FourLetterWord::Gtmk => "gtmk",
            FourLetterWord::Stmk => "stmk",
            FourLetterWord::Hash => "hash",
            FourLetterWord::TelnetClose => "telnet close",
        }
    }

    /// Recognizes a word from the first four bytes of a connection. Anything else is a frame
    /// length.
    pub fn recognize(first: [u8; 4]) -> Option<FourLetterWord> {
        FourLetterWord::ALL
            .iter()
            .copied()
            .find(|w| w.bytes() == first)
    }

    /// Recognizes a word by name, for whitelists and admin tooling.
    pub fn from_name(name: &str) -> Option<FourLetterWord> {
        FourLetterWord::ALL
            .iter()
            .copied()
            .find(|w| w.name() == name)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn words_are_recognized_by_bytes_and_name() {
        for &w in FourLetterWord::ALL {
            assert_eq!(FourLetterWord::recognize(w.bytes()), Some(w));
            assert_eq!(FourLetterWord::from_name(w.name()), Some(w));
        }
    }
}
