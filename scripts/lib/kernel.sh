# Building Debian's Linux 6.1 small, for scalebench guests: what
# scripts/kernel-ab and scripts/kernel-bisect share (docs/kernel-ab.md,
# docs/kernel-bisect.md). Sourced; the caller sets dir (its work
# directory), src (the source tree), obj (where the build goes: src, or a
# directory of its own for `make O=`), log (logs), times (the times file)
# and defines die and say.

# Seconds since the epoch, with fractions.
now() { date +%s.%N; }
# Records one step's wall time: `timed NAME COMMAND…`.
timed() {
    local name=$1 t0 t1 rc=0
    shift
    t0=$(now)
    "$@" || rc=$?
    t1=$(now)
    printf '%-12s %8.1f s%s\n' "$name" "$(echo "$t1 - $t0" | bc)" \
        "$([ $rc = 0 ] || echo " (failed, exit $rc)")" | tee -a "$times" >&2
    return $rc
}

# --- packages -------------------------------------------------------------
install_deps() {
    local missing=()
    [ -f /usr/src/linux-source-6.1.tar.xz ] || missing+=(linux-source-6.1)
    for p in bc bison flex make gcc cpio xz:xz-utils perl jq git; do
        command -v "${p%%:*}" > /dev/null 2>&1 || missing+=("${p##*:}")
    done
    [ -f /usr/include/libelf.h ] || [ -f /usr/include/gelf.h ] || missing+=(libelf-dev)
    [ -f /usr/include/openssl/ssl.h ] || missing+=(libssl-dev)
    command -v qemu-system-x86_64 > /dev/null 2>&1 || missing+=(qemu-system-x86)
    [ ${#missing[@]} = 0 ] && return 0
    if [ "$(id -u)" -ne 0 ] || ! command -v apt-get > /dev/null 2>&1; then
        die "missing ${missing[*]}; as root run: apt-get install -y ${missing[*]}"
    fi
    say "installing ${missing[*]}"
    DEBIAN_FRONTEND=noninteractive apt-get install -y -q "${missing[@]}" > "$log/apt.log" 2>&1 ||
        { DEBIAN_FRONTEND=noninteractive apt-get update -q >> "$log/apt.log" 2>&1 &&
          DEBIAN_FRONTEND=noninteractive apt-get install -y -q "${missing[@]}" >> "$log/apt.log" 2>&1; } ||
        die "apt-get install ${missing[*]} failed: see $log/apt.log"
}

# --- source and configuration ---------------------------------------------
unpack() {
    rm -rf "$src" "$dir/unpack.tmp"
    mkdir "$dir/unpack.tmp"
    nice -n 19 tar -xJf /usr/src/linux-source-6.1.tar.xz -C "$dir/unpack.tmp"
    mv "$dir/unpack.tmp/linux-source-6.1" "$src"
    rmdir "$dir/unpack.tmp"
}

# What a scalebench guest needs, built in (src/systems/guest.rs: mounts,
# lo, the shares, the command port, ACPI power-off; the benchmarks'
# system calls; /proc/config.gz for the report's "settings that differ").
NEEDED="64BIT SMP PRINTK TTY SERIAL_8250 SERIAL_8250_CONSOLE BINFMT_ELF BINFMT_SCRIPT
MULTIUSER FUTEX EPOLL SIGNALFD TIMERFD EVENTFD POSIX_TIMERS AIO IO_URING ADVISE_SYSCALLS
FILE_LOCKING FHANDLE MEMBARRIER RSEQ SYSVIPC POSIX_MQUEUE
SHMEM TMPFS DEVTMPFS PROC_FS PROC_SYSCTL SYSFS BLK_DEV_INITRD
NET UNIX INET IPV6
PCI PCI_MSI ACPI HYPERVISOR_GUEST PARAVIRT KVM_GUEST
VIRTIO_MENU VIRTIO VIRTIO_PCI VIRTIO_CONSOLE
NETWORK_FILESYSTEMS NET_9P NET_9P_VIRTIO 9P_FS FUSE_FS VIRTIO_FS
IKCONFIG IKCONFIG_PROC CC_OPTIMIZE_FOR_PERFORMANCE SLUB KERNEL_GZIP"
UNWANTED="MODULES CC_OPTIMIZE_FOR_SIZE SLOB KERNEL_XZ DEBUG_INFO"

configure() {
    local m=(make -C "$src" -s ${obj:+O="$obj"})
    nice -n 19 "${m[@]}" tinyconfig > "$log/config.log" 2>&1
    local args=()
    for o in $NEEDED; do args+=(--enable "$o"); done
    for o in $UNWANTED; do args+=(--disable "$o"); done
    "$src/scripts/config" --file "${obj:-$src}/.config" "${args[@]}"
    nice -n 19 "${m[@]}" olddefconfig >> "$log/config.log" 2>&1
    # Every option asked for must have survived olddefconfig (a missing
    # dependency would drop it silently).
    local lost=()
    for o in $NEEDED; do
        grep -qx "CONFIG_$o=y" "${obj:-$src}/.config" || lost+=("$o")
    done
    for o in $UNWANTED; do
        grep -qx "CONFIG_$o=y" "${obj:-$src}/.config" && lost+=("!$o")
    done
    [ ${#lost[@]} = 0 ] || die "the configuration lost ${lost[*]} (see ${obj:-$src}/.config)"
    cp "${obj:-$src}/.config" "$dir/config"
}

# --- the planted regression -------------------------------------------------
# A TEST REGRESSION, planted on purpose: alloc_fd() walks every descriptor
# below the one it hands out, so socket(), open(), dup() … cost O(n) in the
# descriptors the process holds. Applied for B, reverted for A2.
planted_patch() {
    cat << 'EOF'
--- a/fs/file.c
+++ b/fs/file.c
@@ -528,6 +528,21 @@ repeat:
 		__set_close_on_exec(fd, fdt);
 	else
 		__clear_close_on_exec(fd, fdt);
+	/*
+	 * PLANTED SCALABILITY REGRESSION (scalebench scripts/kernel-ab, kernel-bisect):
+	 * walk every descriptor below the new one, so that allocating a
+	 * descriptor costs O(n) in the descriptors already open. A test
+	 * of scalebench, never to be shipped.
+	 */
+	{
+		static unsigned int kernel_ab_sink;
+		unsigned int i, held = 0;
+
+		for (i = 0; i < fd; i++)
+			held += test_bit(i, fdt->open_fds) &&
+				rcu_access_pointer(fdt->fd[i]) != NULL;
+		WRITE_ONCE(kernel_ab_sink, held);
+	}
 	error = fd;
 #if 1
 	/* Sanity check */
EOF
}

# --- scalebench (the caller sets repo, sb and musl) ---------------------------
# Brings both builds up to date (nothing to do when they are): a guest
# must run the very version of the scalebench that starts it.
scalebench_builds() {
    say "building scalebench (release and the static musl build) in $repo, if out of date"
    (cd "$repo" && nice -n 19 cargo build --release -q &&
        nice -n 19 cargo build --release -q --target x86_64-unknown-linux-musl) > "$log/cargo.log" 2>&1 ||
        die "cargo build failed: see $log/cargo.log"
}
