//! A recorded history: the operations clients invoked against a server and how each completed,
//! in Jepsen's vocabulary (`:invoke`, `:ok`, `:fail`, `:info`).
//!
//! Invariant: every invocation a [`Recorder`] hands out is completed exactly once in the
//! history, by `ok`, `fail` or `info`; a [`Pending`] dropped uncompleted (a cancelled task, a
//! panicking client) records `info`, so an operation that may have reached the server is never
//! read as one that did not happen. Events are indexed in the order they were recorded, and
//! times are monotonic from the recorder's start.

use std::sync::Arc;
use std::time::{Duration, Instant};

use parking_lot::Mutex;

/// How an event stands: Jepsen's `:type`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Type {
    /// The operation was sent.
    Invoke,
    /// It took effect, and the value is its result.
    Ok,
    /// It definitely did not take effect (BadVersion, NoNode, NodeExists…).
    Fail,
    /// Indeterminate (connection loss, timeout, session expired mid-flight): it may have taken
    /// effect at any time from its invocation to the end of the history, or never.
    Info,
}

/// What an operation carries or returns.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub enum Value {
    /// No value: a read of a missing register, an invocation that carries nothing.
    Nil,
    /// One number: a write's value, a read's result, an added element, an id.
    Int(i64),
    /// Several numbers: a set's final read, a queue's drain.
    Ints(Vec<i64>),
    /// A compare-and-set from the first value to the second.
    Cas(i64, i64),
    /// A fencing token (a lock node's sequence number or czxid).
    Token(i64),
}

/// The operation: Jepsen's `:f`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum F {
    /// Read a register, a set or a counter.
    Read,
    /// Write a register.
    Write,
    /// Compare-and-set a register.
    Cas,
    /// Add to a set, or increment a counter by the value.
    Add,
    /// Generate a unique id.
    Generate,
    /// Enqueue a value.
    Enqueue,
    /// Dequeue the smallest value.
    Dequeue,
    /// Acquire a lock; `ok` carries the fencing token.
    Acquire,
    /// Release a lock.
    Release,
    /// Read everything left in a queue, removing it.
    Drain,
}

impl F {
    /// Jepsen's keyword for the operation, without the colon.
    pub fn name(self) -> &'static str {
        match self {
            F::Read => "read",
            F::Write => "write",
            F::Cas => "cas",
            F::Add => "add",
            F::Generate => "generate",
            F::Enqueue => "enqueue",
            F::Dequeue => "dequeue",
            F::Acquire => "acquire",
            F::Release => "release",
            F::Drain => "drain",
        }
    }
}

impl Type {
    /// Jepsen's keyword for the type, without the colon.
    pub fn name(self) -> &'static str {
        match self {
            Type::Invoke => "invoke",
            Type::Ok => "ok",
            Type::Fail => "fail",
            Type::Info => "info",
        }
    }
}

/// One line of a history.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Event {
    /// The position in the history, from 0.
    pub index: usize,
    /// The logical client that did it; a process has at most one operation in flight.
    pub process: u64,
    /// Invocation or completion.
    pub kind: Type,
    /// The operation.
    pub f: F,
    /// The independent key (register, lock, queue), if the workload has several.
    pub key: Option<String>,
    /// What the invocation carries or the completion returns.
    pub value: Value,
    /// When it was recorded, from the recorder's start.
    pub time: Duration,
}

/// A whole history, in recorded order.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct History {
    /// The events, `events[i].index == i`.
    pub events: Vec<Event>,
}

#[derive(Debug)]
struct Shared {
    start: Instant,
    events: Mutex<Vec<Event>>,
}

impl Shared {
    fn push(&self, process: u64, kind: Type, f: F, key: Option<String>, value: Value) {
        let mut events = self.events.lock();
        // The time is taken under the lock so that times never go backwards along the indices.
        let time = self.start.elapsed();
        let index = events.len();
        events.push(Event {
            index,
            process,
            kind,
            f,
            key,
            value,
            time,
        });
    }
}

/// Records a history from any number of client tasks; clones share one history.
#[derive(Clone, Debug)]
pub struct Recorder {
    shared: Arc<Shared>,
}

impl Default for Recorder {
    fn default() -> Self {
        Self::new()
    }
}

impl Recorder {
    /// An empty history whose clock starts now.
    pub fn new() -> Self {
        Recorder {
            shared: Arc::new(Shared {
                start: Instant::now(),
                events: Mutex::new(Vec::new()),
            }),
        }
    }

    /// Records an invocation; the returned [`Pending`] records its completion.
    pub fn invoke(&self, process: u64, f: F, key: Option<&str>, value: Value) -> Pending {
        let key = key.map(str::to_owned);
        self.shared
            .push(process, Type::Invoke, f, key.clone(), value);
        Pending {
            shared: Some(self.shared.clone()),
            process,
            f,
            key,
        }
    }

    /// A copy of the history so far.
    pub fn history(&self) -> History {
        History {
            events: self.shared.events.lock().clone(),
        }
    }
}

/// An invocation awaiting its completion; completing consumes it, dropping it records `info`.
#[must_use = "an operation must be completed with ok, fail or info"]
#[derive(Debug)]
pub struct Pending {
    shared: Option<Arc<Shared>>,
    process: u64,
    f: F,
    key: Option<String>,
}

impl Pending {
    /// It took effect, returning `v`.
    pub fn ok(self, v: Value) {
        self.complete(Type::Ok, v);
    }

    /// It definitely did not take effect.
    pub fn fail(self, v: Value) {
        self.complete(Type::Fail, v);
    }

    /// It may or may not have taken effect.
    pub fn info(self, v: Value) {
        self.complete(Type::Info, v);
    }

    fn complete(mut self, kind: Type, v: Value) {
        if let Some(shared) = self.shared.take() {
            shared.push(self.process, kind, self.f, self.key.take(), v);
        }
    }
}

impl Drop for Pending {
    fn drop(&mut self) {
        if let Some(shared) = self.shared.take() {
            shared.push(
                self.process,
                Type::Info,
                self.f,
                self.key.take(),
                Value::Nil,
            );
        }
    }
}
