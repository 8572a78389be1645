//! `breakerbox::overrides` (feature `overrides`): operator settings from TOML, checked whole
//! before anything changes.

use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, Barrier};
use std::time::Duration;

use breakerbox::overrides::Overrides;
use breakerbox::{
    circuit_breaker, config::Window, registry, Breaker, Classify, Config, Outcome, Rejected, State,
};

/// `message` with only this file's names among its suggestions (`; did you mean ...?`):
/// the binary's other tests register names of their own, some as near as this file's.
fn own_suggestions(message: &str) -> String {
    let lines: Vec<String> = message
        .lines()
        .map(|line| {
            let Some((problem, names)) = line.split_once("; did you mean ") else {
                return line.to_owned();
            };
            let own: Vec<&str> = names
                .split('"')
                .skip(1)
                .step_by(2)
                .filter(|name| name.starts_with("ovr::"))
                .collect();
            match own.as_slice() {
                [] => problem.to_owned(),
                [one] => format!("{problem}; did you mean \"{one}\"?"),
                [init @ .., last] => format!(
                    "{problem}; did you mean \"{}\" or \"{last}\"?",
                    init.join("\", \"")
                ),
            }
        })
        .collect();
    lines.join("\n")
}

fn registered(name: &str) -> Arc<Breaker> {
    registry().register(Arc::new(Breaker::new(name, Config::default())))
}

fn parse(text: &str) -> Overrides {
    Overrides::from_toml("overrides.toml", text).unwrap()
}

#[test]
fn every_attribute_key_reaches_the_config() {
    let b = registered("ovr::all_keys");
    let file = r#"
["ovr::all_keys"]
window = "30s"
buckets = 6
min = 5
rate = 0.25
slow = "800ms"
slow_rate = 0.75
open = "10s"
probes = 2
backoff = 2.0
open_max = "1m"
ramp = [10, 50, 100]
ramp_step = "3s"
ramp_guard = 3.0
pushback_max = "2m"
"#;
    registry().apply(&parse(file)).unwrap();
    let c = b.config();
    assert_eq!(
        c.window(),
        Window::Time {
            span: Duration::from_secs(30),
            buckets: 6
        }
    );
    assert_eq!((c.min_calls(), c.failure_rate(), c.probes()), (5, 0.25, 2));
    let slow = c.slow_calls().unwrap();
    assert_eq!(
        (slow.threshold, slow.rate),
        (Duration::from_millis(800), 0.75)
    );
    assert_eq!(c.open_for(), Duration::from_secs(10));
    let backoff = c.open_backoff().unwrap();
    assert_eq!(
        (backoff.factor, backoff.max),
        (2.0, Duration::from_secs(60))
    );
    let ramp = c.ramp_up().unwrap();
    assert_eq!(
        (ramp.percents(), ramp.step()),
        (&[10, 50, 100][..], Duration::from_secs(3))
    );
    assert_eq!(c.ramp_latency_guard(), Some(3.0));
    assert_eq!(c.pushback_max(), Duration::from_secs(120));
}

#[test]
fn unwritten_keys_keep_their_current_values() {
    let b = registered("ovr::partial");
    registry()
        .apply(&parse("[\"ovr::partial\"]\nwindow = 40\n"))
        .unwrap();
    let c = b.config();
    assert_eq!(
        (c.window(), c.min_calls(), c.failure_rate()),
        (Window::Count(40), 10, 0.5)
    );
}

#[test]
fn a_bad_override_leaves_every_running_breaker_untouched() {
    let good = registered("ovr::good");
    let bad = registered("ovr::bad");
    good.try_acquire().unwrap().failure();
    let file = "[\"ovr::good\"]\nrate = 0.2\naction = \"force_open\"\n\n[\"ovr::bad\"]\nopen = \"1s\"\nrate = 1.5\n";
    let err = registry().apply(&parse(file)).unwrap_err();
    assert_eq!(
        err.to_string(),
        "overrides.toml:7: breaker \"ovr::bad\": rate must be in (0, 1], got 1.5"
    );
    assert_eq!(err.problems().len(), 1);
    assert_eq!(err.problems()[0].line(), Some(7));
    for b in [&good, &bad] {
        assert_eq!(b.config(), Config::default());
        assert_eq!(b.state(), State::Closed);
    }
    assert_eq!(good.snapshot().calls, 1);
}

