//! A room whose tick panics fails alone: its players are told and their
//! seats given back, it is counted and closed, its recording ends on the
//! failure, and every other room keeps its 20 Hz.

use std::path::{Path, PathBuf};
use std::time::Duration;

use anyhow::{anyhow, Context, Result};
use skirmish_core::{ErrorCode, RoomEnd, ServerMessage};
use skirmish_tanks::replay_room;
use skirmish_tests::{config_with, metric, server, Client, DEADLINE};
use tokio::time::Instant;

fn temp_dir(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("skirmish-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    dir
}

/// The recordings under `dir` whose room is `room`, first parts only.
fn recordings_of(dir: &Path, room: &str) -> Result<Vec<PathBuf>> {
    let mut found = Vec::new();
    for entry in std::fs::read_dir(dir)? {
        let path = entry?.path();
        let name = path.file_name().and_then(|n| n.to_str()).unwrap_or("");
        let first_part = Path::new(name)
            .extension()
            .is_some_and(|e| e.eq_ignore_ascii_case("skrec"));
        if first_part && name.contains(&format!("-{room}-")) {
            found.push(path);
        }
    }
    Ok(found)
}

/// Snapshots `client` receives within one second.
async fn snapshots_in_a_second(client: &mut Client) -> Result<u32> {
    let end = Instant::now() + Duration::from_secs(1);
    let mut count = 0;
    while let Ok(message) = tokio::time::timeout_at(end, client.recv()).await {
        if let ServerMessage::Snapshot { .. } = message? {
            count += 1;
        }
    }
    Ok(count)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_panicking_tick_closes_its_room_alone() -> Result<()> {
    let dir = temp_dir("room-failure");
    let config = config_with(|c| c.rooms.record.dir = Some(dir.clone()));
    let running = server(config)?;
    let addr = running.addr;
    let mut doomed = [
        Client::join(addr, "a1", Some("doomed")).await?,
        Client::join(addr, "a2", Some("doomed")).await?,
    ];
    let mut other = Client::join(addr, "b1", Some("other")).await?;
    // Both rooms tick before one fails.
    doomed[0].snapshot().await?;
    other.snapshot().await?;
    assert_eq!(metric(addr, "skirmish_players").await?, 3);

    assert!(running.state.rooms.fail_next_tick("doomed"));
    for client in &mut doomed {
        assert_eq!(client.error().await?, ErrorCode::RoomFailed);
        assert_eq!(client.closed().await?, "room_failed");
    }
    // The other room goes on at its rate, undisturbed.
    let rate = snapshots_in_a_second(&mut other).await?;
    assert!(
        rate >= 18,
        "the other room sent {rate} snapshots in a second"
    );

    assert_eq!(metric(addr, "skirmish_room_failures_total").await?, 1);
    assert_eq!(metric(addr, "skirmish_players").await?, 1);
    assert_eq!(metric(addr, "skirmish_rooms").await?, 1);
    let rooms = running.state.rooms.list();
    assert_eq!(rooms.len(), 1, "{rooms:?}");
    assert_eq!(rooms[0].name, "other");
    // What Agones' health pings read sees the rooms that tick, on time.
    let (slowest, late) = running
        .state
        .rooms
        .slowest_tick(tokio::time::Instant::now())
        .ok_or_else(|| anyhow!("no room ticks"))?;
    assert_eq!(slowest, "other");
    assert!(late < Duration::from_millis(500), "{late:?}");
    assert_eq!(
        metric(addr, "skirmish_disconnects_total{reason=\"room_failed\"}").await?,
        2
    );

    // The room's name and its seats are free again: joining it opens a
    // new room of that name.
    let mut again = Client::join(addr, "a3", Some("doomed")).await?;
    again.snapshot().await?;
    assert_eq!(metric(addr, "skirmish_players").await?, 2);

    // The failed room's recording replays up to the failing tick and ends
    // saying why.
    let files = recordings_of(&dir, "doomed")?;
    let failed = files
        .iter()
        .map(|f| std::fs::read(f).with_context(|| f.display().to_string()))
        .collect::<Result<Vec<_>>>()?
        .into_iter()
        .filter_map(|bytes| replay_room(&bytes).ok())
        .find(|summary| matches!(summary.ended, Some(RoomEnd::Failed(_))))
        .ok_or_else(|| anyhow!("no recording of the failed room ends in its failure"))?;
    assert!(failed.ticks > 0, "{failed:?}");
    assert_eq!(failed.joins, 2, "{failed:?}");
    let Some(RoomEnd::Failed(why)) = &failed.ended else {
        unreachable!("matched above");
    };
    assert!(why.contains("asked to fail"), "{why}");

    tokio::time::timeout(DEADLINE, running.shutdown()).await??;
    let _ = std::fs::remove_dir_all(dir);
    Ok(())
}

/// A panic while the room handles a client's message (not in its tick)
/// fails the room the same way: nobody plays on half-applied state.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_panicking_message_fails_its_room_alone() -> Result<()> {
    let running = server(config_with(|_| {}))?;
    let addr = running.addr;
    let mut doomed = [
        Client::join(addr, "c1", Some("doomed")).await?,
        Client::join(addr, "c2", Some("doomed")).await?,
    ];
    let mut other = Client::join(addr, "d1", Some("other")).await?;
    doomed[0].snapshot().await?;
    other.snapshot().await?;

    assert!(running.state.rooms.fail_next_message("doomed"));
    doomed[0]
        .inputs(vec![skirmish_tests::input(1, 0.0, 1.0, false)])
        .await?;
    for client in &mut doomed {
        assert_eq!(client.error().await?, ErrorCode::RoomFailed);
        assert_eq!(client.closed().await?, "room_failed");
    }
    let rate = snapshots_in_a_second(&mut other).await?;
    assert!(
        rate >= 18,
        "the other room sent {rate} snapshots in a second"
    );
    assert_eq!(metric(addr, "skirmish_room_failures_total").await?, 1);
    assert_eq!(metric(addr, "skirmish_players").await?, 1);
    let rooms = running.state.rooms.list();
    assert_eq!(rooms.len(), 1, "{rooms:?}");
    tokio::time::timeout(DEADLINE, running.shutdown()).await??;
    Ok(())
}
