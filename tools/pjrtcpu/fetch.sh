#!/usr/bin/env bash
# Fetches the pinned XLA:CPU PJRT plugin that backend/pjrt's tests run on
# (docs/PJRT.md says where it comes from) into a private cache directory:
#
#   tools/pjrtcpu/fetch.sh PYTHON
#
# PYTHON is a Python with pip (the project's .venv). The wheel is downloaded
# alone (no dependencies), its SHA-256 checked, and only the plugin extracted;
# its SHA-256 is checked again, and the Go loader checks it once more before
# it loads the file. The cache directory must be the caller's and mode 0700.
set -euo pipefail

PY=${1:?usage: fetch.sh PYTHON}
PKG=lammps-jax-pjrt-cpu
VERSION=0.11.2
WHEEL=lammps_jax_pjrt_cpu-0.11.2-py3-none-manylinux_2_27_x86_64.whl
WHEEL_SHA256=1319390d948b39f69f7dade496b7c385149d9ca6097a6b62114da113216d9ad1
MEMBER=lammps_jax_pjrt_cpu/pjrt_c_api_cpu_plugin.so
SO_SHA256=ad1309ac822b1b24d51b7f9947c7c9fa9ef5d67f390584cbc3d1fa2428fed9c2

# Keep in step with pjrt.CPUPluginDir.
CACHE=${TPUCC_PJRT_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/tpucc-pjrt}
DIR=$CACHE/cpu-$VERSION
SO=$DIR/pjrt_c_api_cpu_plugin.so

mkdir -p -m 0700 "$CACHE" "$DIR"
for d in "$CACHE" "$DIR"; do
	read -r owner mode < <(stat -c '%u %a' "$d")
	if [ "$owner" != "$(id -u)" ]; then
		echo "fetch.sh: $d belongs to user $owner, not to you: refusing" >&2; exit 1
	fi
	if [ "$d" = "$DIR" ] && [ "$mode" != 700 ]; then
		echo "fetch.sh: $d has mode $mode, want 700: refusing" >&2; exit 1
	fi
	if [ $(( 0$mode & 022 )) -ne 0 ]; then
		echo "fetch.sh: $d is writable by others (mode $mode): refusing" >&2; exit 1
	fi
done

if [ -f "$SO" ] && [ "$(sha256sum "$SO" | cut -d' ' -f1)" = "$SO_SHA256" ]; then
	exit 0
fi

TMP=$(mktemp -d "$DIR/fetch.XXXXXX")
trap 'rm -rf "$TMP"' EXIT
"$PY" -m pip download --disable-pip-version-check --no-input --quiet \
	--no-deps --only-binary=:all: --python-version 3.11 --platform manylinux_2_27_x86_64 \
	-d "$TMP" "$PKG==$VERSION"
got=$(sha256sum "$TMP/$WHEEL" | cut -d' ' -f1)
if [ "$got" != "$WHEEL_SHA256" ]; then
	echo "fetch.sh: $WHEEL has SHA-256 $got, want $WHEEL_SHA256: refusing" >&2; exit 1
fi
"$PY" - "$TMP/$WHEEL" "$MEMBER" "$TMP/plugin.so" <<'PYEOF'
import shutil, sys, zipfile
with zipfile.ZipFile(sys.argv[1]) as z, z.open(sys.argv[2]) as src, open(sys.argv[3], "wb") as dst:
    shutil.copyfileobj(src, dst)
PYEOF
got=$(sha256sum "$TMP/plugin.so" | cut -d' ' -f1)
if [ "$got" != "$SO_SHA256" ]; then
	echo "fetch.sh: $MEMBER has SHA-256 $got, want $SO_SHA256: refusing" >&2; exit 1
fi
chmod 0500 "$TMP/plugin.so"
mv -f "$TMP/plugin.so" "$SO"
echo "fetch.sh: $SO"
