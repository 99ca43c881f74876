#!/bin/sh
# Builds realm_core_writer against a Realm Core build: a measuring instrument only, never part of the product.
#
#   docs/bench/build_realm_core_writer.sh REALM_CORE_SRC REALM_CORE_BUILD [OUTDIR]
#
# REALM_CORE_SRC: a realm-core checkout at tag v14.14.0 (commit cccb3ca9e26e).
# REALM_CORE_BUILD: its CMake build directory, configured and built with
#   cmake -G Ninja REALM_CORE_SRC -DCMAKE_BUILD_TYPE=Release -DREALM_BUILD_LIB_ONLY=ON -DREALM_NO_TESTS=ON \
#         -DREALM_ENABLE_SYNC=OFF -DREALM_ENABLE_GEOSPATIAL=OFF -DREALM_USE_SYSTEM_OPENSSL=ON
#   ninja Storage
# OUTDIR: where the program goes (default: REALM_CORE_BUILD/bench).
# Needs: a C++17 compiler (g++ 12 was used), libssl-dev, zlib1g-dev.
set -eu
if [ $# -lt 2 ]; then
    echo "usage: $0 REALM_CORE_SRC REALM_CORE_BUILD [OUTDIR]" >&2
    exit 2
fi
SRC=$1
BUILD=$2
OUT=${3:-$BUILD/bench}
HERE=$(cd "$(dirname "$0")" && pwd)
LIB=$(find "$BUILD/src/realm" -maxdepth 1 -name 'librealm*.a' | grep -v -e dbg -e object-store -e parser | head -n 1)
if [ -z "$LIB" ]; then
    echo "no librealm*.a under $BUILD/src/realm: run 'ninja Storage' in $BUILD first" >&2
    exit 1
fi
mkdir -p "$OUT"
CXX=${CXX:-c++}
FLAGS="-std=c++17 -O2 -DNDEBUG -I$SRC/src -I$BUILD/src"
LIBS="$LIB -lssl -lcrypto -lz -lpthread"
echo "building $OUT/realm_core_writer"
nice -n 15 $CXX $FLAGS -o "$OUT/realm_core_writer" "$HERE/realm_core_writer.cpp" $LIBS
