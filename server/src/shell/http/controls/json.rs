//! The test controls' JSON: how the core's views (sessions, znodes, watches, notification
//! counts) are written, and how the values a caller sends (session ids, paths, counters) are
//! read.
//!
//! Invariants: 64-bit ids (session ids, zxids, ephemeral owners) are written as `"0x…"` hex
//! strings, as ZooKeeper's own tools print them, because a JSON number above 2^53 loses digits
//! in JavaScript; a session id is read from a `"0x…"` hex string, a decimal string or a JSON
//! integer (kazoo's `client_id[0]` and Java's `getSessionId()` are decimal). Reading never
//! panics: any value of the wrong shape is an [`Invalid`] naming the field.

use serde_json::{Map, Value, json};
use shepherd_protocol::Stat;

use crate::core::{
    NodeInfo, NotificationCounts, SessionId, SessionInfo, WatchInfo, WatchKind, WatchMode,
};

/// A request value that cannot be used, with the message the caller gets (400).
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Invalid(pub(crate) String);

impl Invalid {
    pub(crate) fn new(message: impl Into<String>) -> Invalid {
        Invalid(message.into())
    }
}

/// A 64-bit id as ZooKeeper prints it: `0x` and lowercase hex, two's complement if negative.
pub(crate) fn hex(id: i64) -> String {
    format!("0x{:x}", id as u64)
}

/// A session id from text: `0x…` (or `0X…`) hex of up to 16 digits, or a signed decimal.
pub(crate) fn parse_session_text(text: &str) -> Result<SessionId, Invalid> {
    let bad = || Invalid::new(format!("not a session id (0x-hex or decimal): {text:?}"));
    if let Some(digits) = text.strip_prefix("0x").or_else(|| text.strip_prefix("0X")) {
        // from_str_radix accepts a leading '+', which is no hex digit.
        if digits.is_empty() || digits.starts_with('+') {
            return Err(bad());
        }
        return u64::from_str_radix(digits, 16)
            .map(|n| n as i64)
            .map_err(|_| bad());
    }
    if text.starts_with('+') {
        return Err(bad());
    }
    text.parse::<i64>().map_err(|_| bad())
}

/// A session id from a JSON value: a string as [`parse_session_text`] reads it, or an integer.
pub(crate) fn parse_session(field: &str, value: &Value) -> Result<SessionId, Invalid> {
    match value {
        Value::String(text) => parse_session_text(text)
            .map_err(|Invalid(message)| Invalid::new(format!("{field}: {message}"))),
        Value::Number(n) => n
            .as_i64()
            .ok_or_else(|| Invalid::new(format!("{field}: not a 64-bit integer: {n}"))),
        other => Err(Invalid::new(format!(
            "{field}: a session id is a string or an integer, not {other}"
        ))),
    }
}

/// A JSON object body, or why not.
pub(crate) fn object(body: &[u8]) -> Result<Map<String, Value>, Invalid> {
    match serde_json::from_slice::<Value>(body) {
        Ok(Value::Object(map)) => Ok(map),
        Ok(_) => Err(Invalid::new("the body must be a JSON object")),
        Err(error) => Err(Invalid::new(format!("the body is not JSON: {error}"))),
    }
}

/// Refuses fields other than `known`: a misspelt filter would otherwise widen a rule silently.
pub(crate) fn only_fields(map: &Map<String, Value>, known: &[&str]) -> Result<(), Invalid> {
    match map.keys().find(|key| !known.contains(&key.as_str())) {
        Some(key) => Err(Invalid::new(format!(
            "unknown field {key:?} (known: {})",
            known.join(", ")
        ))),
        None => Ok(()),
    }
}

/// A required string field.
pub(crate) fn string<'a>(map: &'a Map<String, Value>, field: &str) -> Result<&'a str, Invalid> {
    match map.get(field) {
        Some(Value::String(text)) => Ok(text),
        Some(other) => Err(Invalid::new(format!("{field}: a string, not {other}"))),
        None => Err(Invalid::new(format!("{field} is required"))),
    }
}

/// A required integer field within `i64`.
pub(crate) fn integer(map: &Map<String, Value>, field: &str) -> Result<i64, Invalid> {
    match map.get(field) {
        Some(Value::Number(n)) => n
            .as_i64()
            .ok_or_else(|| Invalid::new(format!("{field}: not a 64-bit integer: {n}"))),
        Some(other) => Err(Invalid::new(format!("{field}: an integer, not {other}"))),
        None => Err(Invalid::new(format!("{field} is required"))),
    }
}

