//! The admin router (feature `admin`), driven as a service would be, without a socket: every
//! endpoint's JSON field by field, the steering actions, the authorization matrix, the
//! health answer and the event stream.

mod auth;
mod events;
mod health;
mod read;
mod steer;
mod support;
