//! The `kubeheal` command line. Each subcommand is a thin shell around the library; only what
//! works is listed.

#![forbid(unsafe_code)]

use std::path::PathBuf;
use std::process::ExitCode;
use std::time::Duration;

use clap::{Parser, Subcommand, ValueEnum};
use kubeheal::core::heal_run::healers;
use kubeheal::healer::{factory, server};

/// mimalloc rather than the system's: the parser allocates small strings line after line, and
/// glibc's took about 7% of its instructions on the parser bench's log (Cargo.toml says more).
#[global_allocator]
static GLOBAL: mimalloc::MiMalloc = mimalloc::MiMalloc;

/// kubeheal heals failing builds and tests, in a Kubernetes cluster or on a laptop.
/// Prints a line to stdout. A reader that went away (`kubeheal parse … | head`) ends kubeheal
/// quietly, as it ends `cat`; another write error (a full disk) ends it with a message — never
/// a panic.
macro_rules! say {
    ($($arg:tt)*) => { emit(format_args!($($arg)*)) };
}

fn emit(line: std::fmt::Arguments<'_>) {
    use std::io::Write;
    let mut out = std::io::stdout().lock();
    if let Err(error) = out.write_fmt(line).and_then(|()| out.write_all(b"\n")) {
        if error.kind() == std::io::ErrorKind::BrokenPipe {
            std::process::exit(0);
        }
        eprintln!("kubeheal: cannot write the output: {error}");
        std::process::exit(1);
    }
}

