//! Fault rules as the test controls' JSON: every field of [`FaultRule`], read from a
//! `POST /faults` body and written back by `GET /faults` (docs/test-controls.md).
//!
//! A rule's JSON is flat:
//! `{"fault": "apply_then_drop" | "drop_before_apply" | "delay" | "reject", "delay_ms": N,
//!   "error": "NoNode" | -101, "session": "0x…" | decimal, "opcode": "Create" | 1,
//!   "path_prefix": "/locks", "times": "once" | "always" | N}`,
//! where `delay_ms` goes with `delay` only, `error` with `reject` only, and every filter is
//! optional. Opcode and error names are ZooKeeper's Java names (`ZooDefs.OpCode`,
//! `KeeperException.Code`); their numbers are accepted too. What is written back reads back as
//! the same rule.

use std::time::Duration;

use serde_json::{Map, Value, json};
use shepherd_protocol::{ErrorCode, OpCode};

use crate::shell::controls::faults::{Fault, FaultId, FaultRule, FaultTimes};
use crate::shell::http::controls::json::{Invalid, hex, only_fields, parse_session};

/// The fields a rule may have.
const FIELDS: &[&str] = &[
    "fault",
    "delay_ms",
    "error",
    "session",
    "opcode",
    "path_prefix",
    "times",
];

/// The longest delay a rule may ask for: a day, far beyond any test, and far from overflowing
/// tokio's clock.
const MAX_DELAY_MS: u64 = 86_400_000;

/// Reads a rule from a `POST /faults` body.
pub(crate) fn parse_rule(map: &Map<String, Value>) -> Result<FaultRule, Invalid> {
    only_fields(map, FIELDS)?;
    let kind = match map.get("fault") {
        Some(Value::String(kind)) => kind.as_str(),
        Some(other) => return Err(Invalid::new(format!("fault: a string, not {other}"))),
        None => return Err(Invalid::new("fault is required")),
    };
    let refuse = |field: &str| {
        if map.contains_key(field) {
            Err(Invalid::new(format!(
                "{field} does not go with fault {kind:?}"
            )))
        } else {
            Ok(())
        }
    };
    let fault = match kind {
        "apply_then_drop" | "drop_before_apply" => {
            refuse("delay_ms")?;
            refuse("error")?;
            if kind == "apply_then_drop" {
                Fault::ApplyThenDrop
            } else {
                Fault::DropBeforeApply
            }
        }
        "delay" => {
            refuse("error")?;
            let ms = match map.get("delay_ms") {
                Some(Value::Number(n)) => n.as_u64().filter(|ms| *ms <= MAX_DELAY_MS),
                Some(_) => None,
                None => return Err(Invalid::new("delay_ms is required for fault \"delay\"")),
            };
            let ms = ms.ok_or_else(|| {
                Invalid::new(format!("delay_ms: an integer from 0 to {MAX_DELAY_MS}"))
            })?;
            Fault::Delay(Duration::from_millis(ms))
        }
        "reject" => {
            refuse("delay_ms")?;
            let code = map
                .get("error")
                .ok_or_else(|| Invalid::new("error is required for fault \"reject\""))?;
            Fault::Reject(named("error", code, ErrorCode::ALL, ErrorCode::name)?)
        }
        other => {
            return Err(Invalid::new(format!(
                "fault: one of apply_then_drop, drop_before_apply, delay, reject; not {other:?}"
            )));
        }
    };
    let mut rule = FaultRule::new(fault);
    if let Some(session) = map.get("session") {
        rule = rule.session(parse_session("session", session)?);
    }
    if let Some(op) = map.get("opcode") {
        rule = rule.opcode(named("opcode", op, OpCode::ALL, OpCode::name)?);
    }
    match map.get("path_prefix") {
        None => {}
        Some(Value::String(prefix)) => rule = rule.path_prefix(prefix.clone()),
        Some(other) => {
            return Err(Invalid::new(format!("path_prefix: a string, not {other}")));
        }
    }
    rule = match map.get("times") {
        None => rule.once(),
        Some(Value::String(s)) if s == "once" => rule.once(),
        Some(Value::String(s)) if s == "always" => rule.always(),
        Some(Value::Number(n)) if n.as_u64().is_some_and(|n| n > 0) => {
            rule.times(n.as_u64().unwrap_or(1))
        }
        Some(other) => {
            return Err(Invalid::new(format!(
                "times: \"once\", \"always\" or a positive integer, not {other}"
            )));
        }
    };
    Ok(rule)
}

