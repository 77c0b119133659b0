# syntax=docker/dockerfile:1
# The kubeheal operator's image: the binary built with the Rust toolchain, on a small Debian
# runtime with what the operator runs besides itself (git, CA certificates), as a non-root user.
#
#   docker build -t kubeheal:dev .
#   docker run --rm kubeheal:dev operator --help
#
# Why not distroless: the operator's Git agent pushes with an HTTPS token through a credential
# helper that git runs with /bin/sh (src/git/mod.rs), and git itself needs its helpers and
# libcurl. Nothing else in the image is used, and the Pod runs it with a read-only root file
# system (charts/kubeheal).

ARG RUST_VERSION=1.95

FROM docker.io/library/rust:${RUST_VERSION}-slim-bookworm AS builder
WORKDIR /src
# The manifest names the parser bench, so Cargo wants benches/ to read it.
COPY Cargo.toml Cargo.lock ./
COPY benches ./benches
COPY src ./src
RUN --mount=type=cache,target=/usr/local/cargo/registry \
    --mount=type=cache,target=/src/target \
    cargo build --release --locked --bin kubeheal \
 && install -D -m 0755 target/release/kubeheal /out/kubeheal

FROM docker.io/library/debian:bookworm-slim
RUN apt-get update \
 && apt-get install -y --no-install-recommends git ca-certificates \
 && rm -rf /var/lib/apt/lists/*
COPY --from=builder /out/kubeheal /usr/local/bin/kubeheal
# 65532 is the chart's runAsUser; HOME is where git keeps its own files (an emptyDir in the chart).
USER 65532:65532
ENV HOME=/tmp
ENTRYPOINT ["/usr/local/bin/kubeheal"]
CMD ["operator"]
