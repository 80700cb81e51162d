//! The Agones contract, without a cluster: the real server, with `--agones`,
//! against a fake SDK sidecar (`agones/fake.rs`) that records every call.
//! Built only with the `agones` feature (`cargo xtask test` runs
//! `cargo test -p skirmish-server --features agones,test-hooks --test agones`).
#![cfg(all(feature = "agones", feature = "test-hooks"))]

#[path = "agones/fake.rs"]
mod fake;

use std::net::SocketAddr;
use std::process::Stdio;
use std::time::Duration;

use anyhow::{bail, Context, Result};
use fake::{Call, Fake, Listener, Record};
use futures_util::{SinkExt, StreamExt};
use skirmish_server::agones::{Agones, GAME_ANNOTATION, ROOM_ANNOTATION};
use skirmish_server::{start, Catalog, ServerConfig};
use tokio::io::{AsyncBufReadExt, BufReader};
use tokio::net::TcpStream;
use tokio::sync::oneshot;
use tokio::task::JoinHandle;
use tokio::time::{timeout, Instant};
use tokio_tungstenite::tungstenite::protocol::frame::coding::CloseCode;
use tokio_tungstenite::tungstenite::Message;
use tokio_tungstenite::{MaybeTlsStream, WebSocketStream};

type Socket = WebSocketStream<MaybeTlsStream<TcpStream>>;

/// Long enough for anything here on a loaded machine; the health period is
/// 2 s, so a few pings take several seconds.
const PATIENCE: Duration = Duration::from_secs(20);

fn config(fake: &Fake) -> ServerConfig {
    let mut config = ServerConfig {
        addr: "127.0.0.1:0".parse().expect("a literal address"),
        ..ServerConfig::default()
    };
    config.webtransport.disabled = true;
    config.agones.enabled = true;
    config.agones.sdk_port = fake.port;
    config.agones.connect_timeout = Duration::from_secs(10);
    config
}

/// The real server started in this process with `--agones` against `fake`,
/// reporting until `stop` fires.
struct Running {
    addr: SocketAddr,
    state: std::sync::Arc<skirmish_server::AppState>,
    stop: Option<oneshot::Sender<()>>,
    agones: JoinHandle<Result<()>>,
}

async fn run(fake: &Fake, config: ServerConfig) -> Result<Running> {
    let agones = Agones::connect(&config.agones).await?;
    // Two games, as the repository's binary hosts: allocations open the
    // first unless they name another.
    let games = Catalog::new()
        .host::<skirmish_tanks::Tanks>("", skirmish_tanks::TankSettings::default())
        .host::<skirmish_walkers::Walkers>("walkers", ());
    let server = start(config, games)?;
    fake.server_is_at(server.addr);
    let (addr, state) = (server.addr, server.state.clone());
    let (stop, stopped) = oneshot::channel::<()>();
    let agones = tokio::spawn(agones.run(server, async move {
        let _ = stopped.await;
    }));
    Ok(Running {
        addr,
        state,
        stop: Some(stop),
        agones,
    })
}

impl Running {
    /// What SIGTERM does in the binary.
    async fn terminate(mut self) -> Result<()> {
        if let Some(stop) = self.stop.take() {
            let _ = stop.send(());
        }
        timeout(PATIENCE, self.agones).await??
    }
}

