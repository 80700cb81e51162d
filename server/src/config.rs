//! Everything the server can be told, with each default written once: the
//! command line is derived from these structs, and [`ServerConfig::default`]
//! is what an empty command line gives.

pub mod host;

use std::net::SocketAddr;
use std::path::PathBuf;
use std::time::Duration;

use clap::{Args, Parser};
use skirmish_core::{InterestConfig, MAX_FRAME_BYTES};

use skirmish_core::{RoomConfig, ServerGame};

/// How the server runs.
#[derive(Clone, Debug, Parser)]
#[command(
    name = "skirmish-server",
    version,
    about = "The authoritative Skirmish game server"
)]
pub struct ServerConfig {
    /// Address to listen on.
    #[arg(long, default_value = "127.0.0.1:8080")]
    pub addr: SocketAddr,
    /// Folder served at `/` (the page and the built client).
    #[arg(long, default_value = "web")]
    pub web_dir: PathBuf,
    /// Worker threads; 1 runs everything on one thread, which is cheapest
    /// per player (no cross-thread wake-ups).
    #[arg(long, default_value_t = 1)]
    pub threads: usize,
    /// How rooms are set up.
    #[command(flatten)]
    pub rooms: RoomSettings,
    /// What one connection, and one address, may do.
    #[command(flatten)]
    pub limits: Limits,
    /// The socket send buffer of accepted connections, if set (tests use a
    /// small one to find slow consumers quickly).
    #[arg(skip)]
    pub socket_send_buffer: Option<u32>,
    /// WebTransport.
    #[command(flatten)]
    pub webtransport: WebTransportSettings,
    /// Running as an Agones game server.
    #[command(flatten)]
    pub agones: AgonesSettings,
}

/// How the server runs under Agones.
#[derive(Clone, Debug, Args)]
pub struct AgonesSettings {
    /// Run as an Agones game server: talk to the SDK sidecar (needs a
    /// server built with the `agones` feature).
    #[arg(long = "agones")]
    pub enabled: bool,
    /// The SDK sidecar's gRPC port on localhost.
    #[arg(
        long = "agones-sdk-port",
        env = "AGONES_SDK_GRPC_PORT",
        default_value_t = 9357
    )]
    pub sdk_port: u16,
    /// How long to keep trying to reach the sidecar at start, in seconds.
    #[arg(long = "agones-connect-timeout", default_value = "30", value_parser = seconds)]
    pub connect_timeout: Duration,
    /// After an allocation, shut down once the server has had no players
    /// for this many seconds.
    #[arg(long = "agones-shutdown-when-empty", value_parser = seconds)]
    pub shutdown_when_empty: Option<Duration>,
    /// How often a health ping is due.
    #[arg(skip = Duration::from_secs(2))]
    pub health_every: Duration,
    /// A room that has not finished a tick for longer than this stops the
    /// health pings.
    #[arg(skip = Duration::from_secs(1))]
    pub stall_after: Duration,
}

/// Where WebTransport listens, and with which certificate.
#[derive(Clone, Debug, Args)]
pub struct WebTransportSettings {
    /// Serve no WebTransport (pages and bots use WebSocket).
    #[arg(long = "no-webtransport")]
    pub disabled: bool,
    /// UDP address of the WebTransport endpoint; default: `--addr`'s
    /// address and port, over UDP.
    #[arg(long = "webtransport-addr")]
    pub listen: Option<SocketAddr>,
    /// Tell pages to reach WebTransport at the port they reached the page
    /// on (its `Host`), not the endpoint's own: for a port mapping that
    /// gives TCP and UDP one public port (Agones' `protocol: TCPUDP`).
    #[arg(long = "webtransport-port-from-host")]
    pub port_from_host: bool,
    /// The host pages are told to reach WebTransport at (a name or an
    /// address, with a port or not); default: the `Host` the page was
    /// reached at when it is a plain host name or address, else `--addr`'s
    /// address.
    #[arg(long = "public-host", env = "SKIRMISH_PUBLIC_HOST", value_parser = public_host)]
    pub public_host: Option<String>,
    /// A PEM certificate chain for WebTransport (with `--tls-key`); without
    /// it a self-signed certificate is made, valid 14 days and renewed a day
    /// before it expires, which pages pin by hash (`GET /transport`).
    #[arg(long = "tls-cert", requires = "tls_key")]
    pub tls_cert: Option<PathBuf>,
    /// The PKCS#8 PEM private key of `--tls-cert`.
    #[arg(long = "tls-key", requires = "tls_cert")]
    pub tls_key: Option<PathBuf>,
    /// How often a self-signed certificate is replaced: 13 days, a day
    /// before the browser's 14-day limit (tests shorten it).
    #[arg(skip = Duration::from_secs(13 * 24 * 3600))]
    pub renew_every: Duration,
}

