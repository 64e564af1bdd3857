# shellcheck shell=sh
# The initramfs's fetch (netboot/data/init sources it; say() is the init's).
# fetch URL FILE: the whole file, or fail. A transfer that stops growing for STALL_S seconds is killed and tried
# again from the start (busybox's wget has no read timeout of its own: a stalled connection would hold the boot until
# slurmctld's ResumeTimeout gave the node up), and so is one that failed, up to TRIES times.
STALL_S=${STALL_S:-60} TRIES=${TRIES:-3}
fetch() {
    try=1
    while :; do
        rm -f "$2"
        wget -q -O "$2" "$1" &
        pid=$! last=-1 still=0
        while kill -0 "$pid" 2>/dev/null; do
            sleep 1
            size=$(stat -c %s "$2" 2>/dev/null || echo 0)
            if [ "$size" = "$last" ]; then still=$((still + 1)); else still=0 last=$size; fi
            if [ "$still" -ge "$STALL_S" ]; then
                say "no byte of $1 in ${STALL_S} s (at $size bytes): fetching again"
                kill "$pid" 2>/dev/null
                break
            fi
        done
        wait "$pid" && return 0
        [ "$try" -ge "$TRIES" ] && return 1
        say "fetch of $1 failed (try $try of $TRIES): fetching again"
        try=$((try + 1))
        sleep 2
    done
}
