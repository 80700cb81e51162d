//! The controlled player: live prediction, reconciliation and what is drawn.
//!
//! The order of operations, each fixed step and each authoritative update:
//! 1. [`LocalPlayer::step`] sanitizes the step's input, records it as a
//!    [`PredictedStep`] and applies the game's step ([`Game::predict`]) at
//!    once.
//! 2. [`LocalPlayer::accept`] takes a newer authoritative own state: it is
//!    the new baseline, steps up to its acknowledgement are pruned, the rest
//!    are replayed from the baseline with the same step, and the result is
//!    the new prediction, the gameplay truth (LPR-1, LPSS-1..3). The
//!    difference between the old and the new prediction goes to the visual
//!    [`Correction`]; the report says how large it was, how many steps were
//!    replayed and whether what is drawn snapped (RS-8).
//! 3. Each rendered frame, [`LocalPlayer::advance_frame`] lets the correction
//!    decay, and [`LocalPlayer::visible`] interpolates between the last two
//!    fixed steps by the frame's fraction and shifts by the offset.
//!
//! The correction target (the rebuilt prediction of the last accepted state)
//! only changes on an accepted state (LPSS-4); see [`LocalPlayer::rebuilt`].

use crate::client::pending::{PendingInputs, PushError};
use crate::client::smoothing::{Correction, CorrectionOutcome, SmoothingConfig, SETTLED_DISTANCE};
use crate::shared::clamp::clamp;
use crate::shared::game::{Game, Offset, Replicated, Stamp, Visual};
use crate::shared::input::PredictedStep;
use crate::shared::tick::Tick;

/// Why an authoritative own state was not accepted.
#[derive(Clone, Copy, Debug, PartialEq, Eq, thiserror::Error)]
pub enum ReconcileError {
    /// Its server tick is not newer than the last accepted one.
    #[error("stale state for server tick {got}; already accepted {accepted}")]
    Stale {
        /// The newest accepted server tick.
        accepted: Tick,
        /// The refused state's server tick.
        got: Tick,
    },
    /// It holds NaN or infinite numbers.
    #[error("state for server tick {0} has non-finite numbers")]
    NonFinite(Tick),
}

/// What one accepted reconciliation did (RS-8).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct ReconcileReport {
    /// The accepted state's server tick.
    pub server_tick: Tick,
    /// The acknowledged input tick.
    pub ack: Option<Tick>,
    /// Steps pruned by the acknowledgement.
    pub pruned: usize,
    /// Steps replayed from the baseline.
    pub replayed: usize,
    /// Distance between the old and the rebuilt prediction.
    pub error: f32,
    /// Absolute rotation between the old and the rebuilt prediction.
    pub error_angle: f32,
    /// What became of the error visually.
    pub outcome: CorrectionOutcome,
}

/// Counters for the HUD and for tests.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct LocalStats {
    /// Accepted authoritative states.
    pub accepted: u64,
    /// States refused as not newer than the last accepted one.
    pub rejected_stale: u64,
    /// States refused for non-finite numbers.
    pub rejected_invalid: u64,
    /// Errors at or above the dead zone (smoothed or snapped).
    pub corrections: u64,
    /// Errors below the dead zone, absorbed without a visible change.
    pub absorbed: u64,
    /// Visible snaps: too large, or out of budget.
    pub snaps: u64,
    /// Steps replayed over all reconciliations.
    pub replayed_steps: u64,
    /// Steps refused because the pending buffer was full.
    pub pending_full: u64,
    /// The error of the last counted correction.
    pub last_correction: f32,
    /// The largest error ever counted.
    pub max_correction: f32,
    /// Reconciliations whose error was above [`SETTLED_DISTANCE`]: any
    /// misprediction at all, absorbed or not.
    pub mispredictions: u64,
    /// The largest error of any reconciliation, absorbed ones included.
    pub max_error: f32,
    /// The sum of every counted correction's error (for the mean).
    pub correction_sum: f32,
}

/// The controlled player's prediction and presentation state, for a game
/// `G`.
#[derive(Clone, Debug)]
pub struct LocalPlayer<G: Game> {
    sim: G::Config,
    smoothing: SmoothingConfig,
    pending: PendingInputs<G::Input>,
    authoritative: Option<G::Own>,
    accepted: Option<Tick>,
    predicted: G::Local,
    previous: G::Local,
    rebuilt: G::Local,
    correction: Correction<<G::Local as Visual>::Offset>,
    stats: LocalStats,
    replay: bool,
}