#[derive(Debug, Parser)]
#[command(name = "kubeheal", version, about, propagate_version = true)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Debug, Subcommand)]
enum Command {
    /// Parse a build log into bug reports (file, line, type, message, test).
    Parse {
        /// The build log; `-` or nothing reads standard input.
        file: Option<PathBuf>,
        /// Repository root as the build saw it, for making paths repository-relative
        /// (default: the current directory). When it is a folder here, its files resolve the
        /// paths a tool run in a subfolder prints.
        #[arg(long)]
        workspace: Option<String>,
        /// `json`: a JSON array of bug reports with seed 001's field names; `text`: one line per
        /// report, `{TYPE} error in {file} line {N} → Fix: {desc}`.
        #[arg(long, value_enum, default_value_t = ParseFormat::Json)]
        format: ParseFormat,
    },
    /// Heal a project: run its build, find the bugs, ask a healer, gate and commit each fix on a
    /// heal branch, and run again until the build is green. Exit code 0 only when healed.
    Heal {
        /// The project folder; its state and work repository go to DIR/.kubeheal/.
        dir: PathBuf,
        /// The build command (default: from the project type).
        #[arg(long)]
        command: Option<String>,
        /// A Code Healer API endpoint asked when no deterministic fixer applies.
        #[arg(long, env = "CODE_HEALER_URL", value_parser = http_url)]
        healer_url: Option<String>,
        /// An OpenAI-compatible endpoint asked when no deterministic fixer applies (API key from
        /// `OPENAI_API_KEY`).
        #[arg(long, requires = "model", value_parser = http_url)]
        openai_base_url: Option<String>,
        /// The model to ask at `--openai-base-url`.
        #[arg(long, requires = "openai_base_url")]
        model: Option<String>,
        /// Most heal cycles.
        #[arg(long, default_value_t = 5, value_parser = clap::value_parser!(u32).range(1..=10))]
        max_cycles: u32,
        /// Seconds one run of the build may take (1 to 86400).
        #[arg(long, default_value_t = 300, value_parser = clap::value_parser!(u64).range(1..=86_400))]
        timeout: u64,
        /// A variable for the build, `NAME=VALUE`, or `NAME` to pass kubeheal's own value
        /// (repeatable). The build sees only these and an allow-list of the host's variables
        /// (PATH, HOME, the locale, proxies, tool locations), never kubeheal's own secrets.
        #[arg(long = "env", value_name = "NAME[=VALUE]")]
        env: Vec<String>,
        /// After the build passes, also start the service and call its endpoints from this
        /// OpenAPI 3.x document (a path in the project): a failing endpoint is healed like a
        /// failing test. Needs --verify-start and --verify-base-url.
        #[arg(long, value_name = "DOCUMENT", requires_all = ["verify_start", "verify_base_url"])]
        verify_openapi: Option<String>,
        /// The command that starts the service, run by `sh` in the project (stopped afterwards).
        #[arg(long, value_name = "COMMAND", requires = "verify_openapi")]
        verify_start: Option<String>,
        /// Where the started service answers, e.g. http://127.0.0.1:8000.
        #[arg(long, value_name = "URL", requires = "verify_openapi")]
        verify_base_url: Option<String>,
        /// An endpoint to call, `METHOD /path` (repeatable; default: every endpoint).
        #[arg(long = "verify-endpoint", value_name = "METHOD /path", requires = "verify_openapi")]
        verify_endpoints: Vec<String>,
    },
    /// Run a project's build locally and print its RunEnvelope as JSON (seed 003's field names).
    Exec {
        /// The project folder.
        dir: PathBuf,
        /// The build command, run by `sh` in a fresh copy of the folder (default: from the
        /// project type: pytest, npm test, cargo test or go test).
        #[arg(long)]
        command: Option<String>,
        /// Seconds the build may take before its process group is stopped (1 to 86400).
        #[arg(long, default_value_t = 300, value_parser = clap::value_parser!(u64).range(1..=86_400))]
        timeout: u64,
        /// Check out this branch, tag or commit of the folder's Git repository instead of copying
        /// its working tree.
        #[arg(long)]
        revision: Option<String>,
        /// A variable for the build, `NAME=VALUE`, or `NAME` to pass kubeheal's own value
        /// (repeatable). The build sees only these and an allow-list of the host's variables
        /// (PATH, HOME, the locale, proxies, tool locations), never kubeheal's own secrets.
        #[arg(long = "env", value_name = "NAME[=VALUE]")]
        env: Vec<String>,

        /// Also write the whole redacted log to this file.
        #[arg(long)]
        log: Option<PathBuf>,
    },
    /// Call a running service's endpoints from its OpenAPI 3.x document and print one seed-003
    /// RunEnvelope per call as a JSON array. Exit code 0 when every call succeeded, 1 when any
    /// failed, 2 for bad input.
    Probe(kubeheal::probe::ProbeArgs),
    /// The reference Code Healer server (seed 000's `POST /api/heal`, `GET /healthz`), answering
    /// with the built-in deterministic fixers.
    Healer {
        #[command(subcommand)]
        command: HealerCommand,
    },
    /// Run the controllers: reconcile HealRuns with executor Jobs, the configured healer, the
    /// heal branch and CodeFixDDS approvals. Uses the in-cluster config or $KUBECONFIG.
    Operator {
        /// Watch only this namespace (default: all namespaces).
        #[arg(long, env = "KUBEHEAL_NAMESPACE")]
        namespace: Option<String>,
        /// Where clones of the sources are kept.
        #[arg(long, env = "KUBEHEAL_WORK_DIR", default_value = "/var/cache/kubeheal")]
        work_dir: PathBuf,
        /// Address of /metrics, /healthz and /readyz.
        #[arg(long, env = "KUBEHEAL_LISTEN", default_value = "0.0.0.0:8080", value_parser = listen_address)]
        listen: std::net::SocketAddr,
        /// The Code Healer API asked after the built-in deterministic fixers when a HealRun
        /// names no healer. Its bearer token is read from `CODE_HEALER_TOKEN`.
        #[arg(long, env = "CODE_HEALER_URL", value_parser = http_url)]
        healer_url: Option<String>,
        /// Reconcile only while holding the Lease `--lease-name` (run several replicas; the others
        /// wait to take over). The Lease lives in `--lease-namespace` (default: the Pod's
        /// namespace, `POD_NAMESPACE`); this replica is `POD_NAME` (default: host name and pid).
        #[arg(long, env = "KUBEHEAL_LEADER_ELECT")]
        leader_elect: bool,
        /// The Lease the replicas compete for.
        #[arg(long, env = "KUBEHEAL_LEASE_NAME", default_value = "kubeheal-operator")]
        lease_name: String,
        /// The Lease's namespace (default: `POD_NAMESPACE`, else `--namespace`, else `default`).
        #[arg(long, env = "KUBEHEAL_LEASE_NAMESPACE")]
        lease_namespace: Option<String>,
        /// How long a leader that stops renewing keeps the Lease, in seconds.
        #[arg(long, env = "KUBEHEAL_LEASE_SECONDS", default_value_t = 15,
              value_parser = clap::value_parser!(u64).range(2..=3600))]
        lease_seconds: u64,
        /// Reconcile only the HealRuns this label selector matches: several operators (each with
        /// its own --lease-name) split a large cluster's runs between them, e.g.
        /// `kubeheal.dev/shard in (a)` here and `kubeheal.dev/shard notin (a)` in the main one.
        #[arg(long, env = "KUBEHEAL_WATCH_LABEL_SELECTOR")]
        watch_label_selector: Option<String>,
        /// Most HealRuns reconciled at once (the others wait in the queue).
        #[arg(long, env = "KUBEHEAL_MAX_CONCURRENT_RECONCILES", default_value_t = 16,
              value_parser = clap::value_parser!(u16).range(1..))]
        max_concurrent_reconciles: u16,
        /// Let HealRuns name `file://` URLs and local paths as sources (off: a run could read the
        /// operator's own disk).
        #[arg(long, env = "KUBEHEAL_ALLOW_FILE_SOURCES")]
        allow_file_sources: bool,
        /// Let HealRuns name healer URLs on loopback, private or link-local addresses and
        /// cluster-internal names (off: a run could send source files anywhere inside the
        /// cluster).
        #[arg(long, env = "KUBEHEAL_ALLOW_CLUSTER_INTERNAL_HEALERS")]
        allow_cluster_internal_healers: bool,
        /// Address of seed 004's /healer API (POST /healer/ingest, GET /healer/status,
        /// /healer/tickets ...); `off` serves none.
        #[arg(long, env = "KUBEHEAL_HEALER_LISTEN", default_value = "0.0.0.0:8083")]
        healer_listen: String,
        /// The namespace ingested errors become HealerTickets in when a request names none with
        /// `?namespace=` (default: --namespace, else POD_NAMESPACE, else default).
        #[arg(long, env = "KUBEHEAL_TICKET_NAMESPACE")]
        ticket_namespace: Option<String>,
        /// Accept ingests and reads of the ticket namespace without a bearer token (only inside
        /// a NetworkPolicy); otherwise callers send `Authorization: Bearer
        /// $KUBEHEAL_INGEST_TOKEN`. Other namespaces always want their own token.
        #[arg(long, env = "KUBEHEAL_INGEST_ALLOW_ANONYMOUS")]
        ingest_allow_anonymous: bool,
        /// The Secret, in each namespace, whose key `token` is the bearer token that lets callers
        /// ingest into and read that namespace's tickets (`?namespace=`); empty: only the ticket
        /// namespace's KUBEHEAL_INGEST_TOKEN.
        #[arg(long, env = "KUBEHEAL_INGEST_TOKEN_SECRET", value_name = "NAME",
              default_value = kubeheal::operator::ingest_auth::DEFAULT_TOKEN_SECRET)]
        ingest_token_secret: String,
        /// Ingests a second one client address may send (its burst: ten seconds' worth, so a
        /// storm is absorbed); more are answered 429 with Retry-After. 0: no limit.
        #[arg(long, env = "KUBEHEAL_INGEST_RATE_LIMIT", value_name = "PER_SECOND",
              default_value_t = kubeheal::operator::ingest::DEFAULT_RATE_LIMIT)]
        ingest_rate_limit: u32,
        /// Seconds an ingest's body may take to arrive; a slower one is answered 408 and its
        /// connection closed (a client that trickles bytes holds no connection for long).
        #[arg(long, env = "KUBEHEAL_INGEST_BODY_TIMEOUT", value_name = "SECONDS",
              default_value_t = kubeheal::healer::server::DEFAULT_BODY_READ_TIMEOUT_SECS,
              value_parser = clap::value_parser!(u64).range(1..))]
        ingest_body_timeout: u64,
        /// Announce HealerTicket transitions (proposed, applied, failed, rejected) to the webhooks
        /// in this Secret (keys `slack`, `discord`, `teams`, `json`, each optional), in the ticket
        /// namespace (--ticket-namespace, else --namespace, else POD_NAMESPACE). Default: none.
        #[arg(long, env = "KUBEHEAL_NOTIFY_SECRET", value_name = "NAME")]
        notify_secret: Option<String>,
        /// Base URL of the ticket pages, for the notifications' links
        /// (`{BASE}/healer/tickets/{id}/view`). Default: no link.
        #[arg(long, env = "KUBEHEAL_TICKET_PAGE_URL", value_name = "BASE")]
        ticket_page_url: Option<String>,
        /// An executor tool work orders may name (`tool: aider` in a CodeFixDDS): its image runs
        /// with its own entrypoint in a Job over the checkout, the task in `$KUBEHEAL_TASK` and
        /// the keys of the Secret `kubeheal-tool-NAME` (when the namespace has one) as its
        /// environment; the files it changed are gated and committed like a healer's fix.
        /// Repeat for several tools.
        #[arg(long = "tool", env = "KUBEHEAL_TOOLS", value_name = "NAME=IMAGE",
              value_delimiter = ',', value_parser = parse_tool)]
        tools: Vec<(String, String)>,
        /// Where HealerTickets' contract fixes go when a ticket's `spec.target` does not say (as
        /// ingested tickets do not): a YAML or JSON file of `spec.target`'s fields
        /// (`repository`, `contractLayout`, `contractSchema`, `healer`, `regenerate`). Default: none, so a
        /// contract ticket waits in Queued until its own spec says.
        #[arg(long, env = "KUBEHEAL_TICKET_TARGET", value_name = "FILE")]
        ticket_target: Option<PathBuf>,
        /// Most HealerTickets analysed at once (a proposal from the normaliser or the model);
        /// the others wait their turn, critical first, oldest first within a priority.
        #[arg(long, env = "KUBEHEAL_TICKET_WORKERS", value_name = "N",
              default_value_t = kubeheal::operator::ticket_queue::DEFAULT_WORKERS,
              value_parser = clap::value_parser!(u16).range(1..))]
        ticket_workers: u16,
        /// The image that calls the services HealRuns start for `spec.verify.openapi`: kubeheal's
        /// own (the chart sets it to the operator's image). It runs beside the build in the
        /// executor Pod. Without it, runs that ask to verify endpoints fail saying so.
        #[arg(long, env = "KUBEHEAL_PROBE_IMAGE", value_name = "IMAGE")]
        probe_image: Option<String>,
    },
    /// Approve a CodeFixDDS as the current kubeconfig user (with its proposal's digest). The
    /// API server decides whether you may: you need the `approve` verb on codefixdds.
    Approve(DecideArgs),
    /// Reject a CodeFixDDS as the current kubeconfig user, with a reason; it is never executed
    /// or proposed again.
    Reject {
        #[command(flatten)]
        args: DecideArgs,
    },
    /// HealerTickets (seed 004's `specora healer` commands) through the Kubernetes API with the
    /// current kubeconfig: ingest an error, list, show, status, approve or reject.
    Ticket {
        #[command(subcommand)]
        command: TicketCommand,
    },
    /// Write the CustomResourceDefinitions to crds/ and charts/kubeheal/crds/.
    Crdgen {
        /// Repository root to write into.
        #[arg(long, default_value = ".")]
        root: PathBuf,
        /// Write nothing; fail when a committed copy differs from the types.
        #[arg(long)]
        check: bool,
        /// Print the CRDs as one multi-document YAML stream instead of writing files
        /// (`kubeheal crdgen --stdout | kubectl apply --server-side -f -`).
        #[arg(long, conflicts_with = "check")]
        stdout: bool,
    },
}

