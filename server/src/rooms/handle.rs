//! One open room as the shell keeps it: core's `Room`, the outbounds of its
//! clients and the outbox, behind one mutex; and [`RoomHandle`], a session's
//! way in. Delivery happens here, under the room's lock: each frame the room
//! decided goes to each recipient's [`Outbound`] at once.

use std::collections::BTreeMap;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};
use std::time::{Duration, Instant};

use skirmish_core::{ErrorCode, Frame, Outbox, PlayerId, ProtocolError, Received};
use skirmish_core::{RoomEnd, Seating};

use skirmish_core::{ClientMessage, Networked, Room};

use super::Hosted;

use super::recording::RecordSink;
use super::ticker::TickHealth;
use super::{Outbound, SendError};
use crate::limits::Permit;
use crate::metrics::{Metrics, Reported};

/// A client of a room, as the shell keeps it.
#[derive(Debug)]
struct Client {
    out: Arc<dyn Outbound>,
    /// The address's seat, given back when the client goes.
    _seat: Permit,
}

/// A room and the outbounds of its clients, behind the room's mutex.
#[derive(Debug)]
pub(super) struct Shared<G: Hosted> {
    pub(super) room: Room<G>,
    clients: BTreeMap<PlayerId, Client>,
    out: Outbox,
    /// The address that opened the room holds this until the room closes.
    pub(super) opener: Option<Permit>,
    /// When the last tick was stepped: input slack is measured from it.
    last_tick: Option<Instant>,
    /// What the world's clock counters were at the last report.
    reported: Reported,
    /// `--record`: where the room's recording goes.
    pub(super) record: Option<RecordSink>,
    /// What the last tick sends half a tick later (own echoes): recipient
    /// and payload.
    later: Vec<(PlayerId, Vec<u8>)>,
}

/// A session's way into its room.
#[derive(Debug)]
pub struct RoomHandle<G: Hosted> {
    pub(super) inner: Arc<RoomInner<G>>,
}

impl<G: Hosted> Clone for RoomHandle<G> {
    fn clone(&self) -> Self {
        RoomHandle {
            inner: self.inner.clone(),
        }
    }
}

#[derive(Debug)]
pub(super) struct RoomInner<G: Hosted> {
    name: Arc<str>,
    shared: Mutex<Shared<G>>,
    /// Seats taken, read without the room's lock by the registry.
    pub(super) seats: AtomicUsize,
    /// When ticks finish, for the health pings (see [`TickHealth`]).
    pub(super) health: TickHealth,
    /// Set once the room has ended (emptied, shut down or failed): its
    /// task stops, and a session's late calls no longer reach core's
    /// `Room`, whose state after a failed tick is not to be trusted.
    closed: AtomicBool,
    /// Why a call into the room outside its tick (a message, a join, a
    /// leave) panicked: from then on no call reaches core's `Room`, and
    /// the room's task fails it as a panicking tick does.
    failed: Mutex<Option<String>>,
    metrics: Arc<Metrics>,
}

impl<G: Hosted> RoomHandle<G> {
    /// A handle to a new room called `name`, opened by `opener`'s address.
    pub(super) fn new(
        name: Arc<str>,
        room: Room<G>,
        opener: Option<Permit>,
        health: TickHealth,
        metrics: Arc<Metrics>,
    ) -> RoomHandle<G> {
        RoomHandle {
            inner: Arc::new(RoomInner {
                name,
                shared: Mutex::new(Shared {
                    room,
                    clients: BTreeMap::new(),
                    out: Outbox::new(),
                    opener,
                    last_tick: None,
                    reported: Reported::default(),
                    record: None,
                    later: Vec::new(),
                }),
                seats: AtomicUsize::new(0),
                health,
                closed: AtomicBool::new(false),
                failed: Mutex::new(None),
                metrics,
            }),
        }
    }

    /// The room's name.
    pub fn name(&self) -> &str {
        &self.inner.name
    }

    /// Whether the room has ended.
    pub fn is_closed(&self) -> bool {
        self.inner.closed.load(Ordering::Acquire)
    }

    /// Whether `id` holds a seat in the room.
    pub(super) fn seats_player(&self, id: PlayerId) -> bool {
        self.lock().room.contains(id)
    }

    /// Whether a call into the room panicked (its state is not to be
    /// trusted: nothing reaches it any more).
    fn is_failed(&self) -> bool {
        self.inner
            .failed
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .is_some()
    }

    /// Why a call into the room outside its tick panicked, once: the
    /// room's task then fails the room.
    pub(super) fn take_failure(&self) -> Option<String> {
        self.inner
            .failed
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .take()
    }

    /// Runs `call` on the room; a panic in it is caught and kept as the
    /// room's failure (`what` says which call), and answered `room_failed`.
    fn guarded<T>(
        &self,
        what: impl FnOnce() -> String,
        call: impl FnOnce() -> T,
    ) -> Result<T, ProtocolError> {
        std::panic::catch_unwind(std::panic::AssertUnwindSafe(call)).map_err(|panic| {
            let why = format!("{}: {}", what(), super::ticker::panic_message(&*panic));
            *self
                .inner
                .failed
                .lock()
                .unwrap_or_else(PoisonError::into_inner) = Some(why);
            ProtocolError::new(ErrorCode::RoomFailed, "the room failed")
        })
    }

