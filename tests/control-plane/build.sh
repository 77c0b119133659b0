#!/usr/bin/env bash
# Builds the Kubernetes control plane the cluster tests run against, from the Go module proxy,
# into a cache outside the clone, once. Prints the folder that holds the binaries (envtest's
# KUBEBUILDER_ASSETS convention) on stdout; everything else goes to stderr.
#
#   tests/control-plane/build.sh            # build or reuse, print the folder
#   KUBEHEAL_K8S_VERSION=v1.34.4 tests/control-plane/build.sh
#
# The folder also holds `helm` (KUBEHEAL_HELM_VERSION, helm.sh/helm/v3's cmd/helm), which the chart
# tests run: a cache built before helm was added gets helm added without rebuilding the rest.
#
# Why a wrapper module: `go install k8s.io/kubernetes/cmd/...@vX` is refused because the
# kubernetes module replaces its staging modules with local paths. A module of our own that
# requires k8s.io/kubernetes and replaces each staging module with its published v0.Y.Z builds the
# same sources. etcd gets a tiny `main` around etcdmain for the same reason.
set -euo pipefail

K8S_VERSION="${KUBEHEAL_K8S_VERSION:-v1.35.4}"
CACHE_ROOT="${KUBEHEAL_CACHE:-$HOME/.cache/kubeheal}"
ASSETS="$CACHE_ROOT/k8s/$K8S_VERSION"
STAMP="$ASSETS/.complete"
HELM_VERSION="${KUBEHEAL_HELM_VERSION:-v3.22.0}"
BINARIES=(etcd kube-apiserver kube-controller-manager kubectl)

log() { printf 'control-plane: %s\n' "$*" >&2; }

# Test binaries that start at the same time may all ask for the control plane: one builds, the
# others wait for it and reuse the result.
mkdir -p "$CACHE_ROOT/k8s"
exec 9>"$CACHE_ROOT/k8s/.$K8S_VERSION.lock"
flock 9

control_plane_is_complete() {
  [[ -f "$STAMP" ]] || return 1
  for b in "${BINARIES[@]}"; do [[ -x "$ASSETS/$b" ]] || return 1; done
}

helm_is_complete() {
  [[ -x "$ASSETS/helm" ]] && grep -qx "helm=$HELM_VERSION" "$STAMP"
}

# helm has no replace directives, so `go install` builds it from the module proxy as its Makefile
# would, with the same version stamps (`helm version`, and the Kubernetes version `helm template`
# renders for, taken from the client-go helm is built with).
build_helm() {
  local dest="$1" gomod k8s_minor
  log "building helm $HELM_VERSION"
  gomod="$(cd "$CACHE_ROOT" && go mod download -json "helm.sh/helm/v3@$HELM_VERSION" | sed -n 's/.*"GoMod": "\(.*\)".*/\1/p')"
  [[ -f "$gomod" ]] || { log "could not download helm.sh/helm/v3@$HELM_VERSION from the module proxy"; exit 1; }
  k8s_minor="$(sed -n 's#^[[:space:]]*k8s.io/client-go v0\.\([0-9]*\)\..*#\1#p' "$gomod" | head -n1)"
  [[ -n "$k8s_minor" ]] || { log "helm $HELM_VERSION names no client-go version"; exit 1; }
  local ldflags="-s -w -X helm.sh/helm/v3/internal/version.version=$HELM_VERSION"
  ldflags+=" -X helm.sh/helm/v3/internal/version.gitTreeState=clean"
  for pkg in helm.sh/helm/v3/pkg/lint/rules helm.sh/helm/v3/pkg/chartutil; do
    ldflags+=" -X $pkg.k8sVersionMajor=1 -X $pkg.k8sVersionMinor=$k8s_minor"
  done
  local bin="$CACHE_ROOT/build/helm-$HELM_VERSION"
  rm -rf "$bin"
  mkdir -p "$bin"
  (
    cd "$CACHE_ROOT"
    export GOFLAGS= CGO_ENABLED=0 GOBIN="$bin"
    go install -trimpath -ldflags "$ldflags" "helm.sh/helm/v3/cmd/helm@$HELM_VERSION" >&2
  )
  "$bin/helm" version --short | grep -q "^$HELM_VERSION" || { log "helm is not stamped $HELM_VERSION"; exit 1; }
  mv "$bin/helm" "$dest/helm"
  rm -rf "$bin"
}

if control_plane_is_complete && helm_is_complete; then
  log "reusing $ASSETS ($(tr '\n' ' ' <"$STAMP"))"
  echo "$ASSETS"
  exit 0
fi

command -v go >/dev/null || { log "go is not installed; it is needed once to build the control plane"; exit 1; }

if control_plane_is_complete; then
  # A cache from before helm was part of it (or of another helm version): add helm only.
  build_helm "$ASSETS"
  sed -i '/^helm=/d' "$STAMP"
  echo "helm=$HELM_VERSION" >>"$STAMP"
  log "added helm $HELM_VERSION to $ASSETS"
  echo "$ASSETS"
  exit 0
