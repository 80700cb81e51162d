//! The page in headless Chromium over real UDP impairment: its WebTransport
//! goes through the impairment relay (`?wt-port=`), 75 ms each way with
//! ±30 ms of jitter and 5 % loss each way (the main cell's network), with
//! the defaults the page ships. A short run with generous bounds: the
//! page's own input-to-acknowledgement and its late and repeated inputs,
//! read from `skirmish.debug()`. `docs/QUALITY.md` has the long run.

mod browser_support;

use std::time::Duration;

use anyhow::Result;
use browser_support::{browser, num, page_url, start_driver, wait_for, web_server};
use skirmish_tests::relay::{Impairment, UdpRelay};
use skirmish_tests::test_config;

/// Inputs the page plays before it is read (20 a second); the long run of
/// `docs/QUALITY.md` sets `RELAY_INPUTS=1200`.
fn inputs() -> f64 {
    std::env::var("RELAY_INPUTS")
        .ok()
        .and_then(|n| n.parse().ok())
        .unwrap_or(300.0)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_page_through_an_impairing_udp_relay_stays_within_its_budget() -> Result<()> {
    let srv = web_server(test_config())?;
    let main_cell = Impairment {
        latency_ms: 75.0,
        jitter_ms: 30.0,
        loss: 0.05,
        duplicate: 0.0,
    };
    let relay = UdpRelay::start(srv.addr, main_cell, main_cell, 7).await?;
    let driver = start_driver()?;
    let client = browser(&driver).await?;
    let query = format!(
        "name=relayed&transport=webtransport&wt-port={}",
        relay.addr.port()
    );
    client.goto(&page_url(&srv, &query)?).await?;
    let inputs = inputs();
    // Twice the time the inputs take, and the connecting.
    let within = Duration::from_secs_f64(inputs / 20.0 * 2.0 + 30.0);
    let end = wait_for(&client, "the page played", within, |s| {
        num(s, "inputs") >= inputs && num(s, "input_to_ack_p50_ms").is_finite()
    })
    .await;
    client.close().await?;
    let end = end?;
    println!("through the relay: {end}");
    assert_eq!(end["transport"].as_str(), Some("webtransport"), "{end}");
    let rtt = num(&end, "rtt_ms");
    assert!(rtt > 120.0, "the relay's latency is real: {end}");
    let (p50, p99) = (
        num(&end, "input_to_ack_p50_ms"),
        num(&end, "input_to_ack_p99_ms"),
    );
    // The targets are RTT + 75 ms (+ one frame for a page) and RTT + 150 ms;
    // a short run on a shared machine gets room above them.
    assert!(
        p50 <= rtt + 75.0 + 17.0 + 60.0,
        "input-to-ack p50 {p50} ms at RTT {rtt}: {end}"
    );
    assert!(
        p99 <= rtt + 150.0 + 250.0,
        "input-to-ack p99 {p99} ms at RTT {rtt}: {end}"
    );
    let missed = num(&end, "late_inputs") + num(&end, "repeated_inputs");
    assert!(
        missed <= 0.03 * num(&end, "inputs"),
        "late + repeated {missed} of {} inputs: {end}",
        num(&end, "inputs")
    );
    assert_eq!(num(&end, "hard_resyncs"), 0.0, "{end}");
    srv.shutdown().await
}