/// A wire enum member by its Java name (exactly) or by its number.
fn named<T: Copy + TryFrom<i32>>(
    field: &str,
    value: &Value,
    all: &[T],
    name: fn(T) -> &'static str,
) -> Result<T, Invalid> {
    let found = match value {
        Value::String(text) => all.iter().copied().find(|m| name(*m) == text),
        Value::Number(n) => n
            .as_i64()
            .and_then(|n| i32::try_from(n).ok())
            .and_then(|n| T::try_from(n).ok()),
        _ => None,
    };
    found.ok_or_else(|| Invalid::new(format!("{field}: no such name or number: {value}")))
}

/// One rule as `GET /faults` lists it: its id, how many times it has fired, and its fields.
pub(crate) fn rule_json(id: FaultId, rule: &FaultRule, fired: u64) -> Value {
    let (fault, session, opcode, prefix, times) = rule.parts();
    let mut out = json!({ "id": id.number(), "fired": fired });
    let Value::Object(map) = &mut out else {
        return out;
    };
    let kind = match fault {
        Fault::ApplyThenDrop => "apply_then_drop",
        Fault::DropBeforeApply => "drop_before_apply",
        Fault::Delay(delay) => {
            let ms = u64::try_from(delay.as_millis()).unwrap_or(u64::MAX);
            map.insert("delay_ms".into(), json!(ms));
            "delay"
        }
        Fault::Reject(code) => {
            map.insert("error".into(), json!(code.name()));
            "reject"
        }
        // Set only in-process, by tests of the history checkers; listed for what they are.
        Fault::AckBeforeApply => "broken_ack_before_apply",
        Fault::StaleRead(_) => "broken_stale_read",
        Fault::HideLowestChild => "broken_hide_lowest_child",
    };
    map.insert("fault".into(), json!(kind));
    if let Some(session) = session {
        map.insert("session".into(), json!(hex(session)));
    }
    if let Some(op) = opcode {
        map.insert("opcode".into(), json!(op.name()));
    }
    if let Some(prefix) = prefix {
        map.insert("path_prefix".into(), json!(prefix));
    }
    let times = match times {
        FaultTimes::Once => json!("once"),
        FaultTimes::Always => json!("always"),
        FaultTimes::Times(n) => json!(n),
    };
    map.insert("times".into(), times);
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(value: Value) -> Result<FaultRule, Invalid> {
        match value {
            Value::Object(map) => parse_rule(&map),
            _ => panic!("not an object"),
        }
    }

    #[test]
    fn every_field_reads_and_writes_back() {
        let bodies = [
            json!({"fault": "apply_then_drop", "opcode": "Create", "path_prefix": "/locks",
                   "times": 2, "session": "0x1f"}),
            json!({"fault": "drop_before_apply", "times": "always"}),
            json!({"fault": "delay", "delay_ms": 250, "opcode": "Ping"}),
            json!({"fault": "reject", "error": "ConnectionLoss", "session": 31}),
            json!({"fault": "reject", "error": -101, "opcode": 4}),
        ];
        for body in bodies {
            let rule = parse(body.clone()).unwrap_or_else(|e| panic!("{body}: {e:?}"));
            let Value::Object(mut written) = rule_json(FaultId::from_number(9), &rule, 0) else {
                panic!("not an object");
            };
            assert_eq!(written.remove("id"), Some(json!(9)));
            assert_eq!(written.remove("fired"), Some(json!(0)));
            let again = parse_rule(&written).expect("the written rule reads back");
            assert_eq!(again, rule, "{body}");
        }
        let rule =
            parse(json!({"fault": "reject", "error": "NoNode", "opcode": "Create"})).expect("rule");
        assert_eq!(
            rule,
            FaultRule::new(Fault::Reject(ErrorCode::NoNode)).opcode(OpCode::Create)
        );
    }

    #[test]
    fn bad_rules_say_why() {
        let bodies = [
            json!({}),
            json!({"fault": 1}),
            json!({"fault": "explode"}),
            json!({"fault": "delay"}),
            json!({"fault": "delay", "delay_ms": -1}),
            json!({"fault": "delay", "delay_ms": 1.5}),
            json!({"fault": "delay", "delay_ms": u64::MAX}),
            json!({"fault": "delay", "delay_ms": 5, "error": "NoNode"}),
            json!({"fault": "reject"}),
            json!({"fault": "reject", "error": "NoSuchCode"}),
            json!({"fault": "reject", "error": 12345}),
            json!({"fault": "reject", "error": 1e30}),
            json!({"fault": "apply_then_drop", "delay_ms": 5}),
            json!({"fault": "apply_then_drop", "opcode": "create"}),
            json!({"fault": "apply_then_drop", "path_prefix": 3}),
            json!({"fault": "apply_then_drop", "times": 0}),
            json!({"fault": "apply_then_drop", "times": "twice"}),
            json!({"fault": "apply_then_drop", "session": "zz"}),
            json!({"fault": "apply_then_drop", "sesion": "0x1"}),
        ];
        for body in bodies {
            assert!(parse(body.clone()).is_err(), "{body}");
        }
    }
}
