//! The test controls over HTTP: what [`Server`] can do to a running server, as JSON
//! endpoints, so that tests in any language can expire a session, cut or freeze a connection,
//! inject faults, stop, start or partition an ensemble member, and inspect the server
//! (docs/test-controls.md lists every endpoint).
//!
//! Off by default ([`crate::ServerBuilder::test_controls`], `shepherd serve --test-controls`).
//! Invariants:
//! * the listener is on a loopback address, never anything else: start refuses the rest;
//! * every request carries `Authorization: Bearer <token>`
//!   ([`auth`]), checked before its body is read;
//!   without it the answer is 401 and nothing is done. The one exception, when the server was
//!   started with it ([`crate::ServerBuilder::test_controls_open_commands`]): ZooKeeper's
//!   `/command/*` URLs ([`commands`]), whose
//!   own client sends no token;
//! * a body is read only up to [`MAX_BODY_BYTES`] (413 beyond), and no body, however malformed,
//!   panics or applies a control: it is a 400 with `{"error": "..."}`;
//! * every answer but ZooKeeper's `/command/*` is JSON; outcomes (no such session or member, not connected, a member's port
//!   taken) are 404 and 409 values.
//!
//! The controls act through a second [`Server`] on the same shared state, so an HTTP call
//! does exactly what the Rust method of the same name does, in the same core order.
//! [`Controls::call`](crate::Controls::call) runs the same routes in-process, past the listener: it needs no
//! token, since only code that holds the handle can call it, and answers the same JSON.

mod auth;
mod commands;
mod faults;
mod json;

use std::net::SocketAddr;
use std::sync::Arc;

use bytes::Bytes;
use http_body_util::{BodyExt, Full, Limited};
use hyper::body::Incoming;
use hyper::header::{ALLOW, CONTENT_TYPE, HeaderValue};
use hyper::{Method, Request, Response, StatusCode};
use serde_json::{Map, Value, json};
use tokio::net::TcpListener;

use crate::core::SessionId;
use crate::shell::controls::faults::FaultId;
use crate::shell::ensemble::member::MemberState;
use crate::shell::handle::{ControlError, Server};
use crate::shell::http::{Handler, Reply};
use auth::{authorized, new_token};
use commands::CommandFaults;
use faults::{parse_rule, rule_json};
use json::{self as js, Invalid, hex, integer, object, only_fields, string};

/// The largest request body read; a fault rule or a counter is a few hundred bytes.
pub const MAX_BODY_BYTES: usize = 64 * 1024;

/// Binds the test controls' listener on `addr`, which must be a loopback address.
///
/// # Errors
/// `InvalidInput` for an address that is not loopback; the bind error otherwise.
pub(crate) async fn bind(addr: SocketAddr) -> std::io::Result<TcpListener> {
    if !addr.ip().is_loopback() {
        return Err(std::io::Error::new(
            std::io::ErrorKind::InvalidInput,
            format!(
                "the test controls listen on loopback only (127.0.0.1 or ::1), not {}",
                addr.ip()
            ),
        ));
    }
    TcpListener::bind(addr).await
}

/// Starts serving the test controls on `listener` for the server `handle` belongs to, with a
/// fresh token; returns the address and the token, which the handle then tells.
///
/// # Errors
/// The OS random source failed, or the listener has no local address.
pub(crate) fn start(
    listener: TcpListener,
    handle: &Server,
    open_commands: bool,
) -> std::io::Result<(SocketAddr, String)> {
    let addr = listener.local_addr()?;
    let token = new_token()?;
    let controls = Arc::new(Service {
        handle: handle.view(),
        token: token.clone(),
        open_commands,
        command_faults: CommandFaults::default(),
    });
    let handler: Handler = Arc::new(move |request| {
        let controls = controls.clone();
        Box::pin(async move { controls.answer(request).await })
    });
    let (shutdown, tracker) = (handle.shutdown.clone(), handle.tracker.clone());
    handle.tracker.spawn(crate::shell::http::serve(
        listener, handler, shutdown, tracker,
    ));
    Ok((addr, token))
}

