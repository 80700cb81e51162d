//! A game outside the workspace (`examples/standalone/`: drift, its own
//! crate, page crate and server binary over the Skirmish crates by path),
//! as `cargo xtask test` builds it from there: its server serves its page
//! (the shell's page, its own bundle), two pages in headless Chromium
//! share a room and one sees the other move, its own replayer replays a
//! page's recording and refuses another game's by name, and the page's
//! determinism trace is its native build's. Needs the
//! binaries and the bundle `cargo xtask test` builds first.

mod browser_support;

use std::io::{BufRead, BufReader};
use std::path::PathBuf;
use std::process::{Child, Command, Stdio};
use std::time::Duration;

use anyhow::{anyhow, bail, Context, Result};
use browser_support::{browser, num, page_trace, recording, root, start_driver, wait_for};
use serde_json::Value;

/// A child process killed when dropped (a failed test leaves no server).
struct Killed(Child);

impl Drop for Killed {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

/// Where the standalone's binaries are: beside this test's own (xtask
/// builds both in the one target folder).
fn standalone_bin(name: &str) -> Result<PathBuf> {
    let exe = std::env::current_exe()?;
    let debug = exe
        .parent()
        .and_then(|deps| deps.parent())
        .context("the test runs from target/debug/deps")?;
    let bin = debug.join(name);
    if !bin.is_file() {
        bail!(
            "{} is not built: run `cargo xtask test`, which builds examples/standalone first",
            bin.display()
        );
    }
    Ok(bin)
}

/// The standalone's server on a free port, its web folder holding only
/// its bundle; where it serves.
async fn drift_server() -> Result<(Killed, String)> {
    let web = root().join("examples/standalone/web");
    if !web.join("pkg/skirmish_client.js").is_file() {
        bail!("examples/standalone/web/pkg is not built: run `cargo xtask test`");
    }
    let mut child = Killed(
        Command::new(standalone_bin("drift-server")?)
            .args(["--addr", "127.0.0.1:0", "--web-dir"])
            .arg(&web)
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()?,
    );
    let stdout = child.0.stdout.take().context("the server's stdout")?;
    // The first line is the URL (the server's stdout carries nothing else);
    // a server that never prints one ends the test at the deadline.
    let first = tokio::task::spawn_blocking(move || {
        let mut line = String::new();
        BufReader::new(stdout).read_line(&mut line).map(|_| line)
    });
    let line = tokio::time::timeout(Duration::from_secs(20), first)
        .await
        .context("the server printed no URL in 20 s")???;
    let url = line
        .split_whitespace()
        .find(|w| w.starts_with("http://"))
        .ok_or_else(|| anyhow!("no URL in `{line}`"))?;
    Ok((child, url.trim_end_matches('/').to_string()))
}

/// The first of the page's drawn numbers (x), once joined.
fn x_of(s: &Value, key: &str) -> Option<f64> {
    s.get(key)?.as_array()?.first()?.as_f64()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_game_built_outside_the_workspace_serves_plays_and_replays() -> Result<()> {
    let (server, url) = drift_server().await?;
    let driver = start_driver()?;
    let mover = browser(&driver).await?;
    let watcher = browser(&driver).await?;
    mover.goto(&format!("{url}/?name=mover&room=out")).await?;
    watcher
        .goto(&format!("{url}/?name=watcher&room=out"))
        .await?;
    let joined =
        |s: &Value| !s.is_null() && s["player_id"].is_u64() && x_of(s, "visible").is_some();
    let start = wait_for(&mover, "joined", Duration::from_secs(20), joined).await?;
    wait_for(&watcher, "joined", Duration::from_secs(20), joined).await?;
    assert_eq!(mover.title().await?, "Skirmish: drift");
    let from = x_of(&start, "visible").ok_or_else(|| anyhow!("no x: {start}"))?;
    let id = start["player_id"].clone();
    mover
        .execute(
            "window.skirmish.setControls({x: 1, y: 0}); return true;",
            vec![],
        )
        .await?;
    let after = wait_for(&mover, "moved 150 units", Duration::from_secs(10), |s| {
        x_of(s, "visible").is_some_and(|x| x >= from + 150.0) && num(s, "ack") > 40.0
    })
    .await?;
    assert_eq!(
        after["corrections"], 0,
        "predicted, never corrected: {after}"
    );
    wait_for(
        &watcher,
        "the other page draws it moved",
        Duration::from_secs(10),
        |s| {
            s["remotes"].as_array().is_some_and(|remotes| {
                remotes
                    .iter()
                    .any(|r| r["id"] == id && x_of(r, "pose").is_some_and(|x| x >= from + 100.0))
            })
        },
    )
    .await?;

    // Its own replayer replays the page's recording natively.
    let bytes = recording(&mover).await?;
    let dir = std::env::temp_dir().join(format!("skirmish-standalone-{}", std::process::id()));
    std::fs::create_dir_all(&dir)?;
    let file = dir.join("drift.skrec");
    std::fs::write(&file, &bytes)?;
    let replayer = standalone_bin("drift-replay")?;
    let out = Command::new(&replayer).arg(&file).output()?;
    let said = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "the replay failed: {said}{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(said.contains("frames"), "{said}");
    // A recording of another game is refused by its name.
    let tanks = root().join("tests/recordings");
    let other = std::fs::read_dir(&tanks)?
        .flatten()
        .map(|e| e.path())
        .find(|p| p.extension().is_some_and(|e| e == "skrec"))
        .context("a stored recording of the tank game")?;
    let out = Command::new(&replayer).arg(&other).output()?;
    let said = format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(!out.status.success(), "{said}");
    assert!(said.contains("tanks"), "the refusal names the game: {said}");
    std::fs::remove_dir_all(&dir)?;

    // The determinism check: the page steps drift bit for bit as its own
    // native build does (`drift-trace`).
    let steps = 2_000u32;
    let page = page_trace(&mover, 7, steps).await?;
    let out = Command::new(standalone_bin("drift-trace")?)
        .args(["7", &steps.to_string()])
        .output()?;
    let native: Vec<u64> = String::from_utf8_lossy(&out.stdout)
        .lines()
        .map(|h| u64::from_str_radix(h, 16))
        .collect::<Result<_, _>>()?;
    assert_eq!(
        native.len(),
        steps as usize,
        "drift-trace printed every step"
    );
    if let Some(step) = skirmish_core::first_divergence(&native, &page) {
        bail!("the page's drift diverges from native code at step {step}");
    }
    mover.close().await?;
    watcher.close().await?;
    drop(server);
    Ok(())
}