impl<G: Game> LocalPlayer<G> {
    /// A player at `spawn`, predicting with `sim` and showing corrections
    /// according to `smoothing`, with a pending buffer of the default size.
    pub fn new(sim: G::Config, smoothing: SmoothingConfig, spawn: G::Local) -> LocalPlayer<G> {
        LocalPlayer::with_pending_capacity(
            sim,
            smoothing,
            spawn,
            PendingInputs::<G::Input>::DEFAULT_CAPACITY,
        )
    }

    /// Like [`LocalPlayer::new`] with a pending buffer of `capacity` steps.
    pub fn with_pending_capacity(
        sim: G::Config,
        smoothing: SmoothingConfig,
        spawn: G::Local,
        capacity: usize,
    ) -> LocalPlayer<G> {
        LocalPlayer {
            sim,
            smoothing,
            pending: PendingInputs::with_capacity(capacity),
            authoritative: None,
            accepted: None,
            predicted: spawn,
            previous: spawn,
            rebuilt: spawn,
            correction: Correction::default(),
            stats: LocalStats::default(),
            replay: true,
        }
    }

    /// Predicts one fixed step of `input` (sanitized first) at client tick
    /// `tick`, made while remote players were drawn at server tick
    /// `view_tick`, and records it; the step keeps its view until
    /// acknowledged, so every resend carries the same view.
    ///
    /// # Errors
    /// The pending buffer refused the step (see [`PendingInputs::push`]); it
    /// was neither applied nor recorded, and must not be sent. A full buffer
    /// is counted in [`LocalStats::pending_full`].
    pub fn step(
        &mut self,
        tick: Tick,
        input: G::Input,
        view_tick: Option<f64>,
    ) -> Result<G::Local, PushError> {
        let input = G::sanitize(input);
        let step = PredictedStep::at(tick, input, G::cadence(&self.sim)).seen_at(view_tick);
        if let Err(e) = self.pending.push(step) {
            if matches!(e, PushError::Full { .. }) {
                self.stats.pending_full += 1;
            }
            return Err(e);
        }
        self.previous = self.predicted;
        self.predicted = G::predict(self.predicted, &input, step.duration, &self.sim);
        Ok(self.predicted)
    }

    /// Accepts a newer authoritative state, true at `stamp.tick` with the
    /// player's inputs through `stamp.ack` applied, and rebuilds the
    /// prediction.
    ///
    /// # Errors
    /// A state not newer than the last accepted one, or not valid
    /// ([`Replicated::is_valid`](crate::Replicated::is_valid)), is refused, counted, and changes nothing else.
    pub fn accept(
        &mut self,
        stamp: Stamp,
        own: &G::Own,
    ) -> Result<ReconcileReport, ReconcileError> {
        if let Some(accepted) = self.accepted {
            if stamp.tick <= accepted {
                self.stats.rejected_stale += 1;
                return Err(ReconcileError::Stale {
                    accepted,
                    got: stamp.tick,
                });
            }
        }
        if !own.is_valid() {
            self.stats.rejected_invalid += 1;
            return Err(ReconcileError::NonFinite(stamp.tick));
        }
        let first = self.accepted.is_none();
        self.authoritative = Some(*own);
        self.accepted = Some(stamp.tick);
        self.stats.accepted += 1;

        let pruned = stamp.ack.map_or(0, |n| self.pending.ack_through(n));
        let baseline = G::local(own);
        let (rebuilt, replayed) = if self.replay {
            let rebuilt = self.pending.iter().fold(baseline, |local, step| {
                G::predict(local, &step.input, step.duration, &self.sim)
            });
            (rebuilt, self.pending.len())
        } else {
            (baseline, 0)
        };
        self.stats.replayed_steps += replayed as u64;

        let moved = self.predicted.offset_to(&rebuilt);
        // Keep the frame interpolation continuous: the previous step moves
        // with the prediction.
        self.previous = self.previous.shifted(&moved);
        self.predicted = rebuilt;
        self.rebuilt = rebuilt;

        let size = moved.size();
        let error = size.distance;
        if !first {
            self.stats.max_error = self.stats.max_error.max(error);
            if error > SETTLED_DISTANCE {
                self.stats.mispredictions += 1;
            }
        }
        let outcome = if first {
            self.previous = rebuilt;
            self.correction.clear();
            CorrectionOutcome::Placed
        } else {
            self.correction
                .on_reconcile(moved.negated(), &self.smoothing)
        };
        match outcome {
            CorrectionOutcome::Smoothed | CorrectionOutcome::Snapped => {
                self.stats.corrections += 1;
                self.stats.last_correction = error;
                self.stats.correction_sum += error;
                self.stats.max_correction = self.stats.max_correction.max(error);
                if outcome == CorrectionOutcome::Snapped {
                    self.stats.snaps += 1;
                }
            }
            CorrectionOutcome::Absorbed => self.stats.absorbed += 1,
            CorrectionOutcome::Placed | CorrectionOutcome::None => {}
        }
        Ok(ReconcileReport {
            server_tick: stamp.tick,
            ack: stamp.ack,
            pruned,
            replayed,
            error,
            error_angle: size.angle,
            outcome,
        })
    }

