//! [`RetryFailures`], a policy for tower's `Retry` that retries what the breaker counts as a
//! failure, never a rejection, within the breaker's retry budget.

use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context, Poll};
use std::time::Duration;

use pin_project_lite::pin_project;

use super::{BreakerError, ClassifyResponse, DefaultClassifier};
use crate::policy::backoff;
use crate::policy::budget::Withdrawal;
use crate::{Breaker, Classify, Outcome};

/// A [`tower::retry::Policy`](::tower::retry::Policy) for a service guarded by
/// [`CircuitBreakerLayer`](super::CircuitBreakerLayer): tower's `Retry` outside the breaker's
/// layer, so that every attempt asks the breaker.
///
/// It follows the breaker's current [`Policy`](crate::config::Policy), as
/// [`Breaker::run`](crate::Breaker::run) does: a result the classifier calls a
/// [`Outcome::Failure`] is retried up to `retries` times, within the breaker's retry budget
/// (the same budget `run` draws on), after the same backoff (`[0, min(retry_backoff_max,
/// retry_backoff * 2^(n-1))]`). A [`BreakerError::Rejected`] is never retried: the breaker said no, and the
/// downstream never saw it. A breaker without `retries` retries nothing, and the request is
/// not even cloned. A retry is taken from the budget only by an attempt that starts: a
/// request dropped while it waits before its retry (a deadline, a client gone) gives it back.
///
/// Compose it with tower's own layers, outside in: `ConcurrencyLimit` (with `LoadShed`,
/// to reject rather than queue) to bound calls rather than attempts, this policy's `Retry`,
/// the breaker's layer, then `Timeout` per attempt, whose `Elapsed` errors the breaker's
/// default classifier counts as failures.
///
/// ```
/// use std::sync::atomic::{AtomicU32, Ordering};
/// use std::sync::Arc;
/// use std::time::Duration;
/// use breakerbox::tower::{CircuitBreakerLayer, RetryFailures};
/// use breakerbox::{Breaker, Config};
/// use tower::retry::RetryLayer;
/// use tower::timeout::TimeoutLayer;
/// use tower::{service_fn, ServiceBuilder, ServiceExt};
///
/// # tokio::runtime::Builder::new_current_thread().enable_time().start_paused(true)
/// #     .build().unwrap().block_on(async {
/// let config = Config::builder().retries(2).retry_backoff(Duration::from_millis(20)).build()?;
/// let b = Arc::new(Breaker::new("docs::upstream", config));
/// let hits = Arc::new(AtomicU32::new(0));
/// let counted = hits.clone();
/// let svc = ServiceBuilder::new()
///     .layer(RetryLayer::new(RetryFailures::new(b.clone())))
///     .layer(CircuitBreakerLayer::new(b.clone()))
///     .layer(TimeoutLayer::new(Duration::from_millis(800)))
///     .service(service_fn(move |_: ()| {
///         let first = counted.fetch_add(1, Ordering::SeqCst) == 0;
///         async move {
///             let status = if first { 503 } else { 200 };
///             Ok::<_, std::io::Error>(http::Response::builder().status(status).body(()).unwrap())
///         }
///     }));
///
/// let response = svc.oneshot(()).await.unwrap();
/// assert_eq!(response.status(), 200); // the 503 was retried
/// assert_eq!(hits.load(Ordering::SeqCst), 2);
/// assert_eq!(b.snapshot().totals.retries, 1);
/// # Ok::<(), breakerbox::config::ConfigError>(())
/// # }).unwrap();
/// ```
pub struct RetryFailures<C = DefaultClassifier> {
    breaker: Arc<Breaker>,
    classifier: C,
    /// Retries decided for this request; 0 in the service's own copy, which tower clones
    /// for each request.
    retried: u32,
    /// The budget's retry behind the next attempt or the one in flight, settled however the
    /// request ends (see [`Held`]).
    withdrawal: Option<Held>,
}

/// A withdrawal from the budget for a retry, settled when the next result is judged, or
/// when the request's future is dropped: given back if its attempt never started (dropped in
/// the delay, or before tower called the service), or if the breaker rejected it; spent as a
/// retry once tower called the service with it and the breaker did not reject it.
struct Held {
    breaker: Arc<Breaker>,
    withdrawal: Withdrawal,
    /// Tower called the service with the retry (it cloned the request just before).
    called: bool,
}

impl Held {
    /// The retry's result is judged: a rejection gives the withdrawal back.
    fn settle(mut self, rejected: bool) {
        self.called = !rejected;
    }
}

impl Drop for Held {
    fn drop(&mut self) {
        let budget = self.breaker.policy_state().budget();
        if self.called {
            budget.count_retry();
        } else {
            budget.refund(self.withdrawal);
        }
    }
}

/// A copy for another request: it holds none of this one's withdrawal.
impl<C: Clone> Clone for RetryFailures<C> {
    fn clone(&self) -> Self {
        Self {
            breaker: self.breaker.clone(),
            classifier: self.classifier.clone(),
            retried: self.retried,
            withdrawal: None,
        }
    }
}

