//! Cross-crate test support: a real server on a free port of 127.0.0.1 and a
//! protocol-speaking WebSocket client. The tests live in `tests/tests/`.
//!
//! Waiting is always for a message, never for a clock: every receive has a
//! generous deadline only so that a broken server fails a test instead of
//! hanging it.

pub mod light;
pub mod matrix;
pub mod tank;
pub mod tank_page;

pub use skirmish_harness::net::{http_get, next_source, tcp_from, websocket_at, Socket, DEADLINE};
pub use skirmish_harness::{chart, net, plot, relay, replay, scenario, wt};
pub use skirmish_tanks::script;
pub use tank::{bot, recordings, stepper};

use std::net::{IpAddr, SocketAddr};

use anyhow::{anyhow, bail, Context, Result};
use futures_util::{SinkExt, StreamExt};
use skirmish_core::{
    decode_server, encode, ClientMessage, Encoding, ErrorCode, PlayerId, ServerMessage, Tick,
};
use skirmish_games::{Entry, GameSettings, Listed, Visit};
use skirmish_server::{start, Catalog, RunningServer, ServerConfig};
use skirmish_tanks::{PlayerState, SimConfig, Tanks, WireInput};
use tokio::net::{TcpSocket, TcpStream};
use tokio_tungstenite::tungstenite::Message;
use tokio_tungstenite::MaybeTlsStream;

/// What the repository's server binary is told: the server's settings and
/// the listed games' own (its command line, `server/src/main.rs`). It
/// reads as a [`ServerConfig`] (`config.rooms`, `config.limits`, ...) and
/// has the games' settings in `config.games`.
#[derive(Clone, Debug, clap::Parser)]
#[command(name = "skirmish-server")]
pub struct TestConfig {
    /// The server's settings.
    #[command(flatten)]
    pub server: ServerConfig,
    /// The listed games' settings.
    #[command(flatten)]
    pub games: GameSettings,
}

impl std::ops::Deref for TestConfig {
    type Target = ServerConfig;
    fn deref(&self) -> &ServerConfig {
        &self.server
    }
}

impl std::ops::DerefMut for TestConfig {
    fn deref_mut(&mut self) -> &mut ServerConfig {
        &mut self.server
    }
}

/// Every game of the repository, as its server binary hosts them.
pub fn catalog(settings: &GameSettings) -> Catalog {
    struct Host(Catalog);
    impl Visit for Host {
        fn game<G: Listed>(&mut self, game: Entry<G>) {
            self.0 = std::mem::take(&mut self.0).host::<G>(game.path, game.settings);
        }
    }
    let mut host = Host(Catalog::new());
    skirmish_games::each(settings, &mut host);
    host.0
}

/// A server config for tests: a free port on 127.0.0.1 and protocol-1
/// clients seated (this crate's [`Client`] speaks protocol 1 unless told
/// otherwise, as tools written against it do), every other setting as in
/// production; [`shipped_config`] changes only the port.
pub fn test_config() -> TestConfig {
    let mut config = shipped_config();
    config.rooms.allow_protocol_1 = true;
    config
}

/// The server as it ships, on a free port of 127.0.0.1.
pub fn shipped_config() -> TestConfig {
    TestConfig {
        server: ServerConfig {
            addr: SocketAddr::from(([127, 0, 0, 1], 0)),
            ..ServerConfig::default()
        },
        games: GameSettings::default(),
    }
}

/// [`test_config`] changed by `change`.
pub fn config_with(change: impl FnOnce(&mut TestConfig)) -> TestConfig {
    let mut config = test_config();
    change(&mut config);
    config
}

/// A WebSocket to `/ws` of `addr` over `tcp`.
///
/// # Errors
/// The handshake fails.
pub async fn websocket_over(addr: SocketAddr, tcp: TcpStream) -> Result<Socket> {
    websocket_at(addr, "", tcp).await
}

/// An open arena without obstacles, `w` x `h`.
pub fn open_arena(w: f32, h: f32) -> SimConfig {
    SimConfig {
        arena: skirmish_core::Vec2::new(w, h),
        obstacles: Vec::new(),
        ..SimConfig::default()
    }
}

