#!/usr/bin/env bash
# Run ProcAnim's Blender tests and GUI check inside a real Blender binary:
# Debian trixie's Blender 4.3.2 (Python 3.13, numpy 2) in a debootstrap chroot.
#
#   bash tools/real_blender.sh provision   # create/repair the cached chroot (needs root)
#   bash tools/real_blender.sh headless    # blender -b ... --python tests/run_in_blender.py
#   bash tools/real_blender.sh gui         # Blender's window under Xvfb: sidebar check + docs/sidebar.png
#   bash tools/real_blender.sh latency     # the live preview's latency study in that window (a table)
#   bash tools/real_blender.sh test        # provision, headless, gui (what CI and tools/test.sh run)
#   bash tools/real_blender.sh shell       # interactive shell inside the chroot, repo at /repo
#
# Environment: PROCANIM_CACHE (default ~/.cache/procanim) holds chroot-trixie/;
# DEBIAN_MIRROR (default Debian's default mirror); PROCANIM_ZIP (use this zip
# instead of building one); PYTEST_ADDOPTS is passed through to pytest; PROCANIM_GUI_DEBUG=1 (more
# screenshots) and PROCANIM_GUI_ESC_REPEAT=N (N more Esc runs, for the Esc-to-stop distribution) to
# the GUI check; PROCANIM_GOLDEN_TOLERANCE (default here 1e-6: another Python/numpy rounds
# differently, see tests/engine/test_golden_clips.py).
#
# Mounts happen in a private mount namespace (unshare) when available, and are
# unmounted by an EXIT trap in any case, so an interrupted run never leaves
# /proc, /dev or /sys bind-mounted into the cache.
set -euo pipefail

REPO="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
CACHE="${PROCANIM_CACHE:-$HOME/.cache/procanim}"
CHROOT="$CACHE/chroot-trixie"
STAMP="$CHROOT/.procanim-chroot-stamp"
SUITE=trixie
MIRROR="${DEBIAN_MIRROR:-http://deb.debian.org/debian}"
PKGS="blender,python3-numpy,python3-pytest,xvfb,xauth,x11-apps,imagemagick,xdotool,libgl1-mesa-dri"
STAMP_TEXT="procanim-chroot v1 suite=$SUITE pkgs=$PKGS"
OUT="$REPO/out/real_blender"

log() { printf '[real_blender] %s\n' "$*" >&2; }
die() { log "ERROR: $*"; exit 1; }

need_root() { [ "$(id -u)" = 0 ] || die "must run as root (debootstrap, chroot and mount need it)"; }