/// How rooms are set up.
#[derive(Clone, Debug, Args)]
pub struct RoomSettings {
    /// Players per room.
    #[arg(long = "room-capacity", default_value_t = 64)]
    pub capacity: usize,
    /// Rooms per process, of every game together; past both limits a
    /// joiner gets `server_full`.
    #[arg(long, default_value_t = 64)]
    pub max_rooms: usize,
    /// Seed of the rooms' randomness (spawn points); room `n` uses `seed + n`.
    #[arg(long, default_value_t = 1)]
    pub seed: u64,
    /// Seconds a room without players stays open.
    #[arg(long = "empty-room-timeout", default_value = "30", value_parser = seconds)]
    pub empty_timeout: Duration,
    /// Binary clients only get the players within this many units (plus a
    /// 100-unit margin before they are dropped, and anyone they fought);
    /// unset: every player of the room.
    #[arg(long)]
    pub interest_radius: Option<f32>,
    /// Bytes a binary snapshot frame may take, whole, when the room has an
    /// interest radius; players overdue a refresh (200 ms) go whatever the
    /// budget. The default fits one QUIC datagram on any path, before the
    /// path's MTU is known.
    #[arg(long, default_value_t = skirmish_core::InterestConfig::DATAGRAM_BUDGET)]
    pub snapshot_budget: usize,
    /// Threads each room builds its binary clients' snapshot frames on
    /// (the room's own among them; 0, the default: one per core of the
    /// machine): a room of hundreds of players with a view each (an .io
    /// arena) spreads the work over the cores. A room of fewer than 64
    /// binary clients a thread uses fewer, and a room without an interest
    /// radius one (its clients share frames).
    /// The frames are the same bytes whatever the number.
    #[arg(long, default_value_t = 0, value_parser = clap::value_parser!(u64).range(0..=256))]
    pub snapshot_threads: u64,
    /// Seat protocol-1 clients (inputs named by the client's own ticks and
    /// queued by the server, which lets a client catch up two inputs a
    /// tick); without it their `hello` is refused with `bad_protocol`.
    /// For tools written against protocol 1, such as the light load bots.
    #[arg(long = "allow-protocol-1")]
    pub allow_protocol_1: bool,
    /// Recording every room (`--record DIR`).
    #[command(flatten)]
    pub record: RecordSettings,
}

/// `--record DIR`: every room writes what enters it and a hash of what it
/// sends per tick, replayed by `cargo xtask replay-room FILE`.
#[derive(Clone, Debug, Args)]
pub struct RecordSettings {
    /// Folder each room's recording is written to; unset: no recording.
    #[arg(long = "record")]
    pub dir: Option<PathBuf>,
    /// Bytes per file of a room's recording before the next part starts.
    #[arg(long = "record-part-bytes", default_value_t = 64 << 20)]
    pub part_bytes: u64,
    /// Bytes of one room's recording, all parts together; past them the
    /// room stops recording (counted in `skirmish_recordings_stopped_total`).
    #[arg(long = "record-max-bytes", default_value_t = 1 << 30)]
    pub max_bytes: u64,
    /// Bytes of every room's recording together, written by this process;
    /// past them no room records (counted in
    /// `skirmish_recordings_refused_total{reason="total_bytes"}`).
    #[arg(long = "record-total-bytes", default_value_t = 8 << 30)]
    pub total_bytes: u64,
    /// Free bytes the recording's disk keeps: below them no room records
    /// (`reason="free_space"`).
    #[arg(long = "record-min-free-bytes", default_value_t = 1 << 30)]
    pub min_free_bytes: u64,
    /// Rooms recording at once, each with a writer thread of its own; a
    /// room opened past them is not recorded (`reason="writers"`).
    #[arg(long = "record-writers", default_value_t = 64)]
    pub writers: usize,
}

impl RoomSettings {
    /// The threads a room builds its snapshot frames on: `--snapshot-threads`,
    /// or one per core when it is 0 (1 when the cores cannot be told).
    pub fn snapshot_workers(&self) -> usize {
        match self.snapshot_threads {
            0 => std::thread::available_parallelism().map_or(1, usize::from),
            n => n as usize,
        }
    }