/// What `kubeheal approve` and `kubeheal reject` decide on.
#[derive(Debug, clap::Args)]
struct DecideArgs {
    /// The kind: `cfd` (or `codefixdds`).
    #[arg(value_parser = ["cfd", "codefixdds"])]
    kind: String,
    /// The object's name.
    name: String,
    /// Its namespace (default: the kubeconfig context's).
    #[arg(short, long)]
    namespace: Option<String>,
    /// Why: shown in the order's status, its Events and the commit's audit trail (required to
    /// reject).
    #[arg(long)]
    reason: Option<String>,
}

#[derive(Debug, Subcommand)]
enum TicketCommand {
    /// Report an error: validated, classified and filed under its fingerprint's ticket exactly
    /// as `POST /healer/ingest` does (a repeat counts an occurrence). Prints
    /// `{"ticket_id": ..., "status": ...}`.
    Ingest {
        #[command(flatten)]
        ns: TicketNamespace,
        /// A JSON file in seed 004's IngestRequest shape (source, error, contract_fqn,
        /// stacktrace, context).
        #[arg(long, conflicts_with_all = ["source", "error", "contract_fqn", "stacktrace_file", "context"])]
        file: Option<String>,
        /// validation, compilation, runtime or manual.
        #[arg(long, required_unless_present = "file")]
        source: Option<String>,
        /// The error message.
        #[arg(long, required_unless_present = "file")]
        error: Option<String>,
        /// The contract it points at, e.g. entity/helpdesk/ticket.
        #[arg(long)]
        contract_fqn: Option<String>,
        /// A file holding the stack trace.
        #[arg(long)]
        stacktrace_file: Option<PathBuf>,
        /// More context, e.g. status_code=500 (repeatable).
        #[arg(long, value_name = "KEY=VALUE", value_parser = key_value)]
        context: Vec<(String, String)>,
    },
    /// List tickets in queue order (critical first, oldest first), filtered as
    /// `GET /healer/tickets` is.
    List {
        #[command(flatten)]
        ns: TicketNamespace,
        /// Only this status: queued, analyzing, proposed, approved, applied, failed, rejected.
        #[arg(long)]
        status: Option<String>,
        /// Only this priority: critical, high, medium, low.
        #[arg(long)]
        priority: Option<String>,
        /// Only tickets about this contract.
        #[arg(long)]
        contract_fqn: Option<String>,
        /// table or json.
        #[arg(short, long, default_value = "table", value_parser = ["table", "json"])]
        output: String,
    },
    /// One ticket in seed 004's fields, with occurrences, fingerprint, classification and
    /// resolution.
    Show {
        /// The ticket id (its object name, ht-...).
        id: String,
        #[command(flatten)]
        ns: TicketNamespace,
        /// text or json.
        #[arg(short, long, default_value = "text", value_parser = ["text", "json"])]
        output: String,
    },
    /// What `GET /healer/status` answers: counts by status, success rate per tier, recurring
    /// errors, the newest tickets.
    Status {
        #[command(flatten)]
        ns: TicketNamespace,
    },
    /// Approve a ticket's proposed fix as the current kubeconfig user (with its digest).
    Approve {
        /// The ticket's ID (`kubeheal ticket list`).
        id: String,
        #[command(flatten)]
        ns: TicketNamespace,
        /// Why: shown in notifications and the audit trail.
        #[arg(long)]
        reason: Option<String>,
        /// The patch you looked at (`patch_digest` in `kubeheal ticket show`): nothing is
        /// written when the proposal is another one by now. Default: the current proposal.
        #[arg(long, value_name = "sha256:HEX", value_parser = kubeheal::ticket::parse_digest)]
        digest: Option<String>,
    },
    /// Reject a ticket's proposed fix as the current kubeconfig user, with a reason.
    Reject {
        /// The ticket's ID (`kubeheal ticket list`).
        id: String,
        #[command(flatten)]
        ns: TicketNamespace,
        /// Why: shown in notifications and the audit trail.
        #[arg(long)]
        reason: String,
        /// The patch you looked at (`patch_digest` in `kubeheal ticket show`): nothing is
        /// written when the proposal is another one by now. Default: the current proposal.
        #[arg(long, value_name = "sha256:HEX", value_parser = kubeheal::ticket::parse_digest)]
        digest: Option<String>,
    },
}

/// The namespace of the tickets.
#[derive(Debug, clap::Args)]
struct TicketNamespace {
    /// Default: the kubeconfig context's.
    #[arg(short, long)]
    namespace: Option<String>,
}

/// A healer's URL flag: an http(s) URL with a host, refused at start rather than when the first
/// cycle asks it. Empty is allowed (the variable set to nothing: no such healer).
fn http_url(text: &str) -> Result<String, String> {
    if text.is_empty() {
        return Ok(String::new());
    }
    match kubeheal::probe::http_url(text) {
        Some(_) => Ok(text.to_owned()),
        None => Err(format!(
            "{text:?} is not an http(s) URL; give one such as http://localhost:3000/api/heal"
        )),
    }
}

/// A listen address: `IP:PORT`, or `HOST:PORT` resolved to its first address (`localhost:3000`).
fn listen_address(text: &str) -> Result<std::net::SocketAddr, String> {
    use std::net::ToSocketAddrs;
    if let Ok(address) = text.parse() {
        return Ok(address);
    }
    text.to_socket_addrs()
        .ok()
        .and_then(|mut addresses| addresses.next())
        .ok_or_else(|| {
            format!("{text:?} is not an address to listen on; give IP:PORT or HOST:PORT, such as 127.0.0.1:3000")
        })
}

