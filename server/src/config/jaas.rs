//! JAAS login configuration files, as ZooKeeper servers are given them
//! (`-Djava.security.auth.login.config=FILE`): the `Server` section's `user_<name>="<password>"`
//! options are the DIGEST-MD5 users (ZooKeeper 3.8 `SaslServerCallbackHandler`).
//!
//! The syntax is the JDK's `ConfigFile`: sections `Name { entry; … };`, each entry
//! `LoginModuleClass Flag key=value …;`, values quoted (`"…"`, with `\` escapes) or bare words,
//! `//`, `/* */` and `#` comments. `${…}` property expansion is not performed.
//!
//! Invariants: parsing never panics; a file is read only up to [`MAX_JAAS_BYTES`]; errors name
//! the line.

use std::collections::BTreeMap;
use std::path::Path;

/// The largest JAAS file read: far beyond any real one, small enough to refuse a wrong path
/// (a log, a device) quickly.
pub const MAX_JAAS_BYTES: u64 = 1 << 20;

/// One login module entry of a section.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct JaasEntry {
    /// The login module class.
    pub module: String,
    /// `required`, `requisite`, `sufficient` or `optional`.
    pub flag: String,
    /// Its options, in file order (a later repeat of a key wins, as in the JDK's map).
    pub options: Vec<(String, String)>,
}

/// A parsed file: its sections by name, each a list of entries (a repeated section name adds
/// entries, as the JDK does).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Jaas {
    /// Sections by name.
    pub sections: BTreeMap<String, Vec<JaasEntry>>,
}

#[derive(Debug, Clone, PartialEq, Eq)]
enum Token {
    Word(String),
    Quoted(String),
    Punct(char),
}

fn is_word(c: char) -> bool {
    c.is_alphanumeric() || "$_-*./:@+~".contains(c)
}

/// Splits the text into tokens with their line numbers.
fn tokenize(text: &str) -> Result<Vec<(Token, usize)>, String> {
    let mut tokens = Vec::new();
    let mut chars = text.chars().peekable();
    let mut line = 1;
    while let Some(c) = chars.next() {
        match c {
            '\n' => line += 1,
            c if c.is_whitespace() => {}
            '#' => {
                while chars.peek().is_some_and(|&c| c != '\n') {
                    chars.next();
                }
            }
            '/' if chars.peek() == Some(&'/') => {
                while chars.peek().is_some_and(|&c| c != '\n') {
                    chars.next();
                }
            }
            '/' if chars.peek() == Some(&'*') => {
                chars.next();
                let start = line;
                let mut prev = ' ';
                loop {
                    match chars.next() {
                        None => return Err(format!("line {start}: unterminated /* comment")),
                        Some('/') if prev == '*' => break,
                        Some(c) => {
                            if c == '\n' {
                                line += 1;
                            }
                            prev = c;
                        }
                    }
                }
            }
            '"' => {
                let start = line;
                let mut value = String::new();
                loop {
                    match chars.next() {
                        None => return Err(format!("line {start}: unterminated quoted string")),
                        Some('"') => break,
                        Some('\\') => match chars.next() {
                            Some('n') => value.push('\n'),
                            Some('t') => value.push('\t'),
                            Some(c) => value.push(c),
                            None => {
                                return Err(format!("line {start}: unterminated quoted string"));
                            }
                        },
                        Some(c) => {
                            if c == '\n' {
                                line += 1;
                            }
                            value.push(c);
                        }
                    }
                }
                tokens.push((Token::Quoted(value), start));
            }
            '{' | '}' | ';' | '=' => tokens.push((Token::Punct(c), line)),
            c if is_word(c) => {
                let mut word = String::from(c);
                while let Some(&c) = chars.peek() {
                    if !is_word(c) {
                        break;
                    }
                    word.push(c);
                    chars.next();
                }
                tokens.push((Token::Word(word), line));
            }
            c => return Err(format!("line {line}: unexpected character {c:?}")),
        }
    }
    Ok(tokens)
}

impl Jaas {
    /// Parses JAAS configuration text.
    ///
    /// # Errors
    /// A message naming the line of the first syntax error.
    pub fn parse(text: &str) -> Result<Jaas, String> {
        let tokens = tokenize(text)?;
        let mut it = tokens.into_iter().peekable();
        let mut jaas = Jaas::default();
        let last_line = text.lines().count().max(1);
        let mut next = |what: &str| {
            it.next()
                .ok_or_else(|| format!("line {last_line}: expected {what}, found the end"))
        };
        while let Ok((name, line)) = next("a section name") {
            let Token::Word(name) = name else {
                return Err(format!("line {line}: expected a section name"));
            };
            match next("'{'")? {
                (Token::Punct('{'), _) => {}
                (_, line) => return Err(format!("line {line}: expected '{{' after {name}")),
            }
            let entries = jaas.sections.entry(name.clone()).or_default();
            loop {
                let (token, line) = next("a login module or '}'")?;
                let module = match token {
                    Token::Punct('}') => break,
                    Token::Word(module) => module,
                    _ => return Err(format!("line {line}: expected a login module class")),
                };
                let flag = match next("a control flag")? {
                    (Token::Word(flag), _)
                        if ["required", "requisite", "sufficient", "optional"]
                            .contains(&flag.to_ascii_lowercase().as_str()) =>
                    {
                        flag
                    }
                    (_, line) => {
                        return Err(format!(
                            "line {line}: expected required, requisite, sufficient or optional"
                        ));
                    }
                };
                let mut options = Vec::new();
                loop {
                    let (token, line) = next("an option or ';'")?;
                    let key = match token {
                        Token::Punct(';') => break,
                        Token::Word(key) => key,
                        _ => return Err(format!("line {line}: expected an option name")),
                    };
                    match next("'='")? {
                        (Token::Punct('='), _) => {}
                        (_, line) => return Err(format!("line {line}: expected '=' after {key}")),
                    }
                    let value = match next("a value")? {
                        (Token::Word(v) | Token::Quoted(v), _) => v,
                        (_, line) => {
                            return Err(format!("line {line}: expected a value for {key}"));
                        }
                    };
                    options.push((key, value));
                }
                entries.push(JaasEntry {
                    module,
                    flag,
                    options,
                });
            }
            match next("';' after '}'")? {
                (Token::Punct(';'), _) => {}
                (_, line) => return Err(format!("line {line}: expected ';' after '}}'")),
            }
        }
        Ok(jaas)
    }

