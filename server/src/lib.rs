//! The authoritative Skirmish server as a library: the imperative shell
//! around `skirmish-core`'s [`Room`](skirmish_core::Room), for any game.
//! It names none: a binary lists the games it serves in a [`Catalog`] and
//! calls [`serve()`] (the repository's own binary, `main.rs`, hosts the
//! games listed in `skirmish-games`; a game of its own writes the same few
//! lines, see `docs/GUIDE.md`).
//!
//! - `GET /` serves the `--web-dir` folder (the pages and their wasm).
//! - `GET /ws` upgrades to the game hosted at `""` (`docs/PROTOCOL.md`),
//!   `GET /{path}/ws` to the game hosted at `path`.
//! - `GET /healthz` answers `ok`; `GET /rooms` lists rooms as JSON;
//!   `GET /metrics` is Prometheus text; `GET /transport` says where to
//!   connect over WebTransport (served on UDP beside).
//!
//! The crate is layered, and imports point down only (a tidy test checks
//! it): `game`, `config`, `metrics`, `limits` and `shutdown` at the bottom; `rooms`
//! (the registry, which never names a transport: transports implement its
//! [`Outbound`](rooms::Outbound)); `app` (the shared state); `session` (one
//! conversation for every transport); `transport::{ws, wt}` (bytes only,
//! never each other); `http` (the router and the accept loop); `server`
//! (bind and wire), `agones` and `serve` (until a signal) on top.
//!
//! [`start`] binds, spawns the server and returns a [`RunningServer`]; tests
//! start one on `127.0.0.1:0` and talk to it over real sockets.

pub mod config;
pub mod game;
pub mod limits;
pub mod metrics;
pub mod shutdown;

pub mod rooms;

pub mod app;

mod session;

mod transport;

mod http;

pub mod server;

pub mod agones;

pub mod serve;

pub use app::AppState;
pub use config::{Limits, RoomSettings, ServerConfig};
pub use game::Hosted;
pub use limits::{AddressBook, Permit};
pub use metrics::{DisconnectReason, Metrics, Refusal};
pub use rooms::{RoomInfo, Rooms};
pub use serve::{log_to_stderr, serve};
pub use server::{start, Catalog, RunningServer};