fn key_value(pair: &str) -> Result<(String, String), String> {
    pair.split_once('=')
        .map(|(k, v)| (k.to_owned(), v.to_owned()))
        .ok_or_else(|| format!("{pair:?} is not KEY=VALUE"))
}

#[derive(Debug, Subcommand)]
enum HealerCommand {
    /// Serve the Code Healer API until interrupted.
    Serve {
        /// Address to listen on: IP:PORT, or HOST:PORT (`localhost:3000`).
        #[arg(long, default_value = "127.0.0.1:3000", value_parser = listen_address)]
        listen: std::net::SocketAddr,
        /// An OpenAI-compatible endpoint asked when no deterministic fixer applies, e.g.
        /// `https://api.openai.com/v1` or `http://localhost:11434/v1`. Its API key is read from
        /// `OPENAI_API_KEY`.
        #[arg(long, requires = "model", value_parser = http_url)]
        openai_base_url: Option<String>,
        /// The model to ask at `--openai-base-url`.
        #[arg(long, requires = "openai_base_url")]
        model: Option<String>,
        /// Most tokens per completion.
        #[arg(long, default_value_t = 4096)]
        max_tokens: u32,
        /// Seconds a request's line and headers may take to arrive; also how long an idle
        /// keep-alive connection is kept.
        #[arg(long, env = "KUBEHEAL_HEALER_HEADER_READ_TIMEOUT", value_name = "SECONDS",
              default_value_t = server::DEFAULT_HEADER_READ_TIMEOUT_SECS,
              value_parser = clap::value_parser!(u64).range(1..))]
        header_read_timeout: u64,
        /// Seconds a heal request's whole body may take to arrive (408 after that).
        #[arg(long, env = "KUBEHEAL_HEALER_BODY_READ_TIMEOUT", value_name = "SECONDS",
              default_value_t = server::DEFAULT_BODY_READ_TIMEOUT_SECS,
              value_parser = clap::value_parser!(u64).range(1..))]
        body_read_timeout: u64,
        /// Connections served at once; more wait in the listen backlog until one closes.
        #[arg(long, env = "KUBEHEAL_HEALER_MAX_CONNECTIONS",
              default_value_t = server::DEFAULT_MAX_CONNECTIONS,
              value_parser = clap::value_parser!(u32).range(1..))]
        max_connections: u32,
        /// Heal requests in flight at once; one more is answered 503 at once.
        #[arg(long, env = "KUBEHEAL_HEALER_MAX_HEAL_REQUESTS",
              default_value_t = server::DEFAULT_MAX_HEAL_REQUESTS,
              value_parser = clap::value_parser!(u32).range(1..))]
        max_heal_requests: u32,
    },
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    let result = match cli.command {
        Command::Crdgen { root, check, stdout } => crdgen(&root, check, stdout),
        Command::Ticket { command } => ticket(command),
        Command::Approve(args) => decide(&args, kubeheal::decision::Verdict::Approve),
        Command::Reject { args } => match args.reason.as_deref().map(str::trim) {
            None | Some("") => Err("reject needs --reason: say why, so the people who proposed it know".into()),
            Some(_) => decide(&args, kubeheal::decision::Verdict::Reject),
        },
        Command::Operator {
            namespace,
            work_dir,
            listen,
            healer_url,
            allow_file_sources,
            allow_cluster_internal_healers,
            max_concurrent_reconciles,
            leader_elect,
            lease_name,
            lease_namespace,
            lease_seconds,
            watch_label_selector,
            healer_listen,
            ticket_namespace,
            ingest_allow_anonymous,
            ingest_token_secret,
            ingest_rate_limit,
            ingest_body_timeout,
            notify_secret,
            ticket_page_url,
            tools,
            ticket_target,
            ticket_workers,
            probe_image,
        } => ingest_settings(
            &healer_listen,
            kubeheal::operator::ingest_auth::AccessSettings {
                home: ticket_namespace
                    .clone()
                    .or_else(|| namespace.clone())
                    .or_else(|| std::env::var("POD_NAMESPACE").ok().filter(|n| !n.is_empty()))
                    .unwrap_or_else(|| "default".into()),
                watched: namespace.clone(),
                home_token: std::env::var("KUBEHEAL_INGEST_TOKEN")
                    .ok()
                    .filter(|t| !t.trim().is_empty()),
                allow_anonymous: ingest_allow_anonymous,
                token_secret: Some(ingest_token_secret.trim().to_owned()).filter(|s| !s.is_empty()),
            },
            ingest_rate_limit,
            ingest_body_timeout,
        )
        .and_then(|ingest| {
            let notify = notify_settings(
                notify_secret,
                ticket_page_url,
                ticket_namespace.or_else(|| namespace.clone()),
            )?;
            let tools = tool_settings(tools)?;
            let ticket_target = ticket_target.as_deref().map(ticket_target_settings).transpose()?;
            operator(kubeheal::operator::Settings {
                ingest,
                ticket_target,
                ticket_workers,
                probe_image: probe_image.filter(|i| !i.trim().is_empty()),
                notify,
                tools,
                watch_label_selector: watch_label_selector.filter(|s| !s.trim().is_empty()),
                leader_election: leader_elect.then(|| kubeheal::operator::leader::Election {
                    lease: lease_name,
                    namespace: lease_namespace
                        .or_else(|| std::env::var("POD_NAMESPACE").ok().filter(|n| !n.is_empty()))
                        .or_else(|| namespace.clone())
                        .unwrap_or_else(|| "default".into()),
                    identity: std::env::var("POD_NAME")
                        .ok()
                        .filter(|n| !n.is_empty())
                        .unwrap_or_else(replica_name),
                    duration: std::time::Duration::from_secs(lease_seconds),
                }),
                max_concurrent_reconciles,
                namespace,
                work_dir,
                listen,
                healer_url: healer_url.filter(|u| !u.is_empty()),
                healer_token: std::env::var("CODE_HEALER_TOKEN").ok().filter(|t| !t.is_empty()),
                url_policy: kubeheal::operator::url_policy::UrlPolicy {
                    allow_file_sources,
                    allow_internal_healers: allow_cluster_internal_healers,
                },
            })
        }),
        Command::Parse {
            file,
            workspace,
            format,
        } => parse(file, workspace, format),
        Command::Heal {
            dir,
            command,
            healer_url,
            openai_base_url,
            model,
            max_cycles,
            timeout,
            env,
            verify_openapi,
            verify_start,
            verify_base_url,
            verify_endpoints,
        } => build_env(&env).and_then(|env| {
            let verify =
                verify_openapi.map(|document| verify_spec(document, verify_start, verify_base_url, verify_endpoints));
            heal(
                dir,
                command,
                env,
                healer_url,
                openai_base_url.zip(model),
                max_cycles,
                timeout,
                verify.transpose()?,
            )
        }),
        Command::Exec {
            dir,
            command,
            timeout,
            revision,
            env,
            log,
        } => build_env(&env).and_then(|env| exec(dir, command, env, timeout, revision, log)),
        Command::Probe(args) => return probe(&args),
        Command::Healer {
            command:
                HealerCommand::Serve {
                    listen,
                    openai_base_url,
                    model,
                    max_tokens,
                    header_read_timeout,
                    body_read_timeout,
                    max_connections,
                    max_heal_requests,
                },
        } => {
            let config = server::ServerConfig {
                header_read_timeout: Duration::from_secs(header_read_timeout),
                body_read_timeout: Duration::from_secs(body_read_timeout),
                max_connections: max_connections as usize,
                max_heal_requests: max_heal_requests as usize,
            };
            healer_serve(listen, openai_base_url.zip(model), max_tokens, config)
        }
    };
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(message) => {
            eprintln!("kubeheal: {message}");
            ExitCode::FAILURE
        }
    }
}

