//! End to end in real headless Chromium against the real server, driven
//! through Debian's chromedriver (W3C WebDriver, via `fantoccini`).
//!
//! Needs the built client in `web/pkg` (`cargo xtask test` builds it first)
//! and `/usr/bin/chromium` with `/usr/bin/chromedriver` (`cargo xtask setup`).
//! Screenshots of every page land in `artifacts/`.

use std::time::{Duration, Instant};

use anyhow::{anyhow, bail, Result};
use fantoccini::actions::{InputSource, KeyAction, KeyActions};
use fantoccini::Client;
use serde_json::{json, Value};
use skirmish_tests::{config_with, open_arena, test_config};

mod browser_support;

use browser_support::{
    browser, joined, key, num, page_url, pose, screenshot, start_driver, state, wait_for,
    web_server,
};

/// Holds W: the own player moves within a few frames of the key press, and
/// after release the server acknowledges every input.
async fn hold_forward(client: &Client) -> Result<(Duration, Value, Value)> {
    let start = joined(client).await?;
    let (x0, y0, _) = pose(&start, "visible").ok_or_else(|| anyhow!("no pose"))?;
    let pressed = Instant::now();
    key(client, KeyAction::Down { value: 'w' }).await?;
    let moving = wait_for(client, "moving", Duration::from_secs(5), |s| {
        pose(s, "visible").is_some_and(|(x, y, _)| (x - x0).hypot(y - y0) > 1.0)
    })
    .await?;
    let reaction = pressed.elapsed();
    let held = Instant::now();
    wait_for(client, "held for a second", Duration::from_secs(5), |_| {
        held.elapsed() >= Duration::from_secs(1)
    })
    .await?;
    key(client, KeyAction::Up { value: 'w' }).await?;
    let released = state(client).await?;
    // Protocol 2: input ticks are server ticks, so wait for the tick of the
    // newest input at the release, and two idle steps after it (the
    // drawn pose is between the last two steps).
    let sent = released["last_input_tick"]
        .as_u64()
        .map_or(u64::MAX, |t| t + 2);
    // The client keeps sending (idle) inputs; the server's ack catches up
    // with everything sent up to the release.
    let end = wait_for(client, "the ack catches up", Duration::from_secs(10), |s| {
        s["ack"].as_u64().is_some_and(|a| a >= sent)
    })
    .await?;
    Ok((reaction, moving, end))
}

