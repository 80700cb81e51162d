//! Blobs, the .io arena, in the browser: its own wasm bundle
//! (`web/blobs/pkg`, built from `games/blobs/page`) at `/blobs/`, served by
//! the same process as the other games. Two pages in headless Chromium
//! share a small arena: one steers a spiral through the pellets and grows,
//! the other sees it grow and the pellets it ate vanish; inputs are
//! acknowledged, the HUD shows the netcode's numbers, the eater's
//! recording replays natively frame for frame, and the page steps the game
//! bit for bit as native code does.

mod browser_support;

use std::collections::BTreeSet;
use std::time::Duration;

use anyhow::{anyhow, bail, Result};
use browser_support::{
    browser, num, page_trace, recording, root, start_driver, state, wait_for, web_server,
};
use serde_json::Value;
use skirmish_blobs::Blobs;
use skirmish_core::{first_divergence, replay_client_of, trace, ReplayOptions};
use skirmish_tests::config_with;

/// The page of blobs on `srv`, with `query`.
fn blobs_url(srv: &skirmish_server::RunningServer, query: &str) -> Result<String> {
    if !root().join("web/blobs/pkg/skirmish_client.js").is_file() {
        bail!("web/blobs/pkg is not built: run `cargo xtask test`, which builds it first");
    }
    Ok(format!("http://{}/blobs/?{query}", srv.addr))
}

/// The ids of the pellets the page draws: the world's things, not
/// players.
fn pellets(s: &Value) -> BTreeSet<u64> {
    s["things"].as_array().map_or_else(BTreeSet::new, |things| {
        things.iter().filter_map(|t| t["id"].as_u64()).collect()
    })
}

/// Steers a widening spiral: the angle turns, the blob always goes.
const SPIRAL: &str = "const start = performance.now();
    window.spiral = setInterval(() => {
      const t = (performance.now() - start) / 1000;
      window.skirmish.setControls(t * 1.3, 1, false);
    }, 50);
    return true;";

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_eater_grows_and_the_other_page_sees_it_and_the_pellets_go() -> Result<()> {
    // A small arena, so that each page sees all of it.
    let srv = web_server(config_with(|c| {
        c.games.blobs_side = 800.0;
        c.games.blobs_pellets = 300;
    }))?;
    let driver = start_driver()?;
    let eater = browser(&driver).await?;
    let watcher = browser(&driver).await?;
    eater
        .goto(&blobs_url(&srv, "name=eater&room=pond")?)
        .await?;
    watcher
        .goto(&blobs_url(&srv, "name=watcher&room=pond")?)
        .await?;
    let joined = |s: &Value| !s.is_null() && s["player_id"].is_u64() && s["mass"].is_number();
    let start = wait_for(&eater, "joined", Duration::from_secs(20), joined).await?;
    // A view fills in over a few ticks (nearest first within the byte
    // budget): wait for all of the arena's 300 pellets.
    let first = wait_for(
        &watcher,
        "joined and seeing every pellet",
        Duration::from_secs(20),
        |s| joined(s) && pellets(s).len() >= 300,
    )
    .await?;
    let id = start["player_id"].clone();
    eater.execute(SPIRAL, vec![]).await?;
    let grown = wait_for(&eater, "grew by 10", Duration::from_secs(30), |s| {
        num(s, "mass") >= 20.0 && num(s, "ack") > 40.0
    })
    .await?;
    let seen = wait_for(
        &watcher,
        "the other page sees it grow",
        Duration::from_secs(10),
        |s| {
            s["remotes"].as_array().is_some_and(|remotes| {
                remotes
                    .iter()
                    .any(|r| r["id"] == id && r["mass"].as_f64() >= Some(18.0))
            })
        },
    )
    .await?;
    let gone: Vec<u64> = pellets(&first)
        .difference(&pellets(&seen))
        .copied()
        .collect();
    println!(
        "eater: {grown}\npellets gone from the watcher's view: {}",
        gone.len()
    );
    assert!(gone.len() >= 5, "the pellets it ate vanish: {}", gone.len());
    // Growth is never a correction. On a loaded machine an input can
    // still reach the server after its tick (the page counts it late or
    // repeated) and be corrected for that; those are timing, not growth.
    let timing = num(&grown, "late_inputs") + num(&grown, "repeated_inputs");
    assert!(
        num(&grown, "corrections") <= timing,
        "growth is never a correction (only late or repeated inputs are): {grown}"
    );
    // One page for every game: blobs' bundle names the page and its keys.
    assert_eq!(eater.title().await?, "Skirmish: blobs");
    let hud = grown["hud_text"].as_str().unwrap_or_default();
    assert!(hud.starts_with("mass "), "the game's own line first: {hud}");
    assert!(hud.contains("RTT"), "the netcode's numbers: {hud}");

    // The recording replays natively, frame for frame.
    let bytes = recording(&eater).await?;
    let replay = replay_client_of::<Blobs>(&bytes, ReplayOptions::default())
        .map_err(|e| anyhow!("the native replay of the eater's recording: {e:#?}"))?;
    println!("replay of {} bytes: {:?}", bytes.len(), replay.summary);
    assert!(replay.summary.frames > 60 && replay.summary.received > 20);

    // The determinism check: the page's trace of seeded steps is native's.
    let steps = 2_000u32;
    let page = page_trace(&eater, 11, steps).await?;
    if let Some(step) = first_divergence(&trace::<Blobs>(11, steps), &page) {
        bail!("the page's blobs diverge from native code at step {step}");
    }
    let last = state(&watcher).await?;
    assert!(num(&last, "rtt_ms") >= 0.0, "{last}");
    eater.close().await?;
    watcher.close().await?;
    srv.shutdown().await
}
