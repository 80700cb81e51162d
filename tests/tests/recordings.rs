//! Recordings as regression tests.
//!
//! `tests/recordings/` holds short recordings made by the project's own
//! tools: the page under the conditioner (`browser.skrec`, from
//! `browser_recording.rs`), a bot through the TCP relay
//! (`bot-relay.skrec`) and the server room it played in, with combat
//! (`room-combat.skrec`), both from the test below. Each is replayed here;
//! a change of behaviour shows as a hash difference at a named frame or
//! tick. When a change is intended, re-record them:
//!
//! ```sh
//! SKIRMISH_RERECORD=1 cargo test -p skirmish-tests --test recordings --test browser_recording
//! ```

use std::path::{Path, PathBuf};
use std::time::Duration;

use anyhow::{anyhow, bail, Context, Result};
use skirmish_core::{Call, Encoding, LinkConditions, ReplayOptions, Tick, MAGIC};
use skirmish_tanks::{replay_client, replay_room, Controls, Pose, WireInput};
use skirmish_tests::bot::{run_bot, BotOptions, BotTransport};
use skirmish_tests::recordings::{first_parts, read_parts, side_by_side};
use skirmish_tests::relay::{Impairment, TcpRelay};
use skirmish_tests::script::{Script, Shooter};
use skirmish_tests::{config_with, next_source, server};

fn stored() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("recordings")
}

/// Replays one recording of either kind; a summary line, or why not.
fn replay_any(path: &Path) -> Result<String> {
    let bytes = read_parts(path)?;
    let kind = bytes.get(MAGIC.len()).copied();
    match kind {
        Some(b'C') => replay_client(&bytes, ReplayOptions::default())
            .map(|r| format!("{} frames", r.summary.frames))
            .map_err(|e| match e {
                skirmish_core::ReplayError::Diverged(d) => anyhow!(
                    "frame {} differs; the calls before it:\n{}",
                    d.frame,
                    d.calls.join("\n")
                ),
                e @ skirmish_core::ReplayError::Format(_) => anyhow!(e),
            }),
        Some(b'R') => replay_room(&bytes)
            .map(|s| format!("{} ticks, {} combat events", s.ticks, s.events))
            .map_err(|e| match e {
                skirmish_core::RoomReplayError::Diverged(d) => anyhow!(
                    "tick {} differs; the calls before it:\n{}",
                    d.tick,
                    d.calls.join("\n")
                ),
                e @ skirmish_core::RoomReplayError::Format(_) => anyhow!(e),
            }),
        _ => bail!("not a recording"),
    }
}

#[test]
fn the_stored_recordings_replay_bit_for_bit() -> Result<()> {
    let files = first_parts(&stored())?;
    let names: Vec<String> = files
        .iter()
        .filter_map(|f| f.file_name()?.to_str().map(str::to_string))
        .collect();
    for wanted in ["browser.skrec", "bot-relay.skrec", "room-combat.skrec"] {
        assert!(
            names.iter().any(|n| n == wanted),
            "{wanted} is missing: {names:?}"
        );
    }
    let mut failed = Vec::new();
    for file in &files {
        match replay_any(file) {
            Ok(summary) => println!("{}: {summary}", file.display()),
            Err(e) => failed.push(format!("{}: {e:#}", file.display())),
        }
    }
    assert!(
        failed.is_empty(),
        "behaviour changed (re-record with SKIRMISH_RERECORD=1 if intended):\n{}",
        failed.join("\n\n")
    );
    Ok(())
}

