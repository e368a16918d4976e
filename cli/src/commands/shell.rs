//! `shepherd shell`: an interactive session, as `zkCli.sh` without a command gives one: a prompt
//! in zkCli's shape, zkCli's command names where they exist (`getAcl`, `setAcl`, `deleteall`,
//! `whoami`, `quit`), every `shepherd` client command besides, line editing and history
//! (rustyline; the history persists in `~/.shepherd_history`), and Tab completion of command
//! names and of paths, read from the server as one types.
//!
//! Invariants: one session for the whole shell, so an ephemeral node lives until `quit`, as in
//! zkCli, and credentials added with `addauth` last for the shell; each line is parsed with the
//! same definitions as the one-shot commands (no second grammar), and a line that fails prints
//! its error and leaves the shell running; a command that would wait for a signal (`watch`,
//! `create --hold`) is refused rather than left hanging at the prompt; completion asks the
//! server with a short bound, so a slow server cannot freeze the keyboard. With standard input
//! not a terminal, lines are read plainly and no history is written (`echo ls / | shepherd
//! shell`).

use std::time::Duration;

use clap::{Args, Parser};
use rustyline::completion::{Completer, Pair};
use rustyline::error::ReadlineError;
use rustyline::highlight::Highlighter;
use rustyline::hint::Hinter;
use rustyline::history::DefaultHistory;
use rustyline::validate::Validator;
use rustyline::{Context, Editor, Helper};
use shepherd_client::{Client, SessionState};
use tokio::runtime::Runtime;

use super::error::{AtPath, CliError};
use super::output::Out;
use super::{ClientCommand, Conn};

/// `shepherd shell`.
#[derive(Args, Debug)]
pub struct ShellArgs {
    #[command(flatten)]
    conn: Conn,
}

/// One line of the shell: a client command, without the program name.
#[derive(Parser, Debug)]
#[command(name = "", no_binary_name = true, disable_version_flag = true)]
struct Line {
    #[command(subcommand)]
    command: ClientCommand,
}

/// zkCli's names for what the commands here call otherwise.
const ZKCLI_NAMES: &[(&str, &[&str])] = &[
    ("getAcl", &["getacl"]),
    ("setAcl", &["setacl"]),
    ("deleteall", &["delete", "-r"]),
    ("rmr", &["delete", "-r"]),
];

/// Every command name completion offers.
const NAMES: &[&str] = &[
    "addauth",
    "create",
    "delete",
    "deleteall",
    "dump",
    "get",
    "getAcl",
    "help",
    "history",
    "load",
    "locks",
    "ls",
    "quit",
    "set",
    "setAcl",
    "stat",
    "tree",
    "whoami",
];

/// How long completion waits for the server.
const COMPLETION_BOUND: Duration = Duration::from_secs(2);

/// Runs the shell until `quit`, end of input, or the end of the session.
pub fn main(args: &ShellArgs, runtime: &Runtime) -> Result<(), CliError> {
    let client = runtime.block_on(args.conn.connect())?;
    let mut editor: Editor<PathCompleter, DefaultHistory> =
        Editor::new().map_err(|e| CliError::Output(std::io::Error::other(e)))?;
    editor.set_helper(Some(PathCompleter {
        client: client.clone(),
        runtime: runtime.handle().clone(),
    }));
    let history = std::env::var_os("HOME")
        .map(|home| std::path::PathBuf::from(home).join(".shepherd_history"));
    if let Some(path) = &history {
        let _ = editor.load_history(path);
    }
    let mut count = 0;
    let result = loop {
        let status = client.status();
        let state = match status.state {
            SessionState::Connected => "CONNECTED",
            SessionState::Disconnected => "CONNECTING",
            SessionState::Expired => "EXPIRED",
            SessionState::Closed => "CLOSED",
            SessionState::AuthFailed => "AUTH_FAILED",
        };
        let prompt = format!("[zk: {}({state}) {count}] ", args.conn.server);
        let line = match editor.readline(&prompt) {
            Ok(line) => line,
            // Ctrl-C clears the line, as in zkCli; Ctrl-D ends the shell.
            Err(ReadlineError::Interrupted) => continue,
            Err(ReadlineError::Eof) => break Ok(()),
            Err(error) => break Err(CliError::Output(std::io::Error::other(error))),
        };
        if line.trim().is_empty() {
            continue;
        }
        let _ = editor.add_history_entry(line.as_str());
        count += 1;
        match runtime.block_on(run_line(&client, &line, &editor)) {
            Ok(Flow::Go) => {}
            Ok(Flow::Quit) => break Ok(()),
            Err(CliError::ClosedOutput) => break Ok(()),
            Err(error) => eprintln!("error: {error}"),
        }
        if status_is_terminal(&client) {
            eprintln!("the session ended ({:?})", client.status().state);
            break Ok(());
        }
    };
    if let Some(path) = &history {
        let _ = editor.save_history(path);
    }
    let closed = runtime.block_on(client.close()).at("");
    result.and(closed)
}

