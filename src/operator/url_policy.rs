//! Which URLs a HealRun may name in a cluster. A HealRun's author is not the operator's
//! administrator: a `file://` source would read the operator's own disk (another team's clone,
//! its service-account token), and a healer URL inside the cluster (a Service, the node's
//! metadata endpoint) would receive source files the author chose. Both are refused unless the
//! operator is started with the setting that allows them; the operator's own `--healer-url` is
//! the administrator's choice and is not checked.

use std::net::IpAddr;

/// What the operator allows besides public `https://`, `http://`, `ssh://`, `git://` and
/// `user@host:path` sources and public healers.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct UrlPolicy {
    /// `file://` URLs and local paths as sources (`--allow-file-sources`).
    pub allow_file_sources: bool,
    /// Healer URLs on loopback, private, link-local addresses or cluster-internal names
    /// (`--allow-cluster-internal-healers`).
    pub allow_internal_healers: bool,
}

impl UrlPolicy {
    /// Why `url` may not be a source, or `None` when it may.
    pub fn refuse_source(&self, url: &str) -> Option<String> {
        let scheme = url.split_once("://").map(|(s, _)| s.to_ascii_lowercase());
        match scheme.as_deref() {
            Some("https" | "http" | "ssh" | "git") => None,
            Some("file") | None if url.starts_with('/') || url.starts_with("file://") || url.starts_with('.') => {
                (!self.allow_file_sources).then(|| {
                    format!(
                        "the source {url} is on the operator's own disk, which this operator does not allow (start it with --allow-file-sources); give an https:// or ssh:// URL"
                    )
                })
            }
            // scp-like `git@host:owner/repo.git`
            None if url.contains('@') && url.contains(':') && !url.contains("::") => None,
            _ => Some(format!(
                "the source {url} uses a transport the operator does not allow; give an https://, ssh:// or git@host:path URL"
            )),
        }
    }

    /// Why a HealRun may not send its files to the healer at `url`, or `None` when it may.
    pub fn refuse_healer(&self, url: &str) -> Option<String> {
        if self.allow_internal_healers {
            return None;
        }
        let host = host_of(url)?;
        internal(&host).then(|| {
            format!(
                "the healer URL {url} points inside the cluster or the node ({host}), which this operator does not allow for URLs in a HealRun (start it with --allow-cluster-internal-healers, or configure the healer as the operator's --healer-url)"
            )
        })
    }
}

/// The host of an `http(s)://` URL, without port or brackets.
fn host_of(url: &str) -> Option<String> {
    let rest = url.split_once("://")?.1;
    let authority = rest.split(['/', '?', '#']).next()?;
    let authority = authority.rsplit_once('@').map_or(authority, |(_, h)| h);
    let host = if let Some(bracketed) = authority.strip_prefix('[') {
        bracketed.split(']').next()?
    } else {
        authority.split(':').next()?
    };
    Some(host.trim_end_matches('.').to_ascii_lowercase())
}

fn internal(host: &str) -> bool {
    if let Ok(ip) = host.parse::<IpAddr>() {
        return match ip {
            IpAddr::V4(v4) => {
                // 100.64.0.0/10 (carrier-grade NAT) is where some clusters put their pods.
                let shared = v4.octets()[0] == 100 && (64..128).contains(&v4.octets()[1]);
                v4.is_loopback() || v4.is_private() || v4.is_link_local() || v4.is_unspecified() || shared
            }
            IpAddr::V6(v6) => {
                v6.is_loopback()
                    || v6.is_unspecified()
                    || v6.is_unique_local()
                    || v6.is_unicast_link_local()
                    || v6.to_ipv4_mapped().is_some_and(|v4| internal(&v4.to_string()))
            }
        };
    }
    host == "localhost"
        || host.ends_with(".localhost")
        || host.ends_with(".svc")
        || host.ends_with(".cluster.local")
        || host.ends_with(".internal")
        || !host.contains('.')
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn local_sources_are_refused_unless_allowed() {
        let strict = UrlPolicy::default();
        for url in [
            "file:///etc",
            "/var/cache/kubeheal/other/run",
            "./repo",
            "ext::sh -c id",
            "fd::3",
        ] {
            assert!(strict.refuse_source(url).is_some(), "{url}");
        }
        for url in [
            "https://github.com/acme/app.git",
            "ssh://git@github.com/acme/app.git",
            "git@github.com:acme/app.git",
        ] {
            assert_eq!(strict.refuse_source(url), None, "{url}");
        }
        let open = UrlPolicy {
            allow_file_sources: true,
            ..UrlPolicy::default()
        };
        assert_eq!(open.refuse_source("file:///srv/repo.git"), None);
        assert!(open.refuse_source("ext::sh -c id").is_some());
    }

    #[test]
    fn healers_inside_the_cluster_or_the_node_are_refused_unless_allowed() {
        let strict = UrlPolicy::default();
        for url in [
            "http://127.0.0.1:3000/api/heal",
            "http://localhost/api/heal",
            "http://169.254.169.254/latest/meta-data",
            "http://10.0.0.7/api/heal",
            "http://[::1]:8080/api/heal",
            "http://[::ffff:10.1.2.3]/x",
            "http://healer.kubeheal.svc:8080/api/heal",
            "http://healer.kubeheal.svc.cluster.local/api/heal",
            "http://healer/api/heal",
            "http://user:pw@192.168.1.5/api",
        ] {
            assert!(strict.refuse_healer(url).is_some(), "{url}");
        }
        for url in ["https://api.openai.com/v1", "https://sam.example.com/api/heal"] {
            assert_eq!(strict.refuse_healer(url), None, "{url}");
        }
        let open = UrlPolicy {
            allow_internal_healers: true,
            ..UrlPolicy::default()
        };
        assert_eq!(open.refuse_healer("http://127.0.0.1:3000/api/heal"), None);
    }
}
