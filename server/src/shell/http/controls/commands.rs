//! ZooKeeper 3.8's `ControllerService` commands on the test controls' listener:
//! `/command/<action>[/<parameter>]`, so that tests written against ZooKeeper's own HTTP test
//! service (`org.apache.zookeeper.server.controller`, in ZooKeeper's jar since 3.6) run
//! against Shepherd unchanged (docs/test-controls.md, "ZooKeeper's command URLs").
//!
//! Invariants, each as ZooKeeper's `CommandListener` at `release-3.8.0` answers (checked on
//! the wire by `.ci/controller.sh`):
//! * any method; the action in any case; the parameter is everything after the action's `/`;
//! * a known action whose parameter parses is 200, `text/html;charset=utf-8`, with the path
//!   (without its leading `/`) and a newline as the body, whatever the command found (closing
//!   or expiring an unknown session is 200 and does nothing);
//! * an unknown action, or a parameter `Long.decode` refuses (or a negative delay), is 404 with
//!   an HTML error page, and does nothing;
//! * the fault commands hold at most one rule each (delay, fail, no response): a new command of
//!   the same kind replaces its rule, `reset` removes all three, and rules added through the
//!   JSON routes are left alone.

use std::time::Duration;

use bytes::Bytes;
use http_body_util::Full;
use hyper::header::{CACHE_CONTROL, CONTENT_TYPE, HeaderValue};
use hyper::{Response, StatusCode};
use parking_lot::Mutex;
use shepherd_protocol::ErrorCode;

use crate::core::SessionId;
use crate::shell::controls::faults::{Fault, FaultId, FaultRule};
use crate::shell::handle::Server;
use crate::shell::http::Reply;

/// ZooKeeper's default for `adddelay` without a parameter.
const DEFAULT_DELAY: Duration = Duration::from_millis(1000);

/// How long a reply `noresponse` holds back: a year stands for never, and still adds to an
/// `Instant` without overflow.
const NEVER: Duration = Duration::from_secs(365 * 24 * 3600);

/// Whether `path` is one of the command URLs (`/command` itself included, which ZooKeeper
/// answers 404).
pub(crate) fn is_command(path: &str) -> bool {
    path == "/command" || path.starts_with("/command/")
}

/// The fault rules the commands added, one per kind, so that a command replaces its own rule
/// and `reset` undoes exactly what the commands did.
#[derive(Default)]
pub(crate) struct CommandFaults {
    rules: Mutex<[Option<FaultId>; 3]>,
}

/// The kinds of [`CommandFaults`], as indices.
#[derive(Clone, Copy)]
enum Kind {
    Delay = 0,
    Fail = 1,
    Hold = 2,
}

impl CommandFaults {
    /// Replaces the rule of `kind` with `rule` (or with none).
    fn set(&self, handle: &Server, kind: Kind, rule: Option<FaultRule>) {
        let mut rules = self.rules.lock();
        if let Some(old) = rules[kind as usize].take() {
            handle.controls().remove_fault(old);
        }
        rules[kind as usize] = rule.map(|rule| handle.controls().add_fault(rule));
    }

    fn reset(&self, handle: &Server) {
        for kind in [Kind::Delay, Kind::Fail, Kind::Hold] {
            self.set(handle, kind, None);
        }
    }
}

/// An action of ZooKeeper's `ControlCommand.Action`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Action {
    Ping,
    Shutdown,
    CloseConnection,
    ExpireSession,
    RejectConnections,
    AddDelay,
    FailRequests,
    NoResponse,
    Reset,
    ElectNewLeader,
}

impl Action {
    /// As `Action.valueOf(name.toUpperCase())`.
    fn of(name: &str) -> Option<Action> {
        Some(match name.to_uppercase().as_str() {
            "PING" => Action::Ping,
            "SHUTDOWN" => Action::Shutdown,
            "CLOSECONNECTION" => Action::CloseConnection,
            "EXPIRESESSION" => Action::ExpireSession,
            "REJECTCONNECTIONS" => Action::RejectConnections,
            "ADDDELAY" => Action::AddDelay,
            "FAILREQUESTS" => Action::FailRequests,
            "NORESPONSE" => Action::NoResponse,
            "RESET" => Action::Reset,
            "ELECTNEWLEADER" => Action::ElectNewLeader,
            _ => return None,
        })
    }
}

