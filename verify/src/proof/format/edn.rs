//! Jepsen's history as EDN: one map per line, `{:type :ok, :f :read, :value 3, :process 0,
//! :time 12345, :index 7}`, with `:time` in nanoseconds from the history's start.
//!
//! Invariant: an event with a key writes its value as `jepsen.independent`'s tuple
//! `[key value]`, so Knossos checks each key as its own register.

use std::fmt::Write;

use crate::proof::{Event, History, Value};

/// The history as Jepsen's EDN, one event map per line.
pub fn to_edn(history: &History) -> String {
    let mut out = String::new();
    for e in &history.events {
        event(&mut out, e);
        out.push('\n');
    }
    out
}

fn event(out: &mut String, e: &Event) {
    let mut value = String::new();
    match &e.key {
        Some(k) => {
            value.push('[');
            string(&mut value, k);
            value.push(' ');
            edn_value(&mut value, &e.value);
            value.push(']');
        }
        None => edn_value(&mut value, &e.value),
    }
    let _ = write!(
        out,
        "{{:type :{}, :f :{}, :value {value}, :process {}, :time {}, :index {}}}",
        e.kind.name(),
        e.f.name(),
        e.process,
        e.time.as_nanos(),
        e.index
    );
}

fn edn_value(out: &mut String, v: &Value) {
    let _ = match v {
        Value::Nil => write!(out, "nil"),
        Value::Int(x) | Value::Token(x) => write!(out, "{x}"),
        Value::Cas(a, b) => write!(out, "[{a} {b}]"),
        Value::Ints(xs) => {
            let items: Vec<String> = xs.iter().map(i64::to_string).collect();
            write!(out, "[{}]", items.join(" "))
        }
    };
}

/// An EDN string literal: quotes and backslashes escaped, control characters as `\uXXXX`.
fn string(out: &mut String, s: &str) {
    out.push('"');
    for c in s.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            c if c.is_control() => {
                let _ = write!(out, "\\u{:04x}", c as u32);
            }
            c => out.push(c),
        }
    }
    out.push('"');
}