fn decide(args: &DecideArgs, verdict: kubeheal::decision::Verdict) -> Result<(), String> {
    let runtime = tokio::runtime::Runtime::new().map_err(|e| format!("cannot start the async runtime: {e}"))?;
    let done = runtime.block_on(kubeheal::decide::decide(
        &args.name,
        args.namespace.as_deref(),
        verdict,
        args.reason.as_deref(),
    ))?;
    println!("{done}");
    Ok(())
}

fn ticket(command: TicketCommand) -> Result<(), String> {
    use kubeheal::decision::Verdict;
    use kubeheal::ticket;
    let runtime = tokio::runtime::Runtime::new().map_err(|e| format!("cannot start the async runtime: {e}"))?;
    let json = |v: &serde_json::Value| serde_json::to_string_pretty(v).unwrap_or_default();
    match command {
        TicketCommand::Ingest {
            ns,
            file,
            source,
            error,
            contract_fqn,
            stacktrace_file,
            context,
        } => {
            let stacktrace = match stacktrace_file {
                Some(path) => Some(
                    std::fs::read_to_string(&path)
                        .map_err(|e| format!("cannot read --stacktrace-file {}: {e}", path.display()))?,
                ),
                None => None,
            };
            let fields = ticket::Ingest {
                file,
                source,
                error,
                contract_fqn,
                stacktrace,
                context,
            };
            let answer = runtime.block_on(ticket::ingest(ns.namespace.as_deref(), &fields))?;
            println!("{answer}");
        }
        TicketCommand::List {
            ns,
            status,
            priority,
            contract_fqn,
            output,
        } => {
            let filters = kubeheal::core::ticket_api::Filters {
                status,
                priority,
                contract_fqn,
            };
            let listed = runtime.block_on(ticket::list(ns.namespace.as_deref(), &filters))?;
            if output == "json" {
                println!("{}", json(&serde_json::Value::Array(listed)));
            } else {
                print!("{}", ticket::table(&listed, k8s_openapi::jiff::Timestamp::now()));
            }
        }
        TicketCommand::Show { id, ns, output } => {
            let shown = runtime.block_on(ticket::show(ns.namespace.as_deref(), &id))?;
            if output == "json" {
                println!("{}", json(&shown));
            } else {
                print!("{}", ticket::text(&shown));
            }
        }
        TicketCommand::Status { ns } => {
            println!("{}", json(&runtime.block_on(ticket::status(ns.namespace.as_deref()))?));
        }
        TicketCommand::Approve { id, ns, reason, digest } => {
            let done = runtime.block_on(ticket::decide(
                ns.namespace.as_deref(),
                &id,
                Verdict::Approve,
                reason.as_deref().filter(|r| !r.trim().is_empty()),
                digest.as_deref(),
            ))?;
            println!("{done}");
        }
        TicketCommand::Reject { id, ns, reason, digest } => {
            if reason.trim().is_empty() {
                return Err("reject needs --reason: say why, so the people who proposed it know".into());
            }
            let done = runtime.block_on(ticket::decide(
                ns.namespace.as_deref(),
                &id,
                Verdict::Reject,
                Some(&reason),
                digest.as_deref(),
            ))?;
            println!("{done}");
        }
    }
    Ok(())
}

/// The /healer API's settings from the flags: `off`, or an address; the token from
/// `KUBEHEAL_INGEST_TOKEN`.
/// `NAME=IMAGE`: a tool's name as work orders name it (a DNS label) and its image.
fn parse_tool(value: &str) -> Result<(String, String), String> {
    let (name, image) = value
        .split_once('=')
        .ok_or_else(|| format!("--tool {value:?} is not NAME=IMAGE (e.g. aider=registry.example/aider:0.86)"))?;
    let label = name.len() <= 63
        && name.starts_with(|c: char| c.is_ascii_lowercase() || c.is_ascii_digit())
        && name.ends_with(|c: char| c.is_ascii_lowercase() || c.is_ascii_digit())
        && name
            .chars()
            .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '-');
    if !label {
        return Err(format!(
            "--tool {value:?}: the name {name:?} must be a DNS label (lower-case letters, digits and '-', at most 63), as work orders name it"
        ));
    }
    if image.is_empty() || image.chars().any(char::is_whitespace) {
        return Err(format!(
            "--tool {value:?}: the image must be an image reference without spaces"
        ));
    }
    Ok((name.to_owned(), image.to_owned()))
}

/// `--ticket-target`'s file, read and checked once at start: a mistake stops the operator with
/// the file's name and what is wrong, rather than failing every ticket later.
fn ticket_target_settings(path: &std::path::Path) -> Result<kubeheal::api::healer_ticket::TicketTarget, String> {
    let text = std::fs::read_to_string(path)
        .map_err(|e| format!("--ticket-target {}: cannot read it: {e}", path.display()))?;
    let target: kubeheal::api::healer_ticket::TicketTarget = serde_yaml_ng::from_str(&text).map_err(|e| {
        format!(
            "--ticket-target {}: not a ticket target ({e}); give spec.target's fields: repository, contractLayout, contractSchema, validate, healer, regenerate",
            path.display()
        )
    })?;
    if target.contract_fqn.is_some() || target.path.is_some() || target.heal_run.is_some() {
        return Err(format!(
            "--ticket-target {}: contractFqn, path and healRun belong to each ticket, not to the defaults",
            path.display()
        ));
    }
    if let Some(why) = target
        .healer
        .as_ref()
        .and_then(kubeheal::core::ticket_fix::healer_problem)
    {
        return Err(format!("--ticket-target {}: {why}", path.display()));
    }
    if let Some(why) = target
        .regenerate
        .as_ref()
        .and_then(kubeheal::core::ticket_regenerate::problem)
    {
        return Err(format!("--ticket-target {}: {why}", path.display()));
    }
    if let Some(why) = target
        .validate
        .as_ref()
        .and_then(kubeheal::core::ticket_validate::problem)
    {
        return Err(format!("--ticket-target {}: {why}", path.display()));
    }
    Ok(target)
}

/// The tools by name; a name given twice is refused (which image would run?).
fn tool_settings(tools: Vec<(String, String)>) -> Result<std::collections::BTreeMap<String, String>, String> {
    let mut by_name = std::collections::BTreeMap::new();
    for (name, image) in tools {
        if let Some(first) = by_name.insert(name.clone(), image.clone())
            && first != image
        {
            return Err(format!(
                "--tool {name} is given twice ({first} and {image}): name each tool once"
            ));
        }
    }
    Ok(by_name)
}