/// Java's `Long.decode`: an optional sign, then decimal, `0x`/`0X`/`#` hexadecimal, or a
/// leading `0` for octal; `None` for anything else or out of range, as it throws.
pub(crate) fn long_decode(text: &str) -> Option<i64> {
    let (negative, rest) = match text.as_bytes().first()? {
        b'-' => (true, &text[1..]),
        b'+' => (false, &text[1..]),
        _ => (false, text),
    };
    let (radix, digits) = if let Some(hex) = rest
        .strip_prefix("0x")
        .or_else(|| rest.strip_prefix("0X"))
        .or_else(|| rest.strip_prefix('#'))
    {
        (16, hex)
    } else if rest.len() > 1 && rest.starts_with('0') {
        (8, &rest[1..])
    } else {
        (10, rest)
    };
    // A second sign after the prefix is refused, as Java does; so is an empty number.
    if digits.is_empty() || digits.starts_with(['-', '+']) {
        return None;
    }
    // Through i128 so that Long.MIN_VALUE, whose magnitude is past i64::MAX, decodes.
    let magnitude = i128::from_str_radix(digits, radix).ok()?;
    i64::try_from(if negative { -magnitude } else { magnitude }).ok()
}

/// Answers the command at `path` (which [`is_command`] accepted) for `handle`'s server.
pub(crate) fn answer(handle: &Server, faults: &CommandFaults, path: &str) -> Reply {
    let command = &path[1..];
    let Some(rest) = command.strip_prefix("command/") else {
        return not_found(path);
    };
    let (name, parameter) = match rest.split_once('/') {
        Some((name, parameter)) => (name, Some(parameter)),
        None => (rest, None),
    };
    let Some(action) = Action::of(name) else {
        return not_found(path);
    };
    match run(handle, faults, action, parameter) {
        Some(()) => {
            let mut reply = Response::new(Full::new(Bytes::from(format!("{command}\n"))));
            reply.headers_mut().insert(
                CONTENT_TYPE,
                HeaderValue::from_static("text/html;charset=utf-8"),
            );
            reply
        }
        None => not_found(path),
    }
}

/// Carries out `action`; `None` for a parameter ZooKeeper would refuse, before anything is
/// done.
fn run(
    handle: &Server,
    faults: &CommandFaults,
    action: Action,
    parameter: Option<&str>,
) -> Option<()> {
    // Where the action takes one, a parameter given must decode; the others ignore theirs.
    let takes_number = !matches!(
        action,
        Action::Ping
            | Action::Shutdown
            | Action::RejectConnections
            | Action::Reset
            | Action::ElectNewLeader
    );
    let number = match parameter {
        Some(text) if takes_number => Some(long_decode(text)?),
        _ => None,
    };
    // Every other number: how many requests, `None` (or a negative one) for all of them.
    let times = |rule: FaultRule| match number {
        Some(n) if n > 0 => rule.times(n.unsigned_abs()),
        _ => rule.always(),
    };
    match action {
        Action::Ping | Action::RejectConnections => {}
        // ControllerService's forced election: the leader steps down, the election chooses.
        Action::ElectNewLeader => {
            crate::shell::handle::force_election(&handle.shared, &handle.tracker, 0);
        }
        // The reply in flight is finished first (the HTTP connection's graceful close); the
        // rest of the stop is the caller's ([`Server::stopping`]).
        Action::Shutdown => handle.shutdown.cancel(),
        Action::CloseConnection => {
            for session in sessions(handle, number) {
                // Unknown or not connected: nothing to close, as ZooKeeper finds.
                let _ = handle.controls().close_connection(session);
            }
        }
        Action::ExpireSession => {
            for session in sessions(handle, number) {
                handle.controls().expire_session(session);
            }
        }
        Action::AddDelay => {
            let ms = match number {
                Some(ms) => u64::try_from(ms).ok()?,
                None => DEFAULT_DELAY.as_millis() as u64,
            };
            let rule = (ms > 0).then(|| FaultRule::new(Fault::Delay(Duration::from_millis(ms))));
            faults.set(handle, Kind::Delay, rule.map(FaultRule::always));
        }
        Action::FailRequests => {
            let rule = (number != Some(0))
                .then(|| times(FaultRule::new(Fault::Reject(ErrorCode::APIError))));
            faults.set(handle, Kind::Fail, rule);
        }
        Action::NoResponse => {
            let rule = (number != Some(0)).then(|| times(FaultRule::new(Fault::Delay(NEVER))));
            faults.set(handle, Kind::Hold, rule);
        }
        Action::Reset => faults.reset(handle),
    }
    Some(())
}