    /// Accepts `own` as a fresh placement (a new life, a teleport): the
    /// prediction is rebuilt from it and what is drawn jumps there without
    /// counting a correction or a snap.
    ///
    /// # Errors
    /// As [`LocalPlayer::accept`], except that staleness is not checked.
    pub fn accept_placed(
        &mut self,
        stamp: Stamp,
        own: &G::Own,
    ) -> Result<ReconcileReport, ReconcileError> {
        self.accepted = None;
        self.accept(stamp, own)
    }

    /// Turns replay off (or on again): without it, an accepted state is
    /// taken as the prediction as it is, and the unacknowledged inputs are
    /// not reapplied. Only for showing what replay does; pending inputs are
    /// still pruned, so nothing fills up.
    pub fn set_replay(&mut self, replay: bool) {
        self.replay = replay;
    }

    /// Lets `dt` seconds of frame time pass for the visual correction.
    pub fn advance_frame(&mut self, dt: f32) {
        if self.correction.advance(dt, &self.smoothing) {
            self.stats.snaps += 1;
        }
    }

    /// What to draw, `alpha` (0..=1) of the way from the previous fixed
    /// step to the current one, plus the visual correction.
    pub fn visible(&self, alpha: f32) -> G::Local {
        let alpha = if alpha.is_finite() {
            clamp(alpha, 0.0, 1.0)
        } else {
            1.0
        };
        self.correction
            .apply(&self.previous.lerp(&self.predicted, alpha))
    }

    /// The gameplay truth: the newest prediction.
    pub fn predicted(&self) -> G::Local {
        self.predicted
    }

    /// The prediction one fixed step earlier.
    pub fn previous(&self) -> G::Local {
        self.previous
    }

    /// The prediction rebuilt by the last accepted state: the correction
    /// target, constant between accepted states.
    pub fn rebuilt(&self) -> G::Local {
        self.rebuilt
    }

    /// The last accepted authoritative state: the baseline.
    pub fn authoritative(&self) -> Option<&G::Own> {
        self.authoritative.as_ref()
    }

    /// The steps not yet acknowledged.
    pub fn pending(&self) -> &PendingInputs<G::Input> {
        &self.pending
    }

    /// The current visual correction.
    pub fn correction(&self) -> &Correction<<G::Local as Visual>::Offset> {
        &self.correction
    }

    /// The counters.
    pub fn stats(&self) -> &LocalStats {
        &self.stats
    }

    /// The game's constants in use.
    pub fn sim_config(&self) -> &G::Config {
        &self.sim
    }

    /// The smoothing rules in use.
    pub fn smoothing_config(&self) -> &SmoothingConfig {
        &self.smoothing
    }

    /// Changes the smoothing rules, e.g. from a HUD toggle.
    pub fn set_smoothing_config(&mut self, smoothing: SmoothingConfig) {
        self.smoothing = smoothing;
    }

    /// The distance between what is drawn at the current step and the
    /// truth.
    pub fn visible_error(&self) -> f32 {
        self.correction.offset().size().distance
    }
}
