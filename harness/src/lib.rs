//! The Skirmish harness, for any game on `skirmish-core`: what a game in a
//! crate of its own needs to measure its netcode, by depending on this
//! crate rather than editing Skirmish's.
//!
//! A game implements three traits of `skirmish-core` in its own crate
//! (re-exported here): [`Harness`] (where a drawn thing is, what a
//! snap-back looks like, which note is a hit), [`Driver`] (a client's
//! brain: the controls it holds this frame, from what its session shows)
//! and [`Harness`] (its main cell's room and brains, and the words of its
//! quality page, [`QualityWords`]). Then:
//!
//! - [`stepper`]: the real `Room` and real `ClientSession`s over an
//!   in-memory link on a simulated clock, each client with its own clock
//!   and scripted network ([`scenario`]); a run is exactly reproducible.
//! - [`matrix`]: the game's main cell ([`matrix::main_cell`]), the numbers
//!   of a quality table's row ([`matrix::summarize`]) and the main cell's
//!   budget ([`matrix::assert_main_cell_budget`]).
//! - [`quality`]: the game's quality page ([`quality::write_game_page`])
//!   and the parts of any page of scenarios; [`chart`] and [`plot`] draw
//!   SVG from a run's samples or a replay's.
//! - [`bot`], [`fleet`]: headless bots of the game over real WebSocket or
//!   WebTransport ([`wt`]) against a running server, and a fleet of them
//!   as a `bots` binary runs it; [`relay`]: impairment relays (UDP and
//!   TCP) in front of a server; [`net`]: the socket helpers they share.
//! - [`replay`]: a recording replayed natively, frame by frame or tick by
//!   tick, refused by its name when it is another game's; [`recordings`]:
//!   reading them from disk, a page's beside its room's.
//!
//! # Architecture invariants
//! - It names no game (a tidy test, `tests/tests/tidy.rs`, checks it):
//!   a game is a type parameter, and a binary that hosts several games
//!   names them in its own `main`.
//! - The stepper is deterministic: time is simulated, links are seeded;
//!   the same seeds and brains give the same counters on every machine.

pub mod bot;
pub mod chart;
pub mod fleet;
pub mod light;
pub mod matrix;
pub mod net;
pub mod plot;
pub mod quality;
pub mod recordings;
pub mod relay;
pub mod replay;
pub mod scenario;
pub mod stepper;
mod trace;
pub mod whole;
pub mod wt;

pub use skirmish_core::{Driver, Harness, QualityWords};