/// The sessions a command acts on: the one given if the server knows it, else every session.
fn sessions(handle: &Server, only: Option<i64>) -> Vec<SessionId> {
    let all = handle.controls().sessions().into_iter().map(|s| s.id);
    match only {
        Some(id) => all.filter(|s| *s == id).collect(),
        None => all.collect(),
    }
}

/// ZooKeeper's 404: Jetty's error page, as its `CommandListener` leaves a refused command
/// unhandled.
fn not_found(path: &str) -> Reply {
    let uri = escape_html(path);
    let body = format!(
        "<html>\n<head>\n<meta http-equiv=\"Content-Type\" content=\"text/html;charset=ISO-8859-1\"/>\n\
         <title>Error 404 Not Found</title>\n</head>\n<body><h2>HTTP ERROR 404 Not Found</h2>\n\
         <table>\n<tr><th>URI:</th><td>{uri}</td></tr>\n<tr><th>STATUS:</th><td>404</td></tr>\n\
         <tr><th>MESSAGE:</th><td>Not Found</td></tr>\n<tr><th>SERVLET:</th><td>-</td></tr>\n\
         </table>\n\n</body>\n</html>\n"
    );
    let mut reply = Response::new(Full::new(Bytes::from(body)));
    *reply.status_mut() = StatusCode::NOT_FOUND;
    let headers = reply.headers_mut();
    headers.insert(
        CONTENT_TYPE,
        HeaderValue::from_static("text/html;charset=iso-8859-1"),
    );
    headers.insert(
        CACHE_CONTROL,
        HeaderValue::from_static("must-revalidate,no-cache,no-store"),
    );
    reply
}

fn escape_html(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        match c {
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '&' => out.push_str("&amp;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&#39;"),
            c => out.push(c),
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn long_decode_reads_what_java_reads_and_refuses_the_rest() {
        for (text, value) in [
            ("42", 42),
            ("-42", -42),
            ("+7", 7),
            ("0x1F", 31),
            ("0X1f", 31),
            ("#ff", 255),
            ("-0x10", -16),
            ("010", 8),
            ("0", 0),
            ("-9223372036854775808", i64::MIN),
            ("0x7fffffffffffffff", i64::MAX),
        ] {
            assert_eq!(long_decode(text), Some(value), "{text}");
        }
        for text in [
            "",
            "-",
            "0x",
            "zz",
            "1.5",
            "0x-1",
            "--1",
            "09",
            "9223372036854775808",
            " 1",
        ] {
            assert_eq!(long_decode(text), None, "{text:?}");
        }
    }

    #[test]
    fn actions_are_read_in_any_case_and_only_zookeepers() {
        assert_eq!(Action::of("ping"), Some(Action::Ping));
        assert_eq!(Action::of("CloseConnection"), Some(Action::CloseConnection));
        assert_eq!(Action::of("ELECTNEWLEADER"), Some(Action::ElectNewLeader));
        assert_eq!(Action::of("nope"), None);
        assert_eq!(Action::of(""), None);
        assert!(is_command("/command") && is_command("/command/ping"));
        assert!(!is_command("/commands/ping") && !is_command("/sessions"));
    }

    #[test]
    fn the_error_page_escapes_the_path() {
        assert_eq!(
            escape_html("/command/<x>&\"'"),
            "/command/&lt;x&gt;&amp;&quot;&#39;"
        );
    }
}
