//! Each binary client's snapshot frame this tick, built on this thread or
//! spread over several ([`Room::spread_snapshots`]).
//!
//! A client's frame depends only on the tick's scene (shared, read-only)
//! and on its own viewer (its baseline, its view), so the clients are
//! independent: with more than one worker they are cut into runs of a few
//! consecutive clients, which the workers (this thread and others, each
//! with its own scratch) take one after another as they get free, and
//! the frames come back in seat order. The bytes are the same however many
//! workers build them. A room without an interest radius is built on one
//! thread: its clients see everyone and share a frame per baseline, which
//! each worker would build again.
//!
//! [`Room::spread_snapshots`]: super::Room::spread_snapshots

use std::collections::BTreeMap;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, PoisonError};

use super::RoomStats;
use crate::server::interest::{
    frames, keep_nearest, max_view_radius, BuildScratch, Scene, SentFrame, Truths, ViewScratch,
    Viewer,
};
use crate::server::world::ServerGame;
use crate::shared::compact;
use crate::shared::delta::{self, Entity};
use crate::shared::fields::{full_bytes, Fields};
use crate::shared::state::PlayerId;
use crate::shared::timing::InputTiming;

/// Fewest clients a worker is given: below this the thread costs more
/// than it saves.
const MIN_PER_WORKER: usize = 64;

/// Clients a worker takes at a time.
const RUN: usize = 16;

/// One binary client to build a frame for.
pub(super) struct Job<'v, F> {
    pub(super) id: PlayerId,
    /// Its own state's index in the tick's states.
    pub(super) at: usize,
    /// Its viewer, when it acknowledges.
    pub(super) viewer: Option<&'v mut Viewer<F>>,
    pub(super) timing: Option<InputTiming>,
    /// Its own block goes again, alone, half a tick later.
    pub(super) echo: bool,
}

/// One client's frames, built.
pub(super) struct Made {
    pub(super) id: PlayerId,
    pub(super) frame: Vec<u8>,
    pub(super) echo: Option<Vec<u8>>,
}

/// What every frame of the tick is built from, read by every worker.
pub(super) struct Shared<'a, G: ServerGame> {
    pub(super) scene: &'a Scene<'a, G::Entity>,
    pub(super) states: &'a [G::Own],
    pub(super) truths: &'a Truths<G::Entity>,
    /// The full compact tail of everyone.
    pub(super) tail: &'a [u8],
    /// Bytes a delta body may take.
    pub(super) budget: usize,
    /// This tick's frame that is the room's whole truth: every complete
    /// frame is this one, so the clients that got one share what follows.
    pub(super) complete: Arc<SentFrame<G::Entity>>,
}

