//! How `zoo.cfg` values are read when they are booleans or lists, in one place so that every key
//! reads them alike (ZooKeeper 3.8 trims each value in `QuorumPeerConfig.parseProperties`, then
//! reads booleans with Java's `Boolean.parseBoolean` and lists by splitting on commas).

/// Java's `Boolean.parseBoolean` on a trimmed value: `true` in any case, anything else false.
pub(crate) fn java_bool(value: &str) -> bool {
    value.trim().eq_ignore_ascii_case("true")
}

/// A comma-separated list: each item trimmed, empty items left out.
pub(crate) fn comma_list(value: &str) -> Vec<String> {
    value
        .split(',')
        .map(str::trim)
        .filter(|s| !s.is_empty())
        .map(String::from)
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn booleans_and_lists() {
        assert!(java_bool(" TRUE ") && java_bool("true"));
        assert!(!java_bool("yes") && !java_bool("1") && !java_bool(""));
        assert_eq!(comma_list(" a, b,,c ,"), ["a", "b", "c"]);
        assert!(comma_list(" , ").is_empty());
    }
}
