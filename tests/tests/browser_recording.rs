//! The flight recorder on a real page: headless Chromium plays 20 s under
//! the conditioner (150 ms RTT, jitter, loss) with corrections happening,
//! hands over its recording, and the native replay matches it frame for
//! frame: the wasm-to-native proof on a real session.

mod browser_support;

use std::time::{Duration, Instant};

use anyhow::{anyhow, bail, Context, Result};
use browser_support::{
    browser, joined, page_url, recording, root, start_driver, state, wait_for, web_server,
};
use skirmish_core::{Call, ReplayError, ReplayOptions};
use skirmish_tanks::{open_client, replay_client, Controls, Pose};
use skirmish_tests::config_with;
use skirmish_tests::recordings::{first_parts, read_parts, side_by_side};

/// Drive and weave, changing course often; from 8 s to 10 s the uplink's
/// latency jumps to 300 ms (the panel's slider, as a person would move it):
/// inputs arrive late, the server repeats old ones and predictions get
/// corrected.
const WEAVE: &str = "const start = performance.now();
    const slider = (id, v) => {
      const input = document.getElementById(id);
      if (input.value !== String(v)) {
        input.value = v;
        input.dispatchEvent(new Event('input'));
      }
    };
    window.weave = setInterval(() => {
      const t = (performance.now() - start) / 1000;
      window.skirmish.setControls(Math.sin(t * 2.3), 1, Math.sin(t * 1.1) > 0.7);
      slider('up-latency', t >= 8 && t < 10 ? 300 : 75);
    }, 50);
    return true;";

