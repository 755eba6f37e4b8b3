#!/bin/bash
# Build CPython 3.11 for wasm32-wasi from Debian's own python3.11 source, with
# zlib, liblzma, libbz2, SQLite, Berkeley DB (dbm.ndbm), libuuid and musl's
# time zone code (Debian's sources too), CPython's test modules
# (_testcapi and its kin, as Debian's libpython3.11-stdlib ships them) and the
# _agent_runtime_host module built in (SPEC.md section 8); its libm is the
# host's (_apysup_libm.c).
#
#   build.sh                         build once, print the output directory
#   build.sh --print-dir             print the output directory, exit 1 if not built
#   build.sh --print-key             print the key of the current inputs
#   build.sh --print-python-revision print the Debian revision of python3.11
#                                    built (the native guest must run the same:
#                                    `make deps` installs it)
#
# Output: ${XDG_CACHE_HOME:-$HOME/.cache}/apysup/wasi/<key>/ with python.wasm
# (stripped), python311.zip (the stdlib: sources, and their bytecode in
# __pycache__, as Debian installs it) and manifest.json. The key is the
# sha256 of every input file in this directory (this script, which pins the
# source versions, flags and module list; the C files; mkstdlib.py;
# patches/<source package>/*.patch, applied to that package's source):
# the list of "sha256  path" lines, paths sorted, hashed once more. The Go
# side (sandbox/wazero) computes the same key from the embedded inputs.
#
# Needs root (or sudo) only when something is missing: it adds a deb-src
# entry, runs apt-get update and installs the toolchain. Reaches nothing but
# Debian's archive.
set -euo pipefail

# Inputs. Changing any line of this file changes the key.
# bookworm's point-release versions: bookworm-security's newer uploads are
# not served by every mirror (python3.11's deb12u9 source: 404 here), the
# point release is. PY_SRC_VERSION is also the revision of the host's
# python3.11 packages, which the native guest runs: `make deps` installs
# exactly it, and the wazero backend refuses to run
# (wasi_python_revision_mismatch) while the two differ. Moving it to a newer
# revision is one edit here, then `make deps wasi-python`.
PY_SRC_VERSION="3.11.2-6+deb12u8" # Debian's python3.11 source package
# The native guest's interpreter's build (sys.version, platform.python_build
# and python_compiler): Debian's amd64 binary of PY_SRC_VERSION. The WASI
# build names the same (wasi-native-build-info.patch), so that a script
# printing sys.version prints the same on both backends; manifest.json
# names the compiler that really built python.wasm. Moving PY_SRC_VERSION
# moves these: `/usr/bin/python3.11 -c "import sys; print(sys.version)"`.
PY_NATIVE_BUILD_DATE="May 12 2026"
PY_NATIVE_BUILD_TIME="05:17:27"
PY_NATIVE_COMPILER="[GCC 12.2.0]"
ZLIB_SRC_VERSION="1:1.2.13.dfsg-1" # Debian's zlib source package
XZ_SRC_VERSION="5.4.1-1+deb12u1"   # Debian's xz-utils source package (liblzma)
BZIP2_SRC_VERSION="1.0.8-5"        # Debian's bzip2 source package (libbz2)
SQLITE_SRC_VERSION="3.40.1-2+deb12u2" # Debian's sqlite3 source package (libsqlite3)
MUSL_SRC_VERSION="1.2.3-1"          # Debian's musl source package (its time zone code)
DB_SRC_VERSION="5.3.28+dfsg2-1"     # Debian's db5.3 source package (libdb, under dbm.ndbm as natively)
UUID_SRC_VERSION="2.38.1-5+deb12u3" # Debian's util-linux source package (libuuid, under _uuid)
# clang 19 (bookworm's llvm-toolchain-19, a point-release update), not
# Debian 12's default 16: its code for CPython's loops runs 3-6 % faster
# under wazero (docs/parity.md, "clang 19 for the WASI build").
LLVM=19
# Debian's llvm-toolchain-19 source package: compiler-rt's profile runtime
# for the profile-guided stage, built for wasm32 (Debian ships it for the
# host only); the version of the clang-19 that builds (PACKAGES), so that
# the runtime writes the profile format clang and llvm-profdata read. Only
# its compiler-rt/lib/profile is unpacked.
LLVM_SRC_VERSION="1:19.1.7-3~deb12u1"
PACKAGES=(
	"clang-$LLVM" "lld-$LLVM" "llvm-$LLVM" "libclang-rt-$LLVM-dev-wasm32" wasi-libc
	dpkg-dev gcc make libc6-dev xz-utils tcl8.6
)
# wasi-libc's CLOCK_* are pointers, which clang (16 and later) refuses in
# timemodule.c.
# CPython lowers its recursion limit to 600 under WASI for a 512 KiB stack;
# the guest gets native's limit (1000), so that deep recursion ends in
# RecursionError on both backends, not a trap, and a C stack in linear
# memory (the shadow stack: the frames of C code that takes an address)
# four times native's 8 MiB, so that a script that raised the limit
# recurses through C as deep as natively: a level of Python called from C
# (an lru_cache'd function, __init__, a property, deepcopy, pickle, repr)
# takes about three times the stack under wasm32, most of it the eval
# loop's 1.5 KiB frame, into which ThinLTO and the profile inline their
# callees' locals (496 bytes in the instrumented build, without either).
# The stack comes first in memory, so initial memory holds it and 8 MiB
# more for the data and the first heap; it counts against the run's
# memory limit.
WASI_CFLAGS="-O2 -Wno-error=int-conversion -DPy_DEFAULT_RECURSION_LIMIT=1000"
# configure turns IPv6 off for WASI; the native guest's socket module has it
# (socket.has_ipv6, inet_pton of IPv6 addresses, getaddrinfo's IPv6
# answers: _apysup_netdb.c below).
# configure turns pymalloc off for WASI (3.11's default, dropped in 3.12);
# wasi-libc's malloc is dlmalloc, which pymalloc's small-object arenas (taken
# from malloc, as there is no mmap) sit on top of, as natively.
# configure picks FNV for str and bytes hashes when it cannot run its
# aligned-access probe (cross builds); wasm loads need no alignment, and
# the native guest hashes with SipHash-1-3 (sys.hash_info.algorithm), whose
# keyed hashes are also what protects dicts from colliding keys.
WASI_CONFIGURE_FLAGS="--with-pymalloc --enable-test-modules --without-ensurepip --enable-ipv6 --with-hash-algorithm=siphash13"
WASI_LDFLAGS_NODIST="-z stack-size=33554432 -Wl,--stack-first -Wl,--initial-memory=41943040"
# Built-in modules beyond configure's own choice, as Modules/Setup.local lines
# (source paths relative to Modules/: makesetup breaks on absolute paths).
SETUP_LOCAL="_agent_runtime_host _agent_runtime_host.c
_apysup_os _apysup_os.c
resource resource.c
fcntl _apysup_fcntlmodule.c
termios termios.c -I\$(srcdir)/Modules/apysup-termios
_dbm _dbmmodule.c -DUSE_BERKDB -I\$(APYSUP_DB) \$(APYSUP_DB)/libdb.a
_uuid _uuidmodule.c -DHAVE_UUID_UUID_H -DHAVE_UUID_GENERATE_TIME_SAFE -I\$(APYSUP_UUID)/include \$(APYSUP_UUID)/libuuid.a
syslog syslogmodule.c"

