//! Four-letter admin words over a fresh connection, as Java's `FourLetterWordMain` sends them.

use shepherd_protocol::FourLetterWord;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;

use crate::wait::within;

/// Sends `word` to the server at `addr` and returns its whole answer (the server closes after
/// it). The connection is half-closed right after the word, as real tools do: the answer must
/// still come.
pub async fn four_letter_word(addr: &str, word: FourLetterWord) -> String {
    let mut stream = within("a four-letter-word connection", TcpStream::connect(addr))
        .await
        .expect("connect for a four-letter word");
    stream
        .write_all(&word.bytes())
        .await
        .expect("send the word");
    stream.shutdown().await.expect("half-close");
    let mut answer = String::new();
    within(
        &format!("the answer to {word:?}"),
        stream.read_to_string(&mut answer),
    )
    .await
    .expect("read the answer");
    answer
}
