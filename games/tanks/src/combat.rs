//! Combat on the server: hitscan shots judged where the shooter saw its targets
//! (lag compensation over each player's pose history), with the shared
//! rules, shot path and ray tests of [`crate::shots`].
//!
//! A shot's view is judged no further back than
//! [`CombatRules::max_rewind_ms`](crate::shots::CombatRules::max_rewind_ms)
//! before the newest recorded tick, and, for a protocol-2 shooter whose
//! round trip the server has measured, no further back than its input's
//! arrival minus that round trip, the largest interpolation delay and a
//! margin (`latency`). A view beyond a bound is judged at it and counted in
//! [`WorldStats::rewind_clamped`](skirmish_core::WorldStats::rewind_clamped), and
//! also in `rewind_clamped_rtt` when the round-trip bound was the tighter.
//! A late input's shot (see `schedule`) counts its cooldown in its own
//! tick, as the shooter's page did when it drew the tracer.

use std::collections::BTreeMap;

use super::world::Tank;
use super::{life, Tanks};
use crate::config::SimConfig;
use crate::shots::{ray_circle, shot_path, CombatRules};
use crate::sim::Pose;
use crate::CombatEvent;
use skirmish_core::clamp;
use skirmish_core::PlayerId;
use skirmish_core::Tick;
use skirmish_core::{ServerPlayer, WorldStats};

/// A shot waiting to be resolved this tick.
pub(super) struct Shot {
    /// Who fired.
    pub(super) attacker: PlayerId,
    /// The shooter's pose after the move of the input that fired.
    pub(super) from: Pose,
    /// The server tick, with fraction, the shooter saw (`None`: now).
    pub(super) view_tick: Option<f64>,
    /// The oldest view the shooter's measured round trip lets it claim
    /// (`None`: not measured, only `max_rewind_ms` applies).
    pub(super) oldest_view: Option<f64>,
    /// Protocol 2: the tick of a late input honoured now; its cooldown
    /// counts from that tick.
    pub(super) late: Option<Tick>,
}

impl Tank {
    /// The pose at server tick `t` (with fraction), from the history,
    /// interpolated between recorded ticks; clamped to what is recorded.
    fn pose_at(&self, t: f64) -> Pose {
        let (Some(first), Some(last)) = (self.history.front(), self.history.back()) else {
            return self.pose;
        };
        if t <= f64::from(first.0 .0) {
            return first.1;
        }
        if t >= f64::from(last.0 .0) {
            return last.1;
        }
        let base = t.floor();
        let frac = (t - base) as f32;
        let base = Tick(base as u32);
        let i = self.history.partition_point(|(tick, _)| *tick <= base);
        match (self.history.get(i.wrapping_sub(1)), self.history.get(i)) {
            (Some(a), Some(b)) if b.0 == a.0.next() => a.1.lerp(&b.1, frac),
            (Some(a), _) => a.1,
            (None, _) => first.1,
        }
    }
}

/// How many poses each player's history holds.
pub(super) fn history_len(sim: &SimConfig, rules: &CombatRules) -> usize {
    (rules.history_ms / sim.tick_ms.max(1)).max(1) as usize + 1
}

/// Records every player's pose at `tick`, dropping the oldest beyond
/// [`history_len`].
pub(super) fn record_history(
    tick: Tick,
    sim: &SimConfig,
    rules: &CombatRules,
    players: &mut BTreeMap<PlayerId, ServerPlayer<Tanks>>,
) {
    let keep = history_len(sim, rules);
    for p in players.values_mut() {
        let tank = &mut p.state;
        if tank.history.len() >= keep {
            tank.history.pop_front();
        }
        tank.history.push_back((tick, tank.pose));
    }
}

