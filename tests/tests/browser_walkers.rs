//! The guide's game in the browser: walkers' own wasm bundle
//! (`web/walkers/pkg`, built from `games/walkers/page`) at `/walkers/`,
//! served by the same process as the tank game. Two pages in headless
//! Chromium share a room: one walks, the other draws it walking; the
//! walker's inputs are acknowledged and never corrected, the HUD shows the
//! netcode's numbers, the page's recording replays natively frame for
//! frame, and the page steps the game bit for bit as native code does.

mod browser_support;

use std::time::Duration;

use anyhow::{anyhow, bail, Result};
use browser_support::{
    browser, num, page_trace, recording, root, start_driver, state, wait_for, web_server,
};
use serde_json::Value;
use skirmish_core::{first_divergence, replay_client_of, trace, ReplayOptions};
use skirmish_tests::test_config;
use skirmish_walkers::Walkers;

/// The page of walkers on `srv`, with `query`.
fn walkers_url(srv: &skirmish_server::RunningServer, query: &str) -> Result<String> {
    if !root().join("web/walkers/pkg/skirmish_client.js").is_file() {
        bail!("web/walkers/pkg is not built: run `cargo xtask test`, which builds it first");
    }
    Ok(format!("http://{}/walkers/?{query}", srv.addr))
}

/// The first of the page's drawn numbers (x), once joined.
fn x_of(s: &Value, key: &str) -> Option<f64> {
    s.get(key)?.as_array()?.first()?.as_f64()
}

/// Waits until the page has joined and draws its own walker.
async fn joined(client: &fantoccini::Client) -> Result<Value> {
    wait_for(client, "joined and placed", Duration::from_secs(20), |s| {
        !s.is_null() && s["player_id"].is_u64() && x_of(s, "visible").is_some()
    })
    .await
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn two_walker_pages_share_a_room_and_one_sees_the_other_walk() -> Result<()> {
    let srv = web_server(test_config())?;
    let driver = start_driver()?;
    let walker = browser(&driver).await?;
    let watcher = browser(&driver).await?;
    walker
        .goto(&walkers_url(&srv, "name=strider&room=park")?)
        .await?;
    watcher
        .goto(&walkers_url(&srv, "name=watcher&room=park")?)
        .await?;
    let start = joined(&walker).await?;
    joined(&watcher).await?;
    let from = x_of(&start, "visible").ok_or_else(|| anyhow!("no x: {start}"))?;
    let id = start["player_id"].clone();
    // Walk right (away from the middle, where a walker starts) for a while:
    // a walker's controls as an object (the tank and blob pages' tests use
    // the positional form).
    walker
        .execute(
            "window.skirmish.setControls({x: 1, y: 0}); return true;",
            vec![],
        )
        .await?;
    let after = wait_for(&walker, "walked 150 units", Duration::from_secs(10), |s| {
        x_of(s, "visible").is_some_and(|x| x >= from + 150.0) && num(s, "ack") > 40.0
    })
    .await?;
    let seen = wait_for(
        &watcher,
        "the other page draws the walker moved",
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
    println!("walker: {after}\nwatcher: {seen}");
    assert_eq!(after["room"], "park", "{after}");
    assert_eq!(
        after["corrections"], 0,
        "predicted and never corrected: {after}"
    );
    // One page for every game: walkers' bundle names the page and its keys.
    assert_eq!(walker.title().await?, "Skirmish: walkers");
    let keys = walker
        .execute(
            "return document.getElementById('keys').textContent;",
            vec![],
        )
        .await?;
    assert_eq!(keys, "WASD or the arrows walk");
    let hud = after["hud_text"].as_str().unwrap_or_default();
    assert!(hud.starts_with("at "), "the game's own line first: {hud}");
    assert!(hud.contains("RTT"), "the netcode's numbers: {hud}");

    // The recording replays natively, frame for frame.
    let bytes = recording(&walker).await?;
    let replay = replay_client_of::<Walkers>(&bytes, ReplayOptions::default())
        .map_err(|e| anyhow!("the native replay of the walker's recording: {e:#?}"))?;
    let s = &replay.summary;
    println!("replay of {} bytes: {s:?}", bytes.len());
    assert!(s.frames > 60 && s.received > 20, "{s:?}");

    // The determinism check: the page's trace of seeded steps is native's.
    let steps = 2_000u32;
    let page = page_trace(&walker, 7, steps).await?;
    let native = trace::<Walkers>(7, steps);
    if let Some(step) = first_divergence(&native, &page) {
        bail!("the page's walkers diverge from native code at step {step}");
    }
    let last = state(&watcher).await?;
    assert!(num(&last, "rtt_ms") >= 0.0, "{last}");
    walker.close().await?;
    watcher.close().await?;
    srv.shutdown().await
}