/// Every job's frames, in the jobs' order, built by up to `workers`
/// threads (this one among them), and what they add to the room's
/// counters.
pub(super) fn frames<G: ServerGame>(
    mut jobs: Vec<Job<'_, G::Entity>>,
    shared: &Shared<'_, G>,
    workers: usize,
) -> (Vec<Made>, RoomStats) {
    // Without views (no interest radius) clients that see everyone share
    // a frame per baseline: little to spread, and each worker would build
    // its own copy.
    let workers = match shared.scene.grid {
        Some(_) => workers.min(jobs.len() / MIN_PER_WORKER).max(1),
        None => 1,
    };
    if workers == 1 {
        let mut builder = Builder::<G>::new(shared);
        let made = jobs.into_iter().map(|job| builder.make(job)).collect();
        return (made, builder.counts);
    }
    // Runs of a few clients, each taken by whichever worker is free: a
    // worker the system holds back (another process on its core) leaves
    // its share to the others, where halves fixed in advance would wait
    // for it. Each run's frames go back to its place.
    let mut runs = Vec::with_capacity(jobs.len().div_ceil(RUN));
    while !jobs.is_empty() {
        let rest = jobs.split_off(jobs.len().min(RUN));
        runs.push(Mutex::new((std::mem::replace(&mut jobs, rest), Vec::new())));
    }
    let next = AtomicUsize::new(0);
    let work = || {
        let mut builder = Builder::<G>::new(shared);
        while let Some(run) = runs.get(next.fetch_add(1, Ordering::Relaxed)) {
            // Each run is taken once: its lock is never contended, and a
            // worker's panic ends the tick (below), so no run is poisoned
            // half built.
            let mut run = run.lock().unwrap_or_else(PoisonError::into_inner);
            let (jobs, made) = &mut *run;
            made.extend(jobs.drain(..).map(|job| builder.make(job)));
        }
        builder.counts
    };
    let counts = std::thread::scope(|scope| {
        let others: Vec<_> = (1..workers).map(|_| scope.spawn(work)).collect();
        let mut counts = work();
        for other in others {
            // A worker's panic is this thread's: nothing is half sent.
            let theirs = other
                .join()
                .unwrap_or_else(|panic| std::panic::resume_unwind(panic));
            counts.add(&theirs);
        }
        counts
    });
    let made = runs
        .into_iter()
        .flat_map(|run| run.into_inner().unwrap_or_else(PoisonError::into_inner).1)
        .collect();
    (made, counts)
}

/// A frame built this tick and its body.
type Built<F> = (Arc<SentFrame<F>>, Vec<u8>);

/// One worker's frames: what it reads, and what it keeps between clients.
struct Builder<'a, G: ServerGame> {
    shared: &'a Shared<'a, G>,
    /// Frames built this tick for clients that see everyone, by the
    /// baseline frame they build on (its address): built once, shared.
    everyone: BTreeMap<usize, Built<G::Entity>>,
    counts: RoomStats,
    /// Kept between clients for their allocations.
    scratch: ViewScratch,
    seen: Vec<usize>,
    build: BuildScratch<G::Entity>,
}

impl<'a, G: ServerGame> Builder<'a, G> {
    fn new(shared: &'a Shared<'a, G>) -> Self {
        Builder {
            shared,
            everyone: BTreeMap::new(),
            counts: RoomStats::default(),
            scratch: ViewScratch::default(),
            seen: Vec::new(),
            build: BuildScratch::default(),
        }
    }

    /// The frames of one client.
    fn make(&mut self, job: Job<'_, G::Entity>) -> Made {
        let shared = self.shared;
        let own = &shared.states[job.at];
        let tick = shared.scene.tick;
        let frame = if let Some(viewer) = job.viewer {
            self.for_viewer(viewer, job.at, own, job.timing.as_ref())
        } else {
            let mut frame = Vec::with_capacity(compact::head_bytes::<G::Own>() + shared.tail.len());
            compact::encode_head(tick, own, job.timing.as_ref(), &mut frame);
            frame.extend_from_slice(shared.tail);
            frame
        };
        self.counts.binary_bytes += frame.len() as u64;
        self.counts.snapshots += 1;
        let echo = job.echo.then(|| {
            let mut echo =
                Vec::with_capacity(compact::head_bytes::<G::Own>() + compact::TIMING_BYTES);
            compact::encode_own(tick, own, job.timing.as_ref(), &mut echo);
            self.counts.binary_bytes += echo.len() as u64;
            echo
        });
        Made {
            id: job.id,
            frame,
            echo,
        }
    }

