//! What a znode path may be, checked before anything is sent, by the rules of ZooKeeper's
//! client (`PathUtils.validatePath` at `release-3.8.0`): absolute; no trailing `/` (except the
//! root, or a sequential create, whose server appends the number); no empty, `.` or `..` name;
//! no NUL and none of the control and private-use characters Java refuses. The server answers
//! such paths with a bare `NoNode` (both ZooKeeper 3.8 and Shepherd, for `/a/`), which sends
//! the user looking for a node rather than at their typing.

/// Checks a path argument; `sequential` for `create -s`, whose path may end in `/`.
///
/// # Errors
/// The reason, as a sentence naming the path.
pub fn check(path: &str, sequential: bool) -> Result<(), String> {
    // A sequential create is judged with the number the server will add, as Java does.
    let judged = if sequential {
        format!("{path}1")
    } else {
        path.to_owned()
    };
    let bad = |why: &str| Err(format!("invalid path {path:?}: {why}"));
    if judged.is_empty() {
        return bad("it is empty");
    }
    if !judged.starts_with('/') {
        return bad("it must start with '/'");
    }
    if judged == "/" {
        return Ok(());
    }
    if judged.ends_with('/') {
        return bad("it must not end with '/'");
    }
    for name in judged[1..].split('/') {
        match name {
            "" => return bad("it has an empty node name ('//')"),
            "." | ".." => return bad("'.' and '..' are not node names (paths are absolute)"),
            _ => {}
        }
    }
    if let Some(c) = judged.chars().find(|&c| refused(c)) {
        return bad(&format!("character U+{:04X} is not allowed", u32::from(c)));
    }
    Ok(())
}

/// The characters `PathUtils` refuses.
fn refused(c: char) -> bool {
    matches!(u32::from(c),
        0x0000..=0x001f | 0x007f..=0x009f | 0xd800..=0xf8ff | 0xfff0..=0xffff)
}

/// A clap value parser for path arguments (every command but `create`, which knows whether it
/// is sequential only after parsing).
pub fn parse(path: &str) -> Result<String, String> {
    check(path, false).map(|()| path.to_owned())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn paths_as_the_java_client_judges_them() {
        for good in ["/", "/a", "/a/b", "/a-b.c_d", "/é", "/a/..b", "/a/b."] {
            assert_eq!(check(good, false), Ok(()), "{good}");
        }
        for (bad, why) in [
            ("", "empty"),
            ("a", "start with '/'"),
            ("/a/", "end with '/'"),
            ("/a//b", "empty node name"),
            ("/a/./b", "'.'"),
            ("/..", "'.'"),
            ("/a\u{0}b", "U+0000"),
            ("/a\u{1}", "U+0001"),
            ("/a\u{e000}", "U+E000"),
        ] {
            let message = check(bad, false).unwrap_err();
            assert!(message.contains(why), "{bad:?}: {message}");
        }
        // A sequential create may end in '/': the server appends the number.
        assert_eq!(check("/queue/", true), Ok(()));
        assert!(check("/queue//", true).is_err());
    }
}
