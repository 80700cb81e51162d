//! Every game at once, from outside as a hostile client would: on each
//! game's path, one connection sends what the last review found held or
//! did not (malformed binary hellos, names that hide or reverse text, a
//! game name of 7,900 bytes, garbage after joining) while an honest binary
//! player of the same game keeps its 20 Hz. Each bad frame gets its error
//! code, in the encoding of the hello that succeeded (JSON until one did),
//! and is counted; `/metrics` answers throughout.

use std::net::SocketAddr;
use std::time::Duration;

use futures_util::{SinkExt, StreamExt};
use skirmish_blobs::driver::Graze;
use skirmish_blobs::Blobs;
use skirmish_core::{
    encode, ClientGame, ClientMessage, Encoding, ErrorCode, GameId, LinkConditions, Networked,
    PROTOCOL_VERSION,
};
use skirmish_tests::bot::{run_bot_of, BotOptions, BotReport, BotTransport};
use skirmish_tests::script::{Script, Wander};
use skirmish_tests::stepper::Driver;
use skirmish_tests::{
    http_get, metric, next_source, server, tcp_from, test_config, websocket_at, Socket, DEADLINE,
};
use skirmish_walkers::driver::Pace;
use skirmish_walkers::Walkers;
use tokio_tungstenite::tungstenite::Message;

type Result<T = ()> = anyhow::Result<T>;

fn honest(name: &str, folder: &str) -> BotOptions {
    BotOptions {
        name: name.into(),
        room: Some("shared".into()),
        script: Script::Wander(Wander::new(3)),
        folder: folder.into(),
        up: LinkConditions::default(),
        down: LinkConditions::default(),
        seed: 9,
        duration: Duration::from_secs(4),
        frame: Duration::from_millis(16),
        encoding: Encoding::Compact,
        source: Some(next_source()),
        transport: BotTransport::Websocket,
        via: None,
        resends: 0,
        record: None,
    }
}

/// A text `hello` of game `game` named `name`, as JSON.
fn text_hello<G: Networked>(name: &str, game: GameId) -> String {
    encode(&ClientMessage::<G::Wire>::Hello {
        name: name.into(),
        protocol: PROTOCOL_VERSION,
        room: Some("shared".into()),
        encoding: Encoding::Json,
        game: Some(game),
    })
}

/// The next error the server sends: it must come as text (this client's
/// hello, if any, was text); JSON snapshots and the roster are skipped.
async fn text_error(socket: &mut Socket) -> Result<(ErrorCode, String)> {
    loop {
        let frame = tokio::time::timeout(DEADLINE, socket.next())
            .await
            .map_err(|_| anyhow::anyhow!("no error within {DEADLINE:?}"))?;
        match frame {
            Some(Ok(Message::Text(text))) => {
                let value: serde_json::Value = serde_json::from_str(&text)?;
                if value["type"] == "error" {
                    let code: ErrorCode = serde_json::from_value(value["code"].clone())?;
                    let message = value["message"].as_str().unwrap_or_default().to_string();
                    return Ok((code, message));
                }
            }
            Some(Ok(Message::Binary(bytes))) => {
                anyhow::bail!("a binary frame ({} bytes) to a text client", bytes.len())
            }
            Some(Ok(_)) => {}
            other => anyhow::bail!("the connection ended: {other:?}"),
        }
    }
}

/// The next text frame whose type is `kind`.
async fn text_of(socket: &mut Socket, kind: &str) -> Result<serde_json::Value> {
    loop {
        let frame = tokio::time::timeout(DEADLINE, socket.next())
            .await
            .map_err(|_| anyhow::anyhow!("no {kind} within {DEADLINE:?}"))?;
        match frame {
            Some(Ok(Message::Text(text))) => {
                let value: serde_json::Value = serde_json::from_str(&text)?;
                if value["type"] == kind {
                    return Ok(value);
                }
                anyhow::ensure!(value["type"] != "error", "{text}");
            }
            Some(Ok(Message::Binary(bytes))) => {
                anyhow::bail!("a binary frame ({} bytes) to a text client", bytes.len())
            }
            Some(Ok(_)) => {}
            other => anyhow::bail!("the connection ended: {other:?}"),
        }
    }
}

