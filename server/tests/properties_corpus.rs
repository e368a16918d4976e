//! Shepherd's zoo.cfg reader against Java's `Properties`, on the corpus in
//! `tests/fixtures/properties/`: each `NAME.cfg` beside `NAME.expected`, which is what
//! `PropertiesDump.java` (in the same folder) prints for it on a JDK. CI runs that program
//! again on every file and fails on any difference (`.ci/properties-corpus.sh`), so the expected
//! files are Java's own answers, not ours.

use std::fmt::Write as _;
use std::path::Path;

use shepherd_server::config::properties;

/// The corpus file printed as `PropertiesDump.java` prints it.
fn dump(bytes: &[u8]) -> String {
    let Ok(parsed) = properties::parse(&properties::latin1(bytes)) else {
        return "error\n".to_string();
    };
    let mut entries: Vec<_> = parsed
        .entries
        .into_iter()
        .map(|p| (p.key, p.value))
        .collect();
    entries.sort();
    let escape = |s: &str| {
        s.chars().fold(String::new(), |mut out, c| {
            if (' '..'\u{7f}').contains(&c) && c != '\\' {
                out.push(c);
            } else {
                let _ = write!(out, "\\u{:04X}", u32::from(c));
            }
            out
        })
    };
    entries.iter().fold(String::new(), |mut out, (k, v)| {
        let _ = writeln!(out, "{}\t{}", escape(k), escape(v));
        out
    })
}

#[test]
fn every_corpus_file_reads_as_java_reads_it() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/properties");
    let mut checked = 0;
    for entry in std::fs::read_dir(&dir).expect("the corpus folder") {
        let path = entry.expect("a corpus entry").path();
        if path.extension().is_none_or(|e| e != "cfg") {
            continue;
        }
        let expected = std::fs::read_to_string(path.with_extension("expected"))
            .unwrap_or_else(|e| panic!("{}: no .expected beside it: {e}", path.display()));
        let got = dump(&std::fs::read(&path).expect("a corpus file"));
        assert_eq!(got, expected, "{}", path.display());
        checked += 1;
    }
    assert!(checked >= 12, "only {checked} corpus files found");
}
