#!/bin/sh
# Turn a fresh mount + PID namespace into something shaped like a Kubernetes pod, then run
# the rest of the command line in it as the pods' one unprivileged uid.
#
# Started by the PodSpawner of deploy/jupyterhub_pods_config.py as
#     unshare --mount --pid --fork --mount-proc --kill-child=SIGTERM -- sh pod_entry.sh CMD...
# with these variables set:
#     DECOMPKIT_POD_DISKS  folder holding every pod's disk (one sub-folder per hub user)
#     DECOMPKIT_POD_DISK   this pod's disk, a sub-folder of DECOMPKIT_POD_DISKS
#     DECOMPKIT_POD_HOME   the empty folder where the pod sees its disk (its HOME)
#     DECOMPKIT_POD_UID, DECOMPKIT_POD_GID   the uid and gid every pod runs as
#
# Inside, the pod's own disk is mounted at DECOMPKIT_POD_HOME; every other pod's disk is
# hidden under an empty tmpfs; /tmp and /dev/shm are private; the rest of the machine's
# file system is read-only; /proc shows this pod's processes only. Pods therefore share no
# writable file and cannot see each other's processes, as on Kubernetes. They do share the
# machine's network (loopback), where every server and kernel needs its own secret.
set -eu
: "${DECOMPKIT_POD_DISKS:?}" "${DECOMPKIT_POD_DISK:?}" "${DECOMPKIT_POD_HOME:?}"
: "${DECOMPKIT_POD_UID:?}" "${DECOMPKIT_POD_GID:?}"
mount --bind "$DECOMPKIT_POD_DISK" "$DECOMPKIT_POD_HOME"
mount -t tmpfs -o mode=0755,size=64k other-pods "$DECOMPKIT_POD_DISKS"
mount -t tmpfs -o mode=1777 pod-tmp /tmp
mount -t tmpfs -o mode=1777 pod-shm /dev/shm
# "bind,remount" changes this namespace's view of / only, never the machine's file system.
mount --bind -o remount,ro /
cd "$DECOMPKIT_POD_HOME"
exec setpriv --reuid="$DECOMPKIT_POD_UID" --regid="$DECOMPKIT_POD_GID" --clear-groups \
    --no-new-privs -- "$@"