    pub(super) fn lock(&self) -> MutexGuard<'_, Shared<G>> {
        // A panic inside a tick closes the room (see `RoomHandle::end`)
        // before anything else reads it; the outbounds and the recording
        // beside it are still whole, so the poison is not passed on.
        self.inner
            .shared
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
    }

    /// Whether the room records itself (`--record`): its sessions then
    /// hand it each message's frame as it arrived, for the recording.
    pub fn is_recorded(&self) -> bool {
        self.lock().room.is_recorded()
    }

    /// Hands the room one decoded message from `id`, with the frame it was
    /// decoded from when the room records itself; what it answers goes to
    /// the outbounds.
    ///
    /// # Errors
    /// The room refused the message (see [`Room::receive`]).
    pub fn receive(
        &self,
        id: PlayerId,
        message: &ClientMessage<<G as Networked>::Wire>,
        frame: Option<(bool, &[u8])>,
    ) -> Result<Received, ProtocolError> {
        let mut shared = self.lock();
        if self.is_closed() || self.is_failed() {
            return Err(ProtocolError::new(
                ErrorCode::RoomFailed,
                "the room has closed",
            ));
        }
        let Shared {
            room,
            out,
            last_tick,
            ..
        } = &mut *shared;
        let since = last_tick.map_or(Duration::ZERO, |t| t.elapsed());
        let received = self.guarded(
            || format!("a message from player {id} failed"),
            || {
                #[cfg(feature = "test-hooks")]
                self.inner.health.fail_message_if_asked(&self.inner.name);
                match frame {
                    Some(frame) => room.receive_frame_at(id, message, frame, since, out),
                    None => room.receive_at(id, message, since, out),
                }
            },
        )?;
        self.deliver(&mut shared);
        if let Ok(r) = &received {
            if r.dropped > 0 {
                self.inner.metrics.dropped_inputs(r.dropped as u64);
            }
        }
        received
    }

    /// Gives `id`'s seat back (nothing if it has none, or if the room has
    /// closed and given every seat back already).
    pub fn leave(&self, id: PlayerId) {
        let mut shared = self.lock();
        if !self.is_closed() && !self.is_failed() {
            let _ = self.guarded(
                || format!("player {id} leaving failed"),
                || self.unseat(&mut shared, id),
            );
        }
    }

    /// Seats `id` (its `welcome` and `roster` go out through `out`), keeping
    /// the address's `seat` until it leaves.
    pub(super) fn seat(
        &self,
        id: PlayerId,
        name: &str,
        seating: Seating,
        out: Arc<dyn Outbound>,
        seat: Permit,
    ) -> Result<(), ProtocolError> {
        let mut shared = self.lock();
        if self.is_closed() || self.is_failed() {
            return Err(ProtocolError::new(ErrorCode::ServerFull, "the room closed"));
        }
        let Shared {
            room, out: outbox, ..
        } = &mut *shared;
        self.guarded(
            || format!("player {id} joining failed"),
            || room.join(id, name, seating, outbox),
        )??;
        shared.clients.insert(id, Client { out, _seat: seat });
        self.inner.metrics.players_changed(true);
        self.inner.seats.store(shared.room.len(), Ordering::Relaxed);
        self.deliver(&mut shared);
        Ok(())
    }

    /// Takes `id` out of the room and its clients; the client, if it was one.
    fn unseat(&self, shared: &mut Shared<G>, id: PlayerId) -> Option<Client> {
        let client = shared.clients.remove(&id);
        if client.is_some() {
            self.inner.metrics.players_changed(false);
        }
        shared.room.leave(id);
        self.inner.seats.store(shared.room.len(), Ordering::Relaxed);
        client
    }

    /// Steps the room one tick and sends what it decided; whether the room
    /// is empty. The room's decision and the writes are timed apart.
    pub(super) fn step(&self) -> bool {
        let mut shared = self.lock();
        #[cfg(feature = "test-hooks")]
        assert!(
            !self.inner.health.take_failure(),
            "room {} was asked to fail by a test",
            self.inner.name
        );
        let started = Instant::now();
        shared.last_tick = Some(started);
        let Shared { room, out, .. } = &mut *shared;
        room.tick(out);
        let decided = Instant::now();
        self.inner.metrics.tick(decided - started);
        let Shared { room, reported, .. } = &mut *shared;
        self.inner
            .metrics
            .timing
            .add(room.world().stats(), reported);
        self.deliver(&mut shared);
        self.inner.metrics.tick_sent(decided.elapsed());
        self.save_recording(&mut shared);
        shared.room.is_empty()
    }

    /// `--record`: hands what the room recorded since the last tick to its
    /// writer; once that stops (bound, write error, disk behind), the room
    /// stops recording.
    fn save_recording(&self, shared: &mut Shared<G>) {
        let Shared { room, record, .. } = shared;
        let (Some(sink), Some(recorder)) = (record.as_mut(), room.recorder()) else {
            return;
        };
        recorder.take(&mut sink.next);
        match sink.send() {
            Ok(()) => {}
            Err(why) => {
                tracing::warn!(room = %self.inner.name, "recording stopped: {why}");
                self.inner.metrics.recording_stopped();
                *record = None;
                room.stop_recording();
            }
        }
    }

    /// Ends the room, `how` it ended: its recording gets what the room
    /// recorded so far and an end record, and its writer is handed back to
    /// be joined; every client still seated is told (`room_failed` after a
    /// failed tick, `shutting_down` at shutdown) and its seat, and the
    /// opener's room, given back. Nothing here calls into core's `Room`
    /// but its recorder, so a room whose tick panicked ends cleanly too.
    /// The caller has taken the room out of the registry.
    pub(super) fn end(&self, how: &RoomEnd) -> Option<RecordSink> {
        let mut shared = self.lock();
        if self.inner.closed.swap(true, Ordering::AcqRel) {
            return None;
        }
        let Shared {
            room,
            record,
            clients,
            opener,
            ..
        } = &mut *shared;
        let sink = record.take().and_then(|mut sink| {
            let recorder = room.recorder()?;
            recorder.end(how);
            recorder.take(&mut sink.next);
            match sink.send() {
                Ok(()) => Some(sink),
                Err(why) => {
                    tracing::warn!(room = %self.inner.name, "recording's end lost: {why}");
                    self.inner.metrics.recording_stopped();
                    None
                }
            }
        });
        let code = match how {
            RoomEnd::Failed(_) => Some(ErrorCode::RoomFailed),
            RoomEnd::ShutDown => Some(ErrorCode::ShuttingDown),
            RoomEnd::Emptied => None,
        };
        for (_, client) in std::mem::take(clients) {
            self.inner.metrics.players_changed(false);
            if let Some(code) = code {
                client.out.kick(code);
            }
        }
        *opener = None;
        self.inner.seats.store(0, Ordering::Relaxed);
        sink
    }

    /// Sends each frame of the outbox to each recipient (and empties the
    /// outbox, keeping its buffers); keeps what goes half a tick later;
    /// drops whoever is not keeping up.
    fn deliver(&self, shared: &mut Shared<G>) {
        if shared.out.is_empty() {
            return;
        }
        let Shared {
            out,
            clients,
            later,
            ..
        } = &mut *shared;
        for &(to, i) in out.later() {
            if let Some(Frame::Binary(bytes)) = out.frames().get(i) {
                later.push((to, bytes.clone()));
            }
        }
        let sends = out.deliveries().iter().filter_map(|&(to, i)| {
            let (text, payload) = match out.frames().get(i)? {
                Frame::Text(text) => (true, text.as_bytes()),
                Frame::Binary(bytes) => (false, bytes.as_slice()),
            };
            Some((to, text, payload, out.droppable(i)))
        });
        let gone = self.send_all(clients, sends);
        shared.out.clear();
        self.drop_gone(shared, gone);
    }

    /// Whether the last tick held anything back for half a tick.
    pub(super) fn has_later(&self) -> bool {
        !self.lock().later.is_empty()
    }

    /// Sends what the last tick held back for half a tick (own echoes).
    pub(super) fn send_later(&self) {
        let mut shared = self.lock();
        if shared.later.is_empty() || self.is_closed() {
            shared.later.clear();
            return;
        }
        let later = std::mem::take(&mut shared.later);
        let sends = later
            .iter()
            .map(|(to, payload)| (*to, false, payload.as_slice(), true));
        let gone = self.send_all(&shared.clients, sends);
        self.drop_gone(&mut shared, gone);
    }

    /// Sends each `(recipient, text, payload, droppable)`; who could not
    /// take theirs, and why.
    fn send_all<'a>(
        &self,
        clients: &BTreeMap<PlayerId, Client>,
        sends: impl Iterator<Item = (PlayerId, bool, &'a [u8], bool)>,
    ) -> Vec<(PlayerId, SendError)> {
        let mut gone = Vec::new();
        let (mut count, mut bytes) = (0, 0);
        for (to, text, payload, droppable) in sends {
            let Some(client) = clients.get(&to) else {
                continue;
            };
            match client.out.send(text, payload, droppable) {
                Ok(()) => {
                    count += 1;
                    bytes += payload.len();
                }
                Err(e) => gone.push((to, e)),
            }
        }
        self.inner.metrics.sent_many(count, bytes);
        gone
    }

    /// Unseats the clients a send failed for, telling the slow ones why.
    fn drop_gone(&self, shared: &mut Shared<G>, gone: Vec<(PlayerId, SendError)>) {
        for (id, why) in gone {
            let Some(client) = self.unseat(shared, id) else {
                continue;
            };
            if why == SendError::Slow {
                tracing::info!(room = %self.inner.name, %id, "slow consumer dropped");
                client.out.kick(ErrorCode::SlowConsumer);
            }
        }
    }
}