/// Starts a server with `config`.
///
/// # Errors
/// It cannot bind.
pub fn server(config: TestConfig) -> Result<RunningServer> {
    start(config.server, catalog(&config.games))
}

/// A server on its own Tokio runtime and threads, as if it were another
/// process: load on the test's runtime cannot starve it, and its load
/// cannot starve the test's clients beyond what the cores allow.
pub struct SeparateServer {
    /// Where it listens.
    pub addr: SocketAddr,
    stop: Option<tokio::sync::oneshot::Sender<()>>,
    thread: Option<std::thread::JoinHandle<Result<()>>>,
}

impl SeparateServer {
    /// Starts a server with `config` on a new runtime.
    ///
    /// # Errors
    /// The runtime or the server cannot start.
    pub fn start(config: TestConfig) -> Result<SeparateServer> {
        let (addr_tx, addr_rx) = std::sync::mpsc::channel();
        let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
        let thread = std::thread::spawn(move || -> Result<()> {
            let runtime = tokio::runtime::Builder::new_multi_thread()
                .worker_threads(2)
                .enable_all()
                .build()?;
            runtime.block_on(async move {
                let server = start(config.server, catalog(&config.games))?;
                let _ = addr_tx.send(server.addr);
                let _ = stopped.await;
                server.shutdown().await
            })
        });
        let addr = addr_rx
            .recv_timeout(DEADLINE)
            .map_err(|_| anyhow!("the server did not start"))?;
        Ok(SeparateServer {
            addr,
            stop: Some(stop),
            thread: Some(thread),
        })
    }

    /// Stops the server and waits for it.
    ///
    /// # Errors
    /// The server failed.
    pub fn shutdown(mut self) -> Result<()> {
        self.stop_and_join()
    }

    fn stop_and_join(&mut self) -> Result<()> {
        if let Some(stop) = self.stop.take() {
            let _ = stop.send(());
        }
        match self.thread.take() {
            Some(thread) => thread
                .join()
                .map_err(|_| anyhow!("the server thread panicked"))?,
            None => Ok(()),
        }
    }
}

impl Drop for SeparateServer {
    fn drop(&mut self) {
        let _ = self.stop_and_join();
    }
}

/// A protocol client over a real WebSocket.
pub struct Client {
    socket: Socket,
    /// The id from `welcome`, once joined.
    pub id: PlayerId,
    /// The room from `welcome`, once joined.
    pub room: String,
    /// The config from `welcome`, once joined.
    pub config: SimConfig,
}

impl Client {
    /// Connects to `/ws` from a fresh loopback address, without saying hello.
    ///
    /// # Errors
    /// The connection fails.
    pub async fn connect(addr: SocketAddr) -> Result<Client> {
        Client::connect_from(addr, next_source()).await
    }

    /// Connects to `/ws` from `source`, without saying hello.
    ///
    /// # Errors
    /// The connection fails.
    pub async fn connect_from(addr: SocketAddr, source: IpAddr) -> Result<Client> {
        let tcp = tcp_from(addr, source).await.context("connecting")?;
        Ok(Client::over(websocket_over(addr, tcp).await?))
    }

    /// Connects with a small receive buffer, so that a client that never
    /// reads fills it quickly.
    ///
    /// # Errors
    /// The connection fails.
    pub async fn connect_small_buffer(addr: SocketAddr) -> Result<Client> {
        let tcp = TcpSocket::new_v4()?;
        tcp.set_recv_buffer_size(4096)?;
        tcp.bind(SocketAddr::new(next_source(), 0))?;
        let stream = tcp.connect(addr).await?;
        let (socket, _) = tokio_tungstenite::client_async_with_config(
            format!("ws://{addr}/ws"),
            MaybeTlsStream::Plain(stream),
            Some(skirmish_harness::net::config()),
        )
        .await
        .context("handshake")?;
        Ok(Client::over(socket))
    }

    fn over(socket: Socket) -> Client {
        Client {
            socket,
            id: PlayerId::default(),
            room: String::new(),
            config: SimConfig::default(),
        }
    }

    /// Connects, says hello and waits for `welcome`.
    ///
    /// # Errors
    /// Anything but a `welcome` comes back.
    pub async fn join(addr: SocketAddr, name: &str, room: Option<&str>) -> Result<Client> {
        let mut client = Client::connect(addr).await?;
        client.hello(name, room).await?;
        client.welcome().await?;
        Ok(client)
    }