#[test]
fn every_problem_is_reported_with_its_line() {
    registered("ovr::many");
    let file = "[\"ovr::many\"]\nprobes = 0\n\n[\"ovr::missing\"]\naction = \"reset\"\n";
    let err = registry().apply(&parse(file)).unwrap_err();
    assert_eq!(
        err.to_string(),
        "overrides.toml:2: breaker \"ovr::many\": probes must be at least 1, got 0\n\
         overrides.toml:4: no breaker is registered as \"ovr::missing\""
    );
}

#[test]
fn every_broken_rule_of_one_table_is_reported_at_its_line() {
    let b = registered("ovr::twice_wrong");
    let file = "[\"ovr::twice_wrong\"]\nrate = 1.5\nmin = 30\nslow_rate = 0.5\nprobes = 0\n";
    let err = registry().apply(&parse(file)).unwrap_err();
    assert_eq!(
        err.to_string(),
        "overrides.toml:2: breaker \"ovr::twice_wrong\": rate must be in (0, 1], got 1.5\n\
         overrides.toml:3: breaker \"ovr::twice_wrong\": min must be at most the count window, got 30 with a window of 20\n\
         overrides.toml:4: breaker \"ovr::twice_wrong\": slow_rate needs slow, which the breaker does not have\n\
         overrides.toml:5: breaker \"ovr::twice_wrong\": probes must be at least 1, got 0"
    );
    assert_eq!(err.problems().len(), 4);
    assert_eq!(b.config(), Config::default());
}

#[test]
fn a_name_under_another_crate_is_offered_the_function_of_that_name() {
    registered("frontend::fetch_recs");
    registered("frontend::fetch_user");
    let err = registry()
        .apply(&parse("[\"newcomer::fetch_recs\"]\naction = \"reset\"\n"))
        .unwrap_err();
    assert_eq!(
        err.to_string(),
        "overrides.toml:1: no breaker is registered as \"newcomer::fetch_recs\"; \
         did you mean \"frontend::fetch_recs\"?"
    );
    let err = registry()
        .apply(&parse("[\"fetch_recs\"]\naction = \"reset\"\n"))
        .unwrap_err();
    assert_eq!(
        err.to_string(),
        "overrides.toml:1: no breaker is registered as \"fetch_recs\"; \
         did you mean \"frontend::fetch_recs\"?"
    );

    // A trait impl's method under the name it had before it carried its trait. In a
    // registry of its own: the binary's other tests have functions called `lookup` too.
    let own = breakerbox::registry::Registry::default();
    own.register(Arc::new(Breaker::new(
        "ovr::db::<Store as Primary>::lookup",
        Config::default(),
    )));
    let err = own
        .apply(&parse("[\"ovr::db::Store::lookup\"]\naction = \"reset\"\n"))
        .unwrap_err();
    assert_eq!(
        err.to_string(),
        "overrides.toml:1: no breaker is registered as \"ovr::db::Store::lookup\"; \
         did you mean \"ovr::db::<Store as Primary>::lookup\"?"
    );
}

#[test]
fn rules_across_keys_point_at_the_key_that_breaks_them() {
    registered("ovr::cross");
    let cases = [
        ("min = 30\n", "overrides.toml:2: breaker \"ovr::cross\": min must be at most the count window, got 30 with a window of 20"),
        ("buckets = 4\n", "overrides.toml:2: breaker \"ovr::cross\": buckets needs a time window, which the breaker does not have"),
        ("slow_rate = 0.5\n", "overrides.toml:2: breaker \"ovr::cross\": slow_rate needs slow, which the breaker does not have"),
        ("backoff = 2.0\n", "overrides.toml:2: breaker \"ovr::cross\": backoff needs open_max, which the breaker does not have"),
        ("ramp = [10, 50]\n", "overrides.toml:2: breaker \"ovr::cross\": ramp must end at 100, got [10, 50]"),
        ("open = \"0s\"\n", "overrides.toml:2: breaker \"ovr::cross\": open must be greater than zero, got 0ns"),
    ];
    for (body, expected) in cases {
        let text = format!("[\"ovr::cross\"]\n{body}");
        let err = registry().apply(&parse(&text)).unwrap_err();
        assert_eq!(err.to_string(), expected, "{body}");
    }
}

#[test]
fn parse_errors_name_the_file_and_line() {
    let cases = [
        (
            "[\"a\"]\nratee = 0.5\n",
            "ops.toml:2: unknown field `ratee`",
        ),
        (
            "[\"a\"]\n\nopen = \"5 parsecs\"\n",
            "ops.toml:3: breaker \"a\": open is not a duration",
        ),
        (
            "[\"a\"]\naction = \"explode\"\n",
            "ops.toml:2: unknown variant `explode`",
        ),
        ("[\"a\"]\nprobes = -1\n", "ops.toml:2: "),
        ("[\"a\"\n", "ops.toml:1: "),
    ];
    for (text, start) in cases {
        let err = Overrides::from_toml("ops.toml", text).unwrap_err();
        assert!(err.to_string().starts_with(start), "{text:?}: {err}");
        assert_eq!(err.problems().len(), 1);
    }
}

