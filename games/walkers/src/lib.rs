//! Walkers, the game of `docs/GUIDE.md`: players walk a square field, a
//! point each, so that the harness can run the guide's game.

// A guide imports the whole library at once.
#[allow(clippy::wildcard_imports)]
mod listing;

pub use listing::*;

pub mod driver;

#[cfg(test)]
mod tests {
    use skirmish_core::{decode_inputs, encode_inputs, ErrorCode, Networked, Tick, Ticked, Wired};
    use skirmish_core::{InputMode, PlayerId, Vec2, World};

    use super::Walkers;

    /// Regression: the 11th walker spawned at (1100, 1100), outside the
    /// 1000 by 1000 field, and the 64th at (6400, 6400).
    #[test]
    fn every_walker_spawns_inside_the_field_however_many_walk() {
        let mut world = World::<Walkers>::of((), (), 1);
        for n in 0..200u32 {
            let at = world
                .join_with(PlayerId(n + 1), "w", InputMode::Scheduled)
                .expect("a new id")
                .state;
            let field = Vec2::splat(1000.0);
            assert!(
                at.cmpge(Vec2::ZERO).all() && at.cmple(field).all(),
                "walker {n} spawned at {at}"
            );
            if n < 9 {
                // The first nine where they always were: on the diagonal.
                assert_eq!(at, Vec2::splat(100.0 * (n + 1) as f32));
            }
        }
        // Until the grid is full, no two walkers spawn on each other.
        let mut spots: Vec<_> = world
            .players()
            .take(81)
            .map(|(_, p)| (p.state.x as u32, p.state.y as u32))
            .collect();
        spots.sort_unstable();
        spots.dedup();
        assert_eq!(spots.len(), 81);
    }

    /// The room applies each walk through the game's `sanitize` (the
    /// listing's step never calls it): a walk of (5, -9) moves like (1, -1).
    #[test]
    fn a_walk_too_long_is_applied_as_one_step() {
        let mut world = World::<Walkers>::of((), (), 1);
        let id = PlayerId(1);
        let start = world
            .join_with(id, "w", InputMode::Scheduled)
            .expect("joins")
            .state;
        world.receive(id, &[Ticked::of(Tick(1), (5, -9), None)]);
        world.step();
        let moved = world.state_of(id).expect("walks").state - start;
        assert_eq!(
            moved,
            Vec2::new(10.0, -10.0),
            "one step of 200 units a second for 50 ms"
        );
    }

    /// Regression: a walk's head bits, which walkers do not use, were
    /// ignored: each one set is refused now.
    #[test]
    fn a_walk_with_a_head_bit_set_is_refused() {
        let walk = Ticked::<(i8, i8)>::of(Tick(9), (1, -1), None);
        let mut bytes = Vec::new();
        encode_inputs(&[walk], None, None, &mut bytes);
        let head = 6; // After the kind, the count and the tick.
        assert_eq!(bytes[head], 0);
        assert!(decode_inputs::<<Walkers as Networked>::Wire>(&bytes).is_ok());
        for bit in [0, 1, 2, 3, 4, 6, 7] {
            let mut bad = bytes.clone();
            bad[head] |= 1 << bit;
            let refused = decode_inputs::<<Walkers as Networked>::Wire>(&bad).map_err(|e| e.code);
            assert_eq!(refused.err(), Some(ErrorCode::BadMessage), "bit {bit}");
        }
    }
}