impl RetryFailures {
    /// Retries what [`DefaultClassifier`] calls failures (every error of the inner service,
    /// and responses as their [`Classify`] impl says), under `breaker`'s policy.
    pub fn new(breaker: Arc<Breaker>) -> Self {
        Self {
            breaker,
            classifier: DefaultClassifier,
            retried: 0,
            withdrawal: None,
        }
    }
}

impl<C> RetryFailures<C> {
    /// The same policy, judging results with `classifier`: pass the one the breaker's layer
    /// uses, so that what is retried is what the breaker counts as a failure.
    ///
    /// ```
    /// use std::sync::Arc;
    /// use breakerbox::tower::{ErrorClassifier, RetryFailures};
    /// use breakerbox::{Breaker, Config};
    ///
    /// let b = Arc::new(Breaker::new("docs::grpc", Config::builder().retries(1).build()?));
    /// let policy = RetryFailures::new(b).classify_with(ErrorClassifier);
    /// assert_eq!(policy.breaker().name(), "docs::grpc");
    /// # Ok::<(), breakerbox::config::ConfigError>(())
    /// ```
    pub fn classify_with<D>(self, classifier: D) -> RetryFailures<D> {
        RetryFailures {
            breaker: self.breaker,
            classifier,
            retried: 0,
            withdrawal: None,
        }
    }

    /// The breaker whose policy and budget this follows.
    pub fn breaker(&self) -> &Arc<Breaker> {
        &self.breaker
    }
}

impl<C, Req, Res, E> ::tower::retry::Policy<Req, Res, BreakerError<E>> for RetryFailures<C>
where
    Req: Clone,
    C: ClassifyResponse<Res, BreakerError<E>>,
{
    type Future = RetryDelay;

    fn retry(
        &mut self,
        _: &mut Req,
        result: &mut Result<Res, BreakerError<E>>,
    ) -> Option<RetryDelay> {
        let state = self.breaker.policy_state();
        let budget = state.budget();
        let rejected = matches!(result, Err(BreakerError::Rejected(_)));
        match (self.retried, self.withdrawal.take()) {
            // The first attempt, admitted: a deposit in the budget.
            (0, _) if !rejected => budget.deposit(budget.second(self.breaker.clock())),
            (_, Some(held)) => held.settle(rejected),
            _ => {}
        }
        if rejected || self.classifier.classify(result) != Outcome::Failure {
            return None;
        }
        let plan = state.plan();
        if self.retried >= plan.retries {
            return None;
        }
        let withdrawal = budget.withdraw(budget.second(self.breaker.clock()), state.limit())?;
        self.withdrawal = Some(Held {
            breaker: self.breaker.clone(),
            withdrawal,
            called: false,
        });
        self.retried += 1;
        Some(RetryDelay::new(backoff::delay(
            plan.backoff(),
            plan.backoff_max(),
            self.retried,
        )))
    }

    fn clone_request(&mut self, req: &Req) -> Option<Req> {
        // Tower clones the request just before it calls the service with it: a retry's
        // attempt starts now.
        if let Some(held) = &mut self.withdrawal {
            held.called = true;
        }
        // A request no retry can follow is not cloned, but for the last retry itself, whose
        // result settles the budget's withdrawal.
        let retries = self.breaker.policy_plan().retries;
        (self.retried < retries || self.withdrawal.is_some()).then(|| req.clone())
    }
}

/// A rejection says nothing about the downstream; an inner error as its own impl says.
///
/// ```
/// use breakerbox::tower::BreakerError;
/// use breakerbox::{Breaker, Classify, Config, Outcome};
///
/// let b = Breaker::new("docs::classify", Config::default());
/// b.force_open();
/// let rejected = BreakerError::<std::io::Error>::Rejected(b.try_acquire().unwrap_err());
/// assert_eq!(rejected.classify(), Outcome::Ignored);
/// let refused = std::io::Error::from(std::io::ErrorKind::ConnectionRefused);
/// assert_eq!(BreakerError::Inner(refused).classify(), Outcome::Failure);
/// ```
impl<E: Classify> Classify for BreakerError<E> {
    fn classify(&self) -> Outcome {
        match self {
            BreakerError::Rejected(_) => Outcome::Ignored,
            BreakerError::Inner(e) => e.classify(),
        }
    }
}

pin_project! {
    /// The wait before a retry of [`RetryFailures`], on tokio's clock; none for a zero delay.
    #[derive(Debug)]
    pub struct RetryDelay {
        #[pin]
        sleep: Option<tokio::time::Sleep>,
    }
}

impl RetryDelay {
    fn new(delay: Duration) -> Self {
        Self {
            sleep: (!delay.is_zero()).then(|| tokio::time::sleep(delay)),
        }
    }
}

impl Future for RetryDelay {
    type Output = ();

    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<()> {
        match self.project().sleep.as_pin_mut() {
            Some(sleep) => sleep.poll(cx),
            None => Poll::Ready(()),
        }
    }
}

impl<C: std::fmt::Debug> std::fmt::Debug for RetryFailures<C> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("RetryFailures")
            .field("breaker", &self.breaker.name())
            .field("classifier", &self.classifier)
            .field("retried", &self.retried)
            .finish()
    }
}
