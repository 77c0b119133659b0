#!/usr/bin/env bash
# The operator image's runtime root file system, assembled from Debian's packages: git (the Git
# agent runs it) and CA certificates (for HTTPS remotes), with their libraries, and no shell or
# interpreter: kubeheal needs none (git gets the token as an HTTP header, not from a credential
# helper that git would run with /bin/sh), and no maintainer script runs at assembly.
#
#   image/rootfs.sh DIR [SUITE]        # SUITE defaults to bookworm, the Dockerfile's builder base
#
# The Dockerfile's runtime stage runs this script; the image test (tests/cluster/image.rs) runs it
# too and runs the operator in the result, in a chroot as user 65532. Needs mmdebstrap
# (`apt-get install mmdebstrap`) and a Debian mirror.
set -euo pipefail

root=${1:?usage: image/rootfs.sh DIR [SUITE]}
suite=${2:-bookworm}

if ! command -v mmdebstrap >/dev/null; then
    echo "image/rootfs.sh: mmdebstrap is not installed; apt-get install mmdebstrap" >&2
    exit 1
fi

# extract: the packages and their dependencies are unpacked, no maintainer script runs (they
# would need a shell), and nothing else (not even the Essential set) is installed.
mmdebstrap --variant=extract --include=git,ca-certificates \
    --dpkgopt='path-exclude=/usr/share/doc/*' \
    --dpkgopt='path-exclude=/usr/share/man/*' \
    --dpkgopt='path-exclude=/usr/share/locale/*' \
    "$suite" "$root"

# What ca-certificates' maintainer script would have made: the bundle git (libcurl) reads.
mkdir -p "$root/etc/ssl/certs"
cat "$root"/usr/share/ca-certificates/mozilla/*.crt > "$root/etc/ssl/certs/ca-certificates.crt"
# The operator's user; git looks its name up when it has no author of its own.
printf 'root:x:0:0:root:/root:/nonexistent\nkubeheal:x:65532:65532:kubeheal:/tmp:/nonexistent\n' > "$root/etc/passwd"
printf 'root:x:0:\nkubeheal:x:65532:\n' > "$root/etc/group"
mkdir -p "$root/usr/local/bin" "$root/tmp" "$root/var/cache/kubeheal"
chmod 1777 "$root/tmp"
# What came with the dependencies and nothing in the image runs: the package tools and their
# databases, perl (git's commands the operator runs are built in or C, none is a perl script),
# the build host's name and resolver (the container runtime provides its own), device nodes.
rm -rf "$root/var/lib/apt" "$root/var/cache/apt" "$root/var/lib/dpkg" "$root/var/log"/* \
    "$root"/usr/bin/dpkg* "$root"/usr/bin/debconf* "$root/usr/share/debconf" "$root/etc/dpkg" \
    "$root"/usr/bin/perl* "$root"/usr/bin/cpan* "$root"/usr/share/perl* "$root"/usr/lib/*/perl* \
    "$root"/usr/lib/*/perl5 "$root/sbin/start-stop-daemon" "$root/usr/sbin/start-stop-daemon" \
    "$root/etc/resolv.conf" "$root/etc/hostname" "$root"/dev/*
# Of the programs, only git's: the rest are package scripts (dpkg, debconf, ca-certificates'
# update script) and perl scripts, which could not run here anyway.
find "$root/bin" "$root/sbin" "$root/usr/bin" "$root/usr/sbin" -mindepth 1 -maxdepth 1 \
    ! -name 'git' ! -name 'git-*' -exec rm -rf {} +
for program in sh dash bash perl; do
    if [ -e "$root/bin/$program" ] || [ -e "$root/usr/bin/$program" ]; then
        echo "image/rootfs.sh: $program is in the root; the image is meant to have no shell or interpreter" >&2
        exit 1
    fi
done
