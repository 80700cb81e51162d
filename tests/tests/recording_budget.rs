//! `--record` under room churn: the server-wide byte budget and the
//! free-space floor stop recording, each refusal counted, and every file
//! written still replays.

use std::path::{Path, PathBuf};
use std::time::Duration;

use anyhow::Result;
use skirmish_tanks::replay_room;
use skirmish_tests::{config_with, metric, server, Client, DEADLINE};

fn temp_dir(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("skirmish-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    dir
}

fn files(dir: &Path) -> Result<Vec<PathBuf>> {
    let mut found = Vec::new();
    if dir.is_dir() {
        for entry in std::fs::read_dir(dir)? {
            found.push(entry?.path());
        }
    }
    Ok(found)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn room_churn_stops_at_the_total_budget_and_what_was_written_replays() -> Result<()> {
    let dir = temp_dir("record-churn");
    let total = 20_000;
    let running = server(config_with(|c| {
        c.rooms.record.dir = Some(dir.clone());
        c.rooms.record.total_bytes = total;
        c.rooms.empty_timeout = Duration::from_millis(100);
    }))?;
    let addr = running.addr;
    let refused = "skirmish_recordings_refused_total{reason=\"total_bytes\"}";
    let mut rooms = 0;
    while metric(addr, refused).await? == 0 {
        assert!(rooms < 200, "{rooms} rooms and the budget never refused");
        let mut client = Client::join(addr, "churner", Some(&format!("churn-{rooms}"))).await?;
        for _ in 0..10 {
            client.snapshot().await?;
        }
        client.close().await?;
        rooms += 1;
    }
    // Every room closes; nothing more is written once the budget is spent.
    let metrics = running.state.metrics.clone();
    let mut changed = metrics.watch_occupancy();
    while metrics.rooms() > 0 {
        tokio::time::timeout(DEADLINE, changed.changed()).await??;
    }
    let written = files(&dir)?;
    let bytes: u64 = written
        .iter()
        .map(|f| std::fs::metadata(f).map_or(0, |m| m.len()))
        .sum();
    assert!(
        bytes <= total,
        "{bytes} bytes on disk past a budget of {total}"
    );
    assert_eq!(metric(addr, "skirmish_recorded_bytes_total").await?, bytes);
    for file in &written {
        let summary = replay_room(&std::fs::read(file)?)
            .map_err(|e| anyhow::anyhow!("{}: {e}", file.display()))?;
        assert!(summary.joins <= 1, "{summary:?}");
    }
    // A room opened now is not recorded at all.
    let before = written.len();
    let client = Client::join(addr, "late", Some("after-the-budget")).await?;
    assert_eq!(files(&dir)?.len(), before);
    assert!(metric(addr, refused).await? >= 2);
    client.close().await?;
    running.shutdown().await?;
    let _ = std::fs::remove_dir_all(dir);
    Ok(())
}

#[tokio::test]
async fn a_disk_under_the_free_space_floor_records_nothing_and_says_so() -> Result<()> {
    let dir = temp_dir("record-floor");
    let running = server(config_with(|c| {
        c.rooms.record.dir = Some(dir.clone());
        c.rooms.record.min_free_bytes = u64::MAX;
    }))?;
    let mut client = Client::join(running.addr, "p", Some("floor")).await?;
    client.snapshot().await?;
    assert_eq!(
        metric(
            running.addr,
            "skirmish_recordings_refused_total{reason=\"free_space\"}"
        )
        .await?,
        1
    );
    assert!(
        files(&dir)?.is_empty(),
        "nothing is written under the floor"
    );
    running.shutdown().await?;
    let _ = std::fs::remove_dir_all(dir);
    Ok(())
}

#[tokio::test]
async fn rooms_whose_recordings_would_not_replay_are_not_recorded_at_all() {
    let dir = temp_dir("record-unreplayable");
    let refused = server(config_with(|c| {
        c.rooms.record.dir = Some(dir.clone());
        c.rooms.capacity = 5000;
    }));
    let Err(e) = refused else {
        panic!("a server recording rooms of 5,000 seats started");
    };
    assert!(e.to_string().contains("would not replay"), "{e}");
    // Without --record such rooms are the operator's choice.
    let running = server(config_with(|c| c.rooms.capacity = 5000)).expect("starts");
    running.shutdown().await.expect("stops");
}
