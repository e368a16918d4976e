//! `shepherd shell` in a pseudo-terminal, as a person uses it: the prompt, a command, Tab
//! completion of a path from the server, history recalled with the up arrow, an ephemeral node
//! that lives as long as the shell, a bad line that leaves the shell running, and `quit`.
//! Every wait is bounded by the session's timeout (rexpect fails the expectation past it).

use std::process::Command;

use shepherd_testkit::{connect, embedded, unique};

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_shell_completes_paths_recalls_history_and_keeps_its_session() {
    let server = embedded().await;
    let root = unique("shell");
    let home = tempfile::tempdir().expect("home");
    let connect_string = server.connect.clone();
    let shell_root = root.clone();
    let transcript = tokio::task::spawn_blocking(move || {
        let mut command = Command::new(env!("CARGO_BIN_EXE_shepherd"));
        command
            .args(["shell", "--server", &connect_string])
            .env("HOME", home.path());
        let mut pty = rexpect::session::spawn_command(command, Some(20_000)).expect("a pty");
        let prompt = format!("[zk: {connect_string}(CONNECTED) ");
        pty.exp_string(&prompt).expect("the first prompt");
        pty.send_line(&format!("create {shell_root} parent"))
            .expect("send");
        pty.exp_string(&format!("Created {shell_root}"))
            .expect("created");
        pty.send_line(&format!("create -e {shell_root}/ephemeral-node here"))
            .expect("send");
        pty.exp_string(&format!("Created {shell_root}/ephemeral-node"))
            .expect("created");
        // The next prompt, so that what follows is matched against new output only.
        pty.exp_string(&format!("{prompt}2] "))
            .expect("the third prompt");
        // Tab completes the unique child from the server.
        pty.send(&format!("get {shell_root}/eph\t")).expect("send");
        pty.flush().expect("flush");
        pty.exp_string("ephemeral-node")
            .expect("the path completed");
        pty.send("\r").expect("enter");
        pty.flush().expect("flush");
        pty.exp_string("here").expect("the completed path was read");
        pty.exp_string(&format!("{prompt}3] "))
            .expect("the fourth prompt");
        // The up arrow recalls the last line.
        pty.send("\x1b[A").expect("up");
        pty.flush().expect("flush");
        pty.exp_string("ephemeral-node").expect("the line recalled");
        pty.send("\r").expect("enter");
        pty.flush().expect("flush");
        pty.exp_string("here").expect("the recalled line ran");
        pty.send_line("bogus").expect("send");
        pty.exp_string("unrecognized subcommand").expect("an error");
        pty.exp_string(&prompt).expect("the shell goes on");
        pty.send_line("quit").expect("send");
        pty.exp_eof().expect("the shell ends")
    })
    .await
    .expect("the pty task");
    // While the shell ran, its ephemeral node lived; after quit it is gone.
    let client = connect(&server.connect).await;
    assert!(
        client
            .exists(&format!("{root}/ephemeral-node"))
            .await
            .unwrap()
            .is_none(),
        "{transcript}"
    );
    assert!(client.exists(&root).await.unwrap().is_some());
    server.shutdown().await;
}
