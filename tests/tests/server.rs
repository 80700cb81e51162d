//! The real server over real WebSockets on 127.0.0.1: joining, acks,
//! movement, rooms, combat, death and respawn.

use skirmish_core::{ClientMessage, PlayerId, ServerMessage, Tick};
use skirmish_tanks::{angle_delta, simulate, PlayerState, WireInput};
use skirmish_tests::{
    config_with, http_get, input, metric, open_arena, server, test_config, Client,
};

type Result = anyhow::Result<()>;

fn find(players: &[PlayerState], id: PlayerId) -> Option<PlayerState> {
    players.iter().find(|p| p.id == id).copied()
}

#[tokio::test]
async fn join_gets_welcome_with_the_config_and_snapshots_follow() -> Result {
    let srv = server(test_config())?;
    let mut client = Client::join(srv.addr, "ana", None).await?;
    assert_eq!(client.config, skirmish_tanks::SimConfig::default());
    assert_eq!(client.room, "room-1");
    let (tick, players) = client.snapshot().await?;
    assert!(tick > Tick::ZERO);
    let me = find(&players, client.id).expect("own player in the snapshot");
    assert_eq!((me.hp, me.alive, me.ack_move_tick), (100, true, None));
    let (next, _) = client.snapshot().await?;
    assert_eq!(next, tick.next(), "one snapshot every tick");
    assert_eq!(http_get(srv.addr, "/healthz").await?, "ok");
    srv.shutdown().await
}

/// A client whose hello is binary speaks binary all the way: its welcome,
/// roster and pong come as binary frames (never JSON text), and a refusal
/// of its hello is a binary error.
#[tokio::test]
async fn a_binary_hello_gets_binary_control_messages_over_a_real_socket() -> Result {
    use skirmish_core::{control, Encoding, ErrorCode, Frame, GameId, PROTOCOL_VERSION};
    let hello = |game: GameId| ClientMessage::Hello {
        name: "bin".into(),
        protocol: PROTOCOL_VERSION,
        room: Some("binary".into()),
        encoding: Encoding::Compact,
        game: Some(game),
    };
    let binary = |message: &ClientMessage<WireInput>| {
        control::encode_client(message).expect("a binary form")
    };
    let srv = server(test_config())?;
    let mut client = Client::connect(srv.addr).await?;
    client
        .send_binary(binary(&hello(GameId::of::<skirmish_tanks::Tanks>())))
        .await?;
    let Frame::Binary(first) = client.recv_frame().await? else {
        anyhow::bail!("the welcome came as text");
    };
    let ServerMessage::Welcome { room, setup, .. } =
        control::decode_server::<skirmish_tanks::Tanks>(&first)?
    else {
        anyhow::bail!("the first frame is not a welcome");
    };
    assert_eq!(
        (room.as_str(), setup.config),
        ("binary", skirmish_tanks::SimConfig::default())
    );
    client
        .send_binary(binary(&ClientMessage::Ping { id: 77 }))
        .await?;
    let (mut roster, mut pong) = (false, false);
    while !(roster && pong) {
        match client.recv_frame().await? {
            Frame::Text(text) => anyhow::bail!("JSON to a binary client: {text}"),
            Frame::Binary(bytes) if control::is_server_control(&bytes) => {
                match control::decode_server::<skirmish_tanks::Tanks>(&bytes)? {
                    ServerMessage::Roster { players } => roster = players.len() == 1,
                    ServerMessage::Pong { id, .. } => pong = id == 77,
                    other => anyhow::bail!("unexpected {other:?}"),
                }
            }
            Frame::Binary(_) => {}
        }
    }
    let mut other = Client::connect(srv.addr).await?;
    let blobs = GameId {
        name: "blobs".into(),
        version: 1,
        shape: None,
    };
    other.send_binary(binary(&hello(blobs))).await?;
    let Frame::Binary(refusal) = other.recv_frame().await? else {
        anyhow::bail!("the refusal came as text");
    };
    assert!(matches!(
        control::decode_server::<skirmish_tanks::Tanks>(&refusal)?,
        ServerMessage::Error {
            code: ErrorCode::WrongGame,
            ..
        }
    ));
    srv.shutdown().await
}

