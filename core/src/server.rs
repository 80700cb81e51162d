//! The server side: a [`room::Room`] (sans I/O) over the authoritative
//! [`world::World`]. Only the server's shell and the test stepper run it.

pub mod interest;
pub mod record;
pub mod replay;
pub mod room;
pub mod things;
pub mod world;