    /// How room `number` called `name` is set up.
    pub fn room_config<G: ServerGame>(
        &self,
        name: &str,
        number: u64,
        game: &G::Settings,
    ) -> RoomConfig<G> {
        RoomConfig {
            name: name.to_string(),
            capacity: self.capacity,
            game: game.clone(),
            seed: self.seed.wrapping_add(number),
            interest: InterestConfig {
                radius: self.interest().radius.or_else(|| G::interest_radius(game)),
                ..self.interest()
            },
        }
    }

    /// Interest management and the byte budget.
    pub fn interest(&self) -> InterestConfig {
        InterestConfig {
            radius: self.interest_radius.filter(|r| r.is_finite() && *r > 0.0),
            budget: self.snapshot_budget,
            ..InterestConfig::default()
        }
    }
}

/// What one connection, and one source address, may do. Every refusal is
/// counted in `/metrics`.
#[derive(Clone, Debug, Args)]
pub struct Limits {
    /// Open connections in all (HTTP, WebSocket and WebTransport); more are
    /// refused: HTTP 503 on TCP, a refused handshake on WebTransport.
    #[arg(long, default_value_t = 10_000)]
    pub max_connections: usize,
    /// Open connections from one source address; more are refused: HTTP 429
    /// on TCP, a refused handshake on WebTransport.
    #[arg(long, default_value_t = 16)]
    pub max_connections_per_address: usize,
    /// Seats one source address may hold at once, over all rooms.
    #[arg(long, default_value_t = 8)]
    pub max_seats_per_address: usize,
    /// Open rooms one source address may have opened.
    #[arg(long, default_value_t = 4)]
    pub max_rooms_per_address: usize,
    /// Seconds a new connection has to send a complete HTTP request (the
    /// WebSocket upgrade); an idle keep-alive connection has as long.
    #[arg(long, default_value = "5", value_parser = seconds)]
    pub upgrade_timeout: Duration,
    /// Seconds a plain HTTP connection (pages, `/metrics`) may stay open in
    /// all, so a client that never reads a response gives its connection
    /// back; a WebSocket is handed off at its upgrade and not bound by it.
    #[arg(long, default_value = "60", value_parser = seconds)]
    pub http_timeout: Duration,
    /// Seconds an upgraded connection has to send `hello`.
    #[arg(long, default_value = "10", value_parser = seconds)]
    pub hello_timeout: Duration,
    /// Messages queued for one client before it counts as a slow consumer.
    #[arg(long, default_value_t = 64)]
    pub outbox_capacity: usize,
    /// Seconds one write to a client may take before it counts as a slow consumer.
    #[arg(long, default_value = "2", value_parser = seconds)]
    pub send_timeout: Duration,
    /// Messages per second one connection may send, steadily (a token
    /// bucket, `--message-burst` deep); more are dropped. A protocol-2
    /// client seeing loss sends 3 input messages per tick (60 per second)
    /// besides its pings.
    #[arg(long, default_value_t = 100)]
    pub max_messages_per_sec: u32,
    /// Messages one connection may send at once, after a quiet while;
    /// default: `--max-messages-per-sec` (a second's worth).
    #[arg(long, value_parser = clap::value_parser!(u32).range(1..))]
    pub message_burst: Option<u32>,
    /// Bytes per second one connection may send, steadily (the messages'
    /// lengths; a token bucket, `--byte-burst` deep); past them messages are
    /// dropped as over `--max-messages-per-sec`. A client's inputs take
    /// at most about 12 KiB a second.
    #[arg(long, default_value_t = 64 * 1024, value_parser = clap::value_parser!(u64).range(1..))]
    pub max_bytes_per_sec: u64,
    /// Bytes one connection may send at once, after a quiet while; at least
    /// the largest message a client may send.
    #[arg(
        long,
        default_value_t = 64 * 1024,
        value_parser = clap::value_parser!(u64).range(MAX_FRAME_BYTES as u64..)
    )]
    pub byte_burst: u64,
}

impl Limits {
    /// The message bucket's depth: `--message-burst`, or a second's worth.
    pub fn message_burst(&self) -> u32 {
        self.message_burst.unwrap_or(self.max_messages_per_sec)
    }
}

impl Default for ServerConfig {
    fn default() -> Self {
        // Every field has a default, so an empty command line always parses.
        ServerConfig::try_parse_from(["skirmish-server"])
            .unwrap_or_else(|e| unreachable!("the defaults parse: {e}"))
    }
}