/// How long the page plays.
const PLAY: Duration = Duration::from_secs(20);

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_page_recorded_under_the_conditioner_replays_natively_frame_for_frame() -> Result<()> {
    // The server records the room too: the page's frames are checked
    // against what the room sent it.
    let rooms = std::env::temp_dir().join(format!("skirmish-browser-rooms-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&rooms);
    let srv = web_server(config_with(|c| c.rooms.record.dir = Some(rooms.clone())))?;
    let driver = start_driver()?;
    let client = browser(&driver).await?;
    let other = browser(&driver).await?;
    let conditions = "room=rec&up-latency=75&up-jitter=20&up-loss=4\
                      &down-latency=75&down-jitter=20&down-loss=4";
    client
        .goto(&page_url(&srv, &format!("name=recorded&{conditions}"))?)
        .await?;
    // A second page in the same room without the recorder: a remote to
    // draw, and the frame cost without recording beside the one with it.
    other
        .goto(&page_url(
            &srv,
            &format!("name=unrecorded&record=off&{conditions}"),
        )?)
        .await?;
    joined(&client).await?;
    joined(&other).await?;
    for page in [&client, &other] {
        page.execute(WEAVE, vec![]).await?;
    }
    let started = Instant::now();
    wait_for(
        &client,
        "20 s of play",
        PLAY + Duration::from_secs(5),
        |_| started.elapsed() >= PLAY,
    )
    .await?;
    let page = state(&client).await?;
    let unrecorded = state(&other).await?;
    other.close().await?;
    assert!(
        unrecorded["recording_bytes"].is_null() && unrecorded["frames"].as_u64() > Some(300),
        "?record=off plays without a recorder: {unrecorded}"
    );
    println!(
        "frame cost (mean ms in App::frame): recorder on {}, off {}",
        page["frame_cpu_ms"], unrecorded["frame_cpu_ms"]
    );
    let saved = client
        .execute("return window.skirmish.saveRecording();", vec![])
        .await?;
    let bytes = recording(&client).await?;
    client.close().await?;
    let dir = root().join("artifacts");
    std::fs::create_dir_all(&dir)?;
    std::fs::write(dir.join("browser.skrec"), &bytes).context("saving the recording")?;
    // `tests/tests/recordings.rs` replays the stored copy in every run.
    if std::env::var_os("SKIRMISH_RERECORD").is_some() {
        std::fs::write(root().join("tests/recordings/browser.skrec"), &bytes)?;
        println!("re-recorded tests/recordings/browser.skrec");
    }
    assert!(
        saved.as_u64().is_some_and(|n| n > 0),
        "saveRecording: {saved}"
    );

    let replay = replay_client(&bytes, ReplayOptions::default())
        .map_err(|e| anyhow!("the native replay of the page's recording: {e:#?}"))?;
    let s = &replay.summary;
    println!("page: {page}\nreplay of {} bytes: {s:?}", bytes.len());
    assert!(s.span >= Duration::from_secs(19), "{s:?}");
    assert!(s.frames > 300, "the page ran its frames: {s:?}");
    assert!(s.received > 300, "snapshots arrived: {s:?}");
    assert!(
        s.corrections + s.snaps > 0,
        "corrections happened, and replayed the same: {s:?}"
    );
    assert!(
        s.rtt
            .is_some_and(|(p50, _)| p50 >= Duration::from_millis(140)),
        "the conditioner's 150 ms RTT: {s:?}"
    );

    a_changed_snapshot_is_named(&bytes)?;
    srv.shutdown().await?;

    beside_the_room(&bytes, &rooms)?;
    let _ = std::fs::remove_dir_all(&rooms);
    Ok(())
}

/// One byte of a snapshot in the middle changed: refused as damage; with
/// its checksums recomputed, the replay stops at a frame the snapshot
/// reached, naming it. The page runs under its conditioner (5 % loss), so
/// the snapshot changed may be one the conditioner dropped, which nothing
/// reads: then the next one is changed, up to eight.
fn a_changed_snapshot_is_named(bytes: &[u8]) -> Result<()> {
    for (offset, next) in middle_snapshots(bytes, 8)? {
        let mut changed = bytes.to_vec();
        changed[next - 1] ^= 0x5a;
        match replay_client(&changed, ReplayOptions::default()) {
            Err(ReplayError::Format(e)) if e.to_string().contains("fails its checksum") => {}
            other => bail!("a changed snapshot was not refused as damage: {other:?}"),
        }
        skirmish_core::reseal_recording(&mut changed)?;
        match replay_client(&changed, ReplayOptions::default()) {
            Err(ReplayError::Diverged(d)) => {
                let named = d
                    .calls
                    .iter()
                    .any(|c| c.starts_with(&format!("byte {offset}:")));
                assert!(named, "the changed frame is named: {:#?}", d.calls);
                return Ok(());
            }
            // Dropped by the page's conditioner: never read.
            Ok(_) => {}
            Err(other) => bail!("a changed snapshot: {other:?}"),
        }
    }
    bail!("eight changed snapshots in a row went unnoticed")
}

/// Side by side with the server's recording of the room: every frame the
/// page received (over WebTransport, where datagrams may overtake the
/// stream) was sent to it by the room.
fn beside_the_room(bytes: &[u8], rooms: &std::path::Path) -> Result<()> {
    let room = first_parts(rooms)?
        .into_iter()
        .next()
        .context("the server wrote no room recording")?;
    let beside = side_by_side(bytes, &read_parts(&room)?)?;
    println!("side by side: {beside:?}");
    assert_eq!(beside.first_unmatched, None, "{beside:?}");
    assert!(beside.matched > 300, "{beside:?}");
    Ok(())
}

/// Where each of `count` binary frames from the middle of a recording on
/// starts, and where the call after it starts (its payload's last byte is
/// just before).
fn middle_snapshots(bytes: &[u8], count: usize) -> Result<Vec<(usize, usize)>> {
    let (_, calls) = open_client(bytes)?;
    let calls: Vec<(usize, Call<'_, Controls, Pose>)> = calls.collect::<Result<_, _>>()?;
    // Snapshots only: an own echo whose snapshot came first is rightly
    // not news, changed or not.
    let binary: Vec<usize> = (0..calls.len().saturating_sub(1))
        .filter(|&k| {
            matches!(calls[k].1, Call::Binary(frame, _) if frame.first() != Some(&skirmish_core::compact::OWN))
        })
        .collect();
    let middle = binary
        .get(binary.len() / 2..)
        .filter(|rest| !rest.is_empty())
        .ok_or_else(|| anyhow!("no binary frames recorded"))?;
    Ok(middle
        .iter()
        .take(count)
        .map(|&k| (calls[k].0, calls[k + 1].0))
        .collect())
}