impl crate::shell::Controls<'_> {
    /// The test controls in-process: the call `method path` with a JSON `body` (empty for the
    /// routes that take none) does what the same HTTP request to the test controls does, and
    /// answers the same status and JSON text (docs/test-controls.md), with no listener, token
    /// or socket. For embedders that speak JSON rather than Rust, such as the Python package.
    /// It works whether or not [`crate::ServerBuilder::test_controls`] is on.
    ///
    /// An unknown method is a 405, as over HTTP; a body over 64 KiB a 413.
    pub async fn call(self, method: &str, path: &str, body: &[u8]) -> (u16, String) {
        let (status, value) = if body.len() > MAX_BODY_BYTES {
            let message = format!("the body is over {MAX_BODY_BYTES} bytes, or broken");
            let (status, value, _) = failure(StatusCode::PAYLOAD_TOO_LARGE, &message);
            (status, value)
        } else {
            // ZooKeeper's `/command/*` URLs are the HTTP listener's alone: they are for clients
            // that speak only HTTP.
            let controls = Service {
                handle: self.server.view(),
                token: String::new(),
                open_commands: false,
                command_faults: CommandFaults::default(),
            };
            match Method::from_bytes(method.as_bytes()) {
                Ok(method) => {
                    let (status, value, _) = controls.call(&method, path, body).await;
                    (status, value)
                }
                Err(_) => {
                    let (status, value, _) =
                        failure(StatusCode::METHOD_NOT_ALLOWED, "method not allowed");
                    (status, value)
                }
            }
        };
        (
            status.as_u16(),
            serde_json::to_string(&value).unwrap_or_default(),
        )
    }
}

/// What the handler of every connection shares.
struct Service {
    handle: Server,
    token: String,
    /// ZooKeeper's `/command/*` answer without the token.
    open_commands: bool,
    /// The fault rules those commands added.
    command_faults: CommandFaults,
}

/// An answer that is not a success: its status and message.
struct Failure(StatusCode, String);

impl From<Invalid> for Failure {
    fn from(Invalid(message): Invalid) -> Failure {
        Failure(StatusCode::BAD_REQUEST, message)
    }
}

impl From<ControlError> for Failure {
    fn from(error: ControlError) -> Failure {
        let status = match error {
            ControlError::UnknownSession(_)
            | ControlError::NoNode(_)
            | ControlError::UnknownMember(_) => StatusCode::NOT_FOUND,
            ControlError::NotConnected(_) | ControlError::MemberUnavailable(..) => {
                StatusCode::CONFLICT
            }
        };
        Failure(status, error.to_string())
    }
}

type Outcome = Result<(StatusCode, Value), Failure>;

/// The routes, for the 405 answer's `Allow`: a path pattern and its methods.
enum Route {
    Sessions,
    Session(String),
    SessionAction(String, String),
    Faults,
    Fault(String),
    Sequence,
    Tree,
    Watches,
    Notifications,
    Members,
    MemberAction(String, String),
}

impl Route {
    fn of(path: &str) -> Option<Route> {
        let parts: Vec<&str> = path.trim_end_matches('/').split('/').skip(1).collect();
        Some(match parts.as_slice() {
            ["sessions"] => Route::Sessions,
            ["sessions", id] => Route::Session(id.to_string()),
            ["sessions", id, action] => Route::SessionAction(id.to_string(), action.to_string()),
            ["faults"] => Route::Faults,
            ["faults", id] => Route::Fault(id.to_string()),
            ["sequence"] => Route::Sequence,
            ["tree"] => Route::Tree,
            ["watches"] => Route::Watches,
            ["notifications"] => Route::Notifications,
            ["members"] => Route::Members,
            ["members", id, action] => Route::MemberAction(id.to_string(), action.to_string()),
            _ => return None,
        })
    }

    fn allowed(&self) -> &'static str {
        match self {
            Route::Faults => "GET, POST, DELETE",
            Route::Fault(_) => "DELETE",
            Route::SessionAction(..) | Route::Sequence | Route::MemberAction(..) => "POST",
            _ => "GET",
        }
    }
}

impl Service {
    async fn answer(&self, request: Request<Incoming>) -> Reply {
        let path = request.uri().path();
        if commands::is_command(path)
            && (self.open_commands || authorized(request.headers(), &self.token))
        {
            // Any method, and no body to read: as ZooKeeper's CommandListener.
            return commands::answer(&self.handle, &self.command_faults, path);
        }
        if !authorized(request.headers(), &self.token) {
            let mut reply = error(
                StatusCode::UNAUTHORIZED,
                "a test-controls call needs Authorization: Bearer <token>",
            );
            reply
                .headers_mut()
                .insert("www-authenticate", HeaderValue::from_static("Bearer"));
            return reply;
        }
        let (head, body) = request.into_parts();
        if Route::of(head.uri.path()).is_none() {
            return error(StatusCode::NOT_FOUND, "no such endpoint");
        }
        // Bounded: a body past the limit is refused without being buffered whole.
        let body = match Limited::new(body, MAX_BODY_BYTES).collect().await {
            Ok(body) => body.to_bytes(),
            Err(_) => {
                let message = format!("the body is over {MAX_BODY_BYTES} bytes, or broken");
                return error(StatusCode::PAYLOAD_TOO_LARGE, &message);
            }
        };
        let (status, value, allow) = self.call(&head.method, head.uri.path(), &body).await;
        let mut reply = reply(status, &value);
        if let Some(allow) = allow {
            reply
                .headers_mut()
                .insert(ALLOW, HeaderValue::from_static(allow));
        }
        reply
    }

