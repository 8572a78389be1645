//! How a guarded service's results are judged: [`ClassifyResponse`] and its two defaults.

use std::any::Any;
use std::error::Error;
use std::time::Duration;

use crate::{Classify, Outcome, Rejected};

/// Judges a service's result, response or error, for the breaker.
///
/// Implemented by [`DefaultClassifier`], by [`ErrorClassifier`] and by every
/// `Fn(&Result<Res, E>) -> Outcome`.
///
/// ```
/// use breakerbox::tower::ClassifyResponse;
/// use breakerbox::Outcome;
///
/// // A JSON API that reports overload in a 200 body.
/// let overloaded = |r: &Result<String, std::io::Error>| match r {
///     Ok(body) if body.contains("\"overloaded\"") => Outcome::Failure,
///     Ok(_) => Outcome::Success,
///     Err(_) => Outcome::Failure,
/// };
/// assert_eq!(overloaded.classify(&Ok("{\"overloaded\":1}".into())), Outcome::Failure);
/// ```
#[diagnostic::on_unimplemented(
    message = "`{Self}` cannot judge a `Result<{Res}, {E}>` for the breaker",
    note = "implement `breakerbox::Classify` for `{Res}` to use the default classifier, or pass \
            a `Fn(&Result<{Res}, {E}>) -> breakerbox::Outcome` to `classify_with`"
)]
pub trait ClassifyResponse<Res, E> {
    /// The outcome this result means for the breaker.
    fn classify(&self, result: &Result<Res, E>) -> Outcome;

    /// The pushback a failed result carries, as [`Classify::pushback`] says of an output:
    /// asked only of a result [`classify`](ClassifyResponse::classify) calls a failure.
    /// `None` by default.
    #[inline]
    fn pushback(&self, result: &Result<Res, E>) -> Option<Duration> {
        let _ = result;
        None
    }
}

impl<F, Res, E> ClassifyResponse<Res, E> for F
where
    F: Fn(&Result<Res, E>) -> Outcome,
{
    #[inline]
    fn classify(&self, result: &Result<Res, E>) -> Outcome {
        self(result)
    }
}

/// The default classifier: a response as its [`Classify`] impl says (for `http::Response<B>`,
/// 5xx is a failure), every error of the inner service a failure, but a breaker's rejection.
///
/// Errors of a tower stack are transport errors (refused, reset, timed out), which is why
/// they count; answers the downstream gave arrive as responses. A rejection never reached
/// the downstream and is [`Outcome::Ignored`]: a [`Rejected`], or a boxed error
/// (`tower::BoxError`, what a stack that boxes its errors makes of an inner breaker layer's
/// [`BreakerError`](super::BreakerError)) with a `Rejected` in its chain of sources. So an
/// outer breaker stays closed while an inner one rejects. (An inner layer's `BreakerError`
/// that reaches the outer one unboxed cannot be seen through: box the errors between the
/// two, or use [`ErrorClassifier`] or a classifier of your own.)
///
/// ```
/// use breakerbox::tower::{ClassifyResponse, DefaultClassifier};
/// use breakerbox::Outcome;
///
/// let ok = http::Response::builder().status(404).body(()).unwrap();
/// assert_eq!(DefaultClassifier.classify(&Ok::<_, ()>(ok)), Outcome::Success);
/// assert_eq!(
///     ClassifyResponse::<http::Response<()>, _>::classify(&DefaultClassifier, &Err(())),
///     Outcome::Failure,
/// );
///
/// // An inner breaker layer's rejection, boxed on its way up.
/// let b = std::sync::Arc::new(breakerbox::Breaker::new("docs::inner", breakerbox::Config::default()));
/// b.force_open();
/// let rejected = breakerbox::tower::BreakerError::<std::io::Error>::from(b.try_acquire().unwrap_err());
/// let boxed: Result<http::Response<()>, tower::BoxError> = Err(rejected.into());
/// assert_eq!(DefaultClassifier.classify(&boxed), Outcome::Ignored);
/// ```
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct DefaultClassifier;

impl<Res: Classify, E: 'static> ClassifyResponse<Res, E> for DefaultClassifier {
    #[inline]
    fn classify(&self, result: &Result<Res, E>) -> Outcome {
        match result {
            Ok(response) => response.classify(),
            Err(error) if is_rejection(error) => Outcome::Ignored,
            Err(_) => Outcome::Failure,
        }
    }

    /// The response's pushback ([`Classify::pushback`]: for `http::Response<B>`, the
    /// `Retry-After` of a 429 or 503).
    #[inline]
    fn pushback(&self, result: &Result<Res, E>) -> Option<Duration> {
        result.as_ref().ok().and_then(Classify::pushback)
    }
}

/// Whether an error of the inner service is a breaker's rejection: a [`Rejected`], or a
/// boxed error with one in its chain of sources (a `BreakerError::Rejected`'s source is its
/// `Rejected`).
fn is_rejection<E: 'static>(error: &E) -> bool {
    let error: &dyn Any = error;
    if error.is::<Rejected>() {
        return true;
    }
    let boxed: &(dyn Error + 'static) =
        if let Some(e) = error.downcast_ref::<Box<dyn Error + Send + Sync>>() {
            e.as_ref()
        } else if let Some(e) = error.downcast_ref::<Box<dyn Error + Send>>() {
            e.as_ref()
        } else if let Some(e) = error.downcast_ref::<Box<dyn Error>>() {
            e.as_ref()
        } else {
            return false;
        };
    std::iter::successors(Some(boxed), |&e| e.source()).any(|e| e.is::<Rejected>())
}

/// Every response is a success; an error is judged by its own [`Classify`] impl. For services
/// whose errors tell answers from failures, e.g. a gRPC client returning `tonic::Status`.
///
/// ```
/// use breakerbox::tower::{ClassifyResponse, ErrorClassifier};
/// use breakerbox::Outcome;
///
/// let refused = std::io::Error::from(std::io::ErrorKind::ConnectionRefused);
/// let not_found = std::io::Error::from(std::io::ErrorKind::NotFound);
/// assert_eq!(ErrorClassifier.classify(&Err::<(), _>(refused)), Outcome::Failure);
/// assert_eq!(ErrorClassifier.classify(&Err::<(), _>(not_found)), Outcome::Success);
/// ```
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct ErrorClassifier;

impl<Res, E: Classify> ClassifyResponse<Res, E> for ErrorClassifier {
    #[inline]
    fn classify(&self, result: &Result<Res, E>) -> Outcome {
        match result {
            Ok(_) => Outcome::Success,
            Err(e) => e.classify(),
        }
    }

    /// The error's pushback ([`Classify::pushback`]: for `tonic::Status`, its
    /// `grpc-retry-pushback-ms`).
    #[inline]
    fn pushback(&self, result: &Result<Res, E>) -> Option<Duration> {
        result.as_ref().err().and_then(Classify::pushback)
    }
}