#[test]
fn every_unreadable_value_of_every_table_is_reported() {
    let text = "[\"a\"]\nopen = \"soon\"\nslow = \"2 parsecs\"\n\n[\"b\"]\nwindow = \"later\"\nopen_for = \"1 fortnight\"\n";
    let err = Overrides::from_toml("ops.toml", text).unwrap_err();
    let lines: Vec<_> = err.problems().iter().map(|p| p.line()).collect();
    assert_eq!(lines, [Some(2), Some(3), Some(6), Some(7)]);
    // Each message in our words around humantime's reason, whose wording is its own.
    let expected = [
        ("breaker \"a\": open is not a duration (", "), got \"soon\""),
        (
            "breaker \"a\": slow is not a duration (",
            "), got \"2 parsecs\"",
        ),
        (
            "breaker \"b\": window is neither a number of calls nor a duration (",
            "), got \"later\"",
        ),
        (
            "breaker \"b\": open_for is not a duration (",
            "), got \"1 fortnight\"",
        ),
    ];
    for (problem, (start, end)) in err.problems().iter().zip(expected) {
        let message = problem.message();
        assert!(
            message.starts_with(start) && message.ends_with(end),
            "{message}"
        );
    }
}

#[test]
fn actions_force_open_disable_and_reset_by_name() {
    let b = registered("ovr::actions");
    registry()
        .apply(&parse("[\"ovr::actions\"]\naction = \"force_open\"\n"))
        .unwrap();
    assert_eq!(b.state(), State::ForcedOpen);
    registry()
        .apply(&parse("[\"ovr::actions\"]\naction = \"disable\"\n"))
        .unwrap();
    assert_eq!(b.state(), State::Disabled);
    registry()
        .apply(&parse("[\"ovr::actions\"]\naction = \"reset\"\n"))
        .unwrap();
    assert_eq!(b.state(), State::Closed);
}

#[test]
fn open_for_opens_the_breaker_for_that_long_with_its_configuration_kept() {
    let b = registered("ovr::open_for");
    registry()
        .apply(&parse(
            "[\"ovr::open_for\"]\nopen_for = \"30s\"\nrate = 0.75\n",
        ))
        .unwrap();
    assert_eq!(b.state(), State::Open);
    let rejected = b.try_acquire().unwrap_err();
    let left = rejected.retry_after().unwrap();
    assert!(
        left > Duration::from_secs(29) && left <= Duration::from_secs(30),
        "{left:?}"
    );
    assert_eq!(b.config().failure_rate(), 0.75);
    assert_eq!(
        b.config().open_for(),
        Duration::from_secs(5),
        "open is the config's"
    );
}

#[test]
fn open_for_is_a_duration_and_no_action() {
    let err = Overrides::from_toml("ops.toml", "[\"a\"]\nopen_for = \"soon\"\n").unwrap_err();
    assert_eq!(
        err.to_string(),
        "ops.toml:2: breaker \"a\": open_for is not a duration (expected number at 0), got \"soon\""
    );
    let err = Overrides::from_toml(
        "ops.toml",
        "[\"a\"]\naction = \"reset\"\nopen_for = \"1m\"\n",
    )
    .unwrap_err();
    assert_eq!(
        err.to_string(),
        "ops.toml:3: breaker \"a\": open_for and action cannot be used together: open_for \
         opens the breaker for a period, action sets its state"
    );
}

#[test]
fn from_path_names_the_file_in_errors() {
    let path = std::env::temp_dir().join(format!("breaker-overrides-{}.toml", std::process::id()));
    std::fs::write(&path, "[\"ovr::file\"]\nrate = 0.5\n\nprobes = \"three\"\n").unwrap();
    let err = Overrides::from_path(&path).unwrap_err();
    std::fs::remove_file(&path).unwrap();
    let shown = format!("{}:4: ", path.display());
    assert!(err.to_string().starts_with(&shown), "{err}");
}

#[derive(Debug)]
struct Down;

impl Classify for Down {
    fn classify(&self) -> Outcome {
        Outcome::Failure
    }
}

impl From<Rejected> for Down {
    fn from(_: Rejected) -> Self {
        Down
    }
}

#[circuit_breaker(name = "ovr::replica", key = host)]
async fn ping(host: &str) -> Result<(), Down> {
    let _ = host;
    Ok(())
}

