//! A register history as JSON for Porcupine's key-value model: an array of operations
//! `{"clientId", "input": {"op", "key", "value"}, "call", "output": {"value"}, "return"}`, times
//! in nanoseconds.
//!
//! `op` is 0 for get, 1 for put (Porcupine's `kvInput`); a compare-and-set, which that model
//! lacks, is written with `op` 3 and `"value"` `"old new"`, for a model that adds it. Invariant:
//! failed operations are left out (they did not take effect); an indeterminate one returns at
//! the end of the history with an unknown output (`"value": null`), as Porcupine expects of
//! operations that may have taken effect late.

use std::collections::HashMap;

use serde_json::{Value as Json, json};

use crate::proof::{F, History, Type, Value};

/// The history's register operations as Porcupine JSON.
pub fn to_porcupine_json(history: &History) -> String {
    let end = history
        .events
        .last()
        .map_or(0, |e| e.time.as_nanos() as u64 + 1);
    let mut open: HashMap<u64, usize> = HashMap::new();
    let mut ops: Vec<(Json, Option<Json>, Option<u64>, F)> = Vec::new();
    let mut calls: Vec<(u64, u64, Option<String>)> = Vec::new();
    for e in &history.events {
        if !matches!(e.f, F::Read | F::Write | F::Cas) {
            continue;
        }
        match e.kind {
            Type::Invoke => {
                let (op, value) = match (&e.f, &e.value) {
                    (F::Read, _) => (0, Json::String(String::new())),
                    (F::Write, v) => (1, Json::String(text(v))),
                    (_, v) => (3, Json::String(text(v))),
                };
                let input =
                    json!({"op": op, "key": e.key.clone().unwrap_or_default(), "value": value});
                open.insert(e.process, ops.len());
                ops.push((input, None, None, e.f));
                calls.push((e.process, e.time.as_nanos() as u64, e.key.clone()));
            }
            kind => {
                let Some(i) = open.remove(&e.process) else {
                    continue;
                };
                match kind {
                    Type::Fail => ops[i].3 = F::Drain, // marks it for leaving out
                    Type::Ok => {
                        let out = if ops[i].3 == F::Read {
                            text(&e.value)
                        } else {
                            String::new()
                        };
                        ops[i].1 = Some(json!({"value": out}));
                        ops[i].2 = Some(e.time.as_nanos() as u64);
                    }
                    _ => {}
                }
            }
        }
    }
    let array: Vec<Json> = ops
        .into_iter()
        .zip(calls)
        .filter(|((_, _, _, f), _)| *f != F::Drain)
        .map(|((input, output, ret, _), (process, call, _))| {
            json!({
                "clientId": process,
                "input": input,
                "call": call,
                "output": output.unwrap_or_else(|| json!({"value": null})),
                "return": ret.unwrap_or(end),
            })
        })
        .collect();
    Json::Array(array).to_string()
}

/// The model's string for a value: Porcupine's key-value model stores strings, `""` for none.
fn text(v: &Value) -> String {
    match v {
        Value::Nil => String::new(),
        Value::Int(x) | Value::Token(x) => x.to_string(),
        Value::Cas(a, b) => format!("{a} {b}"),
        Value::Ints(xs) => xs.iter().map(i64::to_string).collect::<Vec<_>>().join(" "),
    }
}