fn ingest_settings(
    listen: &str,
    access: kubeheal::operator::ingest_auth::AccessSettings,
    rate_limit: u32,
    body_timeout_seconds: u64,
) -> Result<Option<kubeheal::operator::ingest::IngestSettings>, String> {
    if listen == "off" {
        return Ok(None);
    }
    let listen = listen
        .parse()
        .map_err(|e| format!("--healer-listen {listen:?} is not an address such as 0.0.0.0:8083 (or off): {e}"))?;
    if let Some(watched) = &access.watched
        && watched != &access.home
    {
        return Err(format!(
            "--ticket-namespace {} is not the namespace this operator watches (--namespace {watched}): its tickets would never be reconciled; leave --ticket-namespace out, or set it to {watched}",
            access.home
        ));
    }
    Ok(Some(kubeheal::operator::ingest::IngestSettings {
        listen,
        access,
        rate_limit: std::num::NonZeroU32::new(rate_limit),
        body_read_timeout: std::time::Duration::from_secs(body_timeout_seconds),
    }))
}

/// The notifications' settings from the flags: none without a Secret; the Secret in the ticket
/// namespace, else `POD_NAMESPACE`, else `default`.
fn notify_settings(
    secret: Option<String>,
    ticket_page_url: Option<String>,
    namespace: Option<String>,
) -> Result<Option<kubeheal::operator::notify::NotifySettings>, String> {
    let Some(secret) = secret.map(|s| s.trim().to_owned()).filter(|s| !s.is_empty()) else {
        return Ok(None);
    };
    let ticket_page_url = ticket_page_url.map(|u| u.trim().to_owned()).filter(|u| !u.is_empty());
    if let Some(url) = &ticket_page_url
        && !(url.starts_with("https://") || url.starts_with("http://"))
    {
        return Err(format!(
            "--ticket-page-url {url:?} is not an http(s) URL such as https://kubeheal.example.com"
        ));
    }
    Ok(Some(kubeheal::operator::notify::NotifySettings {
        secret,
        namespace: namespace
            .or_else(|| std::env::var("POD_NAMESPACE").ok().filter(|n| !n.is_empty()))
            .unwrap_or_else(|| "default".into()),
        ticket_page_url,
    }))
}

/// The servers' logs (the operator's, the healer's): on stderr, `RUST_LOG` filtering (default
/// `info`), coloured only on a terminal, so that a log file or a Pod's log holds no escapes.
fn init_logging() {
    use std::io::IsTerminal;
    tracing_subscriber::fmt()
        .with_env_filter(tracing_subscriber::EnvFilter::try_from_default_env().unwrap_or_else(|_| "info".into()))
        .with_writer(std::io::stderr)
        .with_ansi(std::io::stderr().is_terminal())
        .init();
}

fn operator(settings: kubeheal::operator::Settings) -> Result<(), String> {
    init_logging();
    let runtime = tokio::runtime::Runtime::new().map_err(|e| format!("cannot start the async runtime: {e}"))?;
    runtime.block_on(kubeheal::operator::run(settings, termination()))
}

fn crdgen(root: &std::path::Path, check: bool, stdout: bool) -> Result<(), String> {
    use kubeheal::crdgen;
    if stdout {
        let docs = crdgen::render().map_err(|e| e.to_string())?;
        let stream: Vec<String> = docs.into_iter().map(|d| d.yaml).collect();
        print!("{}", stream.join("---\n"));
        return Ok(());
    }
    if check {
        crdgen::check(root).map_err(|e| e.to_string())?;
        eprintln!("kubeheal: CRDs in {} are up to date", crdgen::CRD_DIRS.join(" and "));
        return Ok(());
    }
    for path in crdgen::write(root).map_err(|e| e.to_string())? {
        eprintln!("wrote {}", path.display());
    }
    Ok(())
}

#[derive(Debug, Clone, Copy, ValueEnum)]
enum ParseFormat {
    Json,
    Text,
}

/// A bug report with seed 001's snake_case field names (the resources use camelCase).
#[derive(serde::Serialize)]
struct BugReportWire<'a> {
    file_path: &'a str,
    line_number: u32,
    error_type: &'static str,
    message: &'a str,
    test_name: Option<&'a str>,
    confidence_score: Option<f64>,
}

/// Most entries (files and folders) `kubeheal parse` reads in a workspace folder: past it (a home
/// folder given by mistake, a tree of empty folders) paths are made relative without being checked.
const MAX_LISTED_ENTRIES: usize = 100_000;

/// Folders whose files are not the project's: a path into them is never the one a log means.
fn is_dependency_folder(name: &std::ffi::OsStr) -> bool {
    let name = name.to_string_lossy();
    name.starts_with('.')
        || matches!(
            name.as_ref(),
            "node_modules" | "venv" | "site-packages" | "target" | "__pycache__"
        )
}

/// The workspace's files, repository-relative, for resolving the paths a tool run in a subfolder
/// prints (`../pkg/a.py`, `test_a.py`): the folder's own files, no link followed, dependency
/// folders left out. Read by walking the folder rather than asking Git, whose configuration in
/// a checkout could make it run a command or read files elsewhere. Empty when the workspace is
/// not a folder here (a log from elsewhere) or holds too many entries.
fn workspace_files(root: &std::path::Path) -> Vec<String> {
    let mut files = Vec::new();
    let mut folders = vec![std::path::PathBuf::new()];
    let mut read = 0;
    while let Some(folder) = folders.pop() {
        let Ok(entries) = std::fs::read_dir(root.join(&folder)) else {
            continue;
        };
        for entry in entries.flatten() {
            read += 1;
            if read > MAX_LISTED_ENTRIES {
                return Vec::new();
            }
            // The entry's own type: a link is neither a folder nor a file here.
            let Ok(kind) = entry.file_type() else { continue };
            let name = folder.join(entry.file_name());
            if kind.is_dir() && !is_dependency_folder(&entry.file_name()) {
                folders.push(name);
            } else if kind.is_file() {
                files.push(name.to_string_lossy().replace('\\', "/"));
            }
        }
    }
    files
}

