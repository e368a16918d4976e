//! `zoo.cfg` as ZooKeeper reads it: with `java.util.Properties.load`, then each key and value
//! trimmed (`QuorumPeerConfig.parseProperties` at `release-3.8.0`). So a configuration file
//! that starts ZooKeeper means here exactly what it means there.
//!
//! The grammar, from `Properties.load`'s documentation and its `LineReader`:
//! - A *natural line* ends at `\n`, `\r` or `\r\n`. Leading spaces, tabs and form feeds are
//!   skipped; a line that is then empty is blank, and one that starts with `#` or `!` is a
//!   comment, which never continues.
//! - A natural line that ends in an odd number of backslashes continues on the next one, whose
//!   leading white space is skipped; the *logical line* is the joined whole. A backslash at the
//!   very end of the input is dropped.
//! - The key runs to the first unescaped `=`, `:`, space, tab or form feed. After it, white
//!   space, at most one `=` or `:`, and more white space are skipped; the rest is the value.
//! - In keys and values, `\t`, `\n`, `\r`, `\f` and `\uXXXX` are those characters, and a
//!   backslash before any other character is that character. A `\u` without four hex digits is
//!   an error, as Java's `Malformed \uxxxx encoding`.
//! - A key given twice takes the last value.
//!
//! Java reads the file as ISO 8859-1 ([`latin1`]), one byte one character.
//!
//! Invariant: [`parse`] returns each key once, at the place of its last occurrence, with the
//! value Java's `Properties` would hold for it, trimmed as ZooKeeper trims.

/// One `key = value` of a properties file, as ZooKeeper sees it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Property {
    /// The key, unescaped and trimmed.
    pub key: String,
    /// The value, unescaped and trimmed.
    pub value: String,
    /// The natural line (1-based) on which the entry's logical line starts.
    pub line: usize,
}

/// What [`parse`] found: the entries, and the keys that were given more than once.
#[derive(Debug, Default)]
pub struct Properties {
    /// Each key once, in the order of its last occurrence.
    pub entries: Vec<Property>,
    /// `(key, line)` of each occurrence that a later one replaced.
    pub replaced: Vec<(String, usize)>,
}

/// Decodes bytes as ISO 8859-1, as `Properties.load(InputStream)` does: any byte is a character.
pub fn latin1(bytes: &[u8]) -> String {
    bytes.iter().map(|&b| char::from(b)).collect()
}

/// Reads properties text.
///
/// # Errors
/// `line N: malformed \uxxxx encoding` where Java's `load` throws.
pub fn parse(text: &str) -> Result<Properties, String> {
    let mut raw: Vec<Property> = Vec::new();
    for (line, logical) in logical_lines(text) {
        let (key, value) = split(&logical);
        let unescape = |s: &[char]| {
            unescape(s).ok_or_else(|| format!("line {line}: malformed \\uxxxx encoding"))
        };
        raw.push(Property {
            key: java_trim(&unescape(key)?),
            value: java_trim(&unescape(value)?),
            line,
        });
    }
    let mut properties = Properties::default();
    for (index, entry) in raw.iter().enumerate() {
        match raw[index + 1..].iter().find(|later| later.key == entry.key) {
            Some(_) => properties.replaced.push((entry.key.clone(), entry.line)),
            None => properties.entries.push(entry.clone()),
        }
    }
    Ok(properties)
}

fn is_blank(c: char) -> bool {
    matches!(c, ' ' | '\t' | '\u{c}')
}

/// `String.trim()`: every character up to U+0020 at either end.
fn java_trim(s: &str) -> String {
    s.trim_matches(|c: char| c <= ' ').to_string()
}

/// The logical lines, each with the natural line it starts on; blanks and comments dropped.
fn logical_lines(text: &str) -> Vec<(usize, Vec<char>)> {
    // Natural lines first, each without its terminator.
    let mut natural: Vec<Vec<char>> = vec![Vec::new()];
    let mut chars = text.chars().peekable();
    while let Some(c) = chars.next() {
        match c {
            '\r' => {
                chars.next_if_eq(&'\n');
                natural.push(Vec::new());
            }
            '\n' => natural.push(Vec::new()),
            c => natural.last_mut().expect("never empty").push(c),
        }
    }
    let mut lines = Vec::new();
    let mut index = 0;
    while index < natural.len() {
        let start = index;
        let first: Vec<char> = natural[index]
            .iter()
            .copied()
            .skip_while(|&c| is_blank(c))
            .collect();
        index += 1;
        if first.is_empty() || first[0] == '#' || first[0] == '!' {
            continue;
        }
        let mut logical = first;
        // An odd run of trailing backslashes: the last one joins the next natural line.
        while trailing_backslashes(&logical) % 2 == 1 {
            logical.pop();
            let Some(next) = natural.get(index) else {
                break; // the end of the input: the backslash is dropped
            };
            logical.extend(next.iter().copied().skip_while(|&c| is_blank(c)));
            index += 1;
        }
        lines.push((start + 1, logical));
    }
    lines
}

