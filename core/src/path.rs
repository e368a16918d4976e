//! Path rules: ZooKeeper's `PathUtils.validatePath` (docs/protocol.md §6.1) and the cheaper parent split that
//! create and delete apply before it (docs/protocol.md §6.2 step 5, §6.3 step 2).
//!
//! Nothing here touches the tree. Invariant: every path stored in the tree is valid, so tree
//! code may split on `/` freely: it passed [`is_valid`], or, restored from a snapshot below a
//! parent already in the tree, [`is_valid_below_valid_parent`], which then says the same.

/// The system nodes that exist from the start and can never be deleted (docs/protocol.md §16).
pub(crate) const SYSTEM_NODES: [&str; 4] =
    ["/", "/zookeeper", "/zookeeper/quota", "/zookeeper/config"];

/// Whether `path` passes `PathUtils.validatePath` (docs/protocol.md §6.1).
///
/// Java checks UTF-16 code units; a character outside the BMP becomes a surrogate pair there
/// (U+D800–U+DFFF, a banned range), so here every such character is invalid too.
pub(crate) fn is_valid(path: &str) -> bool {
    let bytes = path.as_bytes();
    if bytes.first() != Some(&b'/') {
        return false;
    }
    if bytes.len() == 1 {
        return true;
    }
    if bytes.last() == Some(&b'/') {
        return false;
    }
    if !path.is_ascii() {
        return segments_valid(path);
    }
    // ASCII, nearly every path: one pass over the bytes (every request's path goes through
    // here).
    bytes[1..].split(|&b| b == b'/').all(ascii_segment_valid)
}

/// Whether `path` is valid, given that its parent as [`split`] computes it is a valid path (a
/// node in the tree): then only its last name is new, and the one way the parent part can be
/// valid while the whole is not, a parent part of `/` (`//name`). Recovery asks only this of a
/// restored node, whose parent it has found in the tree. The root itself (`/`) is not a path
/// below a parent: false here, and callers check it apart. A malformed path whose parent part
/// is not in the tree (`/a//b`) passes the name check and is then refused as an orphan.
pub(crate) fn is_valid_below_valid_parent(path: &str) -> bool {
    let Some(slash) = path.rfind('/') else {
        return false;
    };
    if slash > 0 && &path[..slash] == "/" {
        return false;
    }
    let name = &path[slash + 1..];
    if name.is_ascii() {
        ascii_segment_valid(name.as_bytes())
    } else {
        segment_valid(name)
    }
}

fn ascii_segment_valid(segment: &[u8]) -> bool {
    !segment.is_empty()
        && segment != b"."
        && segment != b".."
        && segment.iter().all(|&b| b >= 0x20 && b != 0x7f)
}

/// The segments of a path that starts with `/` and does not end with one, checked char by char.
fn segments_valid(path: &str) -> bool {
    path[1..].split('/').all(segment_valid)
}

fn segment_valid(segment: &str) -> bool {
    !segment.is_empty()
        && segment != "."
        && segment != ".."
        && segment.chars().all(|c| !is_banned_char(c))
}

fn is_banned_char(c: char) -> bool {
    matches!(c as u32,
        0x0000..=0x001f | 0x007f..=0x009f | 0xd800..=0xf8ff | 0xfff0..=0xffff | 0x1_0000..)
}

/// The parent as create and delete compute it: everything before the last `/`, with the root's
/// `""` mapped to `/`. `None` (BadArguments) when there is no `/` or there is a NUL (docs/protocol.md §6.2 step 5).
pub(crate) fn parent_for_write(path: &str) -> Option<&str> {
    if path.contains('\0') {
        return None;
    }
    let slash = path.rfind('/')?;
    Some(if slash == 0 { "/" } else { &path[..slash] })
}

/// The parent of a stored (valid, non-root) path, and the child's name within it.
pub(crate) fn split(path: &str) -> (&str, &str) {
    match path.rfind('/') {
        Some(0) | None => ("/", path.get(1..).unwrap_or("")),
        Some(i) => (&path[..i], &path[i + 1..]),
    }
}

/// The path reads look up: `""` is an alias of the root in the Java DataTree (docs/protocol.md §6.1).
pub(crate) fn lookup_key(path: &str) -> &str {
    if path.is_empty() { "/" } else { path }
}

/// `parent + "/" + name`, without doubling the root's slash.
pub(crate) fn join(parent: &str, name: &str) -> String {
    if parent == "/" {
        format!("/{name}")
    } else {
        format!("{parent}/{name}")
    }
}

/// Every proper ancestor of `path`, nearest first, ending with `/` (for recursive watches).
pub(crate) fn ancestors(path: &str) -> impl Iterator<Item = &str> {
    let mut cur = path;
    std::iter::from_fn(move || {
        if cur == "/" || cur.is_empty() {
            return None;
        }
        let (parent, _) = split(cur);
        cur = parent;
        Some(parent)
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn validation_follows_path_utils() {
        for ok in ["/", "/a", "/a/b", "/a.b", "/...", "/a/.x", "/ü"] {
            assert!(is_valid(ok), "{ok}");
        }
        for bad in [
            "",
            "a",
            "/a/",
            "//",
            "/a//b",
            "/.",
            "/..",
            "/a/./b",
            "/a/..",
            "/a\0b",
            "/a\u{1}",
            "/\u{7f}",
            "/\u{e000}",
            "/\u{fff0}",
            "/\u{1f600}",
        ] {
            assert!(!is_valid(bad), "{bad:?}");
        }
    }

    proptest::proptest! {
        /// The ASCII pass agrees with the char-by-char definition on any path of `/`, `.`,
        /// letters and control bytes, the characters its cases turn on.
        #[test]
        fn the_ascii_pass_agrees_with_the_char_check(path in "/?[/.a\\x00-\\x1f\\x7f]{0,12}") {
            let by_chars = path.starts_with('/')
                && (path.len() == 1 || (!path.ends_with('/') && segments_valid(&path)));
            proptest::prop_assert_eq!(is_valid(&path), by_chars);
        }

        /// Below a valid parent, the short check agrees with the whole one; the paths include
        /// characters outside ASCII.
        #[test]
        fn below_a_valid_parent_the_short_check_agrees(path in "/?[/.a\\x00-\\x1f\\x7f\u{e9}\u{e000}]{0,12}") {
            if path != "/" && is_valid(split(&path).0) {
                proptest::prop_assert_eq!(is_valid_below_valid_parent(&path), is_valid(&path));
            }
        }
    }

    #[test]
    fn parents() {
        assert_eq!(parent_for_write("/x"), Some("/"));
        assert_eq!(parent_for_write("/nope/"), Some("/nope"));
        assert_eq!(parent_for_write("p"), None);
        assert_eq!(parent_for_write("/a\0"), None);
        assert_eq!(split("/a/b"), ("/a", "b"));
        assert_eq!(split("/a"), ("/", "a"));
        assert_eq!(ancestors("/a/b/c").collect::<Vec<_>>(), ["/a/b", "/a", "/"]);
        assert_eq!(ancestors("/").count(), 0);
        assert_eq!(join("/", "a"), "/a");
        assert_eq!(join("/a", "b"), "/a/b");
    }
}