#[tokio::test]
async fn a_keyed_family_gets_overrides_on_every_member_and_on_members_created_later() {
    ping("10.2.0.1:80").await.unwrap();
    let file = "[\"ovr::replica\"]\nprobes = 1\nrate = 0.9\naction = \"force_open\"\n";
    registry().apply(&parse(file)).unwrap();
    let old = registry().get_keyed("ovr::replica", "10.2.0.1:80").unwrap();
    assert_eq!((old.config().probes(), old.state()), (1, State::ForcedOpen));

    assert!(ping("10.2.0.2:80").await.is_err()); // forced open from its first call
    let new = registry().get_keyed("ovr::replica", "10.2.0.2:80").unwrap();
    assert_eq!(
        (new.config().probes(), new.config().failure_rate()),
        (1, 0.9)
    );
    assert_eq!(new.state(), State::ForcedOpen);

    registry()
        .apply(&parse("[\"ovr::replica\"]\nopen_for = \"1h\"\n"))
        .unwrap();
    for host in ["10.2.0.1:80", "10.2.0.2:80"] {
        let b = registry().get_keyed("ovr::replica", host).unwrap();
        assert_eq!(b.state(), State::Open, "{host}");
    }

    registry()
        .apply(&parse("[\"ovr::replica\"]\naction = \"reset\"\n"))
        .unwrap();
    ping("10.2.0.3:80").await.unwrap();
    for host in ["10.2.0.1:80", "10.2.0.2:80", "10.2.0.3:80"] {
        let b = registry().get_keyed("ovr::replica", host).unwrap();
        assert_eq!(
            (b.state(), b.config().probes()),
            (State::Closed, 1),
            "{host}"
        );
    }
}

/// Runs a future that never waits (the annotated functions below do not) to its end.
fn now<F: std::future::Future>(future: F) -> F::Output {
    let mut future = std::pin::pin!(future);
    let mut cx = std::task::Context::from_waker(std::task::Waker::noop());
    match future.as_mut().poll(&mut cx) {
        std::task::Poll::Ready(out) => out,
        std::task::Poll::Pending => unreachable!("the functions under test never wait"),
    }
}

static CHURN_CALLS: AtomicUsize = AtomicUsize::new(0);

#[circuit_breaker(name = "ovr::churn", key = key, max_keys = 3)]
async fn churn(key: u64) -> Result<(), Down> {
    let _ = key;
    CHURN_CALLS.fetch_add(1, Ordering::Relaxed);
    Ok(())
}

#[test]
fn after_a_family_override_returns_every_member_has_it_even_one_created_meanwhile() {
    now(churn(0)).unwrap();
    let stop = AtomicBool::new(false);
    let paused = Barrier::new(2);
    let resumed = Barrier::new(2);
    const ROUNDS: usize = 600;
    let (mut checked, mut wrong) = (0, None);
    std::thread::scope(|s| {
        s.spawn(|| {
            let mut key = 1;
            for _ in 0..ROUNDS {
                // Keeps creating keys until told to pause; then waits for the check.
                while !stop.load(Ordering::Acquire) {
                    let _ = now(churn(key));
                    key += 1;
                }
                paused.wait();
                resumed.wait();
            }
        });
        for round in 0..ROUNDS {
            let (rate, action, state) = if round % 2 == 0 {
                (0.3, "force_open", State::ForcedOpen)
            } else {
                (0.6, "disable", State::Disabled)
            };
            let file = format!("[\"ovr::churn\"]\nrate = {rate}\naction = \"{action}\"\n");
            registry().apply(&parse(&file)).unwrap();
            stop.store(true, Ordering::Release);
            paused.wait();
            let members: Vec<_> = registry()
                .list()
                .into_iter()
                .filter(|e| e.name() == "ovr::churn")
                .collect();
            checked += members.len();
            for e in members {
                let b = e.breaker();
                let found = (b.config().failure_rate(), b.state());
                if found != (rate, state) && wrong.is_none() {
                    wrong = Some(format!("round {round}, key {:?}: {found:?}", e.key()));
                }
            }
            // Failing here would leave the creator waiting: report after the rounds.
            stop.store(false, Ordering::Release);
            resumed.wait();
        }
    });
    assert_eq!(wrong, None);
    assert!(checked >= ROUNDS, "{checked} members checked");
}

static FORCED_CALLS: AtomicUsize = AtomicUsize::new(0);

