//! Connection churn against the real server leaves nothing behind. Its own
//! test binary, so that no other test's memory use shows in its RSS.

use skirmish_tests::{metric, server, test_config, Client};

fn rss_kib() -> u64 {
    std::fs::read_to_string("/proc/self/status")
        .ok()
        .and_then(|s| {
            s.lines()
                .find_map(|l| l.strip_prefix("VmRSS:"))
                .and_then(|v| v.trim().trim_end_matches("kB").trim().parse().ok())
        })
        .unwrap_or(0)
}

/// 200 connect/join/disconnect cycles leave no player behind and no memory
/// growth beyond allocator noise.
#[tokio::test]
async fn connection_churn_leaves_zero_players_and_flat_memory() -> anyhow::Result<()> {
    let srv = server(test_config())?;
    let addr = srv.addr;
    let mut observer = Client::join(addr, "observer", None).await?;
    let cycle = |n: u32| async move {
        for i in 0..n {
            let client = Client::join(addr, &format!("churn{i}"), None).await?;
            client.close().await?;
        }
        anyhow::Ok(())
    };
    cycle(20).await?;
    let before = rss_kib();
    cycle(200).await?;
    // The observer's snapshots tell when every churned player is gone; the
    // last connection tasks may finish a tick later.
    let mut settled = false;
    for _ in 0..100 {
        let (_, players) = observer.snapshot().await?;
        if players.len() == 1 && metric(addr, "skirmish_connections").await? == 1 {
            settled = true;
            break;
        }
    }
    assert!(settled, "churned players or connections left behind");
    assert_eq!(metric(addr, "skirmish_players").await?, 1);
    let grown = rss_kib().saturating_sub(before);
    assert!(grown < 4 * 1024, "RSS grew by {grown} KiB over 200 cycles");
    srv.shutdown().await
}