/// RS-6: the server tracks the last applied input of each client and sends
/// it in every state update; it advances once per input.
#[tokio::test]
async fn rs6_ack_advances_once_per_input_in_every_snapshot() -> Result {
    let srv = server(test_config())?;
    let mut client = Client::join(srv.addr, "ana", None).await?;
    client
        .inputs((1..=3).map(|t| input(t, 0.0, 0.0, false)).collect())
        .await?;
    let mut acks = Vec::new();
    while acks.last() != Some(&3) {
        let me = client.own_state().await?;
        if let Some(ack) = me.ack_move_tick {
            if acks.last() != Some(&ack.0) {
                acks.push(ack.0);
            }
        }
        assert!(acks.len() <= 3);
    }
    assert_eq!(acks, vec![1, 2, 3], "one input per tick, in order");
    // Resent (already applied) inputs change nothing.
    client
        .inputs((1..=3).map(|t| input(t, 0.0, 1.0, false)).collect())
        .await?;
    for _ in 0..3 {
        assert_eq!(client.own_state().await?.ack_move_tick, Some(Tick(3)));
    }
    srv.shutdown().await
}

/// RS-7 end to end: 20 full-throttle inputs move exactly SPEED x 1 s, and
/// the server's result equals core's `simulate` bit for bit.
#[tokio::test]
async fn twenty_full_throttle_inputs_move_exactly_one_second_of_speed() -> Result {
    let srv = server(config_with(|c| {
        c.games.sim = open_arena(20_000.0, 20_000.0);
    }))?;
    let mut client = Client::join(srv.addr, "ana", None).await?;
    let start = client.own_state().await?.pose();
    let inputs: Vec<_> = (1..=20).map(|t| input(t, 0.0, 1.0, false)).collect();
    client.inputs(inputs[..16].to_vec()).await?;
    client.inputs(inputs[16..].to_vec()).await?;
    let end = loop {
        let me = client.own_state().await?;
        if me.ack_move_tick == Some(Tick(20)) {
            break me.pose();
        }
    };
    let config = &client.config;
    let expected = inputs.iter().fold(start, |pose, i| {
        simulate(pose, &i.move_input(), config.cadence(), config)
    });
    assert!(end.bits_eq(&expected), "{end:?} != {expected:?}");
    let moved = end.position.distance(start.position);
    assert!((moved - config.speed).abs() < 1e-2, "moved {moved}");
    srv.shutdown().await
}

#[tokio::test]
async fn two_clients_in_a_room_see_each_other() -> Result {
    let srv = server(test_config())?;
    let mut a = Client::join(srv.addr, "ana", None).await?;
    let mut b = Client::join(srv.addr, "ben", None).await?;
    assert_eq!(a.room, b.room, "the fullest room with space");
    let both = vec![a.id, b.id];
    for client in [&mut a, &mut b] {
        // Snapshots from before the second join may still be queued.
        let mut seen = Vec::new();
        for _ in 0..10 {
            let (_, players) = client.snapshot().await?;
            seen = players.iter().map(|p| p.id).collect();
            if seen.len() == 2 {
                break;
            }
        }
        assert_eq!(seen, both, "each sees both, in id order");
    }
    srv.shutdown().await
}