fn status_is_terminal(client: &Client) -> bool {
    client.status().state.is_terminal()
}

enum Flow {
    Go,
    Quit,
}

/// Runs one line; a failed command is its error, printed by the caller.
async fn run_line(
    client: &Client,
    line: &str,
    editor: &Editor<PathCompleter, DefaultHistory>,
) -> Result<Flow, CliError> {
    let Some(mut words) = shlex::split(line) else {
        return Err(CliError::Usage("unbalanced quotes".into()));
    };
    let mut out = Out::new(false);
    match words[0].as_str() {
        "quit" | "exit" => return Ok(Flow::Quit),
        "help" => {
            out.line(format!("commands: {}", NAMES.join(" ")))?;
            out.line("each takes what `shepherd COMMAND --help` lists; `COMMAND --help` here too")?;
            out.flush()?;
            return Ok(Flow::Go);
        }
        "history" => {
            for (i, entry) in editor.history().iter().enumerate() {
                out.line(format!("{i} - {entry}"))?;
            }
            out.flush()?;
            return Ok(Flow::Go);
        }
        "whoami" => {
            for info in client.who_am_i().await.at("")? {
                out.line(format!("user: {}\nscheme: {}", info.user, info.auth_scheme))?;
            }
            out.flush()?;
            return Ok(Flow::Go);
        }
        _ => {}
    }
    if let Some((_, ours)) = ZKCLI_NAMES.iter().find(|(zk, _)| *zk == words[0]) {
        words.splice(0..1, ours.iter().map(|w| w.to_string()));
    }
    let command = match Line::try_parse_from(&words) {
        Ok(line) => line.command,
        Err(error) => {
            // --help is an answer, not a failure.
            let _ = error.print();
            return Ok(Flow::Go);
        }
    };
    if matches!(command, ClientCommand::Watch(_)) || command.holds() {
        return Err(CliError::Usage(
            "this command waits for Ctrl-C: run it as `shepherd …` outside the shell".into(),
        ));
    }
    let result = command.run(client, &mut out).await;
    out.flush()?;
    result.map(|()| Flow::Go)
}

/// Completes command names, and paths from the server's children.
struct PathCompleter {
    client: Client,
    runtime: tokio::runtime::Handle,
}

impl Completer for PathCompleter {
    type Candidate = Pair;

    fn complete(
        &self,
        line: &str,
        pos: usize,
        _: &Context<'_>,
    ) -> rustyline::Result<(usize, Vec<Pair>)> {
        let start = line[..pos].rfind(char::is_whitespace).map_or(0, |i| i + 1);
        let word = &line[start..pos];
        let pair = |s: String| Pair {
            display: s.clone(),
            replacement: s,
        };
        if start == 0 {
            let names = NAMES.iter().filter(|n| n.starts_with(word));
            return Ok((0, names.map(|n| pair(format!("{n} "))).collect()));
        }
        if !word.starts_with('/') {
            return Ok((pos, Vec::new()));
        }
        let (parent, prefix) = match word.rfind('/') {
            Some(0) => ("/", &word[1..]),
            Some(i) => (&word[..i], &word[i + 1..]),
            None => return Ok((pos, Vec::new())),
        };
        let children = self.runtime.block_on(async {
            tokio::time::timeout(COMPLETION_BOUND, self.client.get_children(parent)).await
        });
        let Ok(Ok(mut children)) = children else {
            return Ok((pos, Vec::new()));
        };
        children.retain(|c| c.starts_with(prefix));
        children.sort();
        let base = if parent == "/" { "" } else { parent };
        let candidates = children.into_iter().map(|c| pair(format!("{base}/{c}")));
        Ok((start, candidates.collect()))
    }
}

impl Hinter for PathCompleter {
    type Hint = String;
}
impl Highlighter for PathCompleter {}
impl Validator for PathCompleter {}
impl Helper for PathCompleter {}
