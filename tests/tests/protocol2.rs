//! Protocol 2 over a real WebSocket: inputs name server ticks and are
//! simulated exactly then, a late one is dropped and counted, a missing one
//! repeated and counted, and the client hears how early its inputs arrive.
//! Protocol-1 clients in the same room keep the queued behaviour.

use skirmish_core::{Encoding, ServerMessage, Tick};
use skirmish_tests::{http_get, input, metric, server, test_config, Client};

type Result = anyhow::Result<()>;

/// Takes `welcome` as [`Client::welcome`] does; the protocol it speaks.
async fn welcome(c: &mut Client) -> anyhow::Result<u32> {
    match c.recv().await? {
        ServerMessage::Welcome {
            player_id,
            protocol,
            setup,
            ..
        } => {
            c.id = player_id;
            c.config = setup.config;
            Ok(protocol)
        }
        other => anyhow::bail!("expected welcome, got {other:?}"),
    }
}

#[tokio::test]
async fn inputs_that_name_server_ticks_are_simulated_then_and_timed() -> Result {
    let srv = server(test_config())?;
    let addr = srv.addr;
    let mut c = Client::connect(addr).await?;
    c.hello_speaking("two", Some("p2"), Encoding::Json, 2)
        .await?;
    assert_eq!(
        welcome(&mut c).await?,
        2,
        "answered in the protocol asked for"
    );

    // Inputs for 6 to 8 ticks from now: early, so they wait for their tick.
    let (now, _) = c.snapshot().await?;
    let first = now.0 + 6;
    let batch = (first..first + 3)
        .map(|t| input(t, 0.0, 1.0, false))
        .collect();
    c.inputs(batch).await?;
    let mut slack = None;
    let mut acked = None;
    for _ in 0..40 {
        match c.recv().await? {
            ServerMessage::Timing(timing) if timing.tick.is_some() => {
                slack = slack.or(Some((timing.tick, timing.slack_ms)));
            }
            ServerMessage::Snapshot {
                server_tick,
                players,
            } => {
                let me = players.iter().find(|p| p.id == c.id);
                if let Some(ack) = me.and_then(|p| p.ack_move_tick) {
                    // Never acknowledged before the tick it names.
                    assert!(ack <= server_tick, "{ack} at {server_tick}");
                    acked = Some((ack, server_tick));
                    if ack.0 >= first + 2 {
                        break;
                    }
                }
            }
            _ => {}
        }
    }
    let (tick, ms) = slack.ok_or_else(|| anyhow::anyhow!("no timing report"))?;
    assert_eq!(tick, Some(Tick(first)), "the oldest new input is reported");
    assert!((150..=400).contains(&ms), "about 5 ticks early: {ms} ms");
    let (ack, at) = acked.ok_or_else(|| anyhow::anyhow!("never acknowledged"))?;
    assert_eq!(ack, at, "simulated at the very tick it names");

    // The next ticks have no input: repeated and counted. Then an input for
    // a tick long gone arrives: late, dropped, counted once.
    for _ in 0..4 {
        c.snapshot().await?;
    }
    c.inputs(vec![input(first + 3, 0.0, 1.0, false)]).await?;
    c.inputs(vec![input(first + 3, 0.0, 1.0, false)]).await?;
    let mut late = 0;
    for _ in 0..40 {
        late = metric(addr, "skirmish_late_inputs_total").await?;
        if late > 0 {
            break;
        }
        c.snapshot().await?;
    }
    assert_eq!(late, 1, "counted once, resends are duplicates");
    assert!(metric(addr, "skirmish_repeated_inputs_total").await? >= 4);
    let rooms = http_get(addr, "/rooms").await?;
    assert!(rooms.contains("\"late_inputs\":1"), "{rooms}");
    let text = http_get(addr, "/metrics").await?;
    // Three inputs in time, one late: slack and lateness apart.
    assert!(
        text.contains("skirmish_input_slack_seconds_count 3\n"),
        "{text}"
    );
    assert!(
        text.contains("skirmish_input_lateness_seconds_count 1\n"),
        "{text}"
    );
    srv.shutdown().await
}

#[tokio::test]
async fn a_protocol_1_client_beside_keeps_its_own_ticks() -> Result {
    let srv = server(test_config())?;
    let addr = srv.addr;
    let mut two = Client::connect(addr).await?;
    two.hello_speaking("two", Some("mixed"), Encoding::Json, 2)
        .await?;
    two.welcome().await?;
    let mut one = Client::connect(addr).await?;
    one.hello("one", Some("mixed")).await?;
    assert_eq!(welcome(&mut one).await?, 1);
    // Its own tick 1, long before the server's: queued and applied.
    one.inputs(vec![input(1, 0.0, 1.0, false)]).await?;
    while one.own_state().await.map(|s| s.ack_move_tick)? != Some(Tick(1)) {}
    // It never gets a timing report.
    for _ in 0..5 {
        assert!(!matches!(one.recv().await?, ServerMessage::Timing(_)));
    }
    srv.shutdown().await
}

#[tokio::test]
async fn a_protocol_1_hello_is_refused_as_shipped_and_seated_when_allowed() -> Result {
    let shipped = server(skirmish_tests::shipped_config())?;
    let mut one = Client::connect(shipped.addr).await?;
    one.hello_speaking("one", None, Encoding::Json, 1).await?;
    let refused = one.error().await?;
    assert_eq!(refused, skirmish_core::ErrorCode::BadProtocol);
    assert_eq!(one.closed().await?, "bad_protocol");
    assert_eq!(
        metric(
            shipped.addr,
            "skirmish_rejected_messages_total{code=\"bad_protocol\"}"
        )
        .await?,
        1
    );
    assert_eq!(
        metric(shipped.addr, "skirmish_rooms").await?,
        0,
        "no room opened for it"
    );
    let mut two = Client::connect(shipped.addr).await?;
    two.hello_speaking("two", None, Encoding::Json, 2).await?;
    assert_eq!(welcome(&mut two).await?, 2);

    // `--allow-protocol-1` (what this crate's other tests run with) seats it.
    let allowed = server(test_config())?;
    let mut one = Client::connect(allowed.addr).await?;
    one.hello_speaking("one", None, Encoding::Json, 1).await?;
    assert_eq!(welcome(&mut one).await?, 1);
    Ok(())
}
