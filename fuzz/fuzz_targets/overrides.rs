//! Operator overrides: any text, or TOML assembled from the real keys with any values. The
//! loader never panics; a file that parses is applied to a registered breaker, and either
//! applies whole (the breaker still works) or is refused whole (the breaker's configuration
//! and state are as they were).

#![no_main]

use std::sync::{Arc, OnceLock};

use arbitrary::Arbitrary;
use breakerbox::overrides::{Overrides, CONFIG_KEYS};
use breakerbox::{registry, Breaker, Config, State};
use libfuzzer_sys::fuzz_target;

const NAME: &str = "fuzz::target";

/// Every key an override may hold, and one it may not.
const OTHER_KEYS: [&str; 2] = ["action", "unknown"];

#[derive(Arbitrary, Debug)]
enum Value {
    Int(i64),
    Float(f64),
    Text(String),
    Duration(u32, u8),
    Ints(Vec<i32>),
    Action(u8),
    Bool(bool),
}

impl Value {
    fn toml(&self) -> String {
        match self {
            Value::Int(n) => n.to_string(),
            Value::Float(x) if x.is_finite() => format!("{x:?}"),
            Value::Float(x) if x.is_nan() => "nan".into(),
            Value::Float(x) => if *x > 0.0 { "inf" } else { "-inf" }.into(),
            Value::Text(s) => format!("{s:?}"),
            Value::Duration(n, unit) => {
                let units = ["ns", "ms", "s", "m", "h", "days", "weeks", "years", "x"];
                format!("\"{n}{}\"", units[usize::from(*unit) % units.len()])
            }
            Value::Ints(v) => format!("{v:?}"),
            Value::Action(a) => {
                let actions = ["force_open", "disable", "reset", "close"];
                format!("{:?}", actions[usize::from(*a) % actions.len()])
            }
            Value::Bool(b) => b.to_string(),
        }
    }
}

#[derive(Arbitrary, Debug)]
enum Input {
    Raw(String),
    Table {
        other_name: bool,
        entries: Vec<(u8, Value)>,
    },
}

fn breaker() -> &'static Arc<Breaker> {
    static BREAKER: OnceLock<Arc<Breaker>> = OnceLock::new();
    BREAKER.get_or_init(|| registry().register(Arc::new(Breaker::new(NAME, Config::default()))))
}

fuzz_target!(|input: Input| {
    let text = match &input {
        Input::Raw(text) => text.clone(),
        Input::Table {
            other_name,
            entries,
        } => {
            let name = if *other_name { "fuzz::missing" } else { NAME };
            let mut text = format!("[{name:?}]\n");
            for (key, value) in entries {
                let keys = CONFIG_KEYS.iter().chain(&OTHER_KEYS);
                let key = keys.clone().nth(usize::from(*key) % keys.count()).unwrap();
                text.push_str(&format!("{key} = {}\n", value.toml()));
            }
            text
        }
    };
    let overrides: Overrides = match text.parse() {
        Ok(overrides) => overrides,
        Err(e) => {
            assert!(!e.to_string().is_empty());
            return;
        }
    };
    let b = breaker();
    let before = (b.config(), b.state());
    match registry().apply(&overrides) {
        Ok(()) => {
            if b.state() != State::ForcedOpen {
                if let Ok(permit) = b.try_acquire() {
                    permit.success();
                }
            }
        }
        Err(e) => {
            assert!(!e.problems().is_empty());
            assert_eq!(
                (b.config(), b.state()),
                before,
                "a refused file changes nothing"
            );
        }
    }
    // Back to the baseline for the next input.
    b.reconfigure(Config::default());
    b.reset();
});
