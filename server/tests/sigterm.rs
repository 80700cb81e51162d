//! The binary under SIGTERM with `--record`: players are told, every room
//! is closed, and each recording reaches the disk whole, replayable to its
//! last tick and ending with a record that says the server shut down.

use std::net::SocketAddr;
use std::path::PathBuf;
use std::process::Stdio;
use std::time::Duration;

use anyhow::{bail, ensure, Context, Result};
use futures_util::{SinkExt, StreamExt};
use skirmish_core::RoomEnd;
use skirmish_tanks::replay_room;
use tokio::io::{AsyncBufReadExt, BufReader};
use tokio::time::timeout;
use tokio_tungstenite::tungstenite::Message;

const PATIENCE: Duration = Duration::from_secs(20);

type Socket =
    tokio_tungstenite::WebSocketStream<tokio_tungstenite::MaybeTlsStream<tokio::net::TcpStream>>;

/// Joins room `room` as `name` and reads until `messages` snapshots came.
async fn join_and_play(addr: SocketAddr, name: &str, room: &str) -> Result<Socket> {
    let (mut socket, _) = tokio_tungstenite::connect_async(format!("ws://{addr}/ws")).await?;
    let hello = format!(r#"{{"type":"hello","name":"{name}","protocol":2,"room":"{room}"}}"#);
    socket.send(Message::text(hello)).await?;
    let mut snapshots = 0;
    while snapshots < 10 {
        let message = timeout(PATIENCE, socket.next())
            .await?
            .context("closed while playing")??;
        if let Message::Text(text) = message {
            if text.starts_with(r#"{"type":"snapshot""#) {
                snapshots += 1;
            }
        }
    }
    Ok(socket)
}

/// Reads until the server closes; the close reason.
async fn close_reason(socket: &mut Socket) -> Result<String> {
    loop {
        match timeout(PATIENCE, socket.next()).await? {
            Some(Ok(Message::Close(Some(frame)))) => return Ok(frame.reason.to_string()),
            Some(Ok(_)) => {}
            other => bail!("the connection ended without a close frame: {other:?}"),
        }
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sigterm_during_play_leaves_every_recording_whole_and_ended() -> Result<()> {
    let dir: PathBuf =
        std::env::temp_dir().join(format!("skirmish-sigterm-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    let mut child = tokio::process::Command::new(env!("CARGO_BIN_EXE_skirmish-server"))
        .args(["--addr", "127.0.0.1:0", "--no-webtransport"])
        .arg("--record")
        .arg(&dir)
        .env("RUST_LOG", "warn")
        .stdout(Stdio::piped())
        .kill_on_drop(true)
        .spawn()?;
    let stdout = child.stdout.take().context("stdout")?;
    let line = timeout(PATIENCE, BufReader::new(stdout).lines().next_line())
        .await??
        .context("the server printed nothing")?;
    let addr: SocketAddr = line
        .split("http://")
        .nth(1)
        .and_then(|rest| rest.split('/').next())
        .context("an address in the first line")?
        .parse()?;

    let mut players = Vec::new();
    for (name, room) in [("a", "one"), ("b", "one"), ("c", "one"), ("d", "two")] {
        players.push(join_and_play(addr, name, room).await?);
    }
    let pid = child.id().context("the server's pid")?;
    let killed = std::process::Command::new("kill")
        .args(["-TERM", &pid.to_string()])
        .status()?;
    ensure!(killed.success(), "kill -TERM {pid}");
    for socket in &mut players {
        assert_eq!(close_reason(socket).await?, "shutting_down");
    }
    let status = timeout(PATIENCE, child.wait()).await??;
    assert!(status.success(), "the server exits cleanly: {status}");

    let mut summaries = Vec::new();
    for entry in std::fs::read_dir(&dir)? {
        let path = entry?.path();
        let bytes = std::fs::read(&path)?;
        let summary =
            replay_room(&bytes).with_context(|| format!("replaying {}", path.display()))?;
        summaries.push(summary);
    }
    summaries.sort_by(|a, b| a.name.cmp(&b.name));
    assert_eq!(summaries.len(), 2, "{summaries:#?}");
    for (summary, players) in summaries.iter().zip([3, 1]) {
        assert_eq!(summary.ended, Some(RoomEnd::ShutDown), "{summary:#?}");
        assert_eq!(summary.joins, players, "{summary:#?}");
        assert_eq!(summary.leaves, players, "{summary:#?}");
        assert!(summary.ticks >= 10, "{summary:#?}");
    }
    let _ = std::fs::remove_dir_all(dir);
    Ok(())
}
