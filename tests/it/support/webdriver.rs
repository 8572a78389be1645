//! A headless Debian `chromium` driven through `chromedriver` by the W3C WebDriver protocol:
//! the few commands a page test needs (open a URL, run a script, click), over reqwest.

use std::os::unix::process::CommandExt;
use std::path::PathBuf;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use serde_json::{json, Value};

/// The W3C name of an element reference in WebDriver's answers.
const ELEMENT: &str = "element-6066-11e4-a52e-4f735466cecf";

/// Where `program` is on the `PATH`.
fn on_path(program: &str) -> Option<PathBuf> {
    let path = std::env::var_os("PATH")?;
    std::env::split_paths(&path)
        .map(|dir| dir.join(program))
        .find(|p| p.is_file())
}

/// Sends a WebDriver request and returns its `value`, panicking on a WebDriver error.
async fn send(request: reqwest::RequestBuilder, body: Value) -> Value {
    let request = match body {
        Value::Null => request,
        body => request
            .header("content-type", "application/json")
            .body(body.to_string()),
    };
    let response = request.send().await.expect("chromedriver answers");
    let answer: Value = serde_json::from_slice(&response.bytes().await.unwrap()).unwrap();
    let value = answer["value"].clone();
    assert!(value.get("error").is_none(), "WebDriver: {answer}");
    value
}

/// A browser session; the driver process ends with it.
pub struct Browser {
    driver: Child,
    http: reqwest::Client,
    session: String,
    profile: PathBuf,
}

impl Browser {
    /// Starts `chromedriver` and a headless `chromium` session. Panics, saying what to
    /// install, when either is missing.
    pub async fn start() -> Self {
        let install = "install Debian's chromium and chromium-driver: \
                       apt-get install -y chromium chromium-driver";
        let chromium =
            on_path("chromium").unwrap_or_else(|| panic!("no chromium on the PATH: {install}"));
        let chromedriver = on_path("chromedriver")
            .unwrap_or_else(|| panic!("no chromedriver on the PATH: {install}"));
        let port = breaker_workspace::redis_server::free_port();
        let driver = Command::new(chromedriver)
            .arg(format!("--port={port}"))
            // A group of its own, with the browser it starts: ended together, even when a
            // test fails halfway.
            .process_group(0)
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .expect("chromedriver starts");
        let http = reqwest::Client::new();
        let base = format!("http://127.0.0.1:{port}");
        let deadline = Instant::now() + Duration::from_secs(20);
        loop {
            let ready = http.get(format!("{base}/status")).send().await;
            if let Ok(response) = ready {
                let status: Value =
                    serde_json::from_slice(&response.bytes().await.unwrap()).unwrap();
                if status["value"]["ready"] == true {
                    break;
                }
            }
            assert!(
                Instant::now() < deadline,
                "chromedriver never answered on port {port}"
            );
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
        let profile =
            std::env::temp_dir().join(format!("breakerbox-page-test-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&profile);
        let args = [
            "--headless".to_owned(),
            "--no-sandbox".to_owned(),
            "--disable-gpu".to_owned(),
            "--disable-quic".to_owned(),
            "--no-first-run".to_owned(),
            "--disable-background-networking".to_owned(),
            "--disable-component-update".to_owned(),
            "--disable-sync".to_owned(),
            "--window-size=1280,900".to_owned(),
            format!("--user-data-dir={}", profile.display()),
        ];
        let capabilities = json!({"capabilities": {"alwaysMatch": {
            "browserName": "chrome",
            "goog:chromeOptions": {"binary": chromium, "args": args}
        }}});
        let created = send(http.post(format!("{base}/session")), capabilities).await;
        let id = created["sessionId"].as_str().expect("a session id");
        Self {
            driver,
            http,
            session: format!("{base}/session/{id}"),
            profile,
        }
    }

    /// Sends a command of the session: `path` after its URL, `body` for a `POST`.
    async fn command(&self, path: &str, body: Option<Value>) -> Value {
        let url = format!("{}{path}", self.session);
        let request = match body {
            Some(_) => self.http.post(url),
            None => self.http.get(url),
        };
        send(request, body.unwrap_or(Value::Null)).await
    }

    /// Opens `url` (a blank page first, so that a URL that differs only by its fragment loads anew).
    pub async fn open(&self, url: &str) {
        self.command("/url", Some(json!({"url": "about:blank"})))
            .await;
        self.command("/url", Some(json!({"url": url}))).await;
    }

    /// Runs `script` in the page (a function body; a promise it returns is awaited).
    pub async fn run(&self, script: &str) -> Value {
        self.command("/execute/sync", Some(json!({"script": script, "args": []})))
            .await
    }

    /// Clicks the element `css` selects, as a user's pointer would.
    pub async fn click(&self, css: &str) {
        let element = self
            .command(
                "/element",
                Some(json!({"using": "css selector", "value": css})),
            )
            .await;
        let id = element[ELEMENT]
            .as_str()
            .unwrap_or_else(|| panic!("no element {css}: {element}"))
            .to_owned();
        self.command(&format!("/element/{id}/click"), Some(json!({})))
            .await;
    }

    /// Waits until `script` returns `want`, checking every 25 ms for at most `within`; panics
    /// with what it last returned.
    pub async fn wait_for(
        &self,
        what: &str,
        script: &str,
        want: &Value,
        within: Duration,
    ) -> Duration {
        let start = Instant::now();
        loop {
            let got = self.run(script).await;
            if got == *want {
                return start.elapsed();
            }
            assert!(
                start.elapsed() < within,
                "{what}: not within {within:?}; the page shows {got}"
            );
            tokio::time::sleep(Duration::from_millis(25)).await;
        }
    }

    /// Ends the session, then the driver and the browser.
    pub async fn quit(self) {
        let _ = self.http.delete(&self.session).send().await;
    }
}

impl Drop for Browser {
    fn drop(&mut self) {
        // The driver's process group: the driver and every browser process it started.
        let group = format!("-{}", self.driver.id());
        let _ = Command::new("kill").args(["--", &group]).status();
        let _ = self.driver.wait();
        let _ = std::fs::remove_dir_all(&self.profile);
    }
}