/// Checks `--public-host` as a page's `Host` is checked.
fn public_host(text: &str) -> Result<String, String> {
    host::checked(text)
        .map(str::to_string)
        .ok_or_else(|| format!("`{text}` is not a host name or address, with a port or not"))
}

/// Parses a number of seconds (fractions allowed) into a duration.
pub(crate) fn seconds(text: &str) -> Result<Duration, String> {
    let secs: f64 = text
        .parse()
        .map_err(|_| format!("`{text}` is not a number of seconds"))?;
    Duration::try_from_secs_f64(secs).map_err(|_| format!("`{text}` is not a duration"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_interest_radius_parses() {
        let parsed = ServerConfig::try_parse_from(["skirmish-server", "--interest-radius", "900"])
            .expect("parses");
        assert_eq!(parsed.rooms.interest().radius, Some(900.0));
        assert_eq!(ServerConfig::default().rooms.interest().radius, None);
    }

    #[test]
    fn defaults_come_from_the_command_line_definition() {
        let config = ServerConfig::default();
        assert_eq!(config.addr, SocketAddr::from(([127, 0, 0, 1], 8080)));
        assert_eq!(config.rooms.capacity, 64);
        assert_eq!(config.rooms.empty_timeout, Duration::from_secs(30));
        assert_eq!(config.limits.hello_timeout, Duration::from_secs(10));
        assert_eq!(config.limits.upgrade_timeout, Duration::from_secs(5));
        assert_eq!(config.threads, 1);
        assert_eq!(config.rooms.snapshot_threads, 0);
        assert!(config.rooms.snapshot_workers() >= 1, "one per core");
        let two = ServerConfig::try_parse_from(["skirmish-server", "--snapshot-threads", "2"])
            .expect("parses");
        assert_eq!(two.rooms.snapshot_workers(), 2);
        assert!(
            ServerConfig::try_parse_from(["skirmish-server", "--snapshot-threads", "999"]).is_err()
        );
        assert_eq!(config.rooms.record.dir, None);
        assert_eq!(config.rooms.record.part_bytes, 64 << 20);
        assert_eq!(config.rooms.record.total_bytes, 8 << 30);
        assert_eq!(config.rooms.record.min_free_bytes, 1 << 30);
        assert_eq!(config.rooms.record.writers, 64);
        assert!(!config.rooms.allow_protocol_1);
    }

    #[test]
    fn rate_limits_are_token_buckets_a_second_deep_unless_told() {
        let parse = |flags: &[&str]| {
            ServerConfig::try_parse_from(["skirmish-server"].iter().chain(flags)).map(|c| c.limits)
        };
        let limits = ServerConfig::default().limits;
        assert_eq!(limits.max_messages_per_sec, 100);
        assert_eq!(limits.message_burst, None);
        assert_eq!(limits.message_burst(), 100);
        assert_eq!(limits.max_bytes_per_sec, 64 * 1024);
        assert_eq!(limits.byte_burst, 64 * 1024);
        let rate_only = parse(&["--max-messages-per-sec", "30"]).expect("valid flags");
        assert_eq!(rate_only.message_burst(), 30);
        let all = parse(&[
            "--max-messages-per-sec",
            "30",
            "--message-burst",
            "5",
            "--max-bytes-per-sec",
            "10000",
            "--byte-burst",
            "8192",
        ])
        .expect("valid flags");
        assert_eq!(all.message_burst(), 5);
        assert_eq!((all.max_bytes_per_sec, all.byte_burst), (10_000, 8192));
        // A byte burst smaller than a message would never let it through.
        assert!(parse(&["--byte-burst", "8191"]).is_err());
        assert!(parse(&["--message-burst", "0"]).is_err());
        assert!(parse(&["--max-bytes-per-sec", "0"]).is_err());
    }

    #[test]
    fn flags_override_and_bad_durations_are_refused() {
        let config = ServerConfig::try_parse_from([
            "skirmish-server",
            "--room-capacity",
            "1000",
            "--upgrade-timeout",
            "0.5",
            "--max-seats-per-address",
            "2",
        ])
        .expect("valid flags");
        assert_eq!(config.rooms.capacity, 1000);
        assert_eq!(config.limits.upgrade_timeout, Duration::from_millis(500));
        assert_eq!(config.limits.max_seats_per_address, 2);
        assert!(
            ServerConfig::try_parse_from(["skirmish-server", "--hello-timeout", "-1"]).is_err()
        );
        assert!(ServerConfig::try_parse_from(["skirmish-server", "--hello-timeout", "x"]).is_err());
    }
}