fn trailing_backslashes(line: &[char]) -> usize {
    line.iter().rev().take_while(|&&c| c == '\\').count()
}

/// Splits a logical line into its raw (still escaped) key and value.
fn split(line: &[char]) -> (&[char], &[char]) {
    let mut key_end = line.len();
    let mut value_start = line.len();
    let mut separator = false;
    let mut escaped = false;
    for (i, &c) in line.iter().enumerate() {
        if !escaped && (c == '=' || c == ':' || is_blank(c)) {
            key_end = i;
            value_start = i + 1;
            separator = c == '=' || c == ':';
            break;
        }
        escaped = c == '\\' && !escaped;
    }
    while let Some(&c) = line.get(value_start) {
        if is_blank(c) {
            value_start += 1;
        } else if !separator && (c == '=' || c == ':') {
            separator = true;
            value_start += 1;
        } else {
            break;
        }
    }
    (&line[..key_end], &line[value_start..])
}

/// `loadConvert`: the escapes undone; `None` for a malformed `\u`.
fn unescape(s: &[char]) -> Option<String> {
    let mut out = String::with_capacity(s.len());
    let mut chars = s.iter().copied();
    while let Some(c) = chars.next() {
        if c != '\\' {
            out.push(c);
            continue;
        }
        // A trailing lone backslash cannot reach here: it continued the line or was dropped.
        let Some(escaped) = chars.next() else { break };
        out.push(match escaped {
            't' => '\t',
            'n' => '\n',
            'r' => '\r',
            'f' => '\u{c}',
            'u' => {
                let mut code = 0u32;
                for _ in 0..4 {
                    code = code * 16 + chars.next()?.to_digit(16)?;
                }
                // Java's char is a UTF-16 unit; a lone surrogate has no Rust char, and in a
                // zoo.cfg it can only be a mistake.
                char::from_u32(code).unwrap_or(char::REPLACEMENT_CHARACTER)
            }
            other => other,
        });
    }
    Some(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn pairs(text: &str) -> Vec<(String, String)> {
        parse(text)
            .unwrap()
            .entries
            .into_iter()
            .map(|p| (p.key, p.value))
            .collect()
    }

    fn one(key: &str, value: &str) -> Vec<(String, String)> {
        vec![(key.to_string(), value.to_string())]
    }

    #[test]
    fn every_separator_java_accepts() {
        for text in [
            "clientPort=2181",
            "clientPort: 2181",
            "clientPort 2181",
            "  clientPort\t =  2181  ",
            "clientPort :2181",
            "\u{c}clientPort=2181",
        ] {
            assert_eq!(pairs(text), one("clientPort", "2181"), "{text:?}");
        }
        // Only one separator is skipped; a second belongs to the value.
        assert_eq!(pairs("a = = b"), one("a", "= b"));
        assert_eq!(pairs("a::b"), one("a", ":b"));
        assert_eq!(pairs("lonely"), one("lonely", ""));
    }

    #[test]
    fn comments_blanks_continuations_and_line_ends() {
        let text =
            "# a comment\\\n! another\n\n   \nkey = first \\\n    second\\\\\nnext=x\r\ny=1\rz=2\\";
        let got = pairs(text);
        assert_eq!(
            got,
            [
                ("key", "first second\\"),
                ("next", "x"),
                ("y", "1"),
                ("z", "2")
            ]
            .map(|(k, v)| (k.to_string(), v.to_string()))
        );
        // A comment does not continue; a continued line is never a comment.
        assert_eq!(
            pairs("a=1\\\n# not a comment"),
            one("a", "1# not a comment")
        );
        // The line that once made a directory named `props-\`.
        assert_eq!(
            pairs("dataDir=/tmp/props-\\\nzk\n"),
            one("dataDir", "/tmp/props-zk")
        );
    }

    #[test]
    fn escapes_in_keys_and_values() {
        assert_eq!(pairs("a\\=b=c"), one("a=b", "c"));
        assert_eq!(pairs("a\\ b c"), one("a b", "c"));
        assert_eq!(pairs("k=\\u0041\\t\\q"), one("k", "A\tq"));
        assert_eq!(pairs("path=C:\\\\zk"), one("path", "C:\\zk"));
        let error = parse("\n\nk=\\u00g1").unwrap_err();
        assert_eq!(error, "line 3: malformed \\uxxxx encoding");
        assert!(parse("k=\\u12").is_err());
    }

    #[test]
    fn the_last_of_a_duplicate_wins_and_the_others_are_named() {
        let parsed = parse("tickTime=1\nclientPort=1\ntickTime=2\n").unwrap();
        let keys: Vec<_> = parsed
            .entries
            .iter()
            .map(|p| (p.key.as_str(), p.value.as_str(), p.line))
            .collect();
        assert_eq!(keys, [("clientPort", "1", 2), ("tickTime", "2", 3)]);
        assert_eq!(parsed.replaced, [("tickTime".to_string(), 1)]);
    }

    #[test]
    fn latin1_maps_each_byte_to_one_character() {
        assert_eq!(latin1(b"a\xe9\xff"), "a\u{e9}\u{ff}");
    }
}
