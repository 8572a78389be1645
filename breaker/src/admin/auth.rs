//! Who may read and steer: the authorizer a router is given, the operator it names, and the
//! bearer-token helper.

use std::fmt;
use std::sync::Arc;

use http::request::Parts;
use http::{header, StatusCode};
use subtle::ConstantTimeEq;

/// Someone the authorizer let in: a name for the logs and events, and whether they may steer.
///
/// ```
/// use breakerbox::admin::Operator;
///
/// let ops = Operator::writer("ops-oncall");
/// assert_eq!((ops.name(), ops.may_write()), ("ops-oncall", true));
/// assert!(!Operator::reader("dashboard").may_write());
/// ```
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Operator {
    name: String,
    writes: bool,
}

impl Operator {
    /// An operator who may read and steer.
    pub fn writer(name: impl Into<String>) -> Self {
        Self {
            name: name.into(),
            writes: true,
        }
    }

    /// An operator who may only read: every write answers 403.
    pub fn reader(name: impl Into<String>) -> Self {
        Self {
            name: name.into(),
            writes: false,
        }
    }

    /// The name the logs and the `operator_action` events carry.
    pub fn name(&self) -> &str {
        &self.name
    }

    /// Whether the operator may steer breakers.
    pub fn may_write(&self) -> bool {
        self.writes
    }
}

/// Why the authorizer turned a request away: answered 401 with this text.
///
/// ```
/// use breakerbox::admin::Denied;
///
/// assert_eq!(Denied::new("no bearer token").to_string(), "no bearer token");
/// ```
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Denied {
    reason: String,
}

impl Denied {
    /// A refusal that says why.
    pub fn new(reason: impl Into<String>) -> Self {
        Self {
            reason: reason.into(),
        }
    }
}

impl fmt::Display for Denied {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.reason)
    }
}

impl std::error::Error for Denied {}

/// The authorizer of a router, as [`Authorize::authorize`](super::Authorize::authorize) keeps it.
pub(crate) type Authorizer = Arc<dyn Fn(&Parts) -> Result<Operator, Denied> + Send + Sync>;

/// An authorizer that lets in the requests whose `Authorization` header is `Bearer
/// <secret>`, as an operator named `token` who may write; the comparison takes the same time
/// whichever byte differs.
///
/// ```
/// use breakerbox::admin::bearer_token;
///
/// let check = bearer_token("s3cret");
/// let (ok, _) = http::Request::get("/").header("authorization", "Bearer s3cret").body(()).unwrap().into_parts();
/// let (wrong, _) = http::Request::get("/").header("authorization", "Bearer guess").body(()).unwrap().into_parts();
/// let (none, _) = http::Request::get("/").body(()).unwrap().into_parts();
/// assert_eq!(check(&ok).unwrap().name(), "token");
/// assert_eq!(check(&wrong).unwrap_err().to_string(), "the bearer token is wrong");
/// assert_eq!(check(&none).unwrap_err().to_string(), "no bearer token: send `Authorization: Bearer <token>`");
/// ```
pub fn bearer_token(
    secret: impl Into<String>,
) -> impl Fn(&Parts) -> Result<Operator, Denied> + Clone + Send + Sync + 'static {
    let secret: Arc<str> = Arc::from(secret.into());
    move |parts: &Parts| {
        let given = parts
            .headers
            .get(header::AUTHORIZATION)
            .and_then(|v| v.to_str().ok())
            .and_then(|v| v.strip_prefix("Bearer "))
            .ok_or_else(|| Denied::new("no bearer token: send `Authorization: Bearer <token>`"))?;
        if bool::from(given.as_bytes().ct_eq(secret.as_bytes())) {
            Ok(Operator::writer("token"))
        } else {
            Err(Denied::new("the bearer token is wrong"))
        }
    }
}

/// What a request asks to do.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Need {
    Read,
    Write,
}

/// The access rules of one router: its authorizer, if any, and whether reads need it too.
#[derive(Clone, Default)]
pub(crate) struct Access {
    pub(crate) authorizer: Option<Authorizer>,
    pub(crate) guard_reads: bool,
}

/// A refusal, as the router answers it.
#[derive(Debug, PartialEq, Eq)]
pub(crate) struct Refusal {
    pub(crate) status: StatusCode,
    pub(crate) message: String,
}

impl Access {
    /// Who is asking, if anyone needs to be; or why they may not.
    pub(crate) fn check(&self, parts: &Parts, need: Need) -> Result<Option<Operator>, Refusal> {
        let Some(authorizer) = &self.authorizer else {
            return match need {
                Need::Read => Ok(None),
                Need::Write => Err(Refusal {
                    status: StatusCode::FORBIDDEN,
                    message: "writes are locked: the admin router was given no authorizer".into(),
                }),
            };
        };
        if need == Need::Read && !self.guard_reads {
            return Ok(authorizer(parts).ok());
        }
        match authorizer(parts) {
            Err(denied) => Err(Refusal {
                status: StatusCode::UNAUTHORIZED,
                message: denied.to_string(),
            }),
            Ok(operator) if need == Need::Write && !operator.may_write() => Err(Refusal {
                status: StatusCode::FORBIDDEN,
                message: format!("operator {:?} may read, not write", operator.name()),
            }),
            Ok(operator) => Ok(Some(operator)),
        }
    }
}
