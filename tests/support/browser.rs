//! A real headless Chromium driven over W3C WebDriver (Debian's `chromium` and `chromium-driver`,
//! which `.ci/run` installs): the tests type into the ticket pages' forms and click their
//! buttons as a person would, so cookies, redirects, `SameSite`, the CSRF field and the
//! browser's own `Origin` / `Sec-Fetch-Site` headers are the browser's, not the test's.

use std::os::unix::process::CommandExt;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use serde_json::{Value, json};

/// The key W3C WebDriver names an element by.
const ELEMENT: &str = "element-6066-11e4-a52e-4f735466cecf";

/// One browser session; [`Browser::quit`] closes it.
pub struct Browser {
    http: reqwest::Client,
    session: String,
    driver: Child,
    _profile: tempfile::TempDir,
}

impl Browser {
    /// Starts chromedriver on a free port and a headless Chromium session with a profile of its own.
    pub async fn start() -> Browser {
        let port = super::http::free_port().port();
        // In a process group of its own, so that its Chromium can be stopped with it.
        let driver = Command::new("chromedriver")
            .process_group(0)
            .arg(format!("--port={port}"))
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .expect("Debian's chromedriver runs (apt-get install chromium-driver; .ci/run installs it)");
        let profile = tempfile::tempdir().expect("a profile folder");
        let http = super::http::client();
        let base = format!("http://127.0.0.1:{port}");
        let capabilities = json!({"capabilities": {"alwaysMatch": {
            "browserName": "chrome",
            "goog:chromeOptions": {
                "binary": "/usr/bin/chromium",
                "args": ["--headless", "--no-sandbox", "--disable-gpu", "--no-first-run",
                         format!("--user-data-dir={}", profile.path().display())],
            },
        }}});
        let deadline = Instant::now() + Duration::from_secs(30);
        let session = loop {
            match http.post(format!("{base}/session")).json(&capabilities).send().await {
                Ok(response) => {
                    let answer: Value = response.json().await.expect("chromedriver answers JSON");
                    let id = answer["value"]["sessionId"].as_str();
                    break id
                        .unwrap_or_else(|| panic!("chromedriver started no session: {answer}"))
                        .to_owned();
                }
                Err(_) if Instant::now() < deadline => tokio::time::sleep(Duration::from_millis(100)).await,
                Err(e) => panic!("chromedriver never listened on {base}: {e}"),
            }
        };
        Browser {
            http,
            session: format!("{base}/session/{session}"),
            driver,
            _profile: profile,
        }
    }

    async fn call(&self, method: reqwest::Method, path: &str, body: Option<Value>) -> Value {
        self.try_call(method, path, body)
            .await
            .unwrap_or_else(|error| panic!("WebDriver {path}: {error}"))
    }

    /// A WebDriver command's value, or its error.
    async fn try_call(&self, method: reqwest::Method, path: &str, body: Option<Value>) -> Result<Value, Value> {
        let mut request = self.http.request(method, format!("{}{path}", self.session));
        if let Some(body) = body {
            request = request.json(&body);
        }
        let answer: Value = request
            .send()
            .await
            .expect("chromedriver answers")
            .json()
            .await
            .expect("chromedriver answers JSON");
        if answer["value"]["error"].is_string() {
            return Err(answer["value"].clone());
        }
        Ok(answer["value"].clone())
    }

    /// Opens `url` and waits for it to load.
    pub async fn go(&self, url: &str) {
        self.call(reqwest::Method::POST, "/url", Some(json!({"url": url})))
            .await;
    }

    async fn element(&self, css: &str) -> String {
        let found = self
            .call(
                reqwest::Method::POST,
                "/element",
                Some(json!({"using": "css selector", "value": css})),
            )
            .await;
        found[ELEMENT]
            .as_str()
            .unwrap_or_else(|| panic!("no element {css}: {found}"))
            .to_owned()
    }

    /// Types `text` into the field `css` selects.
    pub async fn type_into(&self, css: &str, text: &str) {
        let element = self.element(css).await;
        self.call(
            reqwest::Method::POST,
            &format!("/element/{element}/value"),
            Some(json!({"text": text})),
        )
        .await;
    }

    /// Clicks what `css` selects (a form's button submits it: wait for the next page with
    /// [`Browser::wait_for_url`]).
    pub async fn click(&self, css: &str) {
        let element = self.element(css).await;
        self.call(
            reqwest::Method::POST,
            &format!("/element/{element}/click"),
            Some(json!({})),
        )
        .await;
    }

    /// The page's address now.
    pub async fn url(&self) -> String {
        self.call(reqwest::Method::GET, "/url", None)
            .await
            .as_str()
            .unwrap_or_default()
            .to_owned()
    }

    /// Waits (at most ten seconds) until the page's address satisfies `arrived`, and returns it.
    pub async fn wait_for_url(&self, what: &str, arrived: impl Fn(&str) -> bool) -> String {
        let deadline = Instant::now() + Duration::from_secs(10);
        loop {
            let url = self.url().await;
            if arrived(&url) {
                return url;
            }
            assert!(
                Instant::now() < deadline,
                "the browser never got to {what}: it is at {url}"
            );
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
    }

    /// The page's text as a person reads it (read again when the page changed under the read).
    pub async fn text(&self) -> String {
        for _ in 0..50 {
            let body = self.element("body").await;
            match self
                .try_call(reqwest::Method::GET, &format!("/element/{body}/text"), None)
                .await
            {
                Ok(text) => return text.as_str().unwrap_or_default().to_owned(),
                Err(error) if error["error"] == "stale element reference" => {
                    tokio::time::sleep(Duration::from_millis(100)).await;
                }
                Err(error) => panic!("WebDriver text: {error}"),
            }
        }
        panic!("the page kept changing under the read of its text")
    }

    /// Closes the session and the driver.
    pub async fn quit(self) {
        let _ = self.http.delete(&self.session).send().await;
    }
}

impl Drop for Browser {
    fn drop(&mut self) {
        // Also after a panic: the driver and every Chromium process it started go (killing the
        // driver alone would leave its browser running).
        let _ = Command::new("kill")
            .args(["-KILL", "--", &format!("-{}", self.driver.id())])
            .status();
        let _ = self.driver.wait();
    }
}