    /// Reads and parses a file.
    ///
    /// # Errors
    /// A message naming the file: unreadable, larger than [`MAX_JAAS_BYTES`], not UTF-8, or
    /// malformed.
    pub fn read(path: &Path) -> Result<Jaas, String> {
        use std::io::Read;
        let shown = path.display();
        let file = std::fs::File::open(path).map_err(|e| format!("JAAS file {shown}: {e}"))?;
        let mut bytes = Vec::new();
        file.take(MAX_JAAS_BYTES + 1)
            .read_to_end(&mut bytes)
            .map_err(|e| format!("JAAS file {shown}: {e}"))?;
        if bytes.len() as u64 > MAX_JAAS_BYTES {
            return Err(format!(
                "JAAS file {shown}: larger than {MAX_JAAS_BYTES} bytes"
            ));
        }
        let text = String::from_utf8(bytes).map_err(|_| format!("JAAS file {shown}: not UTF-8"))?;
        Jaas::parse(&text).map_err(|e| format!("JAAS file {shown}: {e}"))
    }

    /// The DIGEST-MD5 users of section `section`: every `user_<name>` option of its entries
    /// (a later one wins).
    ///
    /// # Errors
    /// When there is no such section: ZooKeeper then refuses to start ("Could not find a
    /// 'Server' entry in this configuration").
    pub fn users(&self, section: &str) -> Result<BTreeMap<String, String>, String> {
        let entries = self.sections.get(section).ok_or_else(|| {
            format!("no '{section}' section: the server's SASL users are its user_<name> options")
        })?;
        Ok(entries
            .iter()
            .flat_map(|e| &e.options)
            .filter_map(|(k, v)| Some((k.strip_prefix("user_")?.to_string(), v.clone())))
            .collect())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    const SAMPLE: &str = r#"
// The server's users.
Server {
       org.apache.zookeeper.server.auth.DigestLoginModule required
       user_super="adminsecret"   /* the super user */
       user_bob="bob\"s secret";
};
# A client section, for zkCli.
Client {
       org.apache.zookeeper.server.auth.DigestLoginModule required
       username="bob"
       password="bob\"s secret";
};
QuorumServer { org.apache.zookeeper.server.auth.DigestLoginModule required user_q=plain; };
"#;

    #[test]
    fn sections_users_comments_quoting() {
        let jaas = Jaas::parse(SAMPLE).unwrap();
        assert_eq!(jaas.sections.len(), 3);
        let users = jaas.users("Server").unwrap();
        assert_eq!(users.get("super").map(String::as_str), Some("adminsecret"));
        assert_eq!(users.get("bob").map(String::as_str), Some("bob\"s secret"));
        assert_eq!(users.len(), 2);
        assert_eq!(
            jaas.users("QuorumServer")
                .unwrap()
                .get("q")
                .map(String::as_str),
            Some("plain")
        );
        let client = &jaas.sections["Client"][0];
        assert_eq!(client.flag, "required");
        assert_eq!(client.options[0], ("username".into(), "bob".into()));
        assert!(jaas.users("Nope").unwrap_err().contains("'Nope'"));
    }

    #[test]
    fn errors_name_the_line() {
        for (text, line) in [
            ("Server {\n x required a=\"b\"\n", "line 2"),
            ("Server {\n x mandatory a=b;\n};", "line 2"),
            ("Server {\n x required a b;\n};", "line 2"),
            ("Server {\n x required a=\"b;\n};", "line 2"),
            ("Server {\n x required a=b;\n}", "line 3"),
            ("Server {\n x required a=b; } ; /* open", "line 2"),
            ("Server {\n x required a=b%;\n};", "line 2"),
        ] {
            let err = Jaas::parse(text).unwrap_err();
            assert!(err.starts_with(line), "{text:?}: {err}");
        }
        assert_eq!(Jaas::parse("  // nothing\n").unwrap(), Jaas::default());
    }

    #[test]
    fn unreadable_file() {
        let err = Jaas::read(Path::new("/nonexistent/jaas.conf")).unwrap_err();
        assert!(err.contains("/nonexistent/jaas.conf"), "{err}");
    }

    proptest! {
        #[test]
        fn never_panics(text in "\\PC{0,200}") {
            let _ = Jaas::parse(&text);
        }

        #[test]
        fn jaas_shaped_noise_never_panics(
            text in r#"([A-Za-z]{1,6} ?\{ ?([a-z.]{1,8} (required|optional|x) ([a-z_]{1,6} ?= ?("[^"]{0,6}"?|[a-z]{0,4}) ?){0,3};? ?){0,3}\}? ?;? ?(//[a-z ]{0,5}\n|/\*)?){0,3}"#
        ) {
            let _ = Jaas::parse(&text);
        }
    }
}
