#!/usr/bin/env bash
# Fetch the development-benchmark corpora (eval/dev/) from the package registries and extract
# each project's source tree to ROOT/<project>.
#
#   bash benchmarks/fetch_dev_corpora.sh [ROOT] [PROJECT...]
#
# ROOT defaults to /work/.corpora/dev. With PROJECT names, only those are fetched. Every source
# is a pinned version from PyPI (pip download), npm (npm pack) or Debian (apt-get download, no
# install: the .deb is only unpacked). Paths in eval/dev/<project>.json are relative to
# ROOT/<project>. Re-running replaces a project's directory. Never commit the corpora.
set -euo pipefail

ROOT=${1:-/work/.corpora/dev}
shift || true
PIP=${PIP:-pip}
mkdir -p "$ROOT"
ROOT=$(cd "$ROOT" && pwd)
TMP=$(mktemp -d)
chmod 755 "$TMP"  # apt-get download drops privileges to _apt when it can
trap 'rm -rf "$TMP"' EXIT

want() {  # want PROJECT: true if no project list was given or PROJECT is in it
    [ ${#ONLY[@]} -eq 0 ] && return 0
    local p
    for p in "${ONLY[@]}"; do [ "$p" = "$1" ] && return 0; done
    return 1
}
ONLY=("$@")

# copy PROJECT SRC_BASE SUBPATH [DEST_SUBPATH]: SRC_BASE/SUBPATH -> ROOT/PROJECT/DEST_SUBPATH
copy() {
    local project=$1 base=$2 sub=$3 dest=${4:-$3}
    [ -e "$base/$sub" ] || { echo "fetch_dev_corpora: $sub missing in $project's package" >&2; exit 1; }
    mkdir -p "$ROOT/$project/$(dirname "$dest")"
    cp -a "$base/$sub" "$ROOT/$project/$dest"
}

fresh() { rm -rf "${ROOT:?}/$1"; mkdir -p "$ROOT/$1"; echo "== $1" >&2; }

pypi_sdist() {  # pypi_sdist NAME==VERSION -> prints the extracted directory
    local d="$TMP/pypi-${1%%=*}"
    mkdir -p "$d"
    "$PIP" download --quiet --no-deps --no-binary "${1%%=*}" "$1" -d "$d" >&2
    tar xzf "$d"/*.tar.gz -C "$d"
    find "$d" -mindepth 1 -maxdepth 1 -type d | head -1
}

pypi_wheel() {  # pypi_wheel NAME==VERSION PLATFORM -> prints the unpacked directory
    local d="$TMP/wheel-${1%%=*}"
    mkdir -p "$d/x"
    "$PIP" download --quiet --no-deps --only-binary :all: --platform "$2" "$1" -d "$d" >&2
    (cd "$d/x" && python3 -m zipfile -e "$d"/*.whl . >&2)
    echo "$d/x"
}

npm_pack() {  # npm_pack NAME@VERSION -> prints the extracted package directory
    local d
    d="$TMP/npm-$(echo "$1" | tr '/@' '__')"
    mkdir -p "$d"
    (cd "$d" && npm pack --silent "$1" >/dev/null)
    tar xzf "$d"/*.tgz -C "$d"
    echo "$d/package"
}

deb() {  # deb PACKAGE=VERSION -> prints the unpacked root
    local d="$TMP/deb-${1%%=*}"
    mkdir -p "$d/x"
    chmod 777 "$d"
    (cd "$d" && apt-get download -q "$1" >&2 2>/dev/null) || (cd "$d" && apt-get download -q "$1" >&2)
    dpkg-deb -x "$d"/*.deb "$d/x"
    echo "$d/x"
}

if want rich; then
    fresh rich
    src=$(pypi_sdist rich==13.9.4)
    copy rich "$src" rich
fi
if want axios; then
    fresh axios
    src=$(npm_pack axios@1.7.9)
    copy axios "$src" lib
    copy axios "$src" index.js
fi
if want rxjs; then
    fresh rxjs
    src=$(npm_pack rxjs@7.8.1)
    copy rxjs "$src" src
fi
if want echo; then
    fresh echo
    src=$(deb golang-github-labstack-echo-dev=4.2.1-3)
    for f in "$src"/usr/share/gocode/src/github.com/labstack/echo/*; do
        copy echo "$(dirname "$f")" "$(basename "$f")"
    done
fi
if want hyper; then
    fresh hyper
    src=$(deb librust-hyper-dev=0.14.19-1)
    copy hyper "$src/usr/share/cargo/registry/hyper-0.14.19" src
    copy hyper "$src/usr/share/cargo/registry/hyper-0.14.19" Cargo.toml
fi
if want spdlog; then
    fresh spdlog
    src=$(deb "libspdlog-dev=1:1.10.0+ds-0.4")
    copy spdlog "$src/usr" include/spdlog
fi
if want lua; then
    fresh lua
    src=$(pypi_sdist lupa==2.4)
    copy lua "$src/third-party/lua54" . src  # the Lua 5.4 C sources bundled in lupa's sdist
    rm -rf "$ROOT/lua/src/testes" "$ROOT/lua/src/manual" "$ROOT/lua/src/all"
fi
if want kramdown; then
    fresh kramdown
    src=$(deb ruby-kramdown=2.4.0-2)
    copy kramdown "$src/usr/share/rubygems-integration/all/gems/kramdown-2.4.0" lib
fi
if want monolog; then
    fresh monolog
    src=$(deb php-monolog=2.9.1-1)
    copy monolog "$src/usr/share/php" Monolog src/Monolog
fi
if want penlight; then
    fresh penlight
    src=$(deb lua-penlight=1.13.1-3)
    copy penlight "$src/usr/share/lua/5.1" pl lua/pl  # 5.2-5.4 are symlinks to 5.1
fi
if want zig-crypto; then
    fresh zig-crypto
    src=$(pypi_wheel ziglang==0.14.0 manylinux_2_12_x86_64)
    copy zig-crypto "$src/ziglang/lib/std" crypto std/crypto
    copy zig-crypto "$src/ziglang/lib/std" crypto.zig std/crypto.zig
fi
if want capacitor-ios; then
    fresh capacitor-ios
    src=$(npm_pack @capacitor/ios@6.2.0)
    copy capacitor-ios "$src" Capacitor/Capacitor
fi
if want capacitor-android; then
    fresh capacitor-android
    src=$(npm_pack @capacitor/android@6.2.0)
    copy capacitor-android "$src/capacitor" src/main/java
fi
if want expo-android; then
    fresh expo-android
    src=$(npm_pack expo-modules-core@3.0.26)
    copy expo-android "$src/android" src/main/java
fi
if want tower; then
    fresh tower
    src=$(deb librust-tower-dev=0.4.13-2)
    copy tower "$src/usr/share/cargo/registry/tower-0.4.13" src
    copy tower "$src/usr/share/cargo/registry/tower-0.4.13" Cargo.toml
fi
if want c-ares; then
    fresh c-ares
    src=$(pypi_sdist pycares==5.2.1)
    copy c-ares "$src/deps/c-ares" src/lib  # the c-ares C library bundled in pycares's sdist
    copy c-ares "$src/deps/c-ares" include
    rm -f "$ROOT"/c-ares/include/*.in "$ROOT"/c-ares/include/*.cmake "$ROOT"/c-ares/include/*.am \
        "$ROOT"/c-ares/include/*.dist "$ROOT/c-ares/include/CMakeLists.txt" "$ROOT/c-ares/src/lib/CMakeLists.txt" \
        "$ROOT"/c-ares/src/lib/*.am "$ROOT"/c-ares/src/lib/*.in "$ROOT"/c-ares/src/lib/*.inc
fi
if want typer; then  # the whole sdist: typer/ with tests/ and the docs' 300 example programs
    fresh typer
    src=$(pypi_sdist typer==0.29.2)
    copy typer "$src" .
fi
if want sqlmodel; then
    fresh sqlmodel
    src=$(pypi_sdist sqlmodel==0.0.50)
    copy sqlmodel "$src" .
fi
if want rustls; then
    fresh rustls
    src=$(deb librust-rustls-dev=0.20.8-4)
    copy rustls "$src/usr/share/cargo/registry/rustls-0.20.8" src
    copy rustls "$src/usr/share/cargo/registry/rustls-0.20.8" Cargo.toml
fi
if want cmark-gfm; then  # GitHub's CommonMark C library, bundled in cmarkgfm's sdist
    fresh cmark-gfm
    src=$(pypi_sdist cmarkgfm==2025.10.22)
    copy cmark-gfm "$src/third_party/cmark" src
    copy cmark-gfm "$src/third_party/cmark" extensions
fi
if want urfave-cli; then
    fresh urfave-cli
    src=$(deb golang-github-urfave-cli-v2-dev=2.3.0-2)
    copy urfave-cli "$src/usr/share/gocode/src/github.com/urfave/cli" v2
fi
if want faraday; then
    fresh faraday
    src=$(deb ruby-faraday=1.1.0-7)
    copy faraday "$src/usr/share/rubygems-integration/all/gems/faraday-1.1.0" lib
fi
if want httpx; then
    fresh httpx
    src=$(pypi_sdist httpx==0.28.1)
    copy httpx "$src" httpx
fi
if want http-rs; then
    fresh http-rs
    src=$(deb librust-http-dev=0.2.7-1)
    copy http-rs "$src/usr/share/cargo/registry/http-0.2.7" src
    copy http-rs "$src/usr/share/cargo/registry/http-0.2.7" Cargo.toml
fi
if want thor; then
    fresh thor
    src=$(deb ruby-thor=1.2.1-2)
    copy thor "$src/usr/share/rubygems-integration/all/gems/thor-1.2.1" lib
fi
if want marshmallow; then  # src/marshmallow of the sdist -> marshmallow/
    fresh marshmallow
    src=$(pypi_sdist marshmallow==3.26.1)
    copy marshmallow "$src/src" marshmallow
fi
if want gorilla-mux; then
    fresh gorilla-mux
    src=$(deb golang-github-gorilla-mux-dev=1.8.0-1)
    for f in "$src"/usr/share/gocode/src/github.com/gorilla/mux/*; do
        copy gorilla-mux "$(dirname "$f")" "$(basename "$f")"
    done
fi
if want tokio-util; then
    fresh tokio-util
    src=$(deb librust-tokio-util-dev=0.7.3-2)
    copy tokio-util "$src/usr/share/cargo/registry/tokio-util-0.7.3" src
    copy tokio-util "$src/usr/share/cargo/registry/tokio-util-0.7.3" Cargo.toml
fi
if want cli11; then  # header-only: /usr/include/CLI -> include/CLI
    fresh cli11
    src=$(deb libcli11-dev=2.1.2+ds-1)
    copy cli11 "$src/usr" include/CLI
fi
if want mobx; then  # src/ of the npm tarball: mobx's TypeScript sources, no dist/
    fresh mobx
    src=$(npm_pack mobx@7.1.3)
    copy mobx "$src" src
fi
if want rn-ble-plx; then  # android/src/main/java of the npm tarball -> java/
    fresh rn-ble-plx
    src=$(npm_pack react-native-ble-plx@3.5.1)
    copy rn-ble-plx "$src/android/src/main" java
fi
if want mustermann; then
    fresh mustermann
    src=$(deb ruby-mustermann=3.0.0-2)
    copy mustermann "$src/usr/share/rubygems-integration/all/gems/mustermann-3.0.0" lib
fi
if want brotli; then  # c/ of the sdist: Google's brotli compressor and decoder (python/ binding left out)
    fresh brotli
    src=$(pypi_sdist Brotli==1.2.1)
    copy brotli "$src" c
fi
if want expo-file-system; then  # android/src/main/java of the npm tarball -> kotlin/ (all Kotlin)
    fresh expo-file-system
    src=$(npm_pack expo-file-system@58.0.16)
    copy expo-file-system "$src/android/src/main" java kotlin
fi
if want hiredis; then  # the hiredis C client bundled in the Python binding's sdist -> src/
    fresh hiredis
    src=$(pypi_sdist hiredis==3.5.0)
    copy hiredis "$src/vendor" hiredis src
fi
if want cereal; then  # header-only: /usr/include/cereal -> include/cereal (rapidxml bundled under external/)
    fresh cereal
    src=$(deb libcereal-dev=1.3.2+dfsg-4)
    copy cereal "$src/usr" include/cereal
fi
if want liquid; then
    fresh liquid
    src=$(deb ruby-liquid=5.4.0-3)
    copy liquid "$src/usr/share/rubygems-integration/all/gems/liquid-5.4.0" lib
fi
if want bytes; then
    fresh bytes
    src=$(deb librust-bytes-dev=1.2.1-1)
    copy bytes "$src/usr/share/cargo/registry/bytes-1.2.1" src
    copy bytes "$src/usr/share/cargo/registry/bytes-1.2.1" Cargo.toml
fi
if want immer; then  # src/ of the npm tarball: immer's TypeScript sources, no dist/
    fresh immer
    src=$(npm_pack immer@10.1.1)
    copy immer "$src" src
fi
if want rn-maps; then  # android/src/main/java of the npm tarball -> java/ (all Java)
    fresh rn-maps
    src=$(npm_pack react-native-maps@1.18.0)
    copy rn-maps "$src/android/src/main" java
fi
if want mio; then  # src/ and Cargo.toml of the crate: the mio event-loop library (Rust)
    fresh mio
    src=$(deb librust-mio-dev=0.8.4-1)
    copy mio "$src/usr/share/cargo/registry/mio-0.8.4" src
    copy mio "$src/usr/share/cargo/registry/mio-0.8.4" Cargo.toml
fi
if want addressable; then  # lib/ of the gem: URI parsing, normalisation and RFC 6570 templates
    fresh addressable
    src=$(deb ruby-addressable=2.8.1-1)
    copy addressable "$src/usr/share/rubygems-integration/all/gems/addressable-2.8.1" lib
fi
if want commonmark-php; then  # /usr/share/php/League/CommonMark -> src/ (league/commonmark)
    fresh commonmark-php
    src=$(deb "php-league-commonmark=2.3.9-1+deb12u1")
    copy commonmark-php "$src/usr/share/php/League" CommonMark src
fi
if want vision-camera-android; then  # android/src/main/java of the npm tarball -> java/ (Kotlin)
    fresh vision-camera-android
    src=$(npm_pack react-native-vision-camera@4.6.4)
    copy vision-camera-android "$src/android/src/main" java
fi
if want vision-camera-ios; then  # ios/ of the same npm tarball (Swift, some Objective-C)
    fresh vision-camera-ios
    src=$(npm_pack react-native-vision-camera@4.6.4)
    copy vision-camera-ios "$src" ios
fi
echo "corpora in $ROOT" >&2