#[tokio::test]
async fn two_rooms_never_see_each_other() -> Result {
    let srv = server(test_config())?;
    let mut a = Client::join(srv.addr, "ana", Some("north")).await?;
    let mut b = Client::join(srv.addr, "ben", Some("south")).await?;
    for _ in 0..5 {
        let (_, players) = a.snapshot().await?;
        assert_eq!(players.iter().map(|p| p.id).collect::<Vec<_>>(), vec![a.id]);
        let (_, players) = b.snapshot().await?;
        assert_eq!(players.iter().map(|p| p.id).collect::<Vec<_>>(), vec![b.id]);
    }
    let rooms = http_get(srv.addr, "/rooms").await?;
    assert!(
        rooms.contains(r#"{"game":"tanks","name":"north","players":1,"capacity":64,"late_inputs":0,"repeated_inputs":0,"rewind_clamped":0}"#),
        "{rooms}"
    );
    assert!(
        rooms.contains(r#"{"game":"tanks","name":"south","players":1,"capacity":64,"late_inputs":0,"repeated_inputs":0,"rewind_clamped":0}"#),
        "{rooms}"
    );
    srv.shutdown().await
}

#[tokio::test]
async fn past_capacity_and_max_rooms_a_joiner_gets_server_full() -> Result {
    let srv = server(config_with(|c| {
        c.rooms.capacity = 1;
        c.rooms.max_rooms = 1;
    }))?;
    let _a = Client::join(srv.addr, "ana", None).await?;
    let mut b = Client::connect(srv.addr).await?;
    b.hello("ben", None).await?;
    assert_eq!(b.error().await?, skirmish_core::ErrorCode::ServerFull);
    assert_eq!(b.closed().await?, "server_full");
    srv.shutdown().await
}

/// Turns `shooter` to face `target` with turn inputs from `tick` on; returns
/// the next free input tick.
async fn aim(shooter: &mut Client, target: PlayerId, mut tick: u32) -> anyhow::Result<u32> {
    let (me, them) = loop {
        // Snapshots from before the target joined may still be queued.
        let (_, players) = shooter.snapshot().await?;
        if let (Some(me), Some(them)) = (find(&players, shooter.id), find(&players, target)) {
            break (me, them);
        }
    };
    let to = them.position - me.position;
    let wanted = to.y.atan2(to.x);
    let step = shooter.config.turn_rate * shooter.config.cadence_secs();
    let mut left = angle_delta(me.rotation, wanted);
    let mut inputs = Vec::new();
    while left.abs() > 1e-6 {
        let turn = skirmish_core::clamp(left / step, -1.0, 1.0);
        inputs.push(input(tick, turn, 0.0, false));
        left -= turn * step;
        tick += 1;
    }
    for chunk in inputs.chunks(16) {
        shooter.inputs(chunk.to_vec()).await?;
    }
    let last = Tick(tick - 1);
    while tick > 1 && shooter.own_state().await?.ack_move_tick < Some(last) {}
    Ok(tick)
}

/// Two players in a small open arena, within range of each other.
async fn duel() -> anyhow::Result<(skirmish_server::RunningServer, Client, Client)> {
    let srv = server(config_with(|c| c.games.sim = open_arena(600.0, 400.0)))?;
    let shooter = Client::join(srv.addr, "shooter", None).await?;
    let target = Client::join(srv.addr, "target", None).await?;
    Ok((srv, shooter, target))
}

/// The next `combat` message's events.
async fn combat(client: &mut Client) -> anyhow::Result<Vec<skirmish_tanks::CombatEvent>> {
    loop {
        if let ServerMessage::Events { events } = client.recv().await? {
            return Ok(events);
        }
    }
}

/// CAPS-8 (server half): a hit is one `CombatEvent`, sent once to both
/// clients, and the following snapshots show the HP drop to both.
#[tokio::test]
async fn a_hit_is_one_combat_event_and_both_see_the_hp_drop() -> Result {
    let (srv, mut shooter, mut target) = duel().await?;
    let tick = aim(&mut shooter, target.id, 1).await?;
    shooter.inputs(vec![input(tick, 0.0, 0.0, true)]).await?;
    for client in [&mut shooter, &mut target] {
        let events = combat(client).await?;
        assert_eq!(events.len(), 1);
        let e = events[0];
        assert_eq!((e.damage, e.hp, e.killed), (20, 80, false));
        let (_, players) = client.snapshot().await?;
        assert_eq!(find(&players, e.target).map(|p| p.hp), Some(80));
    }
    // Sent once: the next ticks carry no combat message.
    for _ in 0..6 {
        match shooter.recv().await? {
            ServerMessage::Events { events } => panic!("re-fired: {events:?}"),
            ServerMessage::Snapshot { players, .. } => {
                assert_eq!(find(&players, target.id).map(|p| p.hp), Some(80));
            }
            _ => {}
        }
    }
    srv.shutdown().await
}

#[tokio::test]
async fn five_hits_kill_and_the_target_respawns_after_three_seconds() -> Result {
    let (srv, mut shooter, mut target) = duel().await?;
    let mut tick = aim(&mut shooter, target.id, 1).await?;
    let mut hits = 0;
    let killed_at = loop {
        // One shot every 5 ticks: the 250 ms cooldown.
        shooter.inputs(vec![input(tick, 0.0, 0.0, true)]).await?;
        tick += 1;
        let events = combat(&mut shooter).await?;
        hits += events.len();
        if let Some(kill) = events.iter().find(|e| e.killed) {
            break kill.server_tick;
        }
        for _ in 0..5 {
            shooter.snapshot().await?;
        }
        assert!(hits < 5);
    };
    assert_eq!(hits, 5);
    let mut dead_ticks = 0;
    loop {
        let (server_tick, players) = target.snapshot().await?;
        if server_tick <= killed_at {
            continue; // older snapshots still queued
        }
        let me = find(&players, target.id).expect("target present");
        if me.alive {
            assert_eq!(me.hp, 100);
            assert_eq!(server_tick.0 - killed_at.0, 60, "3 s at 50 ms");
            break;
        }
        assert_eq!(me.hp, 0);
        dead_ticks += 1;
    }
    assert!(
        dead_ticks >= 55,
        "dead for about 3 s, saw {dead_ticks} ticks"
    );
    srv.shutdown().await
}

#[tokio::test]
async fn pong_answers_ping_with_the_server_tick() -> Result {
    let srv = server(test_config())?;
    let mut client = Client::join(srv.addr, "ana", None).await?;
    let (tick, _) = client.snapshot().await?;
    client.send(&ClientMessage::Ping { id: 7 }).await?;
    loop {
        if let ServerMessage::Pong { id, server_tick } = client.recv().await? {
            assert_eq!(id, 7);
            assert!(server_tick >= tick);
            break;
        }
    }
    srv.shutdown().await
}

#[tokio::test]
async fn shutdown_tells_clients_why() -> Result {
    let srv = server(test_config())?;
    let mut client = Client::join(srv.addr, "ana", None).await?;
    client.snapshot().await?;
    let shutting = tokio::spawn(srv.shutdown());
    assert_eq!(
        client.error().await?,
        skirmish_core::ErrorCode::ShuttingDown
    );
    assert_eq!(client.closed().await?, "shutting_down");
    shutting.await??;
    Ok(())
}

#[tokio::test]
async fn metrics_count_players_and_ticks() -> Result {
    let srv = server(test_config())?;
    let mut client = Client::join(srv.addr, "ana", None).await?;
    client.snapshot().await?;
    assert_eq!(metric(srv.addr, "skirmish_players").await?, 1);
    assert!(metric(srv.addr, "skirmish_tick_duration_seconds_count").await? >= 1);
    srv.shutdown().await
}

#[tokio::test]
async fn the_roster_names_everyone_on_join_and_leave() -> Result {
    let srv = server(test_config())?;
    let mut a = Client::join(srv.addr, "ana", None).await?;
    let b = Client::join(srv.addr, "ben", None).await?;
    let names = |players: Vec<skirmish_core::RosterEntry>| {
        players.into_iter().map(|e| e.name).collect::<Vec<_>>()
    };
    // One roster per tick: ana alone first, unless ben joined in the same tick.
    let mut rosters: Vec<Vec<String>> = Vec::new();
    while rosters.last().is_none_or(|r| r.len() < 2) {
        if let ServerMessage::Roster { players } = a.recv().await? {
            rosters.push(names(players));
        }
        assert!(rosters.len() <= 2, "{rosters:?}");
    }
    assert_eq!(
        rosters.last(),
        Some(&vec!["ana".to_string(), "ben".to_string()])
    );
    assert!(
        rosters.len() == 1 || rosters[0] == vec!["ana".to_string()],
        "{rosters:?}"
    );
    b.close().await?;
    loop {
        if let ServerMessage::Roster { players } = a.recv().await? {
            assert_eq!(names(players), vec!["ana"]);
            break;
        }
    }
    srv.shutdown().await
}

/// A client that asks for compact snapshots gets binary frames: its own
/// state is bit-identical to what a JSON client sees of it, remote players
/// are within the quantisation step, and the frame is small.
#[tokio::test]
async fn compact_snapshots_carry_the_own_state_exactly() -> Result {
    let srv = server(test_config())?;
    let mut json = Client::join(srv.addr, "json", None).await?;
    let mut compact = Client::connect(srv.addr).await?;
    compact
        .hello_with("compact", None, skirmish_core::Encoding::Compact)
        .await?;
    compact.welcome().await?;
    compact
        .inputs((1..=5).map(|t| input(t, 0.3, 1.0, false)).collect())
        .await?;
    // Find one tick both clients received and compare.
    let mine = loop {
        let (tick, players) = compact.snapshot().await?;
        let me = find(&players, compact.id).expect("own state");
        if me.ack_move_tick == Some(Tick(5)) && find(&players, json.id).is_some() {
            break (tick, me, find(&players, json.id).expect("the other"));
        }
    };
    let (tick, me, them) = mine;
    let seen_by_json = loop {
        let (t, players) = json.snapshot().await?;
        if t == tick {
            break players;
        }
        assert!(t < tick, "missed tick {tick}");
    };
    assert_eq!(
        find(&seen_by_json, compact.id),
        Some(me),
        "bit-exact own state"
    );
    let exact_them = find(&seen_by_json, json.id).expect("json player");
    assert!(exact_them.position.distance(them.position) < 0.05);
    srv.shutdown().await
}

/// A room without players closes after the timeout (30 s by default).
#[tokio::test]
async fn an_empty_room_closes_after_its_timeout() -> Result {
    let srv = server(config_with(|c| {
        c.rooms.empty_timeout = std::time::Duration::from_millis(200);
    }))?;
    let mut clock = Client::join(srv.addr, "clock", Some("lobby")).await?;
    let leaver = Client::join(srv.addr, "leaver", Some("brief")).await?;
    assert!(http_get(srv.addr, "/rooms").await?.contains("\"brief\""));
    leaver.close().await?;
    // The lobby's snapshots are the clock: 200 ms is 4 ticks.
    let mut closed = false;
    for _ in 0..40 {
        clock.snapshot().await?;
        if !http_get(srv.addr, "/rooms").await?.contains("\"brief\"") {
            closed = true;
            break;
        }
    }
    assert!(closed, "the empty room is still listed");
    assert!(http_get(srv.addr, "/rooms").await?.contains("\"lobby\""));
    srv.shutdown().await
}

#[tokio::test]
async fn a_client_without_hello_is_closed_in_time() -> Result {
    let srv = server(config_with(|c| {
        c.limits.hello_timeout = std::time::Duration::from_millis(200);
    }))?;
    let mut silent = Client::connect(srv.addr).await?;
    assert_eq!(
        silent.error().await?,
        skirmish_core::ErrorCode::HelloTimeout
    );
    assert_eq!(silent.closed().await?, "hello_timeout");
    srv.shutdown().await
}

/// A client whose connection drops without a goodbye and who reconnects
/// gets a fresh player; the old one is gone, no ghost left behind.
#[tokio::test]
async fn a_dropped_client_reconnects_as_a_fresh_player_without_a_ghost() -> Result {
    let srv = server(test_config())?;
    let mut observer = Client::join(srv.addr, "observer", None).await?;
    let first = Client::join(srv.addr, "ana", None).await?;
    let old_id = first.id;
    observer.state_of(old_id).await?;
    drop(first); // the TCP connection just ends
    let again = Client::join(srv.addr, "ana", None).await?;
    assert_ne!(again.id, old_id, "a fresh player");
    let mut ids = Vec::new();
    for _ in 0..100 {
        let (_, players) = observer.snapshot().await?;
        ids = players.iter().map(|p| p.id).collect();
        if !ids.contains(&old_id) && ids.contains(&again.id) {
            break;
        }
    }
    assert_eq!(
        ids,
        vec![observer.id, again.id],
        "no ghost of the old player"
    );
    srv.shutdown().await
}

/// A game's web folder needs only its bundle: without an `index.html` of
/// its own, the server serves the page shell's page at `/` and at every
/// game's folder; with one, its own.
#[tokio::test]
async fn a_web_folder_without_a_page_gets_the_shells_page() -> Result {
    let empty = std::env::temp_dir().join(format!("skirmish-no-page-{}", std::process::id()));
    std::fs::create_dir_all(&empty)?;
    let srv = server(config_with(|c| c.web_dir = empty.clone()))?;
    for path in ["/", "/index.html", "/walkers/", "/blobs/index.html"] {
        let page = http_get(srv.addr, path).await?;
        assert!(page.contains("./pkg/skirmish_client.js"), "{path}: {page}");
    }
    srv.shutdown().await?;
    std::fs::write(empty.join("index.html"), "<p>its own</p>")?;
    let srv = server(config_with(|c| c.web_dir = empty.clone()))?;
    assert_eq!(http_get(srv.addr, "/").await?, "<p>its own</p>");
    assert_eq!(http_get(srv.addr, "/walkers/").await?, "<p>its own</p>");
    srv.shutdown().await?;
    std::fs::remove_dir_all(&empty)?;
    Ok(())
}
