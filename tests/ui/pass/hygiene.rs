//! The expansion names only absolute paths: local `core`, `std`, `breaker` and `breakerbox` modules, and
//! local items named like the expansion's, change nothing.

#![allow(dead_code, non_camel_case_types)]

mod core {}
mod std {}
mod breaker {}
mod breakerbox {}

struct Result;
struct Ok;
struct Err;
struct String;
struct Option;
const BREAKER: () = ();
const BREAKER_CONFIG: () = ();

#[derive(Debug)]
struct Down;

impl ::breakerbox::Classify for Down {
    fn classify(&self) -> ::breakerbox::Outcome {
        ::breakerbox::Outcome::Failure
    }
}

impl ::std::convert::From<::breakerbox::Rejected> for Down {
    fn from(_: ::breakerbox::Rejected) -> Self {
        Down
    }
}

#[::breakerbox::circuit_breaker(window = 4, key = id)]
async fn get(id: u32, breaker: u32, permit: u32, out: u32) -> ::core::result::Result<u32, Down> {
    let rejected = breaker + permit + out;
    ::core::result::Result::Ok(id + rejected)
}

fn main() {
    drop(get(1, 2, 3, 4));
}