# The training run (cmd/wasi-pgo) is Go, run with make's Go (GO).
go=$(command -v "${GO:-go}" || true)
export PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin
export LC_ALL=C TZ=UTC SOURCE_DATE_EPOCH=0
unset CC CXX CPP CFLAGS CPPFLAGS LDFLAGS LIBS AR RANLIB PYTHONPATH PYTHONHOME CONFIG_SITE

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
cache_root="${XDG_CACHE_HOME:-$HOME/.cache}/apysup/wasi"

log() { printf '[wasi-python] %s\n' "$*" >&2; }
die() { log "error: $*"; exit 1; }

input_files() {
	# testdata/ holds the host-side checks of the inputs, not inputs.
	(cd "$here" && find . -path ./testdata -prune -o -type f \( -name build.sh -o -name '*.c' -o -name '*.h' -o -name '*.py' -o -name '*.patch' \) -print |
		sed 's|^\./||' | LC_ALL=C sort)
}

compute_key() {
	local f
	input_files | while IFS= read -r f; do (cd "$here" && sha256sum "$f"); done | sha256sum | cut -c1-64
}

key=$(compute_key)
out="$cache_root/$key"

if [[ "${1:-}" == "--print-key" ]]; then
	printf '%s\n' "$key"
	exit 0
fi
if [[ "${1:-}" == "--print-python-revision" ]]; then
	printf '%s\n' "$PY_SRC_VERSION"
	exit 0
fi
if [[ "${1:-}" == "--print-dir" ]]; then
	[[ -f "$out/manifest.json" ]] || exit 1
	printf '%s\n' "$out"
	exit 0