    /// One call, past the token and the body's limit: its status, its JSON (`{"error": …}`
    /// unless a success), and for a 405 the methods the route allows.
    async fn call(
        &self,
        method: &Method,
        path: &str,
        body: &[u8],
    ) -> (StatusCode, Value, Option<&'static str>) {
        let Some(route) = Route::of(path) else {
            return failure(StatusCode::NOT_FOUND, "no such endpoint");
        };
        let outcome = match (method, &route) {
            // Stopping and starting a member wait for its listener: the one async control.
            (&Method::POST, Route::MemberAction(id, action)) => {
                Some(self.member_action(id, action).await)
            }
            _ => self.dispatch(method, &route, body),
        };
        match outcome {
            Some(Ok((status, value))) => (status, value, None),
            Some(Err(Failure(status, message))) => failure(status, &message),
            None => {
                let (status, value, _) =
                    failure(StatusCode::METHOD_NOT_ALLOWED, "method not allowed");
                (status, value, Some(route.allowed()))
            }
        }
    }

    /// The outcome of one call; `None` when the route has no such method.
    fn dispatch(&self, method: &Method, route: &Route, body: &[u8]) -> Option<Outcome> {
        let handle = &self.handle;
        Some(match (method, route) {
            (&Method::GET, Route::Sessions) => Ok(ok(json!({ "sessions": self.sessions(None) }))),
            (&Method::GET, Route::Session(id)) => self.session(id),
            (&Method::POST, Route::SessionAction(id, action)) => self.session_action(id, action),
            (&Method::GET, Route::Faults) => {
                let rules = handle.shared.faults.list();
                let rules: Vec<Value> = rules
                    .iter()
                    .map(|(id, rule, fired)| rule_json(*id, rule, *fired))
                    .collect();
                Ok(ok(json!({ "faults": rules })))
            }
            (&Method::POST, Route::Faults) => object(body)
                .and_then(|map| parse_rule(&map))
                .map(|rule| {
                    let id = handle.controls().add_fault(rule);
                    (StatusCode::CREATED, json!({ "id": id.number() }))
                })
                .map_err(Failure::from),
            (&Method::DELETE, Route::Faults) => {
                handle.controls().clear_faults();
                Ok(ok(json!({ "cleared": true })))
            }
            (&Method::DELETE, Route::Fault(id)) => remove_fault(handle, id),
            (&Method::POST, Route::Sequence) => set_sequence(handle, body),
            (&Method::GET, Route::Tree) => {
                let nodes: Vec<Value> =
                    handle.controls().dump_tree().iter().map(js::node).collect();
                Ok(ok(json!({ "nodes": nodes })))
            }
            (&Method::GET, Route::Watches) => {
                let watches: Vec<Value> = handle
                    .controls()
                    .dump_watches()
                    .iter()
                    .map(js::watch)
                    .collect();
                Ok(ok(json!({ "watches": watches })))
            }
            (&Method::GET, Route::Notifications) => Ok(ok(js::notifications(
                &handle.controls().notification_counts(),
            ))),
            (&Method::GET, Route::Members) => Ok(ok(self.members())),
            _ => return None,
        })
    }

    /// Every session (or the one given), as JSON, with the member its connection came in on.
    fn sessions(&self, only: Option<SessionId>) -> Vec<Value> {
        let handle = &self.handle;
        let frozen = &handle.shared.frozen;
        handle
            .controls()
            .sessions()
            .iter()
            .filter(|s| only.is_none_or(|id| s.id == id))
            .map(|s| {
                let mut session = js::session(s, frozen.is_frozen(s.id));
                if let Value::Object(map) = &mut session {
                    map.insert("member".into(), json!(handle.members().of_session(s.id)));
                }
                session
            })
            .collect()
    }

    /// Every member with its address and state, and the leader (null for a single server).
    fn members(&self) -> Value {
        let handle = &self.handle;
        let members: Vec<Value> = handle
            .members()
            .ids()
            .into_iter()
            .map(|id| {
                json!({
                    "id": id,
                    "addr": handle.members().addr(id).map(|a| a.to_string()),
                    "state": handle.members().state(id).map(state_name),
                    "role": handle.members().role(id),
                })
            })
            .collect();
        json!({ "members": members, "leader": handle.members().leader() })
    }