fi

# Staging modules are published as v0.<minor>.<patch> for kubernetes v1.<minor>.<patch>.
STAGING_VERSION="v0.${K8S_VERSION#v1.}"
MAJOR=1
MINOR="$(cut -d. -f2 <<<"${K8S_VERSION#v}")"

WORK="$CACHE_ROOT/build/$K8S_VERSION"
rm -rf "$WORK" "$ASSETS.partial"
mkdir -p "$WORK/kubernetes" "$WORK/etcd" "$ASSETS.partial"

log "resolving k8s.io/kubernetes@$K8S_VERSION"
K8S_GOMOD="$(cd "$WORK" && go mod download -json "k8s.io/kubernetes@$K8S_VERSION" | sed -n 's/.*"GoMod": "\(.*\)".*/\1/p')"
[[ -f "$K8S_GOMOD" ]] || { log "could not download k8s.io/kubernetes@$K8S_VERSION from the module proxy"; exit 1; }
GO_DIRECTIVE="$(sed -n 's/^go \(.*\)/\1/p' "$K8S_GOMOD")"
# The etcd server version kubernetes' own go.mod requires is the one its release is tested with.
ETCD_VERSION="$(sed -n 's#^[[:space:]]*go.etcd.io/etcd/server/v3 \(v[^ ]*\).*#\1#p' "$K8S_GOMOD" | head -n1)"
[[ -n "$ETCD_VERSION" ]] || { log "kubernetes $K8S_VERSION names no etcd server version"; exit 1; }

{
  echo "module kubeheal.dev/control-plane/kubernetes"
  echo
  echo "go $GO_DIRECTIVE"
  echo
  echo "require k8s.io/kubernetes $K8S_VERSION"
  echo
  sed -n 's#^[[:space:]]*\(k8s.io/[^ ]*\) => ./staging/.*#replace \1 => \1 '"$STAGING_VERSION"'#p' "$K8S_GOMOD"
} >"$WORK/kubernetes/go.mod"

VERSION_PKGS=(k8s.io/component-base/version k8s.io/client-go/pkg/version)
LDFLAGS="-s -w"
for pkg in "${VERSION_PKGS[@]}"; do
  LDFLAGS+=" -X $pkg.gitVersion=$K8S_VERSION -X $pkg.gitMajor=$MAJOR -X $pkg.gitMinor=$MINOR"
  LDFLAGS+=" -X $pkg.gitTreeState=clean -X $pkg.buildDate=1970-01-01T00:00:00Z"
done

log "building kube-apiserver, kube-controller-manager and kubectl $K8S_VERSION (several minutes, once)"
(
  cd "$WORK/kubernetes"
  export GOFLAGS=-mod=mod CGO_ENABLED=0
  go get "k8s.io/kubernetes/cmd/kube-apiserver@$K8S_VERSION" \
    "k8s.io/kubernetes/cmd/kube-controller-manager@$K8S_VERSION" \
    "k8s.io/kubernetes/cmd/kubectl@$K8S_VERSION" >&2
  for b in kube-apiserver kube-controller-manager kubectl; do
    log "  go build $b"
    go build -trimpath -ldflags "$LDFLAGS" -o "$ASSETS.partial/$b" "k8s.io/kubernetes/cmd/$b"
  done
)

log "building etcd $ETCD_VERSION"
cat >"$WORK/etcd/main.go" <<'GO'
// A wrapper so that etcd can be built from the module proxy: etcd's own main module is not
// installable with `go install`, but its server library is.
package main

import (
	"os"

	"go.etcd.io/etcd/server/v3/etcdmain"
)

func main() { etcdmain.Main(os.Args) }
GO
cat >"$WORK/etcd/go.mod" <<GOMOD
module kubeheal.dev/control-plane/etcd

go $GO_DIRECTIVE

require go.etcd.io/etcd/server/v3 $ETCD_VERSION
GOMOD
(
  cd "$WORK/etcd"
  export GOFLAGS=-mod=mod CGO_ENABLED=0
  go get "go.etcd.io/etcd/server/v3@$ETCD_VERSION" >&2
  go build -trimpath -ldflags "-s -w" -o "$ASSETS.partial/etcd" .
)

# Check every binary reports the version it was built as before the cache is marked complete.
"$ASSETS.partial/kube-apiserver" --version | grep -q "$K8S_VERSION" || { log "kube-apiserver is not stamped $K8S_VERSION"; exit 1; }
"$ASSETS.partial/etcd" --version | grep -q "${ETCD_VERSION#v}" || { log "etcd is not $ETCD_VERSION"; exit 1; }

build_helm "$ASSETS.partial"

rm -rf "$ASSETS"
mv "$ASSETS.partial" "$ASSETS"
printf 'kubernetes=%s\netcd=%s\nhelm=%s\n' "$K8S_VERSION" "$ETCD_VERSION" "$HELM_VERSION" >"$STAMP"
rm -rf "$WORK"
log "built $ASSETS"
echo "$ASSETS"