/// A znode path as ZooKeeper accepts one: absolute, no empty segment, no trailing slash.
pub(crate) fn znode_path(field: &str, text: &str) -> Result<(), Invalid> {
    let valid = text == "/"
        || (text.starts_with('/')
            && !text.ends_with('/')
            && !text.contains("//")
            && !text.contains('\0'));
    if valid {
        Ok(())
    } else {
        Err(Invalid::new(format!("{field}: not a znode path: {text:?}")))
    }
}

/// One session. `frozen` comes from the shell, not the core.
pub(crate) fn session(info: &SessionInfo, frozen: bool) -> Value {
    json!({
        "id": hex(info.id),
        "timeout_ms": info.timeout_ms,
        "expires_at_ms": info.expires_at_ms,
        "connected": info.conn.is_some(),
        "frozen": frozen,
        "ephemerals": info.ephemerals,
        "watches": info.watches.iter().map(watch).collect::<Vec<_>>(),
    })
}

/// One watch registration.
pub(crate) fn watch(info: &WatchInfo) -> Value {
    let kind = match info.kind {
        WatchKind::Data => "data",
        WatchKind::Child => "child",
    };
    let mode = match info.mode {
        WatchMode::Standard => "standard",
        WatchMode::Persistent => "persistent",
        WatchMode::PersistentRecursive => "persistent_recursive",
    };
    json!({
        "path": info.path,
        "kind": kind,
        "mode": mode,
        "session": info.session.map(hex),
        "connection": info.conn,
    })
}

/// One znode with its Stat, in ZooKeeper's Stat field names.
pub(crate) fn node(info: &NodeInfo) -> Value {
    json!({ "path": info.path, "stat": stat(&info.stat) })
}

fn stat(stat: &Stat) -> Value {
    json!({
        "czxid": hex(stat.czxid),
        "mzxid": hex(stat.mzxid),
        "ctime": stat.ctime,
        "mtime": stat.mtime,
        "version": stat.version,
        "cversion": stat.cversion,
        "aversion": stat.aversion,
        "ephemeralOwner": hex(stat.ephemeral_owner),
        "dataLength": stat.data_length,
        "numChildren": stat.num_children,
        "pzxid": hex(stat.pzxid),
    })
}

/// Notification counts, by event type and by receiving session.
pub(crate) fn notifications(counts: &NotificationCounts) -> Value {
    let per_session: Map<String, Value> = counts
        .per_session
        .iter()
        .map(|(id, n)| (hex(*id), json!(n)))
        .collect();
    json!({
        "total": counts.total(),
        "NodeCreated": counts.node_created,
        "NodeDeleted": counts.node_deleted,
        "NodeDataChanged": counts.node_data_changed,
        "NodeChildrenChanged": counts.node_children_changed,
        "per_session": per_session,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn session_ids_read_as_hex_or_decimal() {
        assert_eq!(parse_session_text("0x10"), Ok(16));
        assert_eq!(parse_session_text("0X1f"), Ok(31));
        assert_eq!(parse_session_text("16"), Ok(16));
        assert_eq!(parse_session_text("-1"), Ok(-1));
        assert_eq!(parse_session_text("0xffffffffffffffff"), Ok(-1));
        assert_eq!(parse_session_text(&hex(i64::MIN)), Ok(i64::MIN));
        for bad in [
            "",
            "0x",
            "0x+1",
            "+1",
            "1.5",
            "0x1g",
            "0x10000000000000000",
            "abc",
        ] {
            assert!(parse_session_text(bad).is_err(), "{bad:?}");
        }
        assert_eq!(parse_session("s", &json!(7)), Ok(7));
        assert_eq!(parse_session("s", &json!("0x7")), Ok(7));
        assert!(parse_session("s", &json!(1.5)).is_err());
        assert!(parse_session("s", &json!(u64::MAX)).is_err());
        assert!(parse_session("s", &json!(null)).is_err());
        assert!(parse_session("s", &json!([1])).is_err());
    }

    #[test]
    fn paths_are_checked() {
        for good in ["/", "/a", "/a/b"] {
            assert!(znode_path("p", good).is_ok(), "{good}");
        }
        for bad in ["", "a", "/a/", "//", "/a//b", "/a\0"] {
            assert!(znode_path("p", bad).is_err(), "{bad:?}");
        }
    }

    #[test]
    fn bodies_must_be_objects_with_known_fields() {
        assert!(object(b"").is_err());
        assert!(object(b"[1]").is_err());
        assert!(object(b"{\"a\":").is_err());
        let map = object(b"{\"path\":\"/a\",\"value\":3}").expect("object");
        assert!(only_fields(&map, &["path", "value"]).is_ok());
        assert!(only_fields(&map, &["path"]).is_err());
        assert_eq!(string(&map, "path"), Ok("/a"));
        assert!(string(&map, "value").is_err());
        assert_eq!(integer(&map, "value"), Ok(3));
        assert!(integer(&map, "missing").is_err());
    }
}
