//! One server process hosts rooms of three games: the tank game at `/ws`
//! and `/wt`, walkers (the guide's game) at `/walkers/ws` and
//! `/walkers/wt`, blobs (the .io arena) at `/blobs/ws` and `/blobs/wt`. Real sockets on 127.0.0.1, real bots of each game (the
//! library's client session, each game's own driver), each from its own
//! loopback address.

use std::time::Duration;

use futures_util::{SinkExt, StreamExt};
use skirmish_blobs::driver::Graze;
use skirmish_blobs::Blobs;
use skirmish_core::{control, ClientMessage, Encoding, ErrorCode, GameId, ServerMessage};
use skirmish_core::{LinkConditions, Networked, PROTOCOL_VERSION};
use skirmish_tests::bot::{run_bot, run_bot_of, BotOptions, BotReport, BotTransport};
use skirmish_tests::script::{Script, Wander};
use skirmish_tests::{http_get, next_source, server, tcp_from, test_config, websocket_at};
use skirmish_walkers::driver::Pace;
use skirmish_walkers::Walkers;
use tokio_tungstenite::tungstenite::Message;

type Result = anyhow::Result<()>;

fn options(name: &str, folder: &str, transport: BotTransport) -> BotOptions {
    BotOptions {
        name: name.into(),
        room: None,
        script: Script::Wander(Wander::new(7)),
        folder: folder.into(),
        up: LinkConditions::default(),
        down: LinkConditions::default(),
        seed: 5,
        duration: Duration::from_secs(3),
        frame: Duration::from_millis(16),
        encoding: Encoding::Compact,
        source: Some(next_source()),
        transport,
        via: None,
        resends: 0,
        record: None,
    }
}

/// A bot played its game: joined, had its inputs acknowledged, got
/// snapshots, and was told no error.
fn played(report: &BotReport) {
    assert!(report.id > 0, "{report:?}");
    assert!(report.inputs_acked > 20, "{report:?}");
    assert!(report.snapshots_per_sec > 10.0, "{report:?}");
    assert_eq!((report.errors, report.decode_errors), (0, 0), "{report:?}");
}

#[tokio::test]
async fn one_process_hosts_rooms_of_every_game_over_both_transports() -> Result {
    let srv = server(test_config())?;
    let addr = srv.addr;
    let mut pace = Pace::new(100.0, 300.0);
    let mut pace_wt = Pace::new(300.0, 500.0);
    let mut graze = Graze;
    let (tank, walker, walker_wt, blob) = tokio::join!(
        run_bot(addr, options("tank", "", BotTransport::Websocket)),
        run_bot_of::<Walkers, _>(
            addr,
            options("walker", "walkers", BotTransport::Websocket),
            &mut pace
        ),
        run_bot_of::<Walkers, _>(
            addr,
            options("walker-wt", "walkers", BotTransport::Webtransport),
            &mut pace_wt
        ),
        run_bot_of::<Blobs, _>(
            addr,
            options("blob", "blobs", BotTransport::Webtransport),
            &mut graze
        ),
    );
    let (tank, walker, walker_wt, blob) = (tank?, walker?, walker_wt?, blob?);
    for report in [&tank, &walker, &walker_wt, &blob] {
        played(report);
    }
    // The two walkers share a room of walkers; the tank is alone in its own.
    assert_eq!(walker.room, walker_wt.room);
    assert_eq!(walker.mispredictions, 0, "{walker:?}");
    let rooms: serde_json::Value = serde_json::from_str(&http_get(addr, "/rooms").await?)?;
    let games: Vec<(&str, &str)> = rooms
        .as_array()
        .map(|a| {
            a.iter()
                .filter_map(|r| Some((r["game"].as_str()?, r["name"].as_str()?)))
                .collect()
        })
        .unwrap_or_default();
    assert!(games.contains(&("tanks", tank.room.as_str())), "{games:?}");
    assert!(
        games.contains(&("walkers", walker.room.as_str())),
        "{games:?}"
    );
    assert_ne!(tank.id, walker.id, "player ids are the process's");
    srv.shutdown().await
}