/// A bot that shoots (recorded) and one that drives in circles, both
/// through a TCP relay with latency and jitter, in a room the server
/// records: both recordings replay; with `SKIRMISH_RERECORD=1` they become
/// the stored ones.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_bot_through_the_relay_and_its_room_record_and_replay() -> Result<()> {
    let dir = std::env::temp_dir().join(format!("skirmish-recordings-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    let rooms = dir.join("rooms");
    let srv = server(config_with(|c| c.rooms.record.dir = Some(rooms.clone())))?;
    let link = Impairment {
        latency_ms: 40.0,
        jitter_ms: 10.0,
        loss: 0.0,
        duplicate: 0.0,
    };
    let relay = TcpRelay::start(srv.addr, link, link, 5).await?;
    let bot = |name: &str, script, seed, record| BotOptions {
        name: name.to_string(),
        room: Some("fixture".to_string()),
        script,
        folder: String::new(),
        up: LinkConditions::default(),
        down: LinkConditions::default(),
        seed,
        duration: Duration::from_secs(6),
        frame: Duration::from_millis(16),
        encoding: Encoding::Compact,
        source: Some(next_source()),
        transport: BotTransport::Websocket,
        via: Some(relay.addr),
        resends: 0,
        record,
    };
    let recorded = dir.join("bot-relay.skrec");
    let shooter = bot(
        "shooter",
        Script::Shooter(Shooter { radius: 20.0 }),
        1,
        Some(recorded.clone()),
    );
    let target = bot("target", Script::Circle(0.4), 2, None);
    let (a, b) = tokio::join!(run_bot(srv.addr, shooter), run_bot(srv.addr, target));
    let (a, _) = (a?, b?);
    srv.shutdown().await?;
    let room = first_parts(&rooms)?
        .into_iter()
        .next()
        .context("the server wrote no room recording")?;

    let bot_summary = replay_any(&recorded)?;
    let room_summary = replay_any(&room)?;
    println!(
        "bot: {bot_summary}, {} corrections; room: {room_summary}",
        a.corrections
    );
    let bytes = read_parts(&room)?;
    let s = replay_room(&bytes).map_err(|e| anyhow!("{e}"))?;
    assert!(s.events > 0, "the shooter hit: {s:?}");
    assert_eq!(s.joins, 2, "{s:?}");
    // Side by side: every frame the bot received is one the room sent it,
    // in order (a WebSocket loses none); one changed byte shows (its
    // checksums recomputed, or the reader refuses it first).
    let client = std::fs::read(&recorded)?;
    let beside = side_by_side(&client, &bytes)?;
    assert!(beside.received > 100, "{beside:?}");
    assert_eq!(beside.first_unmatched, None, "{beside:?}");
    assert_eq!(beside.matched, beside.received, "{beside:?}");
    let mut changed = client.clone();
    let (_, calls) = skirmish_tanks::open_client(&client)?;
    let calls: Vec<(usize, Call<'_, Controls, Pose>)> = calls.collect::<Result<_, _>>()?;
    let frames: Vec<usize> = (0..calls.len() - 1)
        .filter(|&k| matches!(calls[k].1, Call::Text(..) | Call::Binary(..)))
        .collect();
    // The last byte of a frame in the middle.
    let k = frames[frames.len() / 2];
    changed[calls[k + 1].0 - 1] ^= 0x20;
    let refused = side_by_side(&changed, &bytes).expect_err("a changed byte");
    assert!(
        format!("{refused:#}").contains("fails its checksum"),
        "{refused:#}"
    );
    skirmish_core::reseal_recording(&mut changed)?;
    let beside = side_by_side(&changed, &bytes)?;
    assert!(beside.first_unmatched.is_some(), "{beside:?}");
    if std::env::var_os("SKIRMISH_RERECORD").is_some() {
        std::fs::copy(&recorded, stored().join("bot-relay.skrec"))?;
        std::fs::write(stored().join("room-combat.skrec"), &bytes)?;
        println!("re-recorded bot-relay.skrec and room-combat.skrec");
    }
    let _ = std::fs::remove_dir_all(&dir);
    Ok(())
}

/// The value of an unlabelled metric line in `/metrics`.
async fn metric(addr: std::net::SocketAddr, name: &str) -> Result<u64> {
    let text = skirmish_tests::http_get(addr, "/metrics").await?;
    text.lines()
        .find_map(|l| l.strip_prefix(&format!("{name} ")))
        .and_then(|v| v.trim().parse().ok())
        .with_context(|| format!("no {name} in /metrics"))
}

/// Past `--record-max-bytes` a room stops recording, counted; what it wrote
/// up to then still replays.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_room_past_its_bound_stops_recording_and_is_counted() -> Result<()> {
    let dir = std::env::temp_dir().join(format!("skirmish-bound-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    let srv = server(config_with(|c| {
        c.rooms.record.dir = Some(dir.clone());
        c.rooms.record.max_bytes = 2000;
    }))?;
    let mut client = skirmish_tests::Client::join(srv.addr, "filler", Some("small")).await?;
    // An input per snapshot fills the recording; wait for the counter.
    let deadline = tokio::time::Instant::now() + skirmish_tests::DEADLINE;
    let mut tick = 0;
    while metric(srv.addr, "skirmish_recordings_stopped_total").await? == 0 {
        anyhow::ensure!(tokio::time::Instant::now() < deadline, "never stopped");
        tick += 1;
        let input = WireInput {
            tick: Tick(tick),
            turn: 0.5,
            throttle: 1.0,
            fire: false,
            view_tick: None,
        };
        client.inputs(vec![input]).await?;
        client.snapshot().await?;
    }
    let written = metric(srv.addr, "skirmish_recorded_bytes_total").await?;
    assert!(written > 0 && written <= 2000, "{written}");
    srv.shutdown().await?;
    let file = first_parts(&dir)?
        .into_iter()
        .next()
        .context("no recording")?;
    let summary = replay_any(&file)?;
    println!("{summary}");
    let _ = std::fs::remove_dir_all(&dir);
    Ok(())
}