async fn join(addr: SocketAddr, name: &str, room: Option<&str>) -> Result<(Socket, String)> {
    let (mut socket, _) = tokio_tungstenite::connect_async(format!("ws://{addr}/ws")).await?;
    let room = room.map_or(String::new(), |r| format!(r#","room":"{r}""#));
    let hello = format!(r#"{{"type":"hello","name":"{name}","protocol":2{room}}}"#);
    socket.send(Message::text(hello)).await?;
    loop {
        let message = timeout(PATIENCE, socket.next())
            .await?
            .context("closed before welcome")??;
        if let Message::Text(text) = message {
            let value: serde_json::Value = serde_json::from_str(&text)?;
            if value["type"] == "welcome" {
                let room = value["room"].as_str().context("welcome names the room")?;
                return Ok((socket, room.to_string()));
            }
        }
    }
}

/// Reads until the server closes; the close frame's code and reason.
async fn closed(socket: &mut Socket) -> Result<(CloseCode, String)> {
    loop {
        match timeout(PATIENCE, socket.next()).await? {
            Some(Ok(Message::Close(Some(frame)))) => {
                return Ok((frame.code, frame.reason.to_string()));
            }
            Some(Ok(_)) => {}
            other => bail!("the connection ended without a close frame: {other:?}"),
        }
    }
}

fn is_rooms_count(call: &Call, rooms: i64) -> bool {
    matches!(call, Call::Counter { name, count: Some(n), .. } if name == "rooms" && *n == rooms)
}

/// `Shutdown` calls made once the server's listener had closed.
fn clean_shutdowns(calls: &[Record]) -> usize {
    count(
        calls,
        &Call::Shutdown {
            listener: Listener::Closed,
        },
    )
}

fn count(calls: &[Record], call: &Call) -> usize {
    calls.iter().filter(|r| &r.call == call).count()
}

fn health_times(calls: &[Record]) -> Vec<Instant> {
    calls
        .iter()
        .filter(|r| r.call == Call::Health)
        .map(|r| r.at)
        .collect()
}

fn ready_at(calls: &[Record]) -> Option<Instant> {
    calls
        .iter()
        .find(|r| matches!(r.call, Call::Ready { .. }))
        .map(|r| r.at)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn ready_once_after_the_listener_then_health_and_counters_follow_players() -> Result<()> {
    let fake = Fake::start().await?;
    let server = run(&fake, config(&fake)).await?;

    let calls = fake
        .wait_until(PATIENCE, "Ready", |_, c| ready_at(c).is_some())
        .await?;
    assert_eq!(
        count(
            &calls,
            &Call::Ready {
                listener: Listener::Serving
            }
        ),
        1,
        "Ready once, with the listener answering: {calls:#?}"
    );
    fake.wait_until(PATIENCE, "capacities and zero counts", |f, _| {
        f.counter("rooms") == Some((0, 64)) && f.counter("players") == Some((0, 64 * 64))
    })
    .await?;

    let (mut ana, room) = join(server.addr, "ana", None).await?;
    let (bob, _) = join(server.addr, "bob", None).await?;
    let calls = fake
        .wait_until(PATIENCE, "counters for two players", |f, c| {
            f.counter("players").map(|c| c.0) == Some(2)
                && f.counter("rooms").map(|c| c.0) == Some(1)
                && c.iter()
                    .any(|r| r.call == Call::Label("rooms".into(), "1".into()))
        })
        .await?;
    assert!(
        calls
            .iter()
            .all(|r| !matches!(&r.call, Call::Counter { diff, .. } if *diff != 0)),
        "counts are set, never incremented"
    );
    drop(bob);
    fake.wait_until(PATIENCE, "one player after bob left", |f, _| {
        f.counter("players").map(|c| c.0) == Some(1)
    })
    .await?;
    ana.close(None).await?;
    fake.wait_until(PATIENCE, "no players", |f, _| {
        f.counter("players").map(|c| c.0) == Some(0) && f.counter("rooms").map(|c| c.0) == Some(1)
    })
    .await?;
    assert!(server.state.rooms.list().iter().any(|r| r.name == room));

    // Health: at least four pings, the first right after Ready, every gap
    // within the 2 s period (with half a second for a loaded machine).
    let calls = fake
        .wait_until(PATIENCE, "four health pings", |_, c| {
            health_times(c).len() >= 4
        })
        .await?;
    let pings = health_times(&calls);
    let ready = ready_at(&calls).context("Ready")?;
    assert!(pings[0] >= ready, "no health ping before Ready");
    for pair in pings.windows(2) {
        let gap = pair[1] - pair[0];
        assert!(gap <= Duration::from_millis(2500), "health gap {gap:?}");
    }

    server.terminate().await?;
    let calls = fake.calls();
    assert_eq!(clean_shutdowns(&calls), 1);
    assert_eq!(
        count(
            &calls,
            &Call::Ready {
                listener: Listener::Serving
            }
        ),
        1,
        "Ready once"
    );
    Ok(())
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_sidecar_slow_to_take_counters_does_not_hold_up_the_health_pings() -> Result<()> {
    let fake = Fake::start().await?;
    fake.slow_counters(Duration::from_secs(60));
    let server = run(&fake, config(&fake)).await?;
    fake.wait_until(PATIENCE, "Ready", |_, c| ready_at(c).is_some())
        .await?;
    // Players come and go while every Counter update hangs.
    let (ana, _) = join(server.addr, "ana", None).await?;
    let (bob, _) = join(server.addr, "bob", None).await?;
    drop(ana);
    let calls = fake
        .wait_until(PATIENCE, "four health pings", |_, c| {
            health_times(c).len() >= 4
        })
        .await?;
    let pings = health_times(&calls);
    for pair in pings.windows(2) {
        let gap = pair[1] - pair[0];
        assert!(gap <= Duration::from_millis(2500), "health gap {gap:?}");
    }
    drop(bob);
    server.terminate().await
}

/// Holds the room of a one-player server for `pause` (blocking its thread
/// or not) once health pings flow, and fails if a ping arrives between
/// `quiet.0` and `quiet.1` after the hold began.
async fn pings_stop_during_a_stall(
    blocks: bool,
    pause: Duration,
    quiet: (Duration, Duration),
) -> Result<()> {
    let fake = Fake::start().await?;
    let server = run(&fake, config(&fake)).await?;
    let (_ana, room) = join(server.addr, "ana", None).await?;
    fake.wait_until(PATIENCE, "two health pings", |_, c| {
        health_times(c).len() >= 2
    })
    .await?;

    let held = Instant::now();
    assert!(server.state.rooms.hold_ticks(&room, pause, blocks));
    let calls = fake
        .wait_until(PATIENCE, "health pings after the stall", |_, c| {
            health_times(c).iter().any(|at| *at > held + quiet.1)
        })
        .await?;
    let during: Vec<Duration> = health_times(&calls)
        .into_iter()
        .filter(|at| *at > held + quiet.0 && *at < held + quiet.1)
        .map(|at| at - held)
        .collect();
    assert!(
        during.is_empty(),
        "health pings during or right after the stall, at {during:?} into it"
    );
    server.terminate().await
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_stalled_room_stops_the_health_pings_until_it_ticks_again() -> Result<()> {
    // Pings are checked every 2 s and stop once a room is more than 1 s
    // late: none may arrive from 1.5 s into a 4.5 s stall until it ends (a
    // window of 3 s, so at least one check falls in it).
    let pause = Duration::from_millis(4500);
    pings_stop_during_a_stall(false, pause, (Duration::from_millis(1500), pause)).await
}

/// On the default one-thread runtime a tick that holds the thread stalls
/// everything, the health loop too; when it runs again the room has just
/// ticked, so only the gap between ticks shows the stall.
#[tokio::test(flavor = "current_thread")]
async fn a_tick_that_holds_the_only_thread_withholds_the_next_health_ping() -> Result<()> {
    // A check fell due during the 3 s stall (they come every 2 s) and runs
    // the moment the thread is free: it must not ping, nor may any check
    // until the next one, 2 s later.
    let pause = Duration::from_secs(3);
    let quiet = (
        Duration::from_millis(200),
        pause + Duration::from_millis(1500),
    );
    pings_stop_during_a_stall(true, pause, quiet).await
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_rooms_counter_comes_back_when_an_allocation_opens_no_room() -> Result<()> {
    let fake = Fake::start().await?;
    let server = run(&fake, config(&fake)).await?;
    let (_ana, room) = join(server.addr, "ana", Some("arena")).await?;
    assert_eq!(room, "arena");
    fake.wait_until(PATIENCE, "one room counted", |f, _| {
        f.counter("rooms").map(|c| c.0) == Some(1)
    })
    .await?;
    // Agones counts one more room for an allocation naming a room that
    // is open already: the server opens nothing and says so.
    let allocated = Instant::now();
    fake.allocate(&[(ROOM_ANNOTATION, "arena")]);
    fake.wait_until(PATIENCE, "the count set back to 1", |f, c| {
        f.counter("rooms").map(|c| c.0) == Some(1)
            && c.iter()
                .any(|r| r.at > allocated && is_rooms_count(&r.call, 1))
    })
    .await?;
    assert_eq!(server.state.rooms.list().len(), 1);
    server.terminate().await
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_allocation_opens_a_room_of_the_game_it_names() -> Result<()> {
    let fake = Fake::start().await?;
    let server = run(&fake, config(&fake)).await?;
    fake.wait_until(PATIENCE, "a watch", |_, c| count(c, &Call::Watch) >= 1)
        .await?;
    let allocated = Instant::now();
    fake.allocate(&[(ROOM_ANNOTATION, "w-1"), (GAME_ANNOTATION, "walkers")]);
    fake.wait_until(
        PATIENCE,
        "the allocated room counted by the server",
        |_, c| {
            c.iter()
                .any(|r| r.at > allocated && is_rooms_count(&r.call, 1))
        },
    )
    .await?;
    let listed = server.state.rooms.list();
    let rooms: Vec<_> = listed
        .iter()
        .map(|r| (r.game.as_str(), r.name.as_str()))
        .collect();
    assert_eq!(rooms, [("walkers", "w-1")]);
    // A game the server does not host opens nothing: the count is set
    // back to the one room.
    let allocated = Instant::now();
    fake.allocate(&[(ROOM_ANNOTATION, "p-1"), (GAME_ANNOTATION, "pong")]);
    fake.wait_until(PATIENCE, "the count set back to 1", |_, c| {
        c.iter()
            .any(|r| r.at > allocated && is_rooms_count(&r.call, 1))
    })
    .await?;
    let allocated = Instant::now();
    fake.allocate(&[(ROOM_ANNOTATION, "t-1"), (GAME_ANNOTATION, "tanks")]);
    fake.wait_until(PATIENCE, "two rooms counted by the server", |_, c| {
        c.iter()
            .any(|r| r.at > allocated && is_rooms_count(&r.call, 2))
    })
    .await?;
    let listed = server.state.rooms.list();
    let mut rooms: Vec<_> = listed
        .iter()
        .map(|r| (r.game.as_str(), r.name.as_str()))
        .collect();
    rooms.sort_unstable();
    assert_eq!(rooms, [("tanks", "t-1"), ("walkers", "w-1")]);
    server.terminate().await
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_allocation_opens_its_room_and_the_empty_server_drains_and_shuts_down() -> Result<()> {
    let fake = Fake::start().await?;
    let mut config = config(&fake);
    config.agones.shutdown_when_empty = Some(Duration::from_secs(1));
    let server = run(&fake, config).await?;
    fake.wait_until(PATIENCE, "Ready and a watch", |_, c| {
        ready_at(c).is_some() && count(c, &Call::Watch) >= 1
    })
    .await?;
    assert!(server.state.rooms.list().is_empty());

    // Never drains before an allocation, however long it is empty.
    fake.wait_until(PATIENCE, "two health pings", |_, c| {
        health_times(c).len() >= 2
    })
    .await?;
    assert!(!fake
        .calls()
        .iter()
        .any(|r| matches!(r.call, Call::Shutdown { .. })));

    let allocated = Instant::now();
    fake.allocate(&[(ROOM_ANNOTATION, "final-7")]);
    fake.wait_until(
        PATIENCE,
        "the allocated room counted by the server",
        |_, c| {
            c.iter()
                .any(|r| r.at > allocated && is_rooms_count(&r.call, 1))
        },
    )
    .await?;
    let listed = server.state.rooms.list();
    assert_eq!(listed.len(), 1);
    assert_eq!((listed[0].name.as_str(), listed[0].players), ("final-7", 0));

    // A connection that has not joined, and a player of the allocated room
    // who leaves: one second after, the server drains.
    let (mut lobby, _) =
        tokio_tungstenite::connect_async(format!("ws://{}/ws", server.addr)).await?;
    let (mut ana, room) = join(server.addr, "ana", Some("final-7")).await?;
    assert_eq!(room, "final-7");
    ana.close(None).await?;
    let (code, reason) = closed(&mut lobby).await?;
    let told = Instant::now();
    assert_eq!((code, reason.as_str()), (CloseCode::Away, "shutting_down"));
    let calls = fake
        .wait_until(PATIENCE, "Shutdown", |_, c| {
            c.iter().any(|r| matches!(r.call, Call::Shutdown { .. }))
        })
        .await?;
    assert_eq!(
        clean_shutdowns(&calls),
        1,
        "Shutdown once, after the listener closed"
    );
    let shutdown = calls
        .iter()
        .find(|r| matches!(r.call, Call::Shutdown { .. }))
        .context("Shutdown")?;
    assert!(told <= shutdown.at, "the client was told before Shutdown");
    // No allocation may pick a server on its way out: the rooms capacity
    // came down to the rooms open before Shutdown.
    assert!(calls.iter().any(|r| r.at < shutdown.at
        && r.call
            == Call::Counter {
                name: "rooms".into(),
                count: None,
                capacity: Some(1),
                diff: 0
            }));
    timeout(PATIENCE, server.agones).await???;
    Ok(())
}

/// The binary with `--agones` against `fake`, and the address it printed.
async fn spawn_binary(fake: &Fake) -> Result<(tokio::process::Child, SocketAddr)> {
    let web = concat!(env!("CARGO_MANIFEST_DIR"), "/../web");
    let mut child = tokio::process::Command::new(env!("CARGO_BIN_EXE_skirmish-server"))
        .args(["--addr", "127.0.0.1:0", "--no-webtransport", "--agones"])
        .args(["--agones-sdk-port", &fake.port.to_string()])
        .arg("--web-dir")
        .arg(web)
        .env("RUST_LOG", "warn")
        .stdout(Stdio::piped())
        .kill_on_drop(true)
        .spawn()?;
    let stdout = child.stdout.take().context("stdout")?;
    let mut lines = BufReader::new(stdout).lines();
    let line = timeout(PATIENCE, lines.next_line())
        .await??
        .context("the server printed nothing")?;
    let addr: SocketAddr = line
        .split("http://")
        .nth(1)
        .and_then(|rest| rest.split('/').next())
        .context("an address in the first line")?
        .parse()?;
    fake.server_is_at(addr);
    Ok((child, addr))
}

fn sigterm(child: &tokio::process::Child) -> Result<()> {
    let pid = child.id().context("the server's pid")?;
    let killed = std::process::Command::new("kill")
        .args(["-TERM", &pid.to_string()])
        .status()?;
    anyhow::ensure!(killed.success(), "kill -TERM {pid}");
    Ok(())
}

/// The binary, under SIGTERM and without a sidecar.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sigterm_tells_players_why_then_calls_shutdown() -> Result<()> {
    let fake = Fake::start().await?;
    let (mut child, addr) = spawn_binary(&fake).await?;
    fake.wait_until(PATIENCE, "Ready", |_, c| ready_at(c).is_some())
        .await?;
    let (mut ana, _) = join(addr, "ana", None).await?;

    sigterm(&child)?;
    let (code, reason) = closed(&mut ana).await?;
    let told = Instant::now();
    assert_eq!((code, reason.as_str()), (CloseCode::Away, "shutting_down"));
    let status = timeout(PATIENCE, child.wait()).await??;
    assert!(status.success(), "the server exits cleanly: {status}");
    let calls = fake.calls();
    let shutdown = calls
        .iter()
        .find(|r| matches!(r.call, Call::Shutdown { .. }))
        .context("Shutdown")?;
    assert!(told <= shutdown.at, "the player was told before Shutdown");
    assert_eq!(
        count(
            &calls,
            &Call::Ready {
                listener: Listener::Serving
            }
        ),
        1
    );
    assert_eq!(clean_shutdowns(&calls), 1);
    Ok(())
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_sigterm_as_soon_as_it_listens_still_drains_and_shuts_down() -> Result<()> {
    let fake = Fake::start().await?;
    let (mut child, _) = spawn_binary(&fake).await?;
    sigterm(&child)?;
    let status = timeout(PATIENCE, child.wait()).await??;
    assert!(status.success(), "the server exits cleanly: {status}");
    let calls = fake.calls();
    assert_eq!(clean_shutdowns(&calls), 1, "{calls:#?}");
    Ok(())
}

#[tokio::test]
async fn without_a_sidecar_the_server_gives_up_saying_where_it_looked() -> Result<()> {
    // A port nobody listens on.
    let port = std::net::TcpListener::bind("127.0.0.1:0")?
        .local_addr()?
        .port();
    let out = timeout(
        PATIENCE,
        tokio::process::Command::new(env!("CARGO_BIN_EXE_skirmish-server"))
            .args(["--addr", "127.0.0.1:0", "--no-webtransport", "--agones"])
            .args(["--agones-connect-timeout", "1"])
            .args(["--agones-sdk-port", &port.to_string()])
            .env("RUST_BACKTRACE", "0")
            .output(),
    )
    .await??;
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success());
    assert!(
        stderr.contains(&format!(
            "no Agones SDK sidecar answered on localhost:{port}"
        )),
        "{stderr}"
    );
    assert!(out.stdout.is_empty(), "nothing was served");
    Ok(())
}
