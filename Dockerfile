# syntax=docker/dockerfile:1
# The kubeheal operator's image: the binary built with the Rust toolchain, on a runtime root with
# what the operator runs besides itself (git, CA certificates) and no shell, as a non-root user.
#
#   docker build -t kubeheal:dev .
#   docker run --rm kubeheal:dev operator --help
#
# Why not distroless: git needs its helpers (git-remote-https) and libcurl. The Git agent hands
# git an HTTPS token as a header, so no credential helper (and no shell) runs. The Pod runs the
# image with a read-only root file system (charts/kubeheal).

ARG RUST_VERSION=1.95

FROM docker.io/library/rust:${RUST_VERSION}-slim-bookworm AS builder
WORKDIR /src
# The binary is built with profile-guided optimisation (image/pgo.sh): an instrumented build
# parses the golden logs, and the release build uses what it counted (the parser takes about a
# fifth less CPU). LLVM's llvm-profdata of the toolchain merges the counts.
RUN rustup component add llvm-tools
# The manifest names the parser bench, so Cargo wants benches/ to read it.
COPY Cargo.toml Cargo.lock ./
COPY benches ./benches
COPY src ./src
COPY image/pgo.sh ./image/pgo.sh
COPY tests/fixtures/logs ./tests/fixtures/logs
COPY tests/fixtures/library_logs ./tests/fixtures/library_logs
COPY tests/fixtures/projects ./tests/fixtures/projects
RUN --mount=type=cache,target=/usr/local/cargo/registry \
    --mount=type=cache,target=/src/target \
    image/pgo.sh build \
 && install -D -m 0755 target/pgo/kubeheal /out/kubeheal

# The runtime root: Debian's git and CA certificates with their libraries, unpacked by mmdebstrap
# with no maintainer script run, and no shell (image/rootfs.sh; the image test runs the operator
# in the same root).
FROM docker.io/library/debian:bookworm-slim AS runtime
RUN apt-get update \
 && apt-get install -y --no-install-recommends mmdebstrap ca-certificates \
 && rm -rf /var/lib/apt/lists/*
COPY image/rootfs.sh /rootfs.sh
RUN /rootfs.sh /rootfs bookworm

FROM scratch
COPY --from=runtime /rootfs /
COPY --from=builder /out/kubeheal /usr/local/bin/kubeheal
# 65532 is the chart's runAsUser; HOME is where git keeps its own files (an emptyDir in the chart).
USER 65532:65532
ENV HOME=/tmp PATH=/usr/local/bin:/usr/bin
ENTRYPOINT ["/usr/local/bin/kubeheal"]
CMD ["operator"]