#[circuit_breaker(name = "ovr::forced", key = key, max_keys = 64)]
async fn forced(key: u64) -> Result<(), Down> {
    let _ = key;
    FORCED_CALLS.fetch_add(1, Ordering::Relaxed);
    Ok(())
}

#[test]
fn a_forced_open_family_admits_no_call_on_a_new_key_even_at_its_birth() {
    now(forced(0)).unwrap();
    registry()
        .apply(&parse("[\"ovr::forced\"]\naction = \"force_open\"\n"))
        .unwrap();
    let admitted_before = FORCED_CALLS.load(Ordering::Relaxed);
    const KEYS: u64 = 20_000;
    let start = Barrier::new(2);
    let rejected = AtomicUsize::new(0);
    std::thread::scope(|s| {
        for _ in 0..2 {
            s.spawn(|| {
                for key in 1..=KEYS {
                    // Both threads ask for the new key at once: one creates it, the other
                    // may find it a moment later.
                    start.wait();
                    if now(forced(key)).is_err() {
                        rejected.fetch_add(1, Ordering::Relaxed);
                    }
                }
            });
        }
    });
    assert_eq!(FORCED_CALLS.load(Ordering::Relaxed) - admitted_before, 0);
    assert_eq!(rejected.load(Ordering::Relaxed), 2 * KEYS as usize);
}

impl From<breakerbox::policy::TimedOut> for Down {
    fn from(_: breakerbox::policy::TimedOut) -> Self {
        Down
    }
}

#[circuit_breaker(name = "ovr::untimed")]
async fn untimed() -> Result<(), Down> {
    Ok(())
}

#[circuit_breaker(name = "ovr::timed", timeout = "1s", retries = 1)]
async fn timed() -> Result<(), Down> {
    Ok(())
}

#[tokio::test]
async fn timeout_and_retries_are_refused_where_the_attribute_did_not_write_them() {
    untimed().await.unwrap();
    timed().await.unwrap();
    let err = registry()
        .apply(&parse(
            "[\"ovr::untimed\"]\nrate = 0.25\ntimeout = \"800ms\"\n",
        ))
        .unwrap_err();
    assert_eq!(
        err.to_string(),
        "overrides.toml:3: breaker \"ovr::untimed\": timeout cannot be set by an override: \
         its #[circuit_breaker] function was compiled without `timeout`; write `timeout = ...` \
         in its attribute to let overrides change it"
    );
    let err = registry()
        .apply(&parse("[\"ovr::untimed\"]\nretries = 2\n"))
        .unwrap_err();
    assert!(err.to_string().starts_with(
        "overrides.toml:2: breaker \"ovr::untimed\": retries cannot be set by an override"
    ));
    let untouched = registry().get("ovr::untimed").unwrap().config();
    assert_eq!(
        (untouched.failure_rate(), untouched.policy().timeout()),
        (0.5, None)
    );

    registry()
        .apply(&parse(
            "[\"ovr::timed\"]\ntimeout = \"800ms\"\nretries = 3\n",
        ))
        .unwrap();
    let policy = registry().get("ovr::timed").unwrap().config().policy();
    assert_eq!(
        (policy.timeout(), policy.retries()),
        (Some(Duration::from_millis(800)), 3)
    );
}

#[test]
fn a_name_no_breaker_has_gets_the_nearest_registered_names_and_nothing_is_applied() {
    let price = registered("ovr::typo::price");
    registered("ovr::typo::prices");
    let file =
        "[\"ovr::typo::price\"]\naction = \"force_open\"\n\n[\"ovr::typo::prcie\"]\nrate = 0.5\n";
    let err = registry().apply(&parse(file)).unwrap_err();
    assert_eq!(
        err.to_string(),
        "overrides.toml:4: no breaker is registered as \"ovr::typo::prcie\"; \
         did you mean \"ovr::typo::price\" or \"ovr::typo::prices\"?"
    );
    assert_eq!(err.problems()[0].line(), Some(4));
    assert_eq!(price.state(), State::Closed, "nothing applied");

    // A keyed family is a name too, and a name far from every one gets no guess.
    let err = registry()
        .apply(&parse("[\"ovr::replcia\"]\naction = \"reset\"\n"))
        .unwrap_err();
    assert_eq!(
        own_suggestions(&err.to_string()),
        "overrides.toml:1: no breaker is registered as \"ovr::replcia\"; did you mean \"ovr::replica\"?"
    );
    let err = registry()
        .apply(&parse("[\"billing::charge\"]\naction = \"reset\"\n"))
        .unwrap_err();
    assert_eq!(
        err.to_string(),
        "overrides.toml:1: no breaker is registered as \"billing::charge\""
    );
}