    /// Sends `hello`.
    ///
    /// # Errors
    /// The socket is closed.
    pub async fn hello(&mut self, name: &str, room: Option<&str>) -> Result<()> {
        self.hello_with(name, room, Encoding::Json).await
    }

    /// Sends `hello` asking for snapshots in `encoding`, as a protocol-1
    /// client (inputs in its own ticks, queued by the server): what an
    /// outside tool written against v1 sends.
    ///
    /// # Errors
    /// The socket is closed.
    pub async fn hello_with(
        &mut self,
        name: &str,
        room: Option<&str>,
        encoding: Encoding,
    ) -> Result<()> {
        self.hello_speaking(name, room, encoding, 1).await
    }

    /// Sends `hello` speaking `protocol`.
    ///
    /// # Errors
    /// The socket is closed.
    pub async fn hello_speaking(
        &mut self,
        name: &str,
        room: Option<&str>,
        encoding: Encoding,
        protocol: u32,
    ) -> Result<()> {
        self.send(&ClientMessage::Hello {
            name: name.to_string(),
            protocol,
            room: room.map(str::to_string),
            encoding,
            game: Some(skirmish_core::GameId::of::<skirmish_tanks::Tanks>()),
        })
        .await
    }

    /// Waits for `welcome` and remembers what it says.
    ///
    /// # Errors
    /// Something else comes first.
    pub async fn welcome(&mut self) -> Result<()> {
        match self.recv().await? {
            ServerMessage::Welcome {
                player_id,
                room,
                setup,
                ..
            } => {
                self.id = player_id;
                self.room = room;
                self.config = setup.config;
                Ok(())
            }
            other => bail!("expected welcome, got {other:?}"),
        }
    }

    /// Sends a message.
    ///
    /// # Errors
    /// The socket is closed.
    pub async fn send(&mut self, message: &ClientMessage<WireInput>) -> Result<()> {
        self.send_text(encode(message)).await
    }

    /// Sends a raw text frame.
    ///
    /// # Errors
    /// The socket is closed.
    pub async fn send_text(&mut self, text: impl Into<String>) -> Result<()> {
        self.socket.send(Message::text(text.into())).await?;
        Ok(())
    }

    /// Sends a raw binary frame.
    ///
    /// # Errors
    /// The socket is closed.
    pub async fn send_binary(&mut self, bytes: Vec<u8>) -> Result<()> {
        self.socket.send(Message::binary(bytes)).await?;
        Ok(())
    }

    /// Sends a WebSocket pong frame (unasked: a flood of them is what a
    /// hostile client could send without any message of the protocol).
    ///
    /// # Errors
    /// The connection failed.
    pub async fn send_pong(&mut self) -> Result<()> {
        self.socket.send(Message::Pong(Vec::new().into())).await?;
        Ok(())
    }

    /// Sends inputs.
    ///
    /// # Errors
    /// The socket is closed.
    pub async fn inputs(&mut self, inputs: Vec<WireInput>) -> Result<()> {
        self.send(&ClientMessage::Input {
            inputs,
            snapshot_ack: None,
            seq: None,
        })
        .await
    }

    /// The next message from the server.
    ///
    /// # Errors
    /// The connection ends, the deadline passes, or the text does not decode.
    pub async fn recv(&mut self) -> Result<ServerMessage<Tanks>> {
        match self.recv_frame().await? {
            skirmish_core::Frame::Text(text) => {
                decode_server(&text).map_err(|e| anyhow!("undecodable {text}: {e}"))
            }
            skirmish_core::Frame::Binary(bytes)
                if skirmish_core::control::is_server_control(&bytes) =>
            {
                skirmish_core::control::decode_server(&bytes)
                    .map_err(|e| anyhow!("undecodable binary control message: {e}"))
            }
            skirmish_core::Frame::Binary(bytes) => {
                let (server_tick, players) = skirmish_tanks::compact::decode(&bytes, &self.config)
                    .map_err(|e| anyhow!("undecodable binary frame: {e}"))?;
                Ok(ServerMessage::Snapshot {
                    server_tick,
                    players,
                })
            }
        }
    }

