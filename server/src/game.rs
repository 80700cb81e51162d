//! What a game needs to be hosted: the library's server side of it, whose
//! rooms can move between threads. The server names no game: a binary
//! lists the games it serves in a [`Catalog`](crate::Catalog) (the
//! repository's binary, `main.rs`, hosts the games of `skirmish-games`).

use skirmish_core::ServerGame;

/// A game this server can host: the library's server side of it, whose
/// rooms can move between threads.
pub trait Hosted: ServerGame + Send + Sync + std::fmt::Debug {}

impl<G: ServerGame + Send + Sync + std::fmt::Debug> Hosted for G {}