    /// The frame for the viewer of the player at index `at`, recorded as
    /// sent.
    fn for_viewer(
        &mut self,
        viewer: &mut Viewer<G::Entity>,
        at: usize,
        own: &G::Own,
        timing: Option<&InputTiming>,
    ) -> Vec<u8> {
        let shared = self.shared;
        let scene = shared.scene;
        let tick = scene.tick;
        let radius = view_radius_of::<G>(own, scene.config.radius);
        let mut seen = std::mem::take(&mut self.seen);
        let viewing = viewer.view(at, radius, scene, &mut self.scratch, &mut seen);
        // A view's frame keeps to the byte budget (roughly: a late
        // refresh may go past it); only a frame of everyone is the tail.
        let body = if viewing {
            shared.budget + shared.budget / 4
        } else {
            shared.tail.len()
        };
        let mut frame = Vec::with_capacity(
            crate::server::interest::delta_head_bytes::<G::Own>() + compact::TIMING_BYTES + body,
        );
        // A baseline whose set is no longer known (older than the room's
        // ring) is as good as none.
        let truths = shared.truths;
        let base = viewer
            .baseline()
            .filter(|b| truths.set_of(b).is_some())
            .cloned();
        let sent = if let Some(base) = base {
            self.counts.deltas += 1;
            delta::encode_head(tick, base.tick, own, timing, &mut frame);
            let base_set = truths.set_of(&base).unwrap_or_default();
            let budget = shared.budget;
            let (sent, body_len) = if viewing {
                let (next, body) = frames::build(
                    &base,
                    base_set,
                    Some(&seen),
                    Some(scene.positions[at]),
                    budget,
                    scene,
                    &mut self.build,
                );
                frame.extend_from_slice(&body);
                (Arc::new(next), body.len())
            } else {
                let key = Arc::as_ptr(&base) as usize;
                let complete = &shared.complete;
                let bodies = &mut self.counts.delta_bodies;
                let build = &mut self.build;
                // A view too large to choose from per client: the whole
                // truth, shared.
                let room = if scene.truth.len() > scene.config.max_budgeted_view {
                    usize::MAX
                } else {
                    budget
                };
                let (sent, body) = self.everyone.entry(key).or_insert_with(|| {
                    *bodies += 1;
                    let (next, body) =
                        frames::build(&base, base_set, None, None, room, scene, build);
                    let next = if next.is_complete() {
                        complete.clone()
                    } else {
                        Arc::new(next)
                    };
                    (next, body)
                });
                frame.extend_from_slice(body);
                (sent.clone(), body.len())
            };
            if body_len > budget {
                self.counts.over_budget += 1;
            }
            sent
        } else {
            // Nothing to build on: a full frame of what it sees, nearest
            // first within the byte budget; a crowded view fills in over
            // the deltas that follow (a whole view of a thousand things
            // each tick would not drain through a lossy path).
            compact::encode_head(tick, own, timing, &mut frame);
            if viewing {
                let chosen = nearest_within(&seen, at, shared.budget, scene);
                let set: Vec<Entity<G::Entity>> = chosen.iter().map(|&i| scene.truth[i]).collect();
                compact::encode_tail_quantised(&set, &mut frame);
                Arc::new(SentFrame::full(tick, Some(set)))
            } else {
                frame.extend_from_slice(shared.tail);
                shared.complete.clone()
            }
        };
        viewer.record(sent);
        self.seen = seen;
        frame
    }
}

/// Of `seen` (indices into the scene, in id order), those a full frame of
/// `budget` bytes holds: all when they fit, else the nearest to the viewer
/// at `me` (always itself), in id order.
fn nearest_within<F: Fields>(
    seen: &[usize],
    me: usize,
    budget: usize,
    scene: &Scene<'_, F>,
) -> Vec<usize> {
    // A full frame's entry: the id (4 bytes) and every field.
    let room = budget.saturating_sub(2) / (4 + full_bytes::<F>());
    let mut chosen = seen.to_vec();
    keep_nearest(&mut chosen, scene.positions, me, &[], room);
    chosen
}

/// The radius `own` sees within, for the room's interest radius: the
/// game's [`view_radius`](ServerGame::view_radius), at most
/// [`max_view_radius`].
pub(super) fn view_radius_of<G: ServerGame>(own: &G::Own, radius: Option<f32>) -> Option<f32> {
    radius.map(|r| G::view_radius(own, r).min(max_view_radius(r)))
}