/// A new connection to `folder` from its own address.
async fn connect(addr: SocketAddr, folder: &str) -> Result<Socket> {
    let tcp = tcp_from(addr, next_source()).await?;
    websocket_at(addr, folder, tcp).await
}

/// Hostile connections on `folder`, game `G`: a refused hello of a name or
/// a game ends its connection, so each gets its own.
async fn hostile<G: Networked>(addr: SocketAddr, folder: &str) -> Result {
    let game = GameId::of::<G>();
    // Names that reverse or hide text.
    for name in [
        "\u{202e}nimda",
        "\u{200b}\u{200b}",
        "\u{feff}",
        "a\u{2066}b",
    ] {
        let mut socket = connect(addr, folder).await?;
        let hello = text_hello::<G>(name, game.clone());
        socket.send(Message::text(hello)).await?;
        let (code, _) = text_error(&mut socket).await?;
        anyhow::ensure!(code == ErrorCode::BadName, "{folder}: {name:?}: {code}");
    }
    // A huge game name is refused, and not echoed whole.
    let mut socket = connect(addr, folder).await?;
    let other = GameId {
        name: "g".repeat(7_900),
        version: 1,
        shape: None,
    };
    socket
        .send(Message::text(text_hello::<G>("ann", other)))
        .await?;
    let (code, message) = text_error(&mut socket).await?;
    anyhow::ensure!(code == ErrorCode::WrongGame, "{folder}: {code}");
    anyhow::ensure!(
        message.len() < 300,
        "{folder}: echoed {} bytes",
        message.len()
    );
    // A malformed binary hello is refused and switches nothing: the text
    // hello after it gets a text welcome.
    let mut socket = connect(addr, folder).await?;
    socket.send(Message::binary(vec![b'H', 0xff])).await?;
    let (code, _) = text_error(&mut socket).await?;
    anyhow::ensure!(code == ErrorCode::BadMessage, "{folder}: {code}");
    socket
        .send(Message::text(text_hello::<G>("ann", game.clone())))
        .await?;
    text_of(&mut socket, "welcome").await?;
    // After a text join, a binary `H` and garbage are answered in text.
    socket.send(Message::binary(vec![b'H', 0xff])).await?;
    let (code, _) = text_error(&mut socket).await?;
    anyhow::ensure!(
        matches!(code, ErrorCode::AlreadyJoined | ErrorCode::BadMessage),
        "{folder}: {code}"
    );
    socket.send(Message::text("{{{{")).await?;
    let (code, _) = text_error(&mut socket).await?;
    anyhow::ensure!(code == ErrorCode::BadMessage, "{folder}: {code}");
    socket.send(Message::binary(vec![0, 1, 2])).await?;
    text_error(&mut socket).await?;
    // The server still answers.
    anyhow::ensure!(http_get(addr, "/metrics").await?.contains("skirmish_"));
    Ok(())
}

/// An honest player of `G` on `folder` and a hostile connection beside it.
async fn beside<G: ClientGame, D: Driver<G>>(
    addr: SocketAddr,
    folder: &str,
    driver: &mut D,
) -> Result<BotReport> {
    let (report, bad) = tokio::join!(
        run_bot_of::<G, D>(addr, honest(&format!("honest{folder}"), folder), driver),
        hostile::<G>(addr, folder)
    );
    bad?;
    report
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn bad_input_on_every_game_costs_its_honest_player_nothing() -> Result {
    let srv = server(test_config())?;
    let addr = srv.addr;
    let mut wander = Script::Wander(Wander::new(3));
    let mut pace = Pace::new(100.0, 300.0);
    let mut graze = Graze;
    let (tanks, walkers, blobs) = tokio::join!(
        beside::<skirmish_tanks::Tanks, _>(addr, "", &mut wander),
        beside::<Walkers, _>(addr, "walkers", &mut pace),
        beside::<Blobs, _>(addr, "blobs", &mut graze),
    );
    for report in [tanks?, walkers?, blobs?] {
        assert_eq!((report.errors, report.decode_errors), (0, 0), "{report:?}");
        assert!(report.inputs_acked > 40, "{report:?}");
        assert!(report.snapshots_per_sec >= 18.0, "{report:?}");
    }
    let bad_names = metric(addr, "skirmish_rejected_messages_total{code=\"bad_name\"}").await?;
    assert_eq!(bad_names, 12, "four names on each of three games");
    srv.shutdown().await
}