# ---------------------------------------------------------------- mounts
MOUNTED=()
umount_all() {
    local i
    for (( i=${#MOUNTED[@]}-1; i>=0; i-- )); do
        umount "${MOUNTED[$i]}" 2>/dev/null || umount -l "${MOUNTED[$i]}" 2>/dev/null || true
    done
    MOUNTED=()
}
mnt() {  # mnt <target> <mount args...>
    local target="$1"; shift
    mkdir -p "$target"
    mount "$@" "$target"
    MOUNTED+=("$target")
}
mount_chroot() {  # mount_chroot <root>
    local root="$1"
    [ -e "$root/etc/mtab" ] || [ -L "$root/etc/mtab" ] || ln -s /proc/self/mounts "$root/etc/mtab"
    mnt "$root/proc" -t proc proc
    mnt "$root/sys" --bind /sys
    mnt "$root/dev" --bind /dev
    mnt "$root/dev/shm" -t tmpfs -o mode=1777 shm
    mnt "$root/tmp" -t tmpfs -o mode=1777 tmp
    mnt "$root/repo" --bind "$REPO"
}
# Anything still mounted below a directory (e.g. from a run killed with -9 in
# the host namespace). Unmount it before any rm -rf can reach /dev or /repo.
clear_stale_mounts() {
    local dir="$1" m
    [ -e "$dir" ] || return 0
    dir="$(readlink -f "$dir")"
    for m in $(awk '{print $2}' /proc/mounts | grep -F "$dir/" | sort -r); do
        log "unmounting stale $m"
        umount "$m" 2>/dev/null || umount -l "$m"
    done
    if awk '{print $2}' /proc/mounts | grep -qF "$dir/"; then
        die "mounts remain below $dir; refusing to continue"
    fi
}
safe_rm() {
    local dir="$1"
    [ -e "$dir" ] || return 0
    clear_stale_mounts "$dir"
    rm -rf --one-file-system "$dir"
}

# Run a command with the chroot's mounts in place. Re-executes this script in
# a private mount namespace so the mounts vanish with the process whatever
# happens; the EXIT trap unmounts explicitly as well.
in_chroot() {  # in_chroot <root> <cmd...>
    if [ -z "${PROCANIM_IN_NS:-}" ] && unshare --mount --propagation private true 2>/dev/null; then
        PROCANIM_IN_NS=1 unshare --mount --propagation private \
            bash "$REPO/tools/real_blender.sh" __in_chroot "$@"
        return $?
    fi
    _in_chroot_here "$@"
}
_in_chroot_here() {
    local root="$1"; shift
    (
        # Blender ignores a single SIGINT in -b mode: on INT/TERM/HUP pass TERM on to the
        # child, wait for it, then the EXIT trap unmounts.
        child=""
        trap umount_all EXIT
        trap '[ -n "$child" ] && kill -TERM "$child" 2>/dev/null; [ -n "$child" ] && wait "$child"; exit 130' INT TERM HUP
        mount_chroot "$root"
        chroot "$root" /usr/bin/env -i HOME=/root LANG=C.UTF-8 \
            PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin \
            PYTHONDONTWRITEBYTECODE=1 \
            PROCANIM_GOLDEN_TOLERANCE="${PROCANIM_GOLDEN_TOLERANCE:-1e-6}" \
            ${PROCANIM_ZIP_IN:+PROCANIM_ZIP=$PROCANIM_ZIP_IN} \
            ${PYTEST_ADDOPTS:+PYTEST_ADDOPTS="$PYTEST_ADDOPTS"} \
            ${PROCANIM_GUI_DEBUG:+PROCANIM_GUI_DEBUG=$PROCANIM_GUI_DEBUG} \
            ${PROCANIM_GUI_ESC_REPEAT:+PROCANIM_GUI_ESC_REPEAT=$PROCANIM_GUI_ESC_REPEAT} \
            "$@" <&0 &
        child=$!
        wait "$child"
    )
}

# ---------------------------------------------------------------- provision
healthy() {  # healthy <root>
    local root="$1" v
    [ -f "$root/$(basename "$STAMP")" ] || return 1
    [ "$(cat "$root/$(basename "$STAMP")")" = "$STAMP_TEXT" ] || return 1
    [ -x "$root/usr/bin/blender" ] || return 1
    v="$(in_chroot "$root" blender --factory-startup --version 2>/dev/null | head -n1)" || return 1
    case "$v" in "Blender 4."*) log "chroot ok: $v ($root)"; return 0;; esac
    return 1
}
provision() {
    need_root
    local t0=$SECONDS
    mkdir -p "$CACHE"
    if healthy "$CHROOT"; then
        log "provision: reused cached chroot in $((SECONDS - t0)) s"
        return 0
    fi
    [ -e "$CHROOT" ] && log "cached chroot missing, stale or broken: rebuilding"
    if ! command -v debootstrap >/dev/null; then
        log "installing debootstrap"
        apt-get update -qq
        DEBIAN_FRONTEND=noninteractive apt-get install -y -qq debootstrap >/dev/null
    fi
    safe_rm "$CHROOT.new"
    log "debootstrap $SUITE into $CHROOT.new (about 1.7 GB, a few minutes)"
    # debootstrap mounts /proc (and more) in the target itself: keep those
    # mounts in a private namespace too, so a failed run cannot leak them.
    local ns=()
    unshare --mount --propagation private true 2>/dev/null && ns=(unshare --mount --propagation private)
    "${ns[@]}" debootstrap --variant=minbase --include="$PKGS" "$SUITE" "$CHROOT.new" "$MIRROR" \
        > "$CACHE/debootstrap.log" 2>&1 || { tail -n 30 "$CACHE/debootstrap.log" >&2; die "debootstrap failed (log: $CACHE/debootstrap.log)"; }
    rm -rf "$CHROOT.new"/var/cache/apt/archives/*.deb
    mkdir -p "$CHROOT.new/repo"
    printf '%s\n' "$STAMP_TEXT" > "$CHROOT.new/$(basename "$STAMP")"
    healthy "$CHROOT.new" || die "fresh chroot fails 'blender --version'"
    safe_rm "$CHROOT"
    mv "$CHROOT.new" "$CHROOT"
    log "provision: built chroot in $((SECONDS - t0)) s, $(du -sh --one-file-system "$CHROOT" | cut -f1) on disk"
}

# ---------------------------------------------------------------- build
# The zip is built INSIDE the chroot by tools/build.py with Blender 4.3's own
# extension builder (/usr/share/blender/scripts/addons_core/bl_pkg/cli),
# validated by it, and handed to the tests via PROCANIM_ZIP. PROCANIM_ZIP from
# the caller's environment (a zip built elsewhere) is used instead when set.
ZIP_IN=""
build_zip() {
    # a directory per run: concurrent runs in one tree must not rebuild each other's zip
    local run_dir="zip.$$"
    mkdir -p "$OUT/$run_dir"
    trap 'rm -rf "$OUT/'"$run_dir"'"' EXIT
    if [ -n "${PROCANIM_ZIP:-}" ]; then
        [ -f "$PROCANIM_ZIP" ] || die "PROCANIM_ZIP=$PROCANIM_ZIP does not exist"
        cp -f "$PROCANIM_ZIP" "$OUT/$run_dir/"
        ZIP_IN="/repo/out/real_blender/$run_dir/$(basename "$PROCANIM_ZIP")"
        log "using PROCANIM_ZIP=$PROCANIM_ZIP"
        return 0
    fi
    local scripts last
    scripts="$(find "$CHROOT/usr/share/blender" -path '*/addons_core/bl_pkg/cli/blender_ext.py' | head -n1)"
    [ -n "$scripts" ] || die "Blender's extension builder not found in the chroot"
    scripts="/${scripts#"$CHROOT"/}"; scripts="${scripts%/addons_core/bl_pkg/cli/blender_ext.py}"
    last="$(in_chroot "$CHROOT" python3 /repo/tools/build.py --scripts-dir "$scripts" \
            --out-dir "/repo/out/real_blender/$run_dir" | tail -n1)" || die "building the extension zip failed"
    case "$last" in /repo/*.zip) ZIP_IN="$last" ;; *) die "tools/build.py printed no zip path: $last" ;; esac
    log "built $ZIP_IN with $scripts's builder"
}

# ---------------------------------------------------------------- commands
blender_tests() {  # blender_tests [PYTEST ARGS]: one real Blender process running the tests
    log "headless: blender -b --factory-startup --python-exit-code 1 --python tests/run_in_blender.py -- $*"
    PROCANIM_ZIP_IN="$ZIP_IN" in_chroot "$CHROOT" sh -c \
        'cd /repo && exec blender -b --factory-startup --python-exit-code 1 --python tests/run_in_blender.py -- "$@"' \
        sh "$@"
}
# The export tests run in a Blender of their own: Blender 4.3.2's glTF exporter can segfault late
# in a long one-process session (setting the window's scene in io_scene_gltf2's tree.construct).
EXPORT_TESTS=tests/blender/test_export.py
headless() {
    if [ "$#" -gt 0 ]; then
        blender_tests "$@"
        return
    fi
    local rc_all=0 rc_export=0
    blender_tests tests/engine tests/blender "--ignore=$EXPORT_TESTS" || rc_all=$?
    blender_tests "$EXPORT_TESTS" || rc_export=$?
    log "headless: the suite exit $rc_all, the export tests exit $rc_export"
    [ "$rc_all" = 0 ] && [ "$rc_export" = 0 ]
}
gui() {
    log "gui: Blender's window under Xvfb, tests/gui/gui_check.py"
    in_chroot "$CHROOT" bash /repo/tests/gui/run_gui.sh "$ZIP_IN" /repo/out/demo.blend
}
latency() {
    log "latency: tests/gui/preview_latency.py in Blender's window under Xvfb"
    in_chroot "$CHROOT" bash /repo/tests/gui/run_gui.sh "$ZIP_IN" /repo/out/demo.blend latency
}
shell_in() {
    PROCANIM_ZIP_IN="$ZIP_IN" in_chroot "$CHROOT" bash -c 'cd /repo && exec bash -i'
}

main() {
    local cmd="${1:-test}"; shift || true
    [ "${1:-}" = "--" ] && shift
    case "$cmd" in
        __in_chroot) _in_chroot_here "$@" ;;
        provision) provision ;;
        headless) need_root; provision; build_zip; headless "$@" ;;
        gui) need_root; provision; build_zip; gui ;;
        latency) need_root; provision; build_zip; latency ;;
        shell) need_root; provision; build_zip; shell_in ;;
        test)
            need_root
            provision
            build_zip
            local rc_h=0 rc_g=0
            headless "$@" || rc_h=$?
            gui || rc_g=$?
            log "real Blender: headless tests exit $rc_h, GUI check exit $rc_g"
            [ "$rc_h" = 0 ] && [ "$rc_g" = 0 ]
            ;;
        -h|--help|help) sed -n '2,18p' "$0" ;;
        *) die "usage: $0 provision|headless|gui|latency|test|shell" ;;
    esac
}
main "$@"
exit $?