fn parse(file: Option<PathBuf>, workspace: Option<String>, format: ParseFormat) -> Result<(), String> {
    use kubeheal::core::format as render;
    use kubeheal::parse::{self, Workspace};
    let root = match workspace {
        // A folder here is where the build ran: the absolute paths in its log start with its
        // absolute path, even when it is given relative (`--workspace ./app`).
        Some(w) if std::path::Path::new(&w).is_dir() => {
            std::path::absolute(&w).map(|d| d.display().to_string()).unwrap_or(w)
        }
        Some(w) => w,
        None => std::env::current_dir()
            .map(|d| d.display().to_string())
            .unwrap_or_default(),
    };
    let files = workspace_files(std::path::Path::new(&root));
    // The packages' manifests name them as monorepo runners do (read inside the folder only).
    let tree = kubeheal::confined::ConfinedDir::open(std::path::Path::new(&root)).ok();
    let workspace = Workspace::new(root.clone())
        .with_files(files)
        .with_package_manifests(|path| tree.as_ref()?.read(path, parse::MAX_PACKAGE_MANIFEST_BYTES).ok());
    // Streamed, so a log of gigabytes is parsed in constant memory. Read a MiB at a time, as the
    // parser bench does: with std's 8 KiB, thousands of lines of a large log fall across buffer
    // edges and take the parser's slower piece-by-piece path, and the reads cost as much again.
    const READ_BUFFER: usize = 1 << 20;
    // Whether the input held nothing at all: worth a word, as `[]` alone would not say why.
    fn parse_input(
        mut reader: impl std::io::BufRead,
        workspace: &Workspace,
    ) -> std::io::Result<(parse::ParseOutput, bool)> {
        let empty = reader.fill_buf()?.is_empty();
        Ok((parse::parse_reader(reader, workspace)?, empty))
    }
    let (parsed, empty) = match file.as_deref() {
        Some(p) if p.as_os_str() != "-" => std::fs::File::open(p)
            .map(|f| std::io::BufReader::with_capacity(READ_BUFFER, f))
            .and_then(|r| parse_input(r, &workspace))
            .map_err(|e| format!("cannot read {}: {e}", p.display()))?,
        _ => parse_input(
            std::io::BufReader::with_capacity(READ_BUFFER, std::io::stdin()),
            &workspace,
        )
        .map_err(|e| format!("cannot read standard input: {e}"))?,
    };
    let input = file
        .as_deref()
        .filter(|p| p.as_os_str() != "-")
        .map_or_else(|| "standard input".to_owned(), |p| p.display().to_string());
    // On standard error, as the notes below: standard output stays seed 001's array.
    if empty {
        eprintln!("kubeheal: {input} is empty: there is no log to read");
    } else if parsed.reports.is_empty()
        && let Some(path) = &parsed.outside_workspace
    {
        eprintln!(
            "kubeheal: no report, and the log names files outside the workspace {} (such as {path}): if the build ran in another folder, give that folder, as the log names it, with --workspace",
            root
        );
    }
    match format {
        ParseFormat::Json => {
            let wire: Vec<BugReportWire<'_>> = parsed
                .reports
                .iter()
                .map(|r| BugReportWire {
                    file_path: &r.file_path,
                    line_number: r.line_number,
                    error_type: render::type_name(r.error_type),
                    message: &r.message,
                    test_name: r.test_name.as_deref(),
                    confidence_score: r.confidence_score,
                })
                .collect();
            let json = serde_json::to_string_pretty(&wire).map_err(|e| format!("cannot render JSON: {e}"))?;
            say!("{json}");
        }
        ParseFormat::Text => {
            for report in &parsed.reports {
                say!("{}", render::render(report));
            }
        }
    }
    if parsed.left_out > 0 {
        // On standard error, so that the reports on standard output stay seed 001's array.
        eprintln!(
            "kubeheal: {} more finding(s) left out: one log gives at most {} reports, {} of them lint findings, {} at one place, {} failing tests' lines for one place an error was raised at, and {} from one report document ({} of them lint findings)",
            parsed.left_out,
            parse::MAX_REPORTS,
            parse::MAX_LINT_REPORTS,
            parse::MAX_REPORTS_PER_PLACE,
            parse::MAX_TEST_LINES_PER_RAISE_SITE,
            parse::MAX_DOCUMENT_REPORTS,
            parse::MAX_DOCUMENT_WARNINGS
        );
    }
    Ok(())
}

/// The healers the flags name (`--healer-url`, `--openai-base-url` with `--model`), as the
/// `spec.healer` of a HealRun, with their credentials from the environment (`CODE_HEALER_TOKEN`,
/// `OPENAI_API_KEY`).
fn healer_spec(
    healer_url: Option<String>,
    openai: Option<(String, String)>,
    max_tokens: u32,
) -> (kubeheal::api::shared::HealerSpec, factory::Credentials) {
    use kubeheal::api::shared::{CodeHealerApiHealer, HealerSpec, OpenAiHealer};
    let from_env = |name: &str| std::env::var(name).ok().filter(|v| !v.is_empty());
    let spec = HealerSpec {
        code_healer_api: healer_url.filter(|u| !u.is_empty()).map(|url| CodeHealerApiHealer {
            url: Some(url),
            secret_ref: None,
        }),
        open_ai: openai.map(|(base_url, model)| OpenAiHealer {
            base_url,
            model,
            secret_ref: None,
            max_tokens,
        }),
        builtin: None,
        tool: None,
    };
    let credentials = factory::Credentials {
        openai_key: from_env("OPENAI_API_KEY"),
        code_healer_token: from_env("CODE_HEALER_TOKEN"),
        default_code_healer: None,
    };
    (spec, credentials)
}

fn healer_serve(
    listen: std::net::SocketAddr,
    openai: Option<(String, String)>,
    max_tokens: u32,
    config: server::ServerConfig,
) -> Result<(), String> {
    use kubeheal::healer::Chain;
    // The server answers with what `kubeheal heal` would ask: the deterministic fixers first,
    // then the model when one is configured.
    let (spec, credentials) = healer_spec(None, openai, max_tokens);
    let healers = factory::build(&healers(Some(&spec)), &spec, &credentials)?;
    init_logging();
    let runtime = tokio::runtime::Runtime::new().map_err(|e| format!("cannot start the async runtime: {e}"))?;
    runtime.block_on(async move {
        let state = std::sync::Arc::new(server::ServerState {
            healers: Chain(healers),
        });
        // SIGTERM too: in a Pod, that is how the server is asked to stop.
        server::serve(listen, state, config, termination())
            .await
            .map_err(|e| format!("cannot serve on {listen}: {e}"))
    })
}

/// `kubeheal probe`: the envelopes on stdout; failed reports and bad input on stderr.
fn probe(args: &kubeheal::probe::ProbeArgs) -> ExitCode {
    if let (Some(after), Some(output)) = (&args.after, &args.output) {
        // The probe container of an executor Pod: its results go to a file, and it keeps
        // running until the kubelet stops it (a native sidecar that ended would be restarted),
        // ending at once on TERM (as PID 1 it has no default handler to end it).
        let done = tokio::runtime::Runtime::new()
            .map_err(|e| format!("cannot start the async runtime: {e}"))
            .and_then(|runtime| {
                runtime.block_on(async {
                    tokio::select! {
                        done = async {
                            kubeheal::probe::verify::in_pod(args, after, output).await?;
                            std::future::pending::<Result<(), String>>().await
                        } => done,
                        () = termination() => Ok(()),
                    }
                })
            });
        return match done {
            Ok(()) => ExitCode::SUCCESS,
            Err(error) => {
                eprintln!("kubeheal: {error}");
                ExitCode::from(1)
            }
        };
    }
    let report = tokio::runtime::Runtime::new()
        .map_err(|e| kubeheal::probe::ProbeError::Usage(format!("cannot start the async runtime: {e}")))
        .and_then(|runtime| runtime.block_on(kubeheal::probe::probe(args)));
    match report {
        Ok(report) => {
            for error in &report.report_errors {
                eprintln!("kubeheal: {error}");
            }
            match serde_json::to_string_pretty(&report.seed_json()) {
                Ok(json) => say!("{json}"),
                Err(e) => eprintln!("kubeheal: cannot render JSON: {e}"),
            }
            ExitCode::from(if report.all_succeeded() { 0 } else { 1 })
        }
        Err(error) => {
            eprintln!("kubeheal: {error}");
            ExitCode::from(2)
        }
    }
}

