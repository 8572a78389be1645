#![cfg(loom)]
//! Model checking, with loom, of a keyed family's cap on its members out of the pool
//! (`max_open_percent`): members tripping at once never pass the cap together, and a place
//! given back as a member closes is taken by a racing trip, or refuses it, and is never lost
//! or counted twice.
//!
//! ```text
//! RUSTFLAGS="--cfg loom" cargo test -p breakerbox --test loom_open_cap --release
//! ```

use breakerbox::__private::Keyed;
use breakerbox::events::Event;
use breakerbox::{Breaker, Config, State};
use loom::sync::atomic::{AtomicUsize, Ordering::SeqCst};
use loom::sync::Arc;
use loom::thread;

fn check(preemptions: usize, model: impl Fn() + Send + Sync + 'static) {
    let mut builder = loom::model::Builder::new();
    builder.preemption_bound.get_or_insert(preemptions);
    builder.check(model);
}

/// A family of `members` members capped at `percent`, each with one failure of the two that
/// trip its count window; with the count of trips refused.
fn family(
    members: usize,
    percent: u32,
) -> (Arc<Keyed>, Vec<std::sync::Arc<Breaker>>, Arc<AtomicUsize>) {
    let config = Config::builder()
        .count_window(2)
        .min_calls(2)
        .max_open_percent(percent)
        .build()
        .unwrap();
    let family = Arc::new(Keyed::new(std::sync::Arc::from("replicas"), config, 8));
    let refused = Arc::new(AtomicUsize::new(0));
    let breakers = (0..members)
        .map(|i| {
            let b = family.breaker(&i);
            let seen = refused.clone();
            b.on_event(move |e: &Event| {
                if let Event::TripRefused { .. } = e {
                    seen.fetch_add(1, SeqCst);
                }
            });
            b.try_acquire().unwrap().failure();
            b
        })
        .collect();
    (family, breakers, refused)
}

fn fail(b: &Breaker) {
    b.try_acquire().unwrap().failure();
}

fn open(breakers: &[std::sync::Arc<Breaker>]) -> usize {
    breakers.iter().filter(|b| b.state() == State::Open).count()
}

/// Two members trip at once with one place free (2 members at 50%): one opens, the other's
/// trip is refused, and it stays CLOSED with both its failures in its window.
#[test]
fn two_members_tripping_at_once_for_one_place_open_exactly_one() {
    check(3, || {
        let (_family, breakers, refused) = family(2, 50);
        let other = breakers[1].clone();
        let racer = thread::spawn(move || fail(&other));
        fail(&breakers[0]);
        racer.join().unwrap();
        assert_eq!(open(&breakers), 1);
        assert_eq!(refused.load(SeqCst), 1);
        let closed = breakers
            .iter()
            .find(|b| b.state() == State::Closed)
            .unwrap();
        let s = closed.snapshot();
        assert_eq!((s.calls, s.failures), (2, 2));
    });
}

/// Three members trip at once with two places (3 members at 67%): two open, one is refused.
#[test]
fn three_members_tripping_at_once_for_two_places_open_exactly_two() {
    check(2, || {
        let (_family, breakers, refused) = family(3, 67);
        let racers: Vec<_> = breakers[1..]
            .iter()
            .map(|b| {
                let b = b.clone();
                thread::spawn(move || fail(&b))
            })
            .collect();
        fail(&breakers[0]);
        for racer in racers {
            racer.join().unwrap();
        }
        assert_eq!(open(&breakers), 2);
        assert_eq!(refused.load(SeqCst), 1);
    });
}

/// The open member is reset while the other trips for its place: the trip is refused (it
/// came first) or takes the place given back. Either way the count ends exact: the refused
/// member's next failure trips it, and then the first member's trip is refused.
#[test]
fn a_member_closing_races_a_trip_for_its_place_and_the_count_stays_exact() {
    check(3, || {
        let (_family, breakers, refused) = family(2, 50);
        let (a, b) = (breakers[0].clone(), breakers[1].clone());
        fail(&a);
        assert_eq!(a.state(), State::Open);
        let closer = {
            let a = a.clone();
            thread::spawn(move || a.reset())
        };
        fail(&b);
        closer.join().unwrap();
        let first = refused.load(SeqCst);
        assert!(
            (first == 0 && b.state() == State::Open) || (first == 1 && b.state() == State::Closed),
            "refused {first}, b {:?}",
            b.state()
        );
        if b.state() == State::Closed {
            fail(&b); // its window kept both failures: one more trips it
        }
        assert_eq!(b.state(), State::Open);
        fail(&a);
        fail(&a);
        assert_eq!(a.state(), State::Closed);
        assert_eq!(refused.load(SeqCst), first + 1);
    });
}