    /// The next frame from the server as it came: text or binary.
    ///
    /// # Errors
    /// The connection ends or the deadline passes.
    pub async fn recv_frame(&mut self) -> Result<skirmish_core::Frame> {
        loop {
            let frame = tokio::time::timeout(DEADLINE, self.socket.next())
                .await
                .map_err(|_| anyhow!("no message within {DEADLINE:?}"))?;
            match frame {
                Some(Ok(Message::Text(text))) => {
                    return Ok(skirmish_core::Frame::Text(text.to_string()));
                }
                Some(Ok(Message::Binary(bytes))) => {
                    return Ok(skirmish_core::Frame::Binary(bytes.to_vec()));
                }
                Some(Ok(Message::Close(frame))) => bail!("closed: {frame:?}"),
                Some(Ok(_)) => {}
                Some(Err(e)) => bail!("socket error: {e}"),
                None => bail!("connection ended"),
            }
        }
    }

    /// The next `snapshot`, skipping other messages.
    ///
    /// # Errors
    /// As [`Client::recv`].
    pub async fn snapshot(&mut self) -> Result<(Tick, Vec<PlayerState>)> {
        loop {
            if let ServerMessage::Snapshot {
                server_tick,
                players,
            } = self.recv().await?
            {
                return Ok((server_tick, players));
            }
        }
    }

    /// This client's own state in the next snapshot.
    ///
    /// # Errors
    /// As [`Client::recv`], or the snapshot lacks this player.
    pub async fn own_state(&mut self) -> Result<PlayerState> {
        let id = self.id;
        let (_, players) = self.snapshot().await?;
        players
            .into_iter()
            .find(|p| p.id == id)
            .ok_or_else(|| anyhow!("player {id} is not in the snapshot"))
    }

    /// `id`'s state in the first of the next 100 snapshots that has it
    /// (snapshots from before it joined may still be queued).
    ///
    /// # Errors
    /// As [`Client::recv`], or `id` never shows up.
    pub async fn state_of(&mut self, id: PlayerId) -> Result<PlayerState> {
        for _ in 0..100 {
            let (_, players) = self.snapshot().await?;
            if let Some(state) = players.into_iter().find(|p| p.id == id) {
                return Ok(state);
            }
        }
        bail!("player {id} not in 100 snapshots")
    }

    /// The next `error`, skipping snapshots; its code.
    ///
    /// # Errors
    /// As [`Client::recv`].
    pub async fn error(&mut self) -> Result<ErrorCode> {
        loop {
            if let ServerMessage::Error { code, .. } = self.recv().await? {
                return Ok(code);
            }
        }
    }

    /// Waits until the server closes the connection; the close reason.
    ///
    /// # Errors
    /// The deadline passes.
    pub async fn closed(&mut self) -> Result<String> {
        loop {
            let frame = tokio::time::timeout(DEADLINE, self.socket.next())
                .await
                .map_err(|_| anyhow!("not closed within {DEADLINE:?}"))?;
            match frame {
                Some(Ok(Message::Close(frame))) => {
                    return Ok(frame.map(|f| f.reason.to_string()).unwrap_or_default());
                }
                Some(Ok(_)) => {}
                Some(Err(_)) | None => return Ok(String::new()),
            }
        }
    }

    /// Closes the connection politely.
    ///
    /// # Errors
    /// The close frame cannot be sent.
    pub async fn close(mut self) -> Result<()> {
        self.socket.close(None).await?;
        Ok(())
    }
}

/// An input for `tick`.
pub fn input(tick: u32, turn: f32, throttle: f32, fire: bool) -> WireInput {
    WireInput {
        tick: Tick(tick),
        turn,
        throttle,
        fire,
        view_tick: None,
    }
}

/// One metric's value from `GET /metrics` (the full line name, labels included).
///
/// # Errors
/// The request fails or the metric is missing.
pub async fn metric(addr: SocketAddr, name: &str) -> Result<u64> {
    let text = http_get(addr, "/metrics").await?;
    text.lines()
        .find_map(|l| l.strip_prefix(name)?.strip_prefix(' '))
        .and_then(|v| v.trim().parse().ok())
        .ok_or_else(|| anyhow!("no metric {name}"))
}