fi
[[ $# -eq 0 ]] || die "usage: build.sh [--print-dir|--print-key|--print-python-revision]"

if [[ -f "$out/manifest.json" ]]; then
	log "cached: $out"
	printf '%s\n' "$out"
	exit 0
fi

mkdir -p "$cache_root"
exec 9>"$cache_root/.lock"
flock 9
if [[ -f "$out/manifest.json" ]]; then # built by a concurrent run
	printf '%s\n' "$out"
	exit 0
fi

# --- toolchain and sources -------------------------------------------------

# root runs a command as root: directly, or through sudo for a developer.
root() {
	if [[ $(id -u) -eq 0 ]]; then
		"$@"
	elif command -v sudo >/dev/null; then
		sudo "$@"
	else
		die "need root (or sudo) for: $*"
	fi
}

apt_install() {
	root env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "$@" >&2
}

ensure_packages() {
	local missing=() p
	for p in "${PACKAGES[@]}"; do
		[[ $(dpkg-query -W -f='${Status}' "$p" 2>/dev/null) == "install ok installed" ]] || missing+=("$p")
	done
	[[ ${#missing[@]} -eq 0 ]] && return
	log "installing ${missing[*]}"
	apt_install "${missing[@]}" || { root apt-get update -qq >&2 && apt_install "${missing[@]}"; }
}

have_src() {
	local versions
	versions=$(apt-cache showsrc "$1" 2>/dev/null | sed -n 's/^Version: //p')
	grep -qxF -- "$2" <<<"$versions"
}

# ensure_deb_src makes Debian's own source packages visible to apt: a copy of
# debian.sources' deb entries as deb-src, in a file of its own, unless
# Debian's sources already have one; apt-get update only when needed.
ensure_deb_src() {
	have_src python3.11 "$PY_SRC_VERSION" && have_src zlib "$ZLIB_SRC_VERSION" &&
		have_src xz-utils "$XZ_SRC_VERSION" && have_src bzip2 "$BZIP2_SRC_VERSION" &&
		have_src sqlite3 "$SQLITE_SRC_VERSION" && have_src db5.3 "$DB_SRC_VERSION" &&
		have_src util-linux "$UUID_SRC_VERSION" && have_src "llvm-toolchain-$LLVM" "$LLVM_SRC_VERSION" && return
	local debian=/etc/apt/sources.list.d/debian.sources
	local ours=/etc/apt/sources.list.d/apysup-deb-src.sources
	if [[ ! -f $ours ]] && ! grep -qsE '^(Types:.*deb-src|deb-src )' "$debian" /etc/apt/sources.list; then
		[[ -f $debian ]] || die "no $debian to copy a deb-src entry from"
		log "adding $ours"
		awk 'BEGIN{RS="";ORS="\n\n"} /(^|\n)Types: deb(\n|$)/ {sub(/Types: deb/,"Types: deb-src"); print}' \
			"$debian" | root tee "$ours" >/dev/null
	fi
	log "apt-get update"
	root apt-get update -qq >&2
	have_src python3.11 "$PY_SRC_VERSION" ||
		die "python3.11 source $PY_SRC_VERSION is not in the archive; available: $(apt-cache showsrc python3.11 | sed -n 's/^Version: //p' | tr '\n' ' ')(update PY_SRC_VERSION in $here/build.sh)"
	local pkg var
	for pkg in zlib:ZLIB_SRC_VERSION xz-utils:XZ_SRC_VERSION bzip2:BZIP2_SRC_VERSION sqlite3:SQLITE_SRC_VERSION db5.3:DB_SRC_VERSION util-linux:UUID_SRC_VERSION "llvm-toolchain-$LLVM:LLVM_SRC_VERSION"; do
		var=${pkg#*:}
		have_src "${pkg%%:*}" "${!var}" ||
			die "${pkg%%:*} source ${!var} is not in the archive (update $var in $here/build.sh)"
	done
}

ensure_packages
ensure_deb_src
[[ -n $go ]] || die "needs Go for the training run (make wasi-python passes its GO)"

# The work directory has a fixed name per key (paths end up in the build's
# sysconfig data) and sits beside the output so the final rename is atomic.
work="$cache_root/.build-$key"
cleanup() { rm -rf "$work"; }
trap cleanup EXIT
rm -rf "$work" "$cache_root"/failed-*.log
mkdir -p "$work/src" "$work/out" "$work/no-pkgconfig"
jobs=$(nproc)
# The outputs must not depend on where they were built: the WASI build runs
# configure by a relative path (getpath.c bakes the source directory in),
# __FILE__ paths and the sysconfig data read /build instead of $work.
map_paths="-ffile-prefix-map=$work=/build"

log "fetching python3.11 $PY_SRC_VERSION, zlib $ZLIB_SRC_VERSION, xz-utils $XZ_SRC_VERSION, bzip2 $BZIP2_SRC_VERSION, sqlite3 $SQLITE_SRC_VERSION, musl $MUSL_SRC_VERSION, db5.3 $DB_SRC_VERSION, util-linux $UUID_SRC_VERSION and llvm-toolchain-$LLVM $LLVM_SRC_VERSION sources"
(cd "$work/src" && apt-get source -q "python3.11=$PY_SRC_VERSION" "zlib=$ZLIB_SRC_VERSION" \
	"xz-utils=$XZ_SRC_VERSION" "bzip2=$BZIP2_SRC_VERSION" "sqlite3=$SQLITE_SRC_VERSION" \
	"musl=$MUSL_SRC_VERSION" "db5.3=$DB_SRC_VERSION" "util-linux=$UUID_SRC_VERSION" >"$work/apt-source.log" 2>&1) ||
	{ cat "$work/apt-source.log" >&2; die "apt-get source failed"; }
# LLVM's source is 136 MB packed: downloaded (checked against the archive's
# signed index as the others are), never unpacked whole.
(cd "$work/src" && apt-get source -q --download-only "llvm-toolchain-$LLVM=$LLVM_SRC_VERSION" >>"$work/apt-source.log" 2>&1) ||
	{ cat "$work/apt-source.log" >&2; die "apt-get source llvm-toolchain-$LLVM failed"; }
src_dir() { find "$work/src" -maxdepth 1 -type d -name "$1-*" | head -1; }
py_src=$(src_dir python3.11)
zlib_src=$(src_dir zlib)
xz_src=$(src_dir xz-utils)
bzip2_src=$(src_dir bzip2)
sqlite_src=$(src_dir sqlite3)
musl_src=$(src_dir musl)
db_src=$(src_dir db5.3)
uuid_src=$(src_dir util-linux)
[[ -d $py_src && -d $zlib_src && -d $xz_src && -d $bzip2_src && -d $sqlite_src && -d $musl_src && -d $db_src && -d $uuid_src ]] ||
	die "sources did not unpack"
# patches/<source package>/*.patch apply to that package's source.
for p in $(cd "$here" && find . -path './patches/*.patch' | LC_ALL=C sort); do
	pkg=${p#./patches/}
	pkg=${pkg%%/*}
	pkg_src=$(src_dir "$pkg")
	[[ -d $pkg_src ]] || die "$p: no source package $pkg"
	log "applying $p"
	patch -d "$pkg_src" -p1 --quiet <"$here/$p"
done
cp "$here/_agent_runtime_host.c" "$here/_apysup_os.c" "$here/_apysup_fcntlmodule.c" "$py_src/Modules/"
printf '#define APYSUP_NATIVE_BUILD_DATE "%s"\n#define APYSUP_NATIVE_BUILD_TIME "%s"\n#define APYSUP_NATIVE_COMPILER "%s"\n' \
	"$PY_NATIVE_BUILD_DATE" "$PY_NATIVE_BUILD_TIME" "$PY_NATIVE_COMPILER" >"$py_src/Include/apysup_native_build.h"
mkdir -p "$py_src/Modules/apysup-termios"
cp "$here/termios/termios.h" "$py_src/Modules/apysup-termios/"

# Runs a build step quietly; on failure shows the end of its log.
step() {
	local name=$1
	shift
	log "$name"
	if ! "$@" >"$work/$name.log" 2>&1; then
		tail -n 40 "$work/$name.log" >&2
		cp "$work/$name.log" "$cache_root/failed-$name.log"
		die "$name failed (log above; whole log in $cache_root/failed-$name.log)"
	fi
}

# --- native build python (same source, same bytecode) ------------------------

mkdir -p "$work/native"
step native-configure sh -c "cd '$work/native' && '$py_src/configure' --without-ensurepip"
step native-make make -C "$work/native" -j"$jobs"
build_python="$work/native/python"

# --- WASI toolchain: an isolated sysroot keeps host headers out --------------

sysroot="$work/sysroot"
mkdir -p "$sysroot/include" "$sysroot/lib"
ln -s /usr/include/wasm32-wasi "$sysroot/include/wasm32-wasi"
ln -s /usr/lib/wasm32-wasi "$sysroot/lib/wasm32-wasi"
# clang's driver runs binaryen's wasm-opt over every optimised link when it
# finds one on PATH, and Debian's (108) cannot parse these modules: the
# links, and configure's link tests with them, would fail on a host that
# has binaryen installed. This wasm-opt, which leaves the module as linked,
# is found first: clang looks in its -B directories before its own and
# PATH's (docs/parity.md, "wasm-opt").
mkdir -p "$work/tools"
printf '#!/bin/sh\nexit 0\n' >"$work/tools/wasm-opt"
chmod +x "$work/tools/wasm-opt"
wasi_cc="clang-$LLVM --target=wasm32-wasi --sysroot=$sysroot -B$work/tools"

# zlib: only the library objects, no configure (it probes the host).
zlib_build="$work/zlib"
mkdir -p "$zlib_build"
zlib_objs=()
log "zlib"
for c in adler32 compress crc32 deflate infback inffast inflate inftrees trees uncompr zutil; do
	$wasi_cc $WASI_CFLAGS $map_paths -w -DHAVE_UNISTD_H -DHAVE_STDARG_H -I"$zlib_src" -c "$zlib_src/$c.c" -o "$zlib_build/$c.o"
	zlib_objs+=("$zlib_build/$c.o")
done
cp "$zlib_src/zlib.h" "$zlib_src/zconf.h" "$zlib_build/"
"llvm-ar-$LLVM" rcs "$zlib_build/libz.a" "${zlib_objs[@]}"

# libbz2: its library objects, as zlib's.
bzip2_build="$work/bzip2"
mkdir -p "$bzip2_build"
bzip2_objs=()
log "bzip2"
for c in blocksort huffman crctable randtable compress decompress bzlib; do
	$wasi_cc $WASI_CFLAGS $map_paths -w -D_FILE_OFFSET_BITS=64 -c "$bzip2_src/$c.c" -o "$bzip2_build/$c.o"
	bzip2_objs+=("$bzip2_build/$c.o")
done
cp "$bzip2_src/bzlib.h" "$bzip2_build/"
"llvm-ar-$LLVM" rcs "$bzip2_build/libbz2.a" "${bzip2_objs[@]}"

# liblzma: too many sources and feature checks to list by hand, so its own
# configure, cross (--host), single-threaded, the library only.
xz_build="$work/xz"
mkdir -p "$xz_build"
step xz-configure env CC="$wasi_cc" AR="llvm-ar-$LLVM" RANLIB="llvm-ranlib-$LLVM" \
	CFLAGS="$WASI_CFLAGS $map_paths" PKG_CONFIG_LIBDIR="$work/no-pkgconfig" PKG_CONFIG_PATH= \
	sh -c "cd '$xz_build' && '$xz_src/configure' --host=wasm32-unknown-wasi --build='$("$xz_src/build-aux/config.guess")' \
		--disable-shared --enable-static --disable-threads --disable-xz --disable-xzdec --disable-lzmadec \
		--disable-lzmainfo --disable-lzma-links --disable-scripts --disable-doc --disable-nls --disable-rpath"
step xz-make make -C "$xz_build/src/liblzma" -j"$jobs"
[[ -f $xz_build/src/liblzma/.libs/liblzma.a ]] || die "liblzma did not build"

# libsqlite3: the amalgamation (sqlite3.c), generated natively by its own
# build (lemon, tclsh), compiled with Debian's options (debian/rules and its
# configure switches: FTS4, FTS5, math functions), less what WASI cannot
# have: threads (THREADSAFE=0), loadable extensions and mmap.
# patches/sqlite3/wasi-unix-vfs.patch makes the unix VFS build for WASI; its
# locks are the in-process ones (one process, one thread). wasi-wal.patch
# keeps a WAL's index in memory, shared by the process's connections, where
# natively it is a shared mapping of the -shm file.
SQLITE_CFLAGS="-DSQLITE_SECURE_DELETE -DSQLITE_ENABLE_COLUMN_METADATA -DSQLITE_ENABLE_FTS3
	-DSQLITE_ENABLE_FTS3_PARENTHESIS -DSQLITE_ENABLE_FTS4 -DSQLITE_ENABLE_FTS5 -DSQLITE_ENABLE_RTREE=1
	-DSQLITE_SOUNDEX=1 -DSQLITE_ENABLE_UNLOCK_NOTIFY -DSQLITE_OMIT_LOOKASIDE=1 -DSQLITE_ENABLE_DBSTAT_VTAB
	-DSQLITE_ALLOW_ROWID_IN_VIEW -DSQLITE_ENABLE_UPDATE_DELETE_LIMIT=1 -DSQLITE_ENABLE_MATH_FUNCTIONS
	-DSQLITE_LIKE_DOESNT_MATCH_BLOBS -DSQLITE_ENABLE_FTS3_TOKENIZER=1 -DSQLITE_USE_URI=1
	-DSQLITE_MAX_SCHEMA_RETRY=25 -DSQLITE_ENABLE_PREUPDATE_HOOK -DSQLITE_ENABLE_SESSION
	-DSQLITE_ENABLE_STMTVTAB -DSQLITE_MAX_VARIABLE_NUMBER=250000
	-DSQLITE_THREADSAFE=0 -DSQLITE_OMIT_LOAD_EXTENSION -DSQLITE_MAX_MMAP_SIZE=0
	-D_WASI_EMULATED_GETPID"
sqlite_build="$work/sqlite"
mkdir -p "$sqlite_build/native"
step sqlite-amalgamation sh -c "cd '$sqlite_build/native' && '$sqlite_src/configure' --disable-tcl && make sqlite3.c"
cp "$sqlite_build/native/sqlite3.h" "$sqlite_build/"
log "sqlite3"
$wasi_cc $WASI_CFLAGS $map_paths -w $SQLITE_CFLAGS -c "$sqlite_build/native/sqlite3.c" -o "$sqlite_build/sqlite3.o"
"llvm-ar-$LLVM" rcs "$sqlite_build/libsqlite3.a" "$sqlite_build/sqlite3.o"

# config.guess must not see the cross compiler, or it answers x86_64-pc-linux-gnux32.
build_triple=$("$py_src/config.guess")

# libdb: Berkeley DB 5.3, which Debian's _dbm (dbm.ndbm) links, so that a
# database either backend writes is a Berkeley DB hash file the other reads.
# Its configure, cross, with what dbm_open needs and WASI has: no threads
# (nor mutexes: one thread, and the environment dbm_open makes is private,
# in malloc'd memory), no replication, C only. Told there is no fcntl or
# mmap, it takes its paths without them: fcntl serves only DB_REGISTER's
# record locks, which dbm_open never asks for, and the mmap of a read-only
# database file falls back to reads, as it does natively when the mapping
# fails. Its configure predates the wasi triple: CPython's config.sub and
# config.guess know it. chmod (os_mkdir.c) is _apysup_paths.c's, as
# CPython's os.chmod is.
db_build="$work/db"
mkdir -p "$db_build"
cp "$py_src/config.sub" "$py_src/config.guess" "$db_src/dist/"
printf '#include <sys/types.h>\nint __apysup_chmod(const char *, mode_t);\n' >"$db_build/apysup_chmod.h"
step db-configure env CC="$wasi_cc" AR="llvm-ar-$LLVM" RANLIB="llvm-ranlib-$LLVM" \
	CFLAGS="$WASI_CFLAGS $map_paths -D_WASI_EMULATED_GETPID -D_WASI_EMULATED_SIGNAL" \
	LDFLAGS="-lwasi-emulated-getpid -lwasi-emulated-signal" \
	ac_cv_func_fcntl=no ac_cv_func_mmap=no ac_cv_func_munmap=no \
	sh -c "cd '$db_build' && '$db_src/dist/configure' --host=wasm32-unknown-wasi --build='$build_triple' \
		--disable-shared --enable-static --enable-dbm --disable-cxx --disable-java --disable-tcl --disable-sql \
		--disable-mutexsupport --disable-replication"
step db-make make -C "$db_build" -j"$jobs" libdb.a \
	CPPFLAGS="-I\$(builddir) -I\$(srcdir) -include $db_build/apysup_chmod.h -Dchmod=__apysup_chmod"
[[ -f $db_build/libdb.a ]] || die "libdb did not build"

# libuuid: util-linux's library, which Debian's _uuid links. Its sources by
# hand, as zlib's: util-linux's configure checks for the whole suite of
# tools. libuuid/config.h (forced in) says what WASI has; grp.h and pwd.h
# there stand in for headers util-linux's c.h includes and libuuid does
# not use.
uuid_build="$work/uuid"
mkdir -p "$uuid_build/include/uuid"
uuid_objs=()
log "libuuid"
for c in libuuid/src/{clear,compare,copy,gen_uuid,isnull,pack,parse,predefined,unpack,unparse,uuid_time} lib/{randutils,md5,sha1}; do
	$wasi_cc $WASI_CFLAGS $map_paths -D_WASI_EMULATED_GETPID -include "$here/libuuid/config.h" -I"$here/libuuid" \
		-I"$uuid_src/include" -I"$uuid_src/libuuid/src" -c "$uuid_src/$c.c" -o "$uuid_build/${c##*/}.o"
	uuid_objs+=("$uuid_build/${c##*/}.o")
done
cp "$uuid_src/libuuid/src/uuid.h" "$uuid_build/include/uuid/"
"llvm-ar-$LLVM" rcs "$uuid_build/libuuid.a" "${uuid_objs[@]}"

# --- apysup's own objects, linked into python.wasm ---------------------------

# The host's libm (_apysup_libm.c): an object on every link, so its
# definitions win over wasi-libc's archive members.
log "apysup_libm"
$wasi_cc $WASI_CFLAGS $map_paths -c "$here/_apysup_libm.c" -o "$work/apysup_libm.o"
# Path resolution as Linux's (_apysup_paths.c): every path function of
# wasi-libc looks its path up through the wrapped function.
log "apysup_paths"
$wasi_cc $WASI_CFLAGS $map_paths -c "$here/_apysup_paths.c" -o "$work/apysup_paths.o"
# stat's permission bits, owner and device as the native guest's
# (_apysup_stat.c), from what the host puts in the filestat's device field.
log "apysup_stat"
$wasi_cc $WASI_CFLAGS $map_paths -c "$here/_apysup_stat.c" -o "$work/apysup_stat.o"
# setlocale, nl_langinfo and wcscoll as glibc answers them (_apysup_locale.c),
# wrapped around wasi-libc's (musl's).
log "apysup_locale"
$wasi_cc $WASI_CFLAGS $map_paths -c "$here/_apysup_locale.c" -o "$work/apysup_locale.o"
# Time zones: musl's own __tz.c (TZ, POSIX rules and the zoneinfo files), of
# which wasi-libc keeps UTC alone, its mktime and gmtime_r; patches/musl/wasi-tz.patch
# fits them to WASI (no mmap, no locks) and to what glibc answers natively.
# Objects on every link, as the libm, so their definitions win over
# wasi-libc's archive members; time.tzset exists (ac_cv_working_tzset
# above: configure cannot run its test program). wasi-libc's struct tm keeps
# tm_gmtoff in an int, which is wasm32's long.
log "apysup_tz"
$wasi_cc $WASI_CFLAGS $map_paths -c "$musl_src/src/time/__tz.c" -o "$work/apysup_tz.o"
$wasi_cc $WASI_CFLAGS -Wno-incompatible-pointer-types $map_paths -c "$musl_src/src/time/mktime.c" -o "$work/apysup_mktime.o"
$wasi_cc $WASI_CFLAGS $map_paths -c "$musl_src/src/time/gmtime_r.c" -o "$work/apysup_gmtime_r.o"
# strftime as glibc formats (_apysup_strftime.c): time.strftime calls
# wcsftime, wrapped around musl's, which lacks glibc's flags, widths and
# GNU conversions and fails a whole format on one it does not know.
log "apysup_strftime"
$wasi_cc $WASI_CFLAGS $map_paths -c "$here/_apysup_strftime.c" -o "$work/apysup_strftime.o"
# errno as the native guest's: Linux's numbers and glibc's messages where
# errno reaches Python (_apysup_errno.c, patches/python3.11/wasi-linux-errno.patch),
# and ENOSPC, EFBIG and EMFILE where the host's limits answer EIO, ERANGE
# and EAGAIN (wazero has none of the three).
log "apysup_errno"
$wasi_cc $WASI_CFLAGS $map_paths -c "$here/_apysup_errno.c" -o "$work/apysup_errno.o"
# open's flags, posix_fadvise's advice, the clock ids and poll's event bits
# as the native guest's (Linux's) where Python takes them (_apysup_flags.c,
# patches/python3.11/wasi-linux-flags.patch, include/poll.h).
log "apysup_flags"
$wasi_cc $WASI_CFLAGS $map_paths -I"$here/include" -c "$here/_apysup_flags.c" -o "$work/apysup_flags.o"
# chown and its kin, sendfile, copy_file_range, getrandom, getlogin,
# statvfs and fstatvfs (_apysup_files.c), which wasi-libc lacks.
log "apysup_files"
$wasi_cc $WASI_CFLAGS $map_paths -I"$here/include" -c "$here/_apysup_files.c" -o "$work/apysup_files.o"
# The CPU counts and os.sched_getaffinity as the native guest's: the host's
# online CPUs (_apysup_host.c, and the _apysup_os module above); the
# host's load average (os.getloadavg) and os.nice, which wasi-libc lacks;
# sysconf as glibc answers (include/unistd.h adds the names wasi-libc lacks).
log "apysup_host"
$wasi_cc $WASI_CFLAGS $map_paths -I"$here/include" -c "$here/_apysup_host.c" -o "$work/apysup_host.o"
# The resource module (CPython's own, a built-in of Setup.local above, with
# include/sys/resource.h): getrlimit, setrlimit, prlimit and getrusage
# through the host (_apysup_resource.c). configure is told there is no
# sys/resource.h (ac_cv_header_sys_resource_h=no above), so that nothing
# else of CPython changes with it.
log "apysup_resource"
$wasi_cc $WASI_CFLAGS $map_paths -I"$here/include" -c "$here/_apysup_resource.c" -o "$work/apysup_resource.o"
# The fcntl module (CPython's own, with Linux's names: _apysup_fcntlmodule.c
# in Setup.local above): its fcntl, flock and ioctl as the native guest's,
# and FD_CLOEXEC kept for every caller of fcntl (_apysup_fcntl.c, with
# --wrap=fcntl and --wrap=close).
log "apysup_fcntl"
$wasi_cc $WASI_CFLAGS $map_paths -c "$here/_apysup_fcntl.c" -o "$work/apysup_fcntl.o"
# The termios module (CPython's own termios.c, a built-in of Setup.local
# above, with termios/termios.h: Linux's types and the native module's
# names and numbers, and its ioctl the fcntl module's; no -D in Setup.local,
# whose lines with "=" are make variables): tcgetattr and the
# rest as _apysup_termios.c answers, the native guest's errnos, as no
# terminal reaches a guest; so do the os module's ctermid, ttyname,
# tcgetpgrp, tcsetpgrp, openpty and login_tty (include/unistd.h,
# include/pty.h; cache variables above).
log "apysup_termios"
$wasi_cc $WASI_CFLAGS $map_paths -I"$here/termios" -I"$here/include" -c "$here/_apysup_termios.c" -o "$work/apysup_termios.o"
# The resolver and socket() as the confined native guest's glibc and seccomp
# filter answer them (_apysup_netdb.c, include/netdb.h): /etc/hosts and
# numeric addresses, no network; configure is told the functions exist
# (cache variables above), as for _apysup_files.c's. The socket module gets
# Linux's numbers for families and socket types (include/netdb.h), and
# inet_pton and inet_ntop take them (--wrap).
log "apysup_netdb"
$wasi_cc $WASI_CFLAGS $map_paths -I"$here/include" -c "$here/_apysup_netdb.c" -o "$work/apysup_netdb.o"
# The locale module's gettext family and the syslog module (a built-in of
# Setup.local above) as the native guest's glibc answers them in its sandbox
# (_apysup_messages.c, include/libintl.h, include/syslog.h): no catalogs, so
# a message is its own translation, and no /dev/log, so a logged message
# reaches only stderr, under LOG_PERROR.
log "apysup_messages"
$wasi_cc $WASI_CFLAGS $map_paths -I"$here/include" -c "$here/_apysup_messages.c" -o "$work/apysup_messages.o"
# A guest that signals itself, or aborts, ends as killed by the signal
# (_apysup_signal.c), as natively, instead of trapping; strsignal's words
# are glibc's.
log "apysup_signal"
$wasi_cc $WASI_CFLAGS $map_paths -I"$here/include" -c "$here/_apysup_signal.c" -o "$work/apysup_signal.o"
# memcpy, memmove, memset, memcmp, memchr and memrchr (_apysup_string.c):
# an object on every link, as the libm, in place of wasi-libc's byte and
# word loops; bulk memory and SIMD for this file only (the whole build with
# -mbulk-memory made some interpreter loops slower: RATIONALE.md).
log "apysup_string"
$wasi_cc $WASI_CFLAGS -mbulk-memory -msimd128 -fno-builtin $map_paths -c "$here/_apysup_string.c" -o "$work/apysup_string.o"

# --- CPython for wasm32-wasi --------------------------------------------------

# build_cpython NAME DIR CFLAGS LIBS configures and builds CPython for WASI in
# DIR, with CFLAGS and LIBS added to its compiles and links: once
# instrumented for the profile, once optimised with it (below).
build_cpython() {
	local name=$1 wasi_build=$2 pgo_cflags=$3 pgo_libs=$4
	mkdir -p "$wasi_build/Modules"
	printf '%s\n' "$SETUP_LOCAL" >"$wasi_build/Modules/Setup.local"
	# No clock_nanosleep: with it, time.sleep() waits on an absolute
	# clock_nanosleep, which wazero refuses (errno 58); nanosleep works. Both
	# cache variables: configure falls back to -lrt (a wasi-libc stub) and would
	# define HAVE_CLOCK_NANOSLEEP again. umask: wasi-libc has none, and
	# _apysup_paths.c's (linked into python.wasm, not into configure's tests)
	# gives os.umask the mask its wrapped open and mkdir apply. fchmod and
	# fchmodat: _apysup_paths.c's too (include/sys/stat.h declares them). chown, lchown,
	# fchown, fchownat, sendfile and copy_file_range: _apysup_files.c's, linked
	# the same way; so are statvfs and fstatvfs, whose header wasi-libc lacks
	# too (include/sys/statvfs.h, on the include path).
	# ax_cv_c_float_words_bigendian: its probe greps an object file for a
	# marker, which an LTO build's bitcode does not hold as text (wasm32 is
	# little-endian, as the probe finds without LTO).
	# fdopendir: CPython's config.site turns it off because listdir and scandir
	# of a descriptor duplicated it with dup, which WASI has not;
	# patches/python3.11/wasi-files.patch opens the directory again instead, so
	# a site file of ours reads CPython's and turns it back on (a variable set
	# in the environment would not win over the site file's).
	cat >"$work/config.site" <<-SITE
	. '$py_src/Tools/wasm/config.site-wasm32-wasi'
	ac_cv_func_fdopendir=yes
	SITE
	step "$name-configure" env \
		CONFIG_SITE="$work/config.site" \
		CC="$wasi_cc" CPP="$wasi_cc -E" \
		AR="llvm-ar-$LLVM" RANLIB="llvm-ranlib-$LLVM" \
		CFLAGS="$WASI_CFLAGS $pgo_cflags $map_paths -I$here/include" LIBS="$pgo_libs" \
		ZLIB_CFLAGS="-I$zlib_build" ZLIB_LIBS="$zlib_build/libz.a" \
		BZIP2_CFLAGS="-I$bzip2_build" BZIP2_LIBS="$bzip2_build/libbz2.a" \
		LIBLZMA_CFLAGS="-I$xz_src/src/liblzma/api" LIBLZMA_LIBS="$xz_build/src/liblzma/.libs/liblzma.a" \
		LIBSQLITE3_CFLAGS="-I$sqlite_build" LIBSQLITE3_LIBS="-L$sqlite_build -lsqlite3" \
		PKG_CONFIG_LIBDIR="$work/no-pkgconfig" PKG_CONFIG_PATH= \
		ac_cv_func_clock_nanosleep=no ac_cv_lib_rt_clock_nanosleep=no ac_cv_func_umask=yes \
		ac_cv_func_fchmod=yes ac_cv_func_fchmodat=yes ac_cv_func_chown=yes ac_cv_func_lchown=yes ac_cv_func_fchown=yes ac_cv_func_fchownat=yes ac_cv_func_sendfile=yes ac_cv_func_copy_file_range=yes ac_cv_func_getlogin=yes ac_cv_func_getloadavg=yes ac_cv_func_nice=yes \
		ac_cv_func_sync=yes ac_cv_func_lockf=yes ac_cv_func_alarm=yes ac_cv_func_pause=yes ac_cv_func_setitimer=yes ac_cv_func_getitimer=yes \
		ac_cv_header_sys_statvfs_h=yes ac_cv_func_statvfs=yes ac_cv_func_fstatvfs=yes \
		ac_cv_working_tzset=yes ax_cv_c_float_words_bigendian=no \
		ac_cv_header_sys_resource_h=no ac_cv_func_prlimit=yes \
		ac_cv_func_getaddrinfo=yes ac_cv_func_gai_strerror=yes ac_cv_func_getnameinfo=yes ac_cv_func_hstrerror=yes ac_cv_func_gethostbyname=yes ac_cv_func_gethostbyname_r=no \
		ac_cv_func_gethostbyaddr=yes ac_cv_func_getservbyname=yes ac_cv_func_getservbyport=yes ac_cv_func_getprotobyname=yes ac_cv_func_socket=yes ac_cv_func_inet_ntoa=yes \
		ac_cv_header_libintl_h=yes ac_cv_func_bind_textdomain_codeset=yes ac_cv_header_syslog_h=yes \
		ac_cv_func_ctermid=yes ac_cv_func_ttyname=yes ac_cv_func_tcgetpgrp=yes ac_cv_func_tcsetpgrp=yes ac_cv_func_openpty=yes ac_cv_search_login_tty="none required" \
		sh -c "cd '$wasi_build' && '../src/${py_src##*/}/configure' -C --host=wasm32-unknown-wasi --build='$build_triple' \
			--with-build-python='$build_python' --prefix=/usr $WASI_CONFIGURE_FLAGS"
	for m in ZLIB _BZ2 _LZMA _SQLITE3 _TESTCAPI; do
		grep -q "^MODULE_${m}_STATE=yes" "$wasi_build/Makefile" || die "configure did not enable ${m#_}"
	done
	grep -q '^#define WITH_PYMALLOC 1' "$wasi_build/pyconfig.h" || die "configure did not enable pymalloc"
	grep -q '^#define ENABLE_IPV6 1' "$wasi_build/pyconfig.h" || die "configure did not enable IPv6"
	grep -q '^#define Py_HASH_ALGORITHM 3$' "$wasi_build/pyconfig.h" || die "configure did not choose SipHash-1-3"
	for f in FCHMOD FCHMODAT CHOWN LCHOWN FCHOWN FCHOWNAT SENDFILE COPY_FILE_RANGE GETLOGIN GETLOADAVG NICE FDOPENDIR WORKING_TZSET WCSFTIME SYS_STATVFS_H STATVFS FSTATVFS PRLIMIT GETRUSAGE \
		NETDB_H GETADDRINFO GAI_STRERROR GETNAMEINFO HSTRERROR GETHOSTBYNAME GETHOSTBYADDR GETSERVBYNAME GETSERVBYPORT GETPROTOBYNAME SOCKET \
		CTERMID TTYNAME TCGETPGRP TCSETPGRP OPENPTY LOGIN_TTY PTY_H LIBINTL_H BIND_TEXTDOMAIN_CODESET SYSLOG_H; do
		grep -q "^#define HAVE_$f 1" "$wasi_build/pyconfig.h" || die "configure did not define HAVE_$f"
	done
	# Replaces configure's own LDFLAGS_NODIST for WASI (a 512 KiB stack).
	step "$name-make" make -C "$wasi_build" -j"$jobs" APYSUP_DB="$db_build" APYSUP_UUID="$uuid_build" \
		LDFLAGS_NODIST="$WASI_LDFLAGS_NODIST $work/apysup_libm.o $work/apysup_paths.o $work/apysup_string.o $work/apysup_locale.o $work/apysup_stat.o $work/apysup_signal.o $work/apysup_files.o $work/apysup_errno.o $work/apysup_flags.o $work/apysup_host.o $work/apysup_resource.o $work/apysup_fcntl.o $work/apysup_termios.o $work/apysup_netdb.o $work/apysup_tz.o $work/apysup_mktime.o $work/apysup_gmtime_r.o $work/apysup_strftime.o $work/apysup_messages.o -Wl,--wrap=__wasilibc_find_relpath_alloc,--wrap=wcsftime,--wrap=rename,--wrap=link,--wrap=rmdir,--wrap=unlink,--wrap=symlink,--wrap=mkdirat,--wrap=openat,--wrap=renameat,--wrap=linkat,--wrap=symlinkat,--wrap=getcwd,--wrap=chdir,--wrap=setlocale,--wrap=nl_langinfo,--wrap=wcscoll,--wrap=fstat,--wrap=__wasilibc_nocwd_fstatat,--wrap=open,--wrap=mkdir,--wrap=raise,--wrap=abort,--wrap=strsignal,--wrap=__wasi_fd_write,--wrap=__wasi_fd_pwrite,--wrap=__wasi_fd_filestat_set_size,--wrap=__wasi_fd_allocate,--wrap=__wasi_path_create_directory,--wrap=__wasi_path_link,--wrap=__wasi_path_open,--wrap=sysconf,--wrap=fpathconf,--wrap=fcntl,--wrap=close,--wrap=__wasi_fd_seek,--wrap=inet_pton,--wrap=inet_ntop,--wrap=inet_aton,--wrap=poll,--wrap=select,--wrap=isatty"

	for m in _dbm _uuid syslog; do
		grep -q "\"$m\"" "$wasi_build/Modules/config.c" || die "python.wasm has no $m built in"
	done
}

# stdlib_zip DIR SYSCONFIG ZIP packs the stdlib of the CPython built in DIR
# into ZIP: Lib's sources and bytecode (mkstdlib.py) and DIR's sysconfig
# data, written into SYSCONFIG with the build's paths replaced.
stdlib_zip() {
	local wasi_build=$1 sysconfig_dir=$2 zip=$3 built_lib f debian_name
	built_lib=$(find "$wasi_build/build" -maxdepth 1 -type d -name 'lib.wasi-*' | head -1)
	[[ -d $built_lib ]] || die "no build/lib.wasi-* directory with the sysconfig data"
	mkdir -p "$sysconfig_dir"
	for f in "$built_lib"/_sysconfigdata_*.py; do
		sed -e "s|$work|/build|g" -e "s|$here|/build/apysup|g" "$f" >"$sysconfig_dir/${f##*/}"
		# Debian's sysconfig.py names the module without the platform
		# (_sysconfigdata_<abiflags>_<multiarch>): ship it under that name too.
		debian_name=$(printf '%s' "${f##*/}" | sed 's/^_sysconfigdata__wasi_/_sysconfigdata__/')
		[[ $debian_name == "${f##*/}" ]] || cp "$sysconfig_dir/${f##*/}" "$sysconfig_dir/$debian_name"
	done
	"$build_python" -I -S "$here/mkstdlib.py" "$py_src/Lib" "$sysconfig_dir" "$py_src/LICENSE" "$py_src/debian/changelog" "$zip" >&2
}

# write_manifest DIR writes DIR/manifest.json: the key, the sources and
# toolchain, and the size and SHA-256 of DIR's python.wasm and python311.zip.
write_manifest() {
"$build_python" -I -S - "$1" "$key" "$PY_SRC_VERSION" "$ZLIB_SRC_VERSION" "$XZ_SRC_VERSION" "$BZIP2_SRC_VERSION" \
	"$SQLITE_SRC_VERSION" "$MUSL_SRC_VERSION" "$DB_SRC_VERSION" "$UUID_SRC_VERSION" "$LLVM_SRC_VERSION" "$(dpkg-query -W -f='${Version}' "clang-$LLVM")" "$(dpkg-query -W -f='${Version}' wasi-libc)" <<'EOF'
import hashlib, json, os, sys
out, key, py, zlib, xz, bzip2, sqlite3, musl, db, util_linux, llvm, clang, wasi_libc = sys.argv[1:14]
files = {}
for name in ("python.wasm", "python311.zip"):
    with open(os.path.join(out, name), "rb") as f:
        data = f.read()
    files[name] = {"size": len(data), "sha256": hashlib.sha256(data).hexdigest()}
manifest = {
    "schema_version": "apysup.wasi.v1",
    "key": key,
    "python_version": "3.11.2",
    "source": {"python3.11": py, "zlib": zlib, "xz-utils": xz, "bzip2": bzip2, "sqlite3": sqlite3, "musl": musl, "db5.3": db, "util-linux": util_linux, "llvm-toolchain-%s" % llvm.split(":")[1].split(".")[0]: llvm},
    "toolchain": {"clang": clang, "wasi-libc": wasi_libc},
    "files": files,
}
with open(os.path.join(out, "manifest.json"), "w") as f:
    json.dump(manifest, f, indent=2, sort_keys=True)
    f.write("\n")
EOF
}

# --- profile-guided: instrumented, trained, optimised ------------------------

# CPython is built twice, as its own `make profile-opt` does (RATIONALE.md,
# "The WASI build is profile-guided"): instrumented, then run over
# CPython's own training set (PROFILE_TASK's `-m test --pgo`) under apysup's
# wazero backend, then built again with clang told where the time went.
# The instrumented build links compiler-rt's profile runtime, which Debian
# ships for the host but not for wasm32: it is built here from Debian's
# LLVM source of clang's own version, with pgo/_profile.h and
# pgo/_profile_shim.c for what WASI lacks. Only CPython's own objects are
# instrumented and optimised with the profile (configure's CFLAGS), not
# the libraries built above nor apysup's objects.
pgo="$work/pgo"
mkdir -p "$pgo/rt" "$pgo/workspace"
log "profile runtime"
tar -C "$pgo" -xJf "$(find "$work/src" -maxdepth 1 -name "llvm-toolchain-${LLVM}_*.orig.tar.xz" | head -1)" \
	--wildcards '*/compiler-rt/lib/profile/*' '*/compiler-rt/include/profile/*' || die "no compiler-rt in the LLVM source"
rt_src=$(find "$pgo" -maxdepth 4 -type d -path '*/compiler-rt/lib/profile' | head -1)
[[ -d $rt_src ]] || die "no compiler-rt/lib/profile in the LLVM source"
# LLVM 19's InstrProfilingPlatformOther.c, the runtime of platforms without
# sections (wasm32's), returns BitmapFirst and BitmapLast, which it never
# declares (fixed in LLVM 20): the MC/DC bitmaps, which this build does not
# ask for, are empty (-DBitmapFirst=0 -DBitmapLast=0).
# InstrProfilingRuntime.cpp, which registers the profile's write at exit,
# is left out: _profile_shim.c writes it at every proc_exit instead.
for c in InstrProfiling InstrProfilingBuffer InstrProfilingFile InstrProfilingInternal InstrProfilingMerge \
	InstrProfilingMergeFile InstrProfilingNameVar InstrProfilingPlatformOther InstrProfilingUtil InstrProfilingValue \
	InstrProfilingVersionVar InstrProfilingWriter; do
	$wasi_cc $WASI_CFLAGS -w -DBitmapFirst=0 -DBitmapLast=0 -D_WASI_EMULATED_MMAN -D_WASI_EMULATED_GETPID -include "$here/pgo/_profile.h" \
		-I"$rt_src/../../include" -c "$rt_src/$c.c" -o "$pgo/rt/$c.o"
done
$wasi_cc $WASI_CFLAGS -c "$here/pgo/_profile_shim.c" -o "$pgo/rt/profile_shim.o"
"llvm-ar-$LLVM" rcs "$pgo/libprofile.a" "$pgo"/rt/*.o

# The profile's file is the guest's /workspace/python.profraw, which the
# training run exports.
build_cpython wasi-instrumented "$work/wasi-instrumented" -fprofile-instr-generate=/workspace/python.profraw \
	"$pgo/libprofile.a -Wl,--wrap=__wasi_proc_exit"

# The training run: the instrumented build where apysup looks for the build
# of these inputs (a cache directory of its own), CPython's test package in
# the run's workspace, cmd/wasi-pgo running pgo/train.py (`-m test --pgo`)
# there on apysup's wazero backend.
log "training (-m test --pgo under wazero)"
instrumented="$pgo/cache/apysup/wasi/$key"
mkdir -p "$instrumented"
"llvm-strip-$LLVM" -o "$instrumented/python.wasm" "$work/wasi-instrumented/python.wasm"
stdlib_zip "$work/wasi-instrumented" "$pgo/sysconfig" "$instrumented/python311.zip"
write_manifest "$instrumented"
cp -R "$py_src/Lib/test" "$pgo/workspace/test"
(cd "$here/../.." && "$go" run -tags seccomp ./cmd/wasi-pgo -cache "$pgo/cache" -workspace "$pgo/workspace" \
	-script "$here/pgo/train.py" -profile "$pgo/python.profraw") >"$work/pgo-training.log" 2>&1 ||
	{ tail -n 40 "$work/pgo-training.log" >&2; cp "$work/pgo-training.log" "$cache_root/failed-pgo-training.log"; die "the training run failed (log above; whole log in $cache_root/failed-pgo-training.log)"; }
log "training: $(grep -E '(Total duration|Tests result|regrtest --pgo exited)' "$work/pgo-training.log" | tr '\n' ' ')"
"llvm-profdata-$LLVM" merge -o "$pgo/python.profdata" "$pgo/python.profraw"

# The optimised build is also link-time optimised (ThinLTO), as Debian's
# native python3.11 is: with the profile, the link inlines across CPython's
# objects where the calls are hot (RATIONALE.md, "The WASI build is
# profile-guided").
wasi_build="$work/wasi"
build_cpython wasi "$wasi_build" "-fprofile-instr-use=$pgo/python.profdata -flto=thin" ""

# --- output --------------------------------------------------------------------

log "strip python.wasm"
"llvm-strip-$LLVM" -o "$work/out/python.wasm" "$wasi_build/python.wasm"

log "python311.zip"
stdlib_zip "$wasi_build" "$work/sysconfig" "$work/out/python311.zip"
sysconfig_dir="$work/sysconfig"
if grep -qaF -e "$work" -e "$here" "$work/out/python.wasm" "$sysconfig_dir"/*; then
	die "the outputs still name the build directory $work or the source directory $here"
fi

write_manifest "$work/out"

mv -T "$work/out" "$out"
log "built in ${SECONDS}s: $out ($(du -sh "$out" | cut -f1))"
printf '%s\n' "$out"