/// What of the side panel a 1280x720 window does not show (the browser's
/// window size): the panel scrolling, a HUD line cut on the right, the
/// graph below the fold. Empty when everything fits.
async fn panel_cut_off(client: &Client) -> Result<Vec<String>> {
    let found = client
        .execute(
            "const cut = [];
             const panel = document.getElementById('panel');
             if (panel.scrollHeight > panel.clientHeight + 1)
               cut.push(`panel: ${panel.scrollHeight} px of content in ${panel.clientHeight}`);
             if (panel.scrollWidth > panel.clientWidth + 1)
               cut.push(`panel: ${panel.scrollWidth} px wide in ${panel.clientWidth}`);
             const hud = document.getElementById('hud');
             if (hud.scrollWidth > hud.clientWidth + 1)
               cut.push(`hud: a line ${hud.scrollWidth} px wide in ${hud.clientWidth}`);
             for (const id of ['hud', 'graph', 'save-recording', 'down-loss']) {
               const r = document.getElementById(id).getBoundingClientRect();
               if (r.bottom > innerHeight + 1 || r.right > innerWidth + 1)
                 cut.push(`${id}: ends at ${r.right}x${r.bottom} in ${innerWidth}x${innerHeight}`);
             }
             return cut;",
            vec![],
        )
        .await?;
    Ok(serde_json::from_value(found)?)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn page_loads_and_holding_forward_moves_the_player_and_the_ack_catches_up() -> Result<()> {
    let srv = web_server(test_config())?;
    let driver = start_driver()?;
    let client = browser(&driver).await?;
    client.goto(&page_url(&srv, "name=walker")?).await?;
    let result = hold_forward(&client).await;
    // The documented scripting API, and the old names as aliases.
    let api = client
        .execute(
            "return [window.skirmish.debug, window.skirmish.setControls, \
             window.skirmish.clearControls, window.skirmishDebug, \
             window.skirmishSetControls, window.skirmishClearControls].map(f => typeof f);",
            vec![],
        )
        .await?;
    assert_eq!(
        api,
        json!(vec!["function"; 6]),
        "window.skirmish API: {api}"
    );
    screenshot(&client, "hold_forward").await?;
    let cut = panel_cut_off(&client).await;
    client.close().await?;
    let cut = cut?;
    assert!(cut.is_empty(), "the panel cuts text at 1280x720: {cut:?}");
    let (reaction, _, end) = result?;
    println!("moved {reaction:?} after the key press; {end}");
    assert!(reaction < Duration::from_millis(500), "{reaction:?}");
    // Pending: what is in flight and waits for its tick (the pacing
    // controller's slack, a few ticks on loopback; the old queue's bound
    // still holds).
    let bound = skirmish_core::CATCH_UP_ABOVE as u64 + 2;
    assert!(
        end["pending"].as_u64() <= Some(bound),
        "only the newest inputs pending: {end}"
    );
    let (x, y, _) = pose(&end, "visible").ok_or_else(|| anyhow!("no pose"))?;
    let (px, py, _) = pose(&end, "predicted").ok_or_else(|| anyhow!("no pose"))?;
    assert!((x - px).hypot(y - py) < 1.0, "drawn where predicted");
    assert_eq!(end["phase"], "Playing", "{end}");
    assert_eq!(
        end["transport"], "webtransport",
        "the default where offered: {end}"
    );
    // Binary snapshots with deltas by default; none refused.
    assert_eq!(end["encoding"], "Compact", "{end}");
    assert_eq!(end["missing_baselines"], 0, "{end}");
    assert!(end["deltas"].as_u64() > Some(10), "{end}");
    assert!(end["bytes_down_per_sec"].as_f64() > Some(0.0), "{end}");
    // The page speaks protocol 2: its inputs are paced by the server's
    // timing reports, and the HUD says how early they arrive.
    assert_eq!(end["protocol_scheduled"], true, "{end}");
    assert!(
        end["slack_ms"].is_number(),
        "a timing report arrived: {end}"
    );
    assert!(end["target_slack_ms"].is_number(), "{end}");
    assert_eq!(end["hard_resyncs"], 0, "{end}");
    let hud = end["hud_text"].as_str().unwrap_or_default();
    assert!(hud.contains("input slack"), "{hud}");
    srv.shutdown().await
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn with_200_ms_added_latency_the_player_still_moves_at_once_and_never_snaps() -> Result<()> {
    let srv = web_server(test_config())?;
    let driver = start_driver()?;
    let client = browser(&driver).await?;
    client
        .goto(&page_url(
            &srv,
            "name=laggy&up-latency=100&down-latency=100",
        )?)
        .await?;
    let result = hold_forward(&client).await;
    screenshot(&client, "latency_200ms").await?;
    client.close().await?;
    let (reaction, moving, end) = result?;
    println!("moved {reaction:?} after the key press at 200 ms RTT; {moving}; {end}");
    assert!(
        reaction < Duration::from_millis(500),
        "prediction moves at once, not after a round trip: {reaction:?}"
    );
    // When the player was first seen moving, the server had not yet
    // acknowledged the input that moved it.
    let (moved_x, moved_y, _) = pose(&moving, "visible").ok_or_else(|| anyhow!("no pose"))?;
    let (auth_x, auth_y, _) = pose(&moving, "authoritative").ok_or_else(|| anyhow!("no pose"))?;
    assert!(
        (moved_x - auth_x).hypot(moved_y - auth_y) > 1.0,
        "drawn ahead of the server's pose: {moving}"
    );
    assert!(num(&end, "rtt_ms") > 150.0, "the latency is real: {end}");
    assert_eq!(end["snaps"].as_u64(), Some(0), "{end}");
    assert_eq!(
        end["corrections"].as_u64(),
        Some(0),
        "nothing to correct: {end}"
    );
    srv.shutdown().await
}

/// Turns the shooter page toward `target` using the page's control override.
async fn aim(shooter: &Client, target: u64) -> Result<()> {
    let mut still = false;
    for _ in 0..400 {
        let s = state(shooter).await?;
        let me = pose(&s, "predicted").ok_or_else(|| anyhow!("no own pose"))?;
        let them = s["remotes"]
            .as_array()
            .and_then(|r| r.iter().find(|r| r["id"].as_u64() == Some(target)))
            .and_then(|r| pose(r, "pose"))
            .ok_or_else(|| anyhow!("the target is not visible: {s}"))?;
        let wanted = (them.1 - me.1).atan2(them.0 - me.0);
        let mut diff = wanted - me.2;
        while diff > std::f64::consts::PI {
            diff -= std::f64::consts::TAU;
        }
        while diff <= -std::f64::consts::PI {
            diff += std::f64::consts::TAU;
        }
        // A fixed step may run between reading the pose and setting the
        // turn, so the aim is done only when a zero turn was already in
        // force for the pose just read.
        if diff.abs() < 0.01 && still {
            return Ok(());
        }
        // A damped turn: a setting stays in force for one or two steps
        // before the next reading, so closing 40 % of the gap per step
        // converges either way.
        let turn = if diff.abs() < 0.01 {
            0.0
        } else {
            skirmish_core::clamp(0.4 * diff / (std::f64::consts::PI * 0.05), -1.0, 1.0)
        };
        shooter
            .execute(
                "window.skirmish.setControls(arguments[0], 0, false);",
                vec![json!(turn)],
            )
            .await?;
        // After a zero turn, wait until a step ran with it in force.
        let before = s["inputs"].as_u64().map(|n| n + u64::from(turn == 0.0));
        wait_for(shooter, "next input", Duration::from_secs(5), |n| {
            n["inputs"].as_u64() > before
        })
        .await?;
        still = turn == 0.0;
    }
    bail!("could not aim")
}

async fn two_pages(shooter: &Client, target: &Client) -> Result<()> {
    let t = joined(target).await?;
    let target_id = t["player_id"].as_u64().ok_or_else(|| anyhow!("no id"))?;
    joined(shooter).await?;
    wait_for(
        shooter,
        "the target in view",
        Duration::from_secs(10),
        |s| {
            s["remotes"]
                .as_array()
                .is_some_and(|r| r.iter().any(|r| r["id"].as_u64() == Some(target_id)))
        },
    )
    .await?;
    aim(shooter, target_id).await?;
    // Space, held for 150 ms: a real key press.
    shooter
        .perform_actions(
            KeyActions::new("keyboard".into())
                .then(KeyAction::Down { value: '\u{E00D}' })
                .pause(Duration::from_millis(150))
                .then(KeyAction::Up { value: '\u{E00D}' }),
        )
        .await?;
    wait_for(
        target,
        "the target's HUD shows HP 80",
        Duration::from_secs(10),
        |s| {
            s["hud_text"]
                .as_str()
                .is_some_and(|h| h.starts_with("HP 80"))
        },
    )
    .await?;
    let seen = wait_for(
        shooter,
        "the shooter sees HP 80",
        Duration::from_secs(10),
        |s| {
            s["remotes"].as_array().is_some_and(|r| {
                r.iter()
                    .any(|r| r["id"].as_u64() == Some(target_id) && r["hp"].as_u64() == Some(80))
            })
        },
    )
    .await?;
    let named = seen["remotes"]
        .as_array()
        .and_then(|r| r.iter().find(|r| r["id"].as_u64() == Some(target_id)))
        .map(|r| r["name"].clone());
    assert_eq!(
        named,
        Some(json!("target")),
        "names come from the roster: {seen}"
    );
    Ok(())
}

/// In a room of two, a page sends fewer bytes a second than it receives
/// (binary inputs, delta-coded), as its HUD shows; and it lost nothing on
/// the way in or out.
async fn uplink_below_downlink(page: &Client) -> Result<()> {
    let s = wait_for(page, "both rates measured", Duration::from_secs(10), |s| {
        s["bytes_up_per_sec"].as_f64().is_some_and(|up| up > 0.0)
            && s["bytes_down_per_sec"]
                .as_f64()
                .is_some_and(|down| down > 0.0)
    })
    .await?;
    let (up, down) = (&s["bytes_up_per_sec"], &s["bytes_down_per_sec"]);
    let below = up.as_f64().zip(down.as_f64()).is_some_and(|(u, d)| u < d);
    anyhow::ensure!(below, "uplink {up} B/s is not below downlink {down} B/s");
    let hud = s["hud_text"].as_str().unwrap_or_default();
    anyhow::ensure!(
        hud.contains("bytes/s down"),
        "the HUD shows the rates: {hud}"
    );
    for counter in ["inbox_dropped", "failed_sends", "undecodable_datagrams"] {
        anyhow::ensure!(s[counter] == json!(0), "{counter}: {}", s[counter]);
    }
    Ok(())
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn two_pages_one_shoots_the_other_and_both_huds_show_the_hp_drop() -> Result<()> {
    let srv = web_server(config_with(|c| c.games.sim = open_arena(600.0, 400.0)))?;
    let driver = start_driver()?;
    let target = browser(&driver).await?;
    let shooter = browser(&driver).await?;
    // One page on each transport: they share the room all the same.
    target
        .goto(&page_url(
            &srv,
            "name=target&room=duel&transport=websocket",
        )?)
        .await?;
    shooter
        .goto(&page_url(&srv, "name=shooter&room=duel")?)
        .await?;
    let result = two_pages(&shooter, &target).await;
    let rates = (
        uplink_below_downlink(&shooter).await,
        uplink_below_downlink(&target).await,
    );
    let transports = (
        state(&shooter).await?["transport"].clone(),
        state(&target).await?["transport"].clone(),
    );
    screenshot(&shooter, "duel_shooter").await?;
    screenshot(&target, "duel_target").await?;
    shooter.close().await?;
    target.close().await?;
    result?;
    rates.0?;
    rates.1?;
    assert_eq!(
        transports,
        (json!("webtransport"), json!("websocket")),
        "the shooter over WebTransport, the target over WebSocket"
    );
    srv.shutdown().await
}

/// A page whose WebTransport cannot connect (here: a certificate the
/// browser does not trust, offered without hashes to pin) falls back to the
/// WebSocket within 3 s and plays.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_page_falls_back_to_the_websocket_when_webtransport_fails() -> Result<()> {
    let dir = std::env::temp_dir().join(format!("skirmish-untrusted-{}", std::process::id()));
    std::fs::create_dir_all(&dir)?;
    let identity = wtransport::Identity::self_signed(["localhost", "127.0.0.1"])?;
    let (cert, key) = (dir.join("cert.pem"), dir.join("key.pem"));
    identity.certificate_chain().store_pemfile(&cert).await?;
    identity.private_key().store_secret_pemfile(&key).await?;
    let srv = web_server(config_with(|c| {
        c.webtransport.tls_cert = Some(cert);
        c.webtransport.tls_key = Some(key);
    }))?;
    let driver = start_driver()?;
    let client = browser(&driver).await?;
    let loaded = Instant::now();
    client.goto(&page_url(&srv, "name=fallback")?).await?;
    let s = wait_for(
        &client,
        "playing over the WebSocket",
        Duration::from_secs(8),
        |s| s["transport"] == "websocket" && s["phase"] == "Playing",
    )
    .await?;
    let took = loaded.elapsed();
    assert!(
        took < Duration::from_secs(6),
        "fell back and joined in {took:?}: {s}"
    );
    client.close().await?;
    let _ = std::fs::remove_dir_all(&dir);
    srv.shutdown().await
}

/// The page keeps one session across connections: when the server goes
/// away the session goes back to connecting (nothing of the old connection
/// is drawn or sent), and when a server is back on the same address the
/// reconnection backoff finds it and the page plays again.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_page_reconnects_when_the_server_comes_back() -> Result<()> {
    let srv = web_server(test_config())?;
    let addr = srv.addr;
    let driver = start_driver()?;
    let client = browser(&driver).await?;
    client.goto(&page_url(&srv, "name=phoenix")?).await?;
    let first = joined(&client).await?;
    assert_eq!(first["phase"], "Playing", "{first}");

    srv.shutdown().await?;
    let gone = wait_for(
        &client,
        "back to connecting",
        Duration::from_secs(10),
        |s| {
            s["phase"] == "Connecting"
                && s["status"]
                    .as_str()
                    .is_some_and(|t| t.contains("disconnected"))
        },
    )
    .await?;
    assert!(
        gone["visible"].is_null(),
        "nothing of the old world drawn: {gone}"
    );

    let again = web_server(config_with(|c| c.addr = addr))?;
    let back = wait_for(&client, "playing again", Duration::from_secs(20), |s| {
        s["phase"] == "Playing" && pose(s, "visible").is_some()
    })
    .await?;
    assert!(back["player_id"].is_u64(), "{back}");
    client.close().await?;
    again.shutdown().await
}

/// The determinism check: the page's game, stepped in this browser's wasm
/// through a seeded run, hashes every step exactly as it does natively;
/// a difference is reported at the first step where it appears.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_page_steps_the_game_bit_for_bit_as_native_code_does() -> Result<()> {
    const STEPS: u32 = 10_000;
    let seed = u32::try_from(skirmish_tanks::determinism::GOLDEN_SEED)?;
    let srv = web_server(test_config())?;
    let driver = start_driver()?;
    let client = browser(&driver).await?;
    client.goto(&page_url(&srv, "name=tracer")?).await?;
    wait_for(&client, "the scripting API", Duration::from_secs(20), |s| {
        s.is_object()
    })
    .await?;
    let browser_trace = client
        .execute(
            "return window.skirmish.determinism(arguments[0], arguments[1]);",
            vec![json!(seed), json!(STEPS)],
        )
        .await;
    client.close().await?;
    let browser_trace: Vec<String> = serde_json::from_value(browser_trace?)?;
    let browser_trace = browser_trace
        .iter()
        .map(|h| u64::from_str_radix(h, 16))
        .collect::<Result<Vec<u64>, _>>()?;
    let native = skirmish_core::trace::<skirmish_tanks::Tanks>(u64::from(seed), STEPS);
    if let Some(step) = skirmish_core::first_divergence(&native, &browser_trace) {
        bail!(
            "Chromium diverges from native code at step {step} of {STEPS} (native {:?}, browser {:?})",
            native.get(step),
            browser_trace.get(step)
        );
    }
    assert_eq!(
        browser_trace.last().copied(),
        Some(skirmish_tanks::determinism::GOLDEN_TRAJECTORY_HASH)
    );
    srv.shutdown().await
}
