//! Histories: every operation a workload's clients made, as invoke then ok, fail (definitely
//! not applied) or info (unknown), with monotonic times since the recorder was made.
//!
//! Stand-in with the agreed interface of the checkers' branch (`i31check`), which owns this
//! file: replaced by its version when that branch is merged.
//!
//! Invariant: events are numbered in the order they were recorded, and every invoke gets
//! exactly one completion (a [`Pending`] dropped uncompleted records info).

use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

/// What an event is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Type {
    /// An operation began.
    Invoke,
    /// It took effect.
    Ok,
    /// It definitely took no effect.
    Fail,
    /// Its outcome is unknown.
    Info,
}

/// An operation's argument or result.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Value {
    /// None.
    Nil,
    /// One integer.
    Int(i64),
    /// Several.
    Ints(Vec<i64>),
    /// Compare-and-set: expected, new.
    Cas(i64, i64),
    /// A lock's fencing token.
    Token(i64),
}

/// The operation.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum F {
    /// Read a value.
    Read,
    /// Write a value.
    Write,
    /// Compare-and-set.
    Cas,
    /// Add (to a set, a counter).
    Add,
    /// Generate a unique id.
    Generate,
    /// Enqueue.
    Enqueue,
    /// Dequeue.
    Dequeue,
    /// Acquire a lock.
    Acquire,
    /// Release it.
    Release,
    /// Drain a queue.
    Drain,
}

/// One event.
#[derive(Debug, Clone)]
pub struct Event {
    /// Its place in the history.
    pub index: usize,
    /// The process that made it.
    pub process: u64,
    /// What it is.
    pub kind: Type,
    /// The operation.
    pub f: F,
    /// The key it is about, if any.
    pub key: Option<String>,
    /// Its argument or result.
    pub value: Value,
    /// Since the recorder was made.
    pub time: Duration,
}

/// A whole history, in order.
#[derive(Clone, Debug, Default)]
pub struct History {
    /// The events, `events[i].index == i`.
    pub events: Vec<Event>,
}

/// Records events from any number of tasks.
#[derive(Clone)]
pub struct Recorder {
    events: Arc<Mutex<Vec<Event>>>,
    start: Instant,
}

impl Default for Recorder {
    fn default() -> Self {
        Recorder::new()
    }
}

impl Recorder {
    /// An empty history; times count from now.
    pub fn new() -> Recorder {
        Recorder {
            events: Arc::default(),
            start: Instant::now(),
        }
    }

    fn push(&self, process: u64, kind: Type, f: F, key: Option<String>, value: Value) {
        let mut events = self.events.lock().unwrap_or_else(|e| e.into_inner());
        let index = events.len();
        let time = self.start.elapsed();
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

    /// Records an invoke; complete the returned [`Pending`].
    pub fn invoke(&self, process: u64, f: F, key: Option<&str>, value: Value) -> Pending {
        let key = key.map(str::to_owned);
        self.push(process, Type::Invoke, f, key.clone(), value);
        Pending {
            recorder: Some(self.clone()),
            process,
            f,
            key,
        }
    }

    /// Every event so far.
    pub fn history(&self) -> History {
        History {
            events: self
                .events
                .lock()
                .unwrap_or_else(|e| e.into_inner())
                .clone(),
        }
    }
}

/// An invoked operation awaiting its completion.
pub struct Pending {
    recorder: Option<Recorder>,
    process: u64,
    f: F,
    key: Option<String>,
}

impl Pending {
    fn complete(&mut self, kind: Type, value: Value) {
        if let Some(recorder) = self.recorder.take() {
            recorder.push(self.process, kind, self.f, self.key.take(), value);
        }
    }

    /// It took effect.
    pub fn ok(mut self, value: Value) {
        self.complete(Type::Ok, value);
    }

    /// It definitely took no effect.
    pub fn fail(mut self, value: Value) {
        self.complete(Type::Fail, value);
    }

    /// Its outcome is unknown.
    pub fn info(mut self, value: Value) {
        self.complete(Type::Info, value);
    }
}

impl Drop for Pending {
    fn drop(&mut self) {
        self.complete(Type::Info, Value::Nil);
    }
}
