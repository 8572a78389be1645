use breakerbox::{circuit_breaker, Classify, Outcome, Rejected};

#[derive(Debug)]
pub struct Down;

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

impl From<breakerbox::policy::TimedOut> for Down {
    fn from(_: breakerbox::policy::TimedOut) -> Self {
        Down
    }
}

pub struct Ticket(u32);

#[circuit_breaker(retries = 2)]
async fn redeem(name: &str, ticket: Ticket) -> Result<u32, Down> {
    Ok(ticket.0 + name.len() as u32)
}
fn main() {}