/// The first frame the server sends after a binary `hello` of `game` at
/// the game folder `folder`.
async fn answer_to_hello(
    addr: std::net::SocketAddr,
    folder: &str,
    game: GameId,
) -> anyhow::Result<ServerMessage<Walkers>> {
    let tcp = tcp_from(addr, next_source()).await?;
    let mut socket = websocket_at(addr, folder, tcp).await?;
    let hello: ClientMessage<<Walkers as Networked>::Wire> = ClientMessage::Hello {
        name: "who".into(),
        protocol: PROTOCOL_VERSION,
        room: None,
        encoding: Encoding::Compact,
        game: Some(game),
    };
    let bytes = control::encode_client(&hello).ok_or_else(|| anyhow::anyhow!("no binary"))?;
    socket.send(Message::binary(bytes)).await?;
    loop {
        match socket.next().await {
            Some(Ok(Message::Binary(bytes))) => return Ok(control::decode_server(&bytes)?),
            Some(Ok(_)) => {}
            other => anyhow::bail!("no answer: {other:?}"),
        }
    }
}

#[tokio::test]
async fn each_game_path_refuses_the_other_games_hello_and_no_other_path_upgrades() -> Result {
    let srv = server(test_config())?;
    let addr = srv.addr;
    let tanks = GameId::of::<skirmish_tanks::Tanks>();
    let walkers = GameId::of::<Walkers>();
    for (folder, game) in [("walkers", tanks.clone()), ("", walkers.clone())] {
        let answer = answer_to_hello(addr, folder, game).await?;
        assert!(
            matches!(
                &answer,
                ServerMessage::Error {
                    code: ErrorCode::WrongGame,
                    ..
                }
            ),
            "{folder:?}: {answer:?}"
        );
    }
    let answer = answer_to_hello(addr, "walkers", walkers).await?;
    assert!(
        matches!(&answer, ServerMessage::Welcome { .. }),
        "{answer:?}"
    );
    let tcp = tcp_from(addr, next_source()).await?;
    assert!(websocket_at(addr, "nothing", tcp).await.is_err());
    // The game's page is a folder: a link without the slash keeps its query.
    let err = http_get(addr, "/walkers?room=duel&name=ana")
        .await
        .expect_err("a redirect, not the page");
    let head = err.to_string();
    assert!(
        head.contains("308") && head.contains("location: /walkers/?room=duel&name=ana"),
        "{head}"
    );
    srv.shutdown().await
}

/// `cargo xtask replay`'s binary reads the game from the recording: a
/// bot's recording of game `G` at `folder` replays frame for frame and its
/// room's (the server's `--record`, named after the game's folder) tick for
/// tick.
async fn the_replay_binary_replays<G, D>(folder: &str, driver: &mut D) -> Result
where
    G: skirmish_core::ClientGame,
    D: skirmish_tests::stepper::Driver<G>,
{
    let dir = std::env::temp_dir().join(format!(
        "skirmish-two-games-{folder}-{}",
        std::process::id()
    ));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir)?;
    let srv = server(skirmish_tests::config_with(|c| {
        c.rooms.record.dir = Some(dir.join("rooms"));
    }))?;
    let recorded = dir.join(format!("{folder}.skrec"));
    let options = BotOptions {
        record: Some(recorded.clone()),
        room: Some("recorded".into()),
        ..options(folder, folder, BotTransport::Websocket)
    };
    played(&run_bot_of::<G, D>(srv.addr, options, driver).await?);
    srv.shutdown().await?;
    let first_part = format!("1-{folder}-recorded");
    let room = std::fs::read_dir(dir.join("rooms"))?
        .filter_map(|e| e.ok().map(|e| e.path()))
        .find(|p| {
            p.file_name()
                .and_then(|n| n.to_str())
                .is_some_and(|n| n.starts_with(&first_part))
        })
        .ok_or_else(|| anyhow::anyhow!("no recording of the {folder} room"))?;
    for (file, room_flag, says) in [
        (&recorded, false, "frames match"),
        (&room, true, "ticks match"),
    ] {
        let mut command = std::process::Command::new(env!("CARGO_BIN_EXE_replay"));
        command.arg(file);
        if room_flag {
            command.arg("--room");
        }
        command.arg("--svg").arg(dir.join("timeline.svg"));
        let out = command.output()?;
        let stdout = String::from_utf8_lossy(&out.stdout);
        assert!(
            out.status.success() && stdout.contains(says),
            "{}: {stdout}{}",
            file.display(),
            String::from_utf8_lossy(&out.stderr)
        );
    }
    let _ = std::fs::remove_dir_all(&dir);
    Ok(())
}

#[tokio::test]
async fn the_replay_binary_replays_a_walkers_page_and_room() -> Result {
    the_replay_binary_replays::<Walkers, _>("walkers", &mut Pace::new(200.0, 400.0)).await
}

#[tokio::test]
async fn the_replay_binary_replays_a_blobs_page_and_room() -> Result {
    the_replay_binary_replays::<Blobs, _>("blobs", &mut Graze).await
}