    async fn member_action(&self, id: &str, action: &str) -> Outcome {
        let handle = &self.handle;
        let id: u64 = id
            .parse()
            .map_err(|_| Invalid::new(format!("not a member id (1..=n): {id:?}")))?;
        match action {
            "stop" => handle.members().stop(id).await?,
            "start" => handle.members().start(id).await?,
            "partition" => handle.members().partition(id)?,
            "heal" => handle.members().heal(id)?,
            "elect" => handle.members().elect(id)?,
            "isolate" => handle.members().isolate(id)?,
            other => {
                return Err(Failure(
                    StatusCode::NOT_FOUND,
                    format!(
                        "no member action {other:?} (stop, start, partition, isolate, heal, elect)"
                    ),
                ));
            }
        }
        let state = handle.members().state(id).map(state_name);
        Ok(ok(
            json!({ "member": id, "state": state, "leader": handle.members().leader() }),
        ))
    }

    fn session(&self, id: &str) -> Outcome {
        let id = js::parse_session_text(id)?;
        match self.sessions(Some(id)).pop() {
            Some(session) => Ok(ok(session)),
            None => Err(ControlError::UnknownSession(id).into()),
        }
    }

    fn session_action(&self, id: &str, action: &str) -> Outcome {
        let handle = &self.handle;
        let id = js::parse_session_text(id)?;
        let known = handle.inspect(|core| core.session_timeout(id).is_some());
        match action {
            "expire" => {
                if !known {
                    return Err(ControlError::UnknownSession(id).into());
                }
                handle.controls().expire_session(id);
                Ok(ok(json!({ "expired": hex(id) })))
            }
            "close" => {
                handle.controls().close_connection(id)?;
                Ok(ok(json!({ "closed": hex(id) })))
            }
            "freeze" => {
                handle.controls().freeze_session(id)?;
                Ok(ok(json!({ "frozen": hex(id) })))
            }
            "thaw" => {
                if handle.controls().thaw_session(id) {
                    Ok(ok(json!({ "thawed": hex(id) })))
                } else {
                    let message = format!("session {} is not frozen", hex(id));
                    Err(Failure(StatusCode::CONFLICT, message))
                }
            }
            other => Err(Failure(
                StatusCode::NOT_FOUND,
                format!("no session action {other:?} (expire, close, freeze, thaw)"),
            )),
        }
    }
}

fn remove_fault(handle: &Server, id: &str) -> Outcome {
    let number: u64 = id
        .parse()
        .map_err(|_| Invalid::new(format!("not a fault id: {id:?}")))?;
    if handle.controls().remove_fault(FaultId::from_number(number)) {
        Ok(ok(json!({ "removed": number })))
    } else {
        Err(Failure(StatusCode::NOT_FOUND, format!("no fault {number}")))
    }
}

fn set_sequence(handle: &Server, body: &[u8]) -> Outcome {
    let map: Map<String, Value> = object(body)?;
    only_fields(&map, &["path", "value"])?;
    let path = string(&map, "path")?;
    js::znode_path("path", path)?;
    let value = integer(&map, "value")?;
    let value = i32::try_from(value)
        .map_err(|_| Invalid::new(format!("value: a 32-bit integer, not {value}")))?;
    handle.controls().set_sequence_counter(path, value)?;
    Ok(ok(json!({ "path": path, "value": value })))
}

fn state_name(state: MemberState) -> &'static str {
    match state {
        MemberState::Up => "up",
        MemberState::Stopped => "stopped",
        MemberState::Partitioned => "partitioned",
        MemberState::Isolated => "isolated",
    }
}

fn ok(value: Value) -> (StatusCode, Value) {
    (StatusCode::OK, value)
}

fn failure(status: StatusCode, message: &str) -> (StatusCode, Value, Option<&'static str>) {
    (status, json!({ "error": message }), None)
}

fn error(status: StatusCode, message: &str) -> Reply {
    reply(status, &json!({ "error": message }))
}

fn reply(status: StatusCode, value: &Value) -> Reply {
    let mut text = serde_json::to_string(value).unwrap_or_default();
    text.push('\n');
    let mut response = Response::new(Full::new(Bytes::from(text)));
    *response.status_mut() = status;
    response
        .headers_mut()
        .insert(CONTENT_TYPE, HeaderValue::from_static("application/json"));
    response
}