/// Fires `shot` if its shooter is alive and off cooldown: the nearest
/// living player its ray meets, where the shooter saw it, takes a hit and
/// may die. Each hit is pushed as one event.
pub(super) fn resolve_shot(
    shot: &Shot,
    tick: Tick,
    sim: &SimConfig,
    rules: &CombatRules,
    players: &mut BTreeMap<PlayerId, ServerPlayer<Tanks>>,
    stats: &mut WorldStats,
    events: &mut Vec<CombatEvent>,
) {
    let cooldown = rules.cooldown_ticks(sim);
    let Some(shooter) = players.get_mut(&shot.attacker) else {
        return;
    };
    let shooter = &mut shooter.state;
    if !shooter.life.is_alive() || !shooter.cooldown.fire(shot.late.unwrap_or(tick), cooldown) {
        return;
    }
    if shot.late.is_some() {
        stats.late_actions_honoured += 1;
    }

    // Where the shooter saw the others: at most max_rewind back (and
    // no further than its round trip allows), never after the last
    // recorded tick.
    let newest = f64::from(tick.0.saturating_sub(1));
    let furthest = newest - f64::from(sim.ticks_of(rules.max_rewind_ms));
    let by_rtt = shot.oldest_view.filter(|&o| o > furthest);
    let oldest = by_rtt.unwrap_or(furthest).min(newest);
    let asked = shot.view_tick.filter(|v| v.is_finite()).unwrap_or(newest);
    let view = clamp(asked, oldest.max(0.0), newest);
    if asked < oldest {
        stats.rewind_clamped += 1;
        if by_rtt.is_some() {
            stats.rewind_clamped_rtt += 1;
        }
    }
    let depth = (f64::from(tick.0) - view) * f64::from(sim.tick_ms);
    stats.rewind.record(depth as i32);

    let origin = shot.from.position;
    let (dir, reach) = shot_path(sim, &shot.from, rules.range);
    let radius = sim.player_radius;
    let mut best: Option<(f32, PlayerId)> = None;
    for (&id, target) in players.iter() {
        let target = &target.state;
        if id == shot.attacker || !target.life.is_alive() {
            continue;
        }
        let seen = if target.history.is_empty() {
            target.pose
        } else {
            target.pose_at(view)
        };
        if let Some(t) = ray_circle(origin, dir, seen.position, radius) {
            if t <= reach && best.is_none_or(|(bt, _)| t < bt) {
                best = Some((t, id));
            }
        }
    }
    let Some((t, target_id)) = best else {
        return;
    };
    let respawn_at = life::respawn_tick(tick, sim, rules);
    let Some(target) = players.get_mut(&target_id) else {
        return;
    };
    let hp = &mut target.state.hp;
    let damage = rules.damage.min(*hp);
    *hp -= damage;
    let (hp, killed) = (*hp, *hp == 0);
    if killed {
        life::kill(target, respawn_at);
    }
    events.push(CombatEvent {
        server_tick: tick,
        attacker: shot.attacker,
        target: target_id,
        damage,
        hp,
        killed,
        from: origin,
        to: origin + dir * t,
    });
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use glam::Vec2;

    use super::*;
    use crate::world::tests::{at, fire, input, open, place, shooter_and_target};
    use crate::Arena;
    use skirmish_core::{InputMode, World, WorldStats};

    #[test]
    fn a_hit_is_one_event_and_cooldown_holds() {
        let mut w = shooter_and_target(at(600.0, 600.0, 0.0));
        w.receive(PlayerId(1), &[fire(1, None), fire(2, None)]);
        let events = w.step().to_vec();
        assert_eq!(events.len(), 1);
        let e = events[0];
        assert_eq!(
            (e.attacker, e.target, e.damage, e.hp, e.killed),
            (PlayerId(1), PlayerId(2), 20, 80, false)
        );
        assert_eq!(e.from, Vec2::new(200.0, 600.0));
        assert_eq!(e.to, Vec2::new(580.0, 600.0));
        // The second shot one tick later is inside the 250 ms cooldown.
        assert!(w.step().is_empty());
        assert!(w.step().is_empty(), "sent once, never re-fired");
        assert_eq!(w.player(PlayerId(2)).unwrap().state.hp, 80);
    }

    #[test]
    fn obstacles_stop_shots_and_range_is_limited() {
        let mut w = shooter_and_target(at(1100.0, 600.0, 0.0));
        w.receive(PlayerId(1), &[fire(1, None)]);
        assert!(w.step().is_empty(), "900 u away: out of range");

        let mut sim = open();
        sim.obstacles
            .push(crate::config::Rect::new(350.0, 550.0, 20.0, 100.0));
        let mut w = World::of(sim, Arena::default(), 3);
        w.join_with(PlayerId(1), "s", InputMode::Queued).unwrap();
        w.join_with(PlayerId(2), "t", InputMode::Queued).unwrap();
        place(&mut w, PlayerId(1), at(200.0, 600.0, 0.0));
        place(&mut w, PlayerId(2), at(600.0, 600.0, 0.0));
        w.receive(PlayerId(1), &[fire(1, None)]);
        assert!(w.step().is_empty(), "the wall takes the shot");
    }

    /// A world where the target walked +y at 10 u per tick from y = 400 for
    /// 40 ticks: at tick `t` it was at y = 400 + 10 t.
    fn walked_target() -> World<Tanks> {
        let mut w = shooter_and_target(at(600.0, 400.0, std::f32::consts::FRAC_PI_2));
        for t in 1..=40 {
            w.receive(PlayerId(2), &[input(t, 1.0)]);
            w.step();
        }
        assert_eq!(w.player(PlayerId(2)).unwrap().state.pose.position.y, 800.0);
        w
    }

    /// The shooter at height `y` fires along +x, having seen the world at `view`.
    fn shoot_from(mut w: World<Tanks>, y: f32, view: Option<f64>) -> Vec<CombatEvent> {
        place(&mut w, PlayerId(1), at(200.0, y, 0.0));
        w.receive(PlayerId(1), &[fire(1, view)]);
        w.step().to_vec()
    }

    #[test]
    fn rs10_hits_are_judged_where_the_shooter_saw_the_target() {
        // Seen 3 ticks ago (150 ms) at y = 770: a hit there, although the
        // target is at 800 now.
        let events = shoot_from(walked_target(), 770.0, Some(37.0));
        assert_eq!(events.len(), 1, "hit where it was seen");
        assert_eq!(events[0].to, Vec2::new(580.0, 770.0), "the near edge");
        // Between ticks: seen at 37.5, y = 775.
        assert_eq!(shoot_from(walked_target(), 775.0, Some(37.5)).len(), 1);
        // Without lag compensation the same aim misses.
        assert!(shoot_from(walked_target(), 770.0, None).is_empty());
        assert_eq!(shoot_from(walked_target(), 800.0, None).len(), 1);
    }

    #[test]
    fn rs10_views_older_than_max_rewind_are_clamped_and_counted() {
        // Seen 20 ticks (1 s) before the newest recorded tick 40: clamped
        // to 750 ms (15 ticks) back, tick 25, y = 650.
        assert!(shoot_from(walked_target(), 600.0, Some(20.0)).is_empty());
        let mut w = walked_target();
        place(&mut w, PlayerId(1), at(200.0, 650.0, 0.0));
        w.receive(PlayerId(1), &[fire(1, Some(20.0))]);
        assert_eq!(w.step().len(), 1, "judged at the bound");
        assert_eq!(w.stats().rewind_clamped, 1);
        // Within the bound: not counted, and its depth is recorded.
        let mut w = walked_target();
        place(&mut w, PlayerId(1), at(200.0, 770.0, 0.0));
        w.receive(PlayerId(1), &[fire(1, Some(37.0))]);
        assert_eq!(w.step().len(), 1);
        assert_eq!(w.stats().rewind_clamped, 0);
        assert_eq!(w.stats().rewind.counts[2], 1, "200 ms: the 100-200 bucket");
        // A view from the future is clamped to the newest recorded tick.
        assert_eq!(shoot_from(walked_target(), 800.0, Some(1e9)).len(), 1);
    }

    /// [`walked_target`] with a protocol-2 shooter (player 1) that played
    /// ticks 1 to 40 standing still, so tick 41 is its next.
    fn walked_target_scheduled() -> World<Tanks> {
        let mut w = World::of(open(), Arena::default(), 3);
        w.join_with(PlayerId(1), "shooter", InputMode::Scheduled)
            .unwrap();
        w.join_with(PlayerId(2), "target", InputMode::Queued)
            .unwrap();
        place(&mut w, PlayerId(1), at(200.0, 600.0, 0.0));
        place(
            &mut w,
            PlayerId(2),
            at(600.0, 400.0, std::f32::consts::FRAC_PI_2),
        );
        for t in 1..=40 {
            w.receive_at(PlayerId(1), &[input(t, 0.0)], MS(0));
            w.receive(PlayerId(2), &[input(t, 1.0)]);
            w.step();
        }
        assert_eq!(w.player(PlayerId(2)).unwrap().state.pose.position.y, 800.0);
        w
    }

    const MS: fn(u64) -> Duration = Duration::from_millis;

    /// The protocol-2 shooter at height `y`, its round trip measured by
    /// the acknowledgement `ack` (if any) 20 ms after tick 40, fires at
    /// tick 41 along +x (its input arriving then too), having seen the
    /// world at `view`; the hits and the counters.
    fn shoot_scheduled(ack: Option<Tick>, y: f32, view: f64) -> (Vec<CombatEvent>, WorldStats) {
        let mut w = walked_target_scheduled();
        place(&mut w, PlayerId(1), at(200.0, y, 0.0));
        if let Some(ack) = ack {
            w.receive_ack(PlayerId(1), ack, MS(20));
        }
        w.receive_at(PlayerId(1), &[fire(41, Some(view))], MS(20));
        let events = w.step().to_vec();
        (events, *w.stats())
    }

    #[test]
    fn a_low_latency_shooter_cannot_rewind_beyond_its_round_trip() {
        // Snapshot 40 acknowledged 20 ms after it was sent: a 20 ms round
        // trip. The input arrived at tick 40.4; 20 + 400 + 100 ms (10.4
        // ticks) before that is tick 30 (y = 700): a view of tick 27
        // (y = 670, 650 ms before the arrival) is judged there, and counted.
        let (events, stats) = shoot_scheduled(Some(Tick(40)), 670.0, 27.0);
        assert!(events.is_empty(), "judged at tick 30, not 27");
        assert_eq!((stats.rewind_clamped, stats.rewind_clamped_rtt), (1, 1));
        let (events, stats) = shoot_scheduled(Some(Tick(40)), 700.0, 27.0);
        assert_eq!(events.len(), 1, "hit where the bound put the target");
        assert_eq!(events[0].to, Vec2::new(580.0, 700.0));
        assert_eq!(stats.rewind.sum_ms, 550, "11 ticks back from tick 41");
        // A view inside its bound is honoured as it is.
        let (events, stats) = shoot_scheduled(Some(Tick(40)), 720.0, 32.0);
        assert_eq!(events.len(), 1);
        assert_eq!((stats.rewind_clamped, stats.rewind_clamped_rtt), (0, 0));
    }

    #[test]
    fn a_high_latency_shooter_gets_its_full_depth() {
        // Snapshot 35 acknowledged 20 ms after tick 40: a 270 ms round
        // trip, so views back to tick 25 (15.4 ticks before the arrival)
        // are legitimate: tick 27 is judged where it was asked.
        let (events, stats) = shoot_scheduled(Some(Tick(35)), 670.0, 27.0);
        assert_eq!(events.len(), 1, "hit where it was seen");
        assert_eq!(events[0].to, Vec2::new(580.0, 670.0));
        assert_eq!((stats.rewind_clamped, stats.rewind_clamped_rtt), (0, 0));
        assert_eq!(stats.rewind.sum_ms, 700);
        // Never beyond max_rewind_ms, however long the round trip: 1 s
        // back is judged at tick 25, counted as today.
        let (events, stats) = shoot_scheduled(Some(Tick(20)), 650.0, 20.0);
        assert_eq!(events.len(), 1);
        assert_eq!((stats.rewind_clamped, stats.rewind_clamped_rtt), (1, 0));
    }

    #[test]
    fn without_a_measured_round_trip_max_rewind_applies_as_before() {
        // No acknowledgement yet: tick 27 is honoured, tick 20 judged at
        // max_rewind_ms (tick 25), as for protocol 1.
        let (events, stats) = shoot_scheduled(None, 670.0, 27.0);
        assert_eq!(events.len(), 1);
        assert_eq!(stats.rewind_clamped, 0);
        let (events, stats) = shoot_scheduled(None, 650.0, 20.0);
        assert_eq!(events.len(), 1, "judged at the bound");
        assert_eq!((stats.rewind_clamped, stats.rewind_clamped_rtt), (1, 0));
        let mut w = walked_target_scheduled();
        assert_eq!(w.player(PlayerId(1)).unwrap().round_trip(), None);
        w.receive_ack(PlayerId(1), Tick(40), MS(20));
        assert_eq!(
            w.player(PlayerId(1)).unwrap().round_trip(),
            Some(MS(20)),
            "measured by the server"
        );
    }

    #[test]
    fn a_late_shot_is_judged_at_its_view_within_the_bound_of_its_arrival() {
        // Tick 41 runs without the shooter's input (a repeat); it arrives
        // 20 ms later with a 20 ms round trip measured, firing at a view of
        // tick 27. Honoured at tick 42, judged no further back than its
        // arrival (41.4) minus 10.4 ticks: tick 31, y = 710.
        let fired = |y: f32| {
            let mut w = walked_target_scheduled();
            place(&mut w, PlayerId(1), at(200.0, y, 0.0));
            w.step();
            w.receive_ack(PlayerId(1), Tick(41), MS(20));
            let r = w.receive_at(PlayerId(1), &[fire(41, Some(27.0))], MS(20));
            assert_eq!(r.late, 1);
            let events = w.step().to_vec();
            (events, *w.stats())
        };
        let (events, stats) = fired(670.0);
        assert!(events.is_empty());
        assert_eq!(
            (stats.rewind_clamped_rtt, stats.late_actions_honoured),
            (1, 1)
        );
        let (events, _) = fired(710.0);
        assert_eq!(events.len(), 1);
        assert_eq!(events[0].server_tick, Tick(42));
    }
}