/// `--env` items as (name, value): `NAME=VALUE`, or `NAME` for kubeheal's own value.
fn build_env(items: &[String]) -> Result<Vec<(String, String)>, String> {
    items
        .iter()
        .map(|item| match item.split_once('=') {
            Some(("", _)) => Err(format!("--env {item}: the variable has no name")),
            Some((name, value)) => Ok((name.to_owned(), value.to_owned())),
            None => std::env::var(item)
                .map(|value| (item.clone(), value))
                .map_err(|_| format!("--env {item}: kubeheal has no variable {item} to pass; give NAME=VALUE")),
        })
        .collect()
}

/// This replica's name in the leader election outside a Pod: the host's name and the process id.
fn replica_name() -> String {
    let host = std::fs::read_to_string("/proc/sys/kernel/hostname").unwrap_or_default();
    format!("{}-{}", host.trim(), std::process::id())
}

/// Completes on Ctrl-C or SIGTERM.
async fn termination() {
    let mut term = match tokio::signal::unix::signal(tokio::signal::unix::SignalKind::terminate()) {
        Ok(term) => term,
        Err(_) => {
            let _ = tokio::signal::ctrl_c().await;
            return;
        }
    };
    tokio::select! {
        _ = tokio::signal::ctrl_c() => {}
        _ = term.recv() => {}
    }
}

fn exec(
    dir: PathBuf,
    command: Option<String>,
    env: Vec<(String, String)>,
    timeout: u64,
    revision: Option<String>,
    log: Option<PathBuf>,
) -> Result<(), String> {
    use kubeheal::api::heal_run::ProjectType;
    use kubeheal::executor::{ExecutionRequest, local::LocalExecutor};
    if !dir.is_dir() {
        return Err(format!(
            "{} is not a folder; give the project folder to run",
            dir.display()
        ));
    }
    let dir = dir
        .canonicalize()
        .map_err(|e| format!("cannot resolve {}: {e}", dir.display()))?;
    let millis = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_millis())
        .unwrap_or_default();
    let run_id = format!("local-{millis}");
    let state =
        kubeheal::confined::ConfinedDir::state_dir(&dir, kubeheal::local::STATE_DIR).map_err(|e| e.to_string())?;
    let request = ExecutionRequest {
        artifacts_dir: state
            .create_dir_all(&format!("artifacts/{run_id}"))
            .map_err(|e| e.to_string())?,
        run_id,
        source: dir,
        revision,
        patches: Vec::new(),
        project_type: ProjectType::Auto,
        command,
        timeout: std::time::Duration::from_secs(timeout),
        secrets: env
            .iter()
            .filter(|(name, _)| kubeheal::core::redact::looks_secret_name(name))
            .map(|(_, value)| value.clone())
            .collect(),
        verify: None,
        env,
    };
    let runtime = tokio::runtime::Runtime::new().map_err(|e| format!("cannot start the async runtime: {e}"))?;
    let execution = runtime
        .block_on(async {
            tokio::select! {
                execution = LocalExecutor.execute(&request) => Some(execution),
                () = termination() => None,
            }
        })
        .ok_or("stopped by a signal: the build was killed and its copy removed")?;
    if let Some(path) = log {
        std::fs::write(&path, &execution.log).map_err(|e| format!("cannot write {}: {e}", path.display()))?;
    }
    let json = serde_json::to_string_pretty(&execution.envelope.seed_json())
        .map_err(|e| format!("cannot render the envelope: {e}"))?;
    say!("{json}");
    Ok(())
}

/// `--verify-*` as the `spec.verify` they stand for, checked as the API server checks a HealRun's.
fn verify_spec(
    document: String,
    start: Option<String>,
    base_url: Option<String>,
    endpoints: Vec<String>,
) -> Result<kubeheal::api::heal_run::Verify, String> {
    if document.starts_with('/') || document.contains("..") {
        return Err(format!(
            "--verify-openapi {document}: give the document's path inside the project, relative to its folder, without '..'"
        ));
    }
    let base_url = base_url.unwrap_or_default();
    if !(base_url.starts_with("http://") || base_url.starts_with("https://")) {
        return Err(format!(
            "--verify-base-url {base_url:?} is not an http(s) URL; give one such as http://127.0.0.1:8000"
        ));
    }
    let start = start.unwrap_or_default();
    if start.trim().is_empty() {
        return Err("--verify-start is blank; give the command that starts the service".to_owned());
    }
    for endpoint in &endpoints {
        kubeheal::probe::document::endpoint_id(endpoint).map_err(|e| format!("--verify-endpoint: {e}"))?;
    }
    serde_json::from_value(serde_json::json!({
        "openapi": {"document": document, "start": start, "baseUrl": base_url, "endpoints": endpoints}
    }))
    .map_err(|e| format!("--verify-*: {e}"))
}

#[allow(clippy::too_many_arguments)]
fn heal(
    dir: PathBuf,
    command: Option<String>,
    env: Vec<(String, String)>,
    healer_url: Option<String>,
    openai: Option<(String, String)>,
    max_cycles: u32,
    timeout: u64,
    verify: Option<kubeheal::api::heal_run::Verify>,
) -> Result<(), String> {
    use kubeheal::api::heal_run::HealPolicy;
    use kubeheal::local::{HealOptions, heal};
    if !dir.is_dir() {
        return Err(format!(
            "{} is not a folder; give the project folder to heal",
            dir.display()
        ));
    }
    let (healer, credentials) = healer_spec(healer_url, openai, 4096);
    // Built once here so that a bad URL is refused before anything runs.
    let healers = factory::build(&healers(Some(&healer)), &healer, &credentials)?;
    let names: Vec<&str> = healers.iter().map(|h| h.name()).collect();
    eprintln!(
        "kubeheal: healing {} (healers: {}; at most {max_cycles} cycles)",
        dir.display(),
        names.join(", ")
    );
    let options = HealOptions {
        dir,
        command,
        env,
        max_cycles,
        timeout: std::time::Duration::from_secs(timeout),
        policy: HealPolicy::default(),
        healer,
        credentials,
        verify,
    };
    let runtime = tokio::runtime::Runtime::new().map_err(|e| format!("cannot start the async runtime: {e}"))?;
    let summary = runtime
        .block_on(heal(&options, &mut |line| eprintln!("{line}"), termination()))
        .map_err(|e| e.to_string())?;
    say!("");
    say!("result:      {:?} — {}", summary.reason, summary.message);
    say!("cycles:      {}", summary.cycles);
    if !summary.fixed_tests.is_empty() {
        say!("fixed tests: {}", summary.fixed_tests.join(", "));
    }
    if !summary.diff_stat.is_empty() {
        say!("changes:     {}", summary.diff_stat);
    }
    say!("branch:      {} in {}", summary.branch, summary.repo.display());
    if !summary.commits.is_empty() {
        say!(
            "see it with: git -C {} log --stat {}..{}",
            summary.repo.display(),
            kubeheal::core::format::short_commit(&summary.base),
            summary.branch
        );
    }
    if let Some(proposal) = &summary.proposed_fix {
        say!(
            "proposal:    {} (a CodeFixDDS for people: kubectl apply -f it)",
            proposal.display()
        );
    }
    if summary.healed() {
        Ok(())
    } else {
        Err(format!("not healed: {:?}", summary.reason))
    }
}
