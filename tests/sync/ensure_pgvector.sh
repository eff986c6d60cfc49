#!/usr/bin/env bash
# Provide PostgreSQL 15 with the pgvector extension for the sync tests (tests/sync/).
#
# Debian 12 (bookworm) packages PostgreSQL 15 but no pgvector; trixie's
# postgresql-17-pgvector needs trixie's libc. So this builds pgvector from Debian's own
# source package (trixie's pgvector 0.8.0-1: the .dsc, the upstream tarball and Debian's
# patches, each checked against a pinned sha256) against PostgreSQL 15's server headers,
# and installs it into the system's PostgreSQL 15 directories
# (/usr/lib/postgresql/15/lib/vector.so, /usr/share/postgresql/15/extension/vector*).
# docs/internals/decisions.md says why.
#
# Idempotent: does nothing when /usr/share/postgresql/15/extension/vector.control exists.
# Installs with apt-get and `make install` only when running as root; otherwise says what
# to run and exits non-zero, so CI notices.
set -euo pipefail

PG_MAJOR=15
PG_BIN=/usr/lib/postgresql/$PG_MAJOR/bin
PG_CONFIG=$PG_BIN/pg_config
CONTROL=/usr/share/postgresql/$PG_MAJOR/extension/vector.control

POOL=http://deb.debian.org/debian/pool/main/p/pgvector
VERSION=0.8.0
DEBIAN_REVISION=1
# From the signed pgvector_0.8.0-1.dsc (Checksums-Sha256) and of the .dsc itself.
SHA256S="
a71780bf7ab9901094a3d9869c489b6e2bcb858a8c14a5fa52d159933e016308  pgvector_${VERSION}-${DEBIAN_REVISION}.dsc
867a2c328d4928a5a9d6f052cd3bc78c7d60228a9b914ad32aa3db88e9de27b0  pgvector_${VERSION}.orig.tar.gz
6cb10bfdee32a093f0711a53d61f63657514d60058ff76a44ae2a4434f9c7ee5  pgvector_${VERSION}-${DEBIAN_REVISION}.debian.tar.xz
"

if [ -f "$CONTROL" ] && [ -x "$PG_BIN/postgres" ]; then
  echo "ensure_pgvector: pgvector $(sed -n "s/^default_version = '\(.*\)'/\1/p" "$CONTROL")" \
    "is installed for PostgreSQL $PG_MAJOR ($CONTROL)"
  exit 0
fi

if [ "$(id -u)" -ne 0 ]; then
  echo "ensure_pgvector: PostgreSQL $PG_MAJOR with pgvector is missing ($CONTROL) and this" \
    "is not root; run 'sudo bash tests/sync/ensure_pgvector.sh' (Debian 12) and retry." >&2
  exit 1
fi

export DEBIAN_FRONTEND=noninteractive
updated=
apt_install() {
  if [ -z "$updated" ]; then
    apt-get update -qq
    updated=1
  fi
  apt-get install -y -qq --no-install-recommends "$@" >/dev/null
}

if [ ! -x "$PG_BIN/postgres" ]; then
  echo "ensure_pgvector: installing Debian's postgresql (PostgreSQL $PG_MAJOR)"
  apt_install postgresql "postgresql-$PG_MAJOR"
fi

# The server headers and PGXS, at the installed server's version when the archive still has
# it (so nothing else, such as libpq5, is upgraded as a side effect).
# (PGXS itself comes with the client package; the headers are what is missing.)
if [ ! -f "$("$PG_CONFIG" --includedir-server)/postgres.h" ]; then
  server=$(dpkg-query -W -f='${Version}' "postgresql-$PG_MAJOR")
  echo "ensure_pgvector: installing postgresql-server-dev-$PG_MAJOR ($server) and a compiler"
  apt_install build-essential dpkg-dev curl ca-certificates \
    "postgresql-server-dev-$PG_MAJOR=$server" \
    || apt_install build-essential dpkg-dev curl ca-certificates "postgresql-server-dev-$PG_MAJOR"
fi
for tool in curl make gcc dpkg-source; do
  command -v "$tool" >/dev/null || apt_install build-essential dpkg-dev curl ca-certificates
done

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
cd "$work"
echo "ensure_pgvector: building pgvector $VERSION from Debian's source package ($POOL)"
while read -r _ name; do
  [ -n "$name" ] || continue
  curl -fsS --retry 3 --max-time 120 -o "$name" "$POOL/$name"
done <<<"$SHA256S"
sha256sum --quiet -c <<<"$(sed '/^$/d' <<<"$SHA256S")"
# Unpacks the tarball and applies Debian's patches (debian/patches: no -march=native),
# checking the files against the .dsc. Its PGP signature cannot be checked without the
# debian-keyring package (gpgv warns); the pinned sha256s above are what is trusted.
dpkg-source --no-copy -x "pgvector_${VERSION}-${DEBIAN_REVISION}.dsc" src >dpkg-source.log 2>&1 \
  || { cat dpkg-source.log >&2; exit 1; }
cd src
# with_llvm=no: no JIT bitcode (only used for JIT inlining, which the tests never need).
make -s -j"$(nproc)" PG_CONFIG="$PG_CONFIG" with_llvm=no >/dev/null
make -s PG_CONFIG="$PG_CONFIG" with_llvm=no install >/dev/null

test -f "$CONTROL"
echo "ensure_pgvector: installed pgvector $VERSION into PostgreSQL $PG_MAJOR" \
  "($("$PG_CONFIG" --pkglibdir)/vector.so, $CONTROL)"
