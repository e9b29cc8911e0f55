# CPU quotas for the bench-* scripts: a cgroup of the script's own per
# limited process. cgroup v2 (cpu.max) or v1 (the cpu controller's
# cfs_quota_us), with a 10 ms period. Sourced; the caller sets cg_prefix
# (a name unique to the run, e.g. scalebench-peers-$$), calls cg_remove_all
# on exit, and checks cg_root (empty: no usable hierarchy).
cg_root=""
cg_v=""
if [ -f /sys/fs/cgroup/cgroup.controllers ] && grep -qw cpu /sys/fs/cgroup/cgroup.controllers; then
    cg_root=/sys/fs/cgroup
    cg_v=2
else
    for d in /sys/fs/cgroup/cpu /sys/fs/cgroup/cpu,cpuacct; do
        if [ -f "$d/cpu.cfs_quota_us" ]; then cg_root=$d; cg_v=1; break; fi
    done
fi
cgroups=()
cg_make() { # NAME PERCENT: makes the cgroup, sets cg_made to its directory
    local d="$cg_root/$cg_prefix-$1" q=$(( $2 * 100 ))
    mkdir "$d" || return 1
    cgroups+=("$d")
    cg_made=$d
    if [ "$cg_v" = 2 ]; then
        grep -qw cpu "$cg_root/cgroup.subtree_control" || echo +cpu > "$cg_root/cgroup.subtree_control"
        echo "$q 10000" > "$d/cpu.max"
    else
        echo 10000 > "$d/cpu.cfs_period_us"
        echo "$q" > "$d/cpu.cfs_quota_us"
    fi
}
cg_quota() { # DIR PERCENT (100: no limit)
    local q=$(( $2 * 100 ))
    if [ "$cg_v" = 2 ]; then
        if (( $2 >= 100 )); then echo "max 10000" > "$1/cpu.max"; else echo "$q 10000" > "$1/cpu.max"; fi
    else
        if (( $2 >= 100 )); then echo -1 > "$1/cpu.cfs_quota_us"; else echo "$q" > "$1/cpu.cfs_quota_us"; fi
    fi
}
cg_remove() { # DIR: move what is left to the parent, then remove
    local p
    [ -d "$1" ] || return 0
    for p in $(cat "$1/cgroup.procs" 2>/dev/null); do echo "$p" > "$cg_root/cgroup.procs" 2>/dev/null || true; done
    rmdir "$1" 2>/dev/null || true
}
cg_remove_all() {
    local g
    for g in "${cgroups[@]}"; do cg_remove "$g"; done
}
cg_run() { # DIR COMMAND…: runs the command inside the cgroup DIR (none: as is)
    local g=$1
    shift
    if [ -n "$g" ]; then
        sh -c 'echo $$ > "$1/cgroup.procs" && shift && exec "$@"' sh "$g" "$@"
    else
        "$@"
    fi
}
