//! The operator's surface: a service with three breakers (one keyed), the admin router at
//! `/breakers`, its live page and a scripted outage of the inventory service.
//!
//! `cargo run --example admin --features admin`, then open the printed URL. `PORT` sets the
//! port (8080), `ADMIN_TOKEN` the token that unlocks the page's buttons and `POST
//! /breakers/{name}` (without it, writes answer 403); `OUTAGE=manual` leaves the inventory up.

#[path = "../src/admin_demo.rs"]
mod admin_demo;

#[tokio::main]
async fn main() {
    let port: u16 = match std::env::var("PORT") {
        Ok(port) => port.parse().expect("PORT must be a port number"),
        Err(_) => 8080,
    };
    let token = std::env::var("ADMIN_TOKEN").ok().filter(|t| !t.is_empty());
    let outage = admin_demo::Outage::default();
    admin_demo::start_traffic(outage.clone());
    if std::env::var("OUTAGE").as_deref() != Ok("manual") {
        admin_demo::start_script(outage);
    }
    let listener = tokio::net::TcpListener::bind(("127.0.0.1", port))
        .await
        .unwrap_or_else(|e| panic!("cannot listen on 127.0.0.1:{port}: {e}"));
    let page = format!("http://127.0.0.1:{port}/breakers/ui");
    match &token {
        Some(_) => println!("the page: {page}#token=<ADMIN_TOKEN> (the buttons need the token)"),
        None => println!("the page: {page} (writes are locked: set ADMIN_TOKEN to unlock them)"),
    }
    println!("the breakers as JSON: http://127.0.0.1:{port}/breakers");
    axum::serve(listener, admin_demo::app(token.as_deref()))
        .await
        .expect("the server runs");
}
