//! The authoritative Skirmish server: the imperative shell around
//! `skirmish-core`'s [`Room`](skirmish_core::Room), of every game named in
//! [`game`] (the one module that names them).
//!
//! - `GET /` serves the `web/` folder (the page and the built wasm client).
//! - `GET /ws` upgrades to the first game (`docs/PROTOCOL.md`), `GET
//!   /walkers/ws` to the game in the folder `walkers`.
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
//! (bind and wire) and `agones` on top.
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

pub use app::AppState;
pub use config::{Limits, RoomSettings, ServerConfig};
pub use limits::{AddressBook, Permit};
pub use metrics::{DisconnectReason, Metrics, Refusal};
pub use rooms::{RoomInfo, Rooms};
pub use server::{start, RunningServer};
