//! [`ResponseFuture`], the inner call with its permit, or the rejection.

use std::fmt;
use std::future::Future;
use std::panic::{self, AssertUnwindSafe};
use std::pin::Pin;
use std::task::{Context, Poll};

use pin_project_lite::pin_project;
use tower_service::Service;

use super::{BreakerError, ClassifyResponse};
use crate::{Outcome, OwnedPermit, Rejected};

/// Calls `inner` if the breaker admitted the request; the rejection otherwise.
pub(super) fn respond<S, C, Req>(
    inner: &mut S,
    request: Req,
    admission: Result<OwnedPermit, Rejected>,
    classifier: &C,
) -> ResponseFuture<S::Future, C>
where
    S: Service<Req>,
    C: Clone,
{
    let kind = match admission {
        Ok(permit) => Kind::Admitted {
            inner: inner.call(request),
            permit: Some(permit),
            classifier: classifier.clone(),
        },
        Err(rejected) => Kind::Rejected {
            rejected: Some(rejected),
        },
    };
    ResponseFuture { kind }
}

pin_project! {
    /// The response future of [`CircuitBreakerService`]: the inner call with its permit, or
    /// the rejection.
    ///
    /// Dropped before it completes, it records nothing and frees a half-open probe slot.
    /// If the inner future panics, a failure is recorded as the panic leaves `poll`, also
    /// when something outside catches the panic (a panic-catching layer, `catch_unwind`)
    /// and drops this future later, no longer unwinding.
    pub struct ResponseFuture<F, C> {
        #[pin]
        kind: Kind<F, C>,
    }
}

pin_project! {
    #[project = KindProj]
    enum Kind<F, C> {
        Admitted {
            #[pin]
            inner: F,
            permit: Option<OwnedPermit>,
            classifier: C,
        },
        Rejected {
            rejected: Option<Rejected>,
        },
    }
}

impl<F, C, Res, E> Future for ResponseFuture<F, C>
where
    F: Future<Output = Result<Res, E>>,
    C: ClassifyResponse<Res, E>,
{
    type Output = Result<Res, BreakerError<E>>;

    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Self::Output> {
        match self.project().kind.project() {
            KindProj::Admitted {
                inner,
                permit,
                classifier,
            } => {
                // The permit is a field, which a panic leaving `poll` does not drop: a caught
                // panic would leave it to be dropped later as a cancelled call.
                let polled = panic::catch_unwind(AssertUnwindSafe(|| inner.poll(cx)));
                let result = match polled {
                    Ok(Poll::Ready(result)) => result,
                    Ok(Poll::Pending) => return Poll::Pending,
                    Err(panicked) => {
                        if let Some(permit) = permit.take() {
                            permit.failure();
                        }
                        panic::resume_unwind(panicked)
                    }
                };
                if let Some(permit) = permit.take() {
                    match classifier.classify(&result) {
                        Outcome::Failure => match classifier.pushback(&result) {
                            Some(pushback) => permit.failure_with_pushback(pushback),
                            None => permit.failure(),
                        },
                        outcome => permit.record(outcome),
                    }
                }
                Poll::Ready(result.map_err(BreakerError::Inner))
            }
            KindProj::Rejected { rejected } => match rejected.take() {
                Some(rejected) => Poll::Ready(Err(BreakerError::Rejected(rejected))),
                None => panic!("ResponseFuture polled after it completed"),
            },
        }
    }
}

impl<F, C> fmt::Debug for ResponseFuture<F, C> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let state = match &self.kind {
            Kind::Admitted { permit, .. } => match permit {
                Some(_) => "admitted",
                None => "completed",
            },
            Kind::Rejected { .. } => "rejected",
        };
        f.debug_struct("ResponseFuture")
            .field("state", &state)
            .finish()
    }
}
